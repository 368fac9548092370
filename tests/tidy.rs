//! Tidy checks over the source tree: the conventions of ARCHITECTURE.md ("How the code is
//! written") that a compiler does not enforce.

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
            || path.ancestors().any(|d| d.ends_with("src/base/sys"));
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
    // `server` parses the envelope itself.
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

/// Text files of the repository whose prose a reader meets: the sources, tests, benches and
/// scripts, and the documents (`*.md` at the root and in `docs/`).
fn prose_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| ["rs", "sh", "py", "md", "cases"].iter().any(|e| x == *e))
            {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "scripts", "docs"] {
        walk(&root.join(dir), &mut files);
    }
    for e in fs::read_dir(root).unwrap().flatten() {
        let p = e.path();
        if p.is_file() && p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    files.sort();
    files
}

/// Whether `line` holds `word` (lower case) followed by a space and a digit (a number).
fn word_and_number(line: &str, word: &str) -> bool {
    let lower = line.to_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(word) {
        let at = from + i;
        let before_ok = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = &lower.as_bytes()[at + word.len()..];
        if before_ok && rest.first() == Some(&b' ') && rest.get(1).is_some_and(u8::is_ascii_digit) {
            return true;
        }
        from = at + word.len();
    }
    false
}

/// What a line of `path` may not say: a document outside the repository, or the history of
/// a change. The repository's documents stand alone, and a comment says why the code is as it
/// is now. The needles are built from pieces so that this file does not name them itself.
fn outside_reference(path: &Path, line: &str) -> Option<String> {
    let spec = ["SP", "EC"].concat();
    let anywhere = [
        format!("{spec}.md"),
        ["ST", "YLE.md"].concat(),
        format!("{spec} section"),
        format!("{spec} §"),
        ["/work/", "shared"].concat(),
        ["../", "shared/"].concat(),
    ];
    for n in &anywhere {
        if line.contains(n.as_str()) {
            return Some(n.clone());
        }
    }
    if (0..10).any(|d| line.contains(&format!("{spec} {d}"))) {
        return Some(format!("{spec} <number>"));
    }
    // A reference broken over two lines: "(SPEC" at the end of one.
    if line.trim_end().ends_with(&format!("({spec}"))
        || line.trim_end().ends_with(&format!(" {spec}"))
    {
        return Some(format!("{spec} at the end of a line"));
    }
    let lower = line.to_lowercase();
    for n in [
        ["red ", "team"].concat(),
        ["red", "team"].concat(),
        ["red-", "team"].concat(),
    ] {
        if lower.contains(&n) {
            return Some(n);
        }
    }
    // History words only in prose: a comment of a source, or any line of a document.
    let md = path.extension().is_some_and(|x| x == "md");
    let trimmed = line.trim_start();
    let comment = trimmed.starts_with("//") || trimmed.starts_with('#');
    if md || comment {
        for w in [
            ["iss", "ue"].concat(),
            ["iss", "ues"].concat(),
            ["rou", "nd"].concat(),
        ] {
            if word_and_number(line, &w) {
                return Some(format!("{w} <number>"));
            }
        }
    }
    None
}

