//! Tidy checks over the source tree: the conventions of STYLE.md that a compiler does not
//! enforce.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), fs::read_to_string(&p).unwrap()))
        .collect()
}

/// The code of a file without its `#[cfg(test)] mod tests` tail.
fn non_test(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

#[test]
fn every_file_starts_with_a_module_doc() {
    for (path, text) in sources() {
        assert!(
            text.starts_with("//!"),
            "{} must start with a //! header",
            path.display()
        );
    }
}

#[test]
fn unsafe_only_in_sys_with_safety_comments() {
    for (path, text) in sources() {
        if path.ends_with("tests/tidy.rs") {
            continue;
        }
        // The `sys` module: `src/base/sys.rs` and its submodules in `src/base/sys/`.
        let is_sys = path.ends_with("src/base/sys.rs")
            || path.parent().is_some_and(|d| d.ends_with("src/base/sys"));
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if code.contains("unsafe {") || code.contains("unsafe fn") || code.contains("= unsafe")
            {
                assert!(
                    is_sys,
                    "{}:{}: unsafe outside the sys module (src/base/sys.rs, src/base/sys/)",
                    path.display(),
                    i + 1
                );
                let before = lines[..i]
                    .iter()
                    .rev()
                    .take(4)
                    .any(|l| l.contains("// SAFETY:"));
                assert!(
                    before,
                    "{}:{}: unsafe without a // SAFETY: comment",
                    path.display(),
                    i + 1
                );
            }
        }
    }
}

#[test]
fn no_bare_thread_spawn_and_no_stdout_printing() {
    for (path, text) in sources() {
        if !path.starts_with(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")) {
            continue;
        }
        let code = non_test(&text);
        assert!(
            !code.contains("thread::spawn("),
            "{}: spawn threads through thread::Builder with a name",
            path.display()
        );
        for bad in ["println!", "print!(", "dbg!(", "eprintln!", "eprint!("] {
            assert!(
                !code.contains(bad),
                "{}: {bad} is not allowed (stdout is the protocol; use the log module)",
                path.display()
            );
        }
        // The transport writes the protocol; lib.rs prints help and version before any server.
        let stdout_ok = path.ends_with("src/protocol/transport.rs") || path.ends_with("src/lib.rs");
        assert!(
            stdout_ok || !code.contains("io::stdout()"),
            "{}: only the writer thread touches stdout",
            path.display()
        );
    }
}

#[test]
fn request_path_modules_do_not_unwrap() {
    for name in [
        "protocol/server.rs",
        "protocol/mcp.rs",
        "tools/engine.rs",
        "process/record.rs",
        "process/table.rs",
        "base/pool.rs",
        "process/reaper.rs",
        "protocol/transport.rs",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(name);
        let text = fs::read_to_string(&path).unwrap();
        let code = non_test(&text);
        for bad in [".unwrap()", ".expect("] {
            assert!(
                !code.contains(bad),
                "{}: {bad} on a request path",
                path.display()
            );
        }
    }
}

/// `src/a/b.rs` as a module path `a/b` (`a/mod.rs` is `a`; `main.rs` and `lib.rs` keep
/// their file names).
fn module_name(path: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = path
        .strip_prefix(&src)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    match rel.as_str() {
        "main.rs" | "lib.rs" => rel,
        _ => rel
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .to_string(),
    }
}

fn src_files() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    sources()
        .into_iter()
        .filter(|(p, _)| p.starts_with(&src))
        .collect()
}

#[test]
fn architecture_lists_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let missing: Vec<String> = src_files()
        .iter()
        .map(|(p, _)| module_name(p))
        .filter(|m| !map.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not list these modules (as `name`): {missing:?}"
    );
}

#[test]
fn serde_only_in_the_protocol_modules() {
    // `server` still parses the envelope itself; issue 12 moves that into `jsonrpc`.
    let allowed = |m: &str| {
        m == "protocol/jsonrpc"
            || m.starts_with("protocol/jsonrpc/")
            || m == "protocol/mcp"
            || m.starts_with("protocol/mcp/")
            || m == "protocol/server"
            || m.starts_with("protocol/server/")
            // The JSON text writer, below every layer that writes JSON text (audit lines).
            || m == "base/json"
    };
    for (path, text) in src_files() {
        let m = module_name(&path);
        if allowed(&m) {
            continue;
        }
        let code = non_test(&text);
        for bad in ["serde_json", "serde::", "use serde"] {
            assert!(
                !code.contains(bad),
                "{}: {bad} outside jsonrpc and mcp (JSON is built only there)",
                path.display()
            );
        }
    }
}

#[test]
fn stdout_is_written_only_by_the_transport() {
    for (path, text) in src_files() {
        let m = module_name(&path);
        // lib.rs prints help and version before any server runs.
        if m == "protocol/transport" || m == "lib.rs" {
            continue;
        }
        let code = non_test(&text);
        for bad in ["io::stdout()", "STDOUT_FILENO", "from_raw_fd(1)"] {
            assert!(
                !code.contains(bad),
                "{}: {bad}: only the transport writes stdout",
                path.display()
            );
        }
    }
}
