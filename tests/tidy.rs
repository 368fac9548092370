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
        let is_sys = path.ends_with("src/sys.rs");
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
                    "{}:{}: unsafe outside src/sys.rs",
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
        let stdout_ok = path.ends_with("src/transport.rs") || path.ends_with("src/lib.rs");
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
        "server.rs",
        "mcp.rs",
        "engine.rs",
        "process.rs",
        "table.rs",
        "pool.rs",
        "reaper.rs",
        "transport.rs",
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