#[test]
fn no_reference_to_outside_documents_or_history() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for path in prose_files() {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(what) = outside_reference(&path, line) {
                found.push(format!("{rel}:{}: {what}", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "comments and documents say why things are as they are now, and name no file \
         outside the repository; say the reason, or point to a file in it (docs/, \
         SECURITY.md, ARCHITECTURE.md):\n{}",
        found.join("\n")
    );
}

/// The `static`s the server may hold, by file and name, each with the reason it is not on
/// the engine: what a second engine in the same process must share (the process's own
/// children, stderr, its seccomp filter), a value computed once from what cannot change
/// while the process runs, or a guard of a call that is not thread-safe. Anything else
/// belongs on the engine (`tools/engine::Engine`), so two engines never share it.
const ALLOWED_STATICS: &[(&str, &str, &str)] = &[
    (
        "src/base/log.rs",
        "QUEUE",
        "stderr is the process's: one writer queue for every thread and engine",
    ),
    (
        "src/base/log.rs",
        "LEVEL",
        "the log level of the process's stderr, read by every log call",
    ),
    (
        "src/base/sys/pty.rs",
        "OPENPTY",
        "openpty's ptsname buffer is shared by the whole process",
    ),
    (
        "src/base/sys/windows.rs",
        "SERVER_JOB",
        "the process's own job, open until the process ends (one per process)",
    ),
    (
        "src/base/sys/windows/job.rs",
        "TABLE",
        "the process's children and their jobs: Windows gives a process one set of handles",
    ),
    (
        "src/base/sys/windows.rs",
        "CONSOLE",
        "whether the process has a console, a constant computed once",
    ),
    (
        "src/base/sys/windows.rs",
        "WAKERS",
        "who to wake when one of the process's children exits (the SIGCHLD of Windows)",
    ),
    (
        "src/base/sys/windows.rs",
        "ON_SIGNAL",
        "a console control handler's state: the process has one set of handlers",
    ),
    (
        "src/process/groups.rs",
        "PID",
        "the guardian among the process's children: the kernel gives a process one set of children",
    ),
    (
        "src/process/groups.rs",
        "LIVE",
        "which of the process's children lead live groups (one set of children per process)",
    ),
    (
        "src/process/groups.rs",
        "STARTS",
        "start times of groups led by the process's children",
    ),
    (
        "src/process/tree.rs",
        "SOLE",
        "whether the process (the binary) owns every one of its children",
    ),
    (
        "src/process/tree.rs",
        "ANNOUNCED",
        "orphans re-parented to the process, announced once each",
    ),
    (
        "src/process/tree.rs",
        "WATCH",
        "wakes the process's one orphan watch",
    ),
    (
        "src/process/tree.rs",
        "STARTED",
        "the process's subreaper children need one orphan watch",
    ),
    (
        "src/process/cgroup.rs",
        "NEXT_GROUP",
        "cgroup names are the process's: one counter, so two engines never share a name",
    ),
    (
        "src/process/tmpdir.rs",
        "BASE",
        "the process's directory of call directories, removed by main at exit",
    ),
    (
        "src/process/tmpdir.rs",
        "FREE",
        "call directories free for reuse under BASE",
    ),
    (
        "src/policy/sandbox/filter.rs",
        "CACHE",
        "seccomp programs built from constant tables",
    ),
    (
        "src/policy/sandbox/cwd.rs",
        "DIRS",
        "system, lookup and home directories of the process's environment, fixed while it runs",
    ),
    (
        "src/policy/sandbox/mod.rs",
        "INSTALLED",
        "the seccomp filter the process runs under (filters stack for good)",
    ),
    (
        "src/policy/sandbox/mod.rs",
        "DROPPED",
        "thread-local: the spawning thread's own bounding set",
    ),
    (
        "src/policy/trusted/git/options.rs",
        "TABLES",
        "git's option tables, read once from constant text",
    ),
    (
        "src/policy/trusted/git/lock.rs",
        "REGISTRY",
        "claims on trees on disk: git calls of two engines in one process race on the same files",
    ),
];

/// The names of the `static` items in `code` (not `&'static`, not in comments).
fn statics_of(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("static ") {
            let word_start = rest[..i]
                .chars()
                .last()
                .is_none_or(|c| c == ' ' || c == '(');
            let after = &rest[i + "static ".len()..];
            rest = after;
            if !word_start {
                continue;
            }
            let after = after.strip_prefix("mut ").unwrap_or(after);
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && after[name.len()..].trim_start().starts_with(':') {
                names.push(name);
            }
        }
    }
    names
}

/// The `static` items in the non-test code of `src`, as (file, name).
fn statics_in_src() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for (path, text) in src_files() {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        found.extend(
            statics_of(non_test(&text))
                .into_iter()
                .map(|n| (rel.clone(), n)),
        );
    }
    found
}

#[test]
fn the_static_scan_finds_items_not_lifetimes_or_comments() {
    let code = "static A: u8 = 0;\npub(crate) static B: X = X;\n    static mut C : u8 = 0;\n\
                fn f() -> &'static str { \"\" }\n// static D: u8\n\
                thread_local! { static E: Cell<bool> = const { Cell::new(false) }; }\n";
    assert_eq!(statics_of(code), ["A", "B", "C", "E"]);
}

#[test]
fn every_static_is_listed_with_its_reason() {
    let found = statics_in_src();
    for (file, name) in &found {
        assert!(
            ALLOWED_STATICS
                .iter()
                .any(|(f, n, _)| f == file && n == name),
            "static {name} in {file} is not in ALLOWED_STATICS: state of the server belongs \
             on the engine (two engines in one process must not share it); keep a static \
             only for what the process has once (its children, stderr, a signal handler's \
             state) or a constant computed once, and list it there with the reason"
        );
    }
    for (file, name, reason) in ALLOWED_STATICS {
        assert!(!reason.is_empty(), "{name} in {file} needs a reason");
        assert!(
            found.iter().any(|(f, n)| f == file && n == name),
            "ALLOWED_STATICS lists {name} in {file}, which is no longer there: remove it"
        );
    }
}

/// Names of values that hold an error's or a refusal's text. A decision taken by reading
/// such a text (`e.contains("Permission denied")`, `message.starts_with("Invalid
/// Request")`) breaks when the text is reworded: the meaning travels as a type instead
/// (`jsonrpc::Fault`, `sys::NotOpened`, `allow::NotAllowed`, `sys::SpawnError`).
/// Text searches on input (an argv, a path, a configuration value) are not errors and are
/// named otherwise.
const MESSAGE_NAMES: &[&str] = &[
    "e", "err", "error", "errors", "message", "msg", "refusal", "refused", "reason", "verdict",
    "detail", "why", "stderr",
];

/// The places that still read an error's text, each with its reason.
const READS_MESSAGE_TEXT: &[(&str, &str, &str)] = &[];

/// The receiver and the call of each `.contains("` / `.starts_with("` / `.ends_with("` in
/// `line` applied to a value named like an error text.
fn message_text_reads(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for call in [".contains(\"", ".starts_with(\"", ".ends_with(\""] {
        let mut from = 0;
        while let Some(at) = line[from..].find(call).map(|i| i + from) {
            from = at + call.len();
            // The receiver: the chain of names, fields and calls before the dot.
            let start = line[..at]
                .rfind(|c: char| !(c.is_alphanumeric() || "_.()".contains(c)))
                .map_or(0, |i| i + 1);
            let receiver = line[start..at].trim_start_matches(['(', '.']);
            let named_like_a_message = receiver
                .split(['.', '(', ')'])
                .any(|part| MESSAGE_NAMES.contains(&part));
            if named_like_a_message {
                let end = line[from..].find(')').map_or(line.len(), |i| from + i + 1);
                found.push(format!("{receiver}{}", &line[at..end]));
            }
        }
    }
    found
}

#[test]
fn the_reader_of_message_texts_finds_them() {
    let old = "let code = if refused.message.starts_with(\"Invalid Request\") {";
    assert_eq!(
        message_text_reads(old),
        ["refused.message.starts_with(\"Invalid Request\")"]
    );
    assert_eq!(
        message_text_reads("    if e.to_string().contains(\"denied\") && x"),
        ["e.to_string().contains(\"denied\")"]
    );
    assert!(message_text_reads("if arg.starts_with(\"--config\") {").is_empty());
    assert!(message_text_reads("lower.contains(\"::\") || value.contains(\"::\")").is_empty());
}

#[test]
fn no_decision_reads_an_error_message() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut allowed_seen = Vec::new();
    for (path, text) in src_files() {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        for (n, line) in non_test(&text).lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for read in message_text_reads(line) {
                let allowed = READS_MESSAGE_TEXT
                    .iter()
                    .any(|(file, code, _)| rel == *file && read == *code);
                match allowed {
                    true => allowed_seen.push((rel.clone(), read)),
                    false => found.push(format!("{rel}:{}: {read}", n + 1)),
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "decisions that read an error's text (carry the meaning as a type, or add the \
         place to READS_MESSAGE_TEXT with the reason):\n{}",
        found.join("\n")
    );
    for (file, code, _) in READS_MESSAGE_TEXT {
        assert!(
            allowed_seen.iter().any(|(f, c)| f == file && c == code),
            "{file}: `{code}` is gone: remove it from READS_MESSAGE_TEXT"
        );
    }
}
