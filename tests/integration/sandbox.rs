//! The kernel sandbox through the real binary.
//!
//! The tests prove that the kernel, not the argument table, does the refusing: harmless
//! programs are copied under names the hardening table does not know (`env` as `runner`,
//! `tee` as `writer`, `kill` as `zap`, `cat` as `reader`, `touch` as `marker`, `xargs` as
//! `feeder`, `curl` as `fetch`) into a private safe `PATH`, allowlisted, and asked to do what
//! the policy forbids. Each refusal is paired with the same call under
//! `YIELDSHELL_SANDBOX=off`, which succeeds: the table lets it through, the kernel does not.
//! Tests that need Landlock skip with a printed reason on a kernel without it; the fallback
//! and refusal tests pretend an older kernel through a test-only variable.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::renamed::Renamed;
use crate::support::{all_text, is_error, path_str, run_binary, unique_marker, wait_until, Server};

const PROGRAMS: &[(&str, &str)] = &[
    ("runner", "/usr/bin/env"),
    ("writer", "/usr/bin/tee"),
    ("zap", "/usr/bin/kill"),
    ("reader", "/usr/bin/cat"),
    ("marker", "/usr/bin/touch"),
    ("feeder", "/usr/bin/xargs"),
    ("fetch", "/usr/bin/curl"),
];

/// The Landlock ABI of this kernel; prints why a test is skipped when below `need`.
fn kernel_has(need: u32, test: &str) -> bool {
    let abi = yieldshell::internals::sys::landlock_abi().unwrap_or(0);
    if abi < need {
        eprintln!("skipped {test}: needs Landlock ABI {need}, this kernel has ABI {abi}");
        return false;
    }
    true
}

/// The allowlist of these tests: every renamed program.
const ALLOWED: &str = "runner,writer,zap,reader,marker,feeder,fetch,scr";

/// The fixture of these tests: `Renamed` with their programs.
struct Fixture(Renamed);

impl std::ops::Deref for Fixture {
    type Target = Renamed;
    fn deref(&self) -> &Renamed {
        &self.0
    }
}

impl Fixture {
    fn new(label: &str) -> Fixture {
        Fixture(Renamed::new(label, PROGRAMS))
    }

    /// A trusted-mode server allowing the renamed programs, working in `work`.
    fn trusted(&self, extra: &[(&str, &str)]) -> Server {
        self.0.trusted(ALLOWED, extra)
    }
}

/// `shell_execute` of `argv`: (succeeded, all text blocks joined).
fn run(server: &Server, argv: &[&str]) -> (bool, String) {
    let result = server.call("shell_execute", json!({ "command": argv }));
    let text = all_text(&result);
    (!is_error(&result), text)
}

/// Shell-mode `exec` to completion: (exit code, stdout + stderr).
fn sh(server: &Server, command: &str) -> (Option<i64>, String) {
    let r = server.exec(json!({ "command": command, "yield_ms": 15000 }));
    assert_eq!(r["status"], "completed", "{command}: {r}");
    let text = format!(
        "{}{}",
        r["stdout"].as_str().unwrap_or_default(),
        r["stderr"].as_str().unwrap_or_default()
    );
    (r["exit_code"].as_i64(), text)
}

const OFF: (&str, &str) = ("YIELDSHELL_SANDBOX", "off");
/// The same calls without a per-command cgroup (as a server that is not root runs).
const NO_CGROUP: (&str, &str) = ("YIELDSHELL_CGROUP", "off");

#[test]
fn an_allowed_program_cannot_execute_one_that_is_not_allowed() {
    if !kernel_has(
        1,
        "an_allowed_program_cannot_execute_one_that_is_not_allowed",
    ) {
        return;
    }
    let fx = Fixture::new("sbx-exec");
    for extra in [&[][..], &[NO_CGROUP][..]] {
        let server = fx.trusted(extra);
        let (ok, text) = run(&server, &["runner", "touch", "MARK"]);
        assert!(!ok, "runner touch must fail: {text}");
        assert!(text.contains("Permission denied"), "{text}");
        assert!(
            !fx.work.join("MARK").exists(),
            "touch ran inside the sandbox"
        );
        // An allowed program started by an allowed program runs.
        let (ok, text) = run(&server, &["runner", "marker", "MARK2"]);
        assert!(ok, "{text}");
        assert!(fx.work.join("MARK2").exists());
        std::fs::remove_file(fx.work.join("MARK2")).expect("remove MARK2");
    }
    // The table lets the same call through: without the sandbox, touch runs.
    let server = fx.trusted(&[OFF]);
    let (ok, text) = run(&server, &["runner", "touch", "MARK"]);
    assert!(ok && fx.work.join("MARK").exists(), "{text}");
}

#[test]
fn writes_are_confined_to_the_working_directory() {
    if !kernel_has(1, "writes_are_confined_to_the_working_directory") {
        return;
    }
    let fx = Fixture::new("sbx-write");
    let outside = fx.out("f");
    for extra in [&[][..], &[NO_CGROUP][..]] {
        let server = fx.trusted(extra);
        let (ok, text) = run(&server, &["writer", &outside]);
        assert!(!ok, "writer outside must fail: {text}");
        assert!(text.contains("Permission denied"), "{text}");
        assert!(!Path::new(&outside).exists());
        let (ok, text) = run(&server, &["writer", "f"]);
        assert!(ok, "{text}");
        assert!(fx.work.join("f").exists());
        // Removing and renaming outside is refused as well; /dev/null stays writable.
        std::fs::write(fx.outside.join("keep"), "x").expect("write keep");
        let (ok, _) = run(&server, &["writer", "-a", &fx.out("keep")]);
        assert!(!ok, "appending to an existing outside file must fail");
        let (ok, text) = run(&server, &["writer", "/dev/null"]);
        assert!(ok, "{text}");
    }
    let server = fx.trusted(&[OFF]);
    let (ok, text) = run(&server, &["writer", &outside]);
    assert!(ok && Path::new(&outside).exists(), "{text}");
}

#[test]
fn the_server_cannot_be_signalled_or_read() {
    if !kernel_has(6, "the_server_cannot_be_signalled_or_read") {
        return;
    }
    let fx = Fixture::new("sbx-scope");
    for extra in [&[][..], &[NO_CGROUP][..]] {
        let server = fx.trusted(extra);
        let pid = server.pid().to_string();
        // Signal 0 only probes, so a failure of the sandbox would not kill the server.
        let (ok, text) = run(&server, &["zap", "-0", &pid]);
        assert!(!ok, "zap -0 <server> must fail: {text}");
        let (ok, text) = run(&server, &["reader", &format!("/proc/{pid}/environ")]);
        assert!(!ok, "reading the server's environ must fail: {text}");
        let (ok, text) = run(&server, &["reader", &format!("/proc/{pid}/mem")]);
        assert!(!ok, "reading the server's memory must fail: {text}");
        server.assert_alive();
    }
    let server = fx.trusted(&[OFF]);
    let pid = server.pid().to_string();
    let (ok, text) = run(&server, &["zap", "-0", &pid]);
    assert!(ok, "without the sandbox zap -0 reaches the server: {text}");
    // As root (CAP_SYS_PTRACE) even a non-dumpable server's environ is readable without
    // the sandbox: the refusal above is Landlock's.
    if is_root() {
        let (ok, text) = run(&server, &["reader", &format!("/proc/{pid}/environ")]);
        assert!(ok, "{text}");
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn every_pipeline_stage_is_confined() {
    if !kernel_has(1, "every_pipeline_stage_is_confined") {
        return;
    }
    let fx = Fixture::new("sbx-pipe");
    std::fs::write(fx.work.join("in.txt"), "data\n").expect("write in.txt");
    let server = fx.trusted(&[]);
    let outside = fx.out("p");
    let (ok, text) = run(&server, &["reader", "in.txt", "|", "writer", &outside]);
    assert!(!ok && text.contains("Permission denied"), "{text}");
    assert!(!Path::new(&outside).exists());
    // The pipeline's status is the last stage's; the first stage was refused its exec.
    let (_, text) = run(&server, &["runner", "touch", "X", "|", "writer", "y"]);
    assert!(text.contains("Permission denied"), "{text}");
    assert!(!fx.work.join("X").exists() && fx.work.join("y").exists());
    // The trusted exec tool's pipelines too.
    let r = server
        .exec(json!({"command": format!("reader in.txt | writer {outside}"), "yield_ms": 15000}));
    assert_eq!(r["status"], "completed", "{r}");
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!Path::new(&outside).exists());
}

#[test]
fn a_backgrounded_exec_and_its_grandchildren_stay_confined() {
    if !kernel_has(1, "a_backgrounded_exec_and_its_grandchildren_stay_confined") {
        return;
    }
    let fx = Fixture::new("sbx-bg");
    let server = fx.trusted(&[]);
    // xargs (as feeder) waits for input, then starts marker (touch) for each line: actions
    // taken long after the call returned, by a grandchild of the server.
    let r = server.exec(json!({"command": "feeder marker", "yield_ms": 50, "close_stdin": false}));
    assert_eq!(r["status"], "backgrounded", "{r}");
    let id = r["process_id"].as_str().expect("process_id").to_string();
    let late = fx.out("late");
    server.call_ok(
        "write",
        json!({"process_id": id, "input": format!("{late} inside_late"), "newline": true, "close_stdin": true}),
    );
    let done = server.wait_exit_of(&id);
    assert_ne!(done["exit_code"], 0, "{done}");
    assert!(fx.work.join("inside_late").exists(), "{done}");
    assert!(
        !Path::new(&late).exists(),
        "a later action escaped the sandbox"
    );
    // A great-grandchild: runner starts runner, which starts marker.
    let g = fx.out("g");
    let (ok, text) = run(&server, &["runner", "runner", "marker", &g]);
    assert!(!ok && !Path::new(&g).exists(), "{text}");
    let (ok, text) = run(&server, &["runner", "runner", "marker", "g"]);
    assert!(ok && fx.work.join("g").exists(), "{text}");
}

#[test]
fn allow_patterns_are_resolved_when_the_call_is_made() {
    if !kernel_has(1, "allow_patterns_are_resolved_when_the_call_is_made") {
        return;
    }
    let fx = Fixture::new("sbx-pattern");
    std::fs::write(fx.work.join("in.txt"), "pattern-data\n").expect("write in.txt");
    let path = fx.safe_path();
    let server = Server::ready_with_env(&[
        ("ALLOW_PATTERNS", "r[a-z]+"),
        ("YIELDSHELL_UNREVIEWED_COMMANDS", "runner"),
        ("MCP_SHELL_SAFE_PATH", &path),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.work)),
    ]);
    // runner and reader match the pattern; marker does not.
    let (ok, text) = run(&server, &["runner", "reader", "in.txt"]);
    assert!(ok && text.contains("pattern-data"), "{text}");
    let (ok, text) = run(&server, &["runner", "marker", "M"]);
    assert!(!ok && !fx.work.join("M").exists(), "{text}");
    // A program that appears after the server started is found at the next call.
    std::fs::copy("/usr/bin/cat", fx.bin.join("rcat")).expect("copy cat");
    let (ok, text) = run(&server, &["runner", "rcat", "in.txt"]);
    assert!(ok && text.contains("pattern-data"), "{text}");
}

#[test]
fn a_script_whose_interpreter_is_not_allowed_is_refused_with_the_reason() {
    if !kernel_has(
        1,
        "a_script_whose_interpreter_is_not_allowed_is_refused_with_the_reason",
    ) {
        return;
    }
    let fx = Fixture::new("sbx-script");
    let script = fx.bin.join("scr");
    std::fs::write(&script, "#!/bin/sh\necho from-script\n").expect("write script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let server = fx.trusted(&[]);
    let (ok, text) = run(&server, &["scr"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("script for /bin/sh") && text.contains("allow sh"),
        "{text}"
    );
    let server = fx.trusted(&[OFF]);
    let (ok, text) = run(&server, &["scr"]);
    assert!(ok && text.contains("from-script"), "{text}");
}

#[test]
fn shell_mode_workspace_confines_writes_and_scopes_signals() {
    if !kernel_has(6, "shell_mode_workspace_confines_writes_and_scopes_signals") {
        return;
    }
    let fx = Fixture::new("sbx-ws");
    let server = fx.shell(&[
        ("YIELDSHELL_SANDBOX", "workspace"),
        ("YIELDSHELL_ALLOWED_CWDS", path_str(&fx.work)),
    ]);
    let tmp = std::env::temp_dir().join(unique_marker("sbx-ws-tmp"));
    let (code, text) = sh(
        &server,
        &format!(
            "echo x > inside && echo y > {} && touch t2 && echo ok",
            tmp.display()
        ),
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(fx.work.join("inside").exists() && tmp.exists());
    let _ = std::fs::remove_file(&tmp);
    // `workspace` lets every command write beneath /tmp: when the fixture itself lies there
    // (a checkout in /tmp), the outside target must be elsewhere.
    let tmp_root = std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| "/tmp".into());
    let elsewhere = fx.outside.starts_with(&tmp_root).then(|| {
        [
            std::env::var_os("HOME").map(PathBuf::from),
            Some("/var/tmp".into()),
        ]
        .into_iter()
        .flatten()
        .map(|b| b.join(unique_marker("sbx-ws-outside")))
        .find(|d| !d.starts_with(&tmp_root) && std::fs::create_dir_all(d).is_ok())
        .expect("a writable directory outside /tmp")
    });
    let outside = match &elsewhere {
        Some(dir) => dir.join("f").display().to_string(),
        None => fx.out("f"),
    };
    let (code, text) = sh(&server, &format!("echo x > {outside}"));
    assert_ne!(code, Some(0), "{text}");
    let (code, _) = sh(&server, &format!("sh -c 'sh -c \"echo x > {outside}\"'"));
    assert_ne!(code, Some(0));
    assert!(!Path::new(&outside).exists());
    let pid = server.pid();
    let (code, text) = sh(&server, &format!("kill -0 {pid}"));
    assert_ne!(code, Some(0), "kill -0 <server> must fail: {text}");
    let (code, text) = sh(&server, &format!("cat /proc/{pid}/environ"));
    assert_ne!(code, Some(0), "{text}");
    // A process of the same call can still be signalled: the scope is the call's domain.
    let (code, text) = sh(&server, "sleep 5 & kill $! && wait $!; echo status=$?");
    assert!(text.contains("status=143"), "{code:?} {text}");
    // Without the sandbox, shell mode writes anywhere.
    let server = fx.shell(&[]);
    let (code, text) = sh(&server, &format!("echo x > {outside}"));
    assert_eq!(code, Some(0), "{text}");
    if let Some(dir) = elsewhere {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn the_server_is_not_dumpable_so_a_shell_child_cannot_read_its_environ() {
    if !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: setpriv is not installed");
        return;
    }
    // The server runs without capabilities (same user as its children, so neither
    // CAP_SYS_PTRACE nor the capability-subset rule decides): only dumpability does.
    let fx = Fixture::new("sbx-dump");
    let mut child = std::process::Command::new("/usr/bin/setpriv")
        .args([
            "--inh-caps=-all",
            "--ambient-caps=-all",
            "--bounding-set=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_yieldshell"))
        .env_remove("ALLOW_COMMANDS")
        .env("YIELDSHELL_DEFAULT_CWD", &fx.work)
        .env("SECRET_FOR_DUMP_TEST", "value-that-must-not-leak")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the server under setpriv");
    let mut stdin = child.stdin.take().expect("stdin");
    let command = "cat /proc/$PPID/environ; echo server-rc=$?; \
                   for c in $(cat /proc/$PPID/task/*/children); do \
                     [ \"$(tr '\\0' '\\n' </proc/$c/cmdline | head -n1)\" = yieldshell-guardian ] && g=$c; \
                   done; echo guardian=${g:-none}; cat /proc/$g/environ; echo guardian-rc=$?; \
                   sleep 5 & cat /proc/$!/environ >/dev/null && echo sibling-readable; kill $!";
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": crate::support::LATEST, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "exec",
            "arguments": {"command": command, "side_effects": ["NONE"], "yield_ms": 15000}}}),
    ] {
        writeln!(stdin, "{message}").expect("write a request");
    }
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut answer = String::new();
    for line in std::io::BufRead::lines(stdout) {
        let line = line.expect("read a line");
        let v: Value = serde_json::from_str(&line).expect("a JSON line");
        if v["id"] == 2 {
            answer = v["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    // The text holds the output as it is, after a one-line header.
    let out = answer.clone();
    assert!(out.contains("server-rc=1"), "{answer}");
    // The guardian, started for this command, is not readable either (and has no secrets).
    assert!(!out.contains("guardian=none"), "{answer}");
    assert!(out.contains("guardian-rc=1"), "{answer}");
    assert!(!out.contains("value-that-must-not-leak"), "{answer}");
    assert!(out.contains("Permission denied"), "{answer}");
    // The same child reads a dumpable process of the same user: dumpability decided.
    assert!(out.contains("sibling-readable"), "{answer}");
}

/// A TCP listener that answers each connection with a tiny HTTP response and counts them.
fn listener() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a local listener");
    let port = l.local_addr().expect("local addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { break };
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 1024];
            let _ = c.read(&mut buf);
            let _ = c.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        }
    });
    (port, count)
}

#[test]
fn network_deny_blocks_tcp_in_both_modes() {
    if !kernel_has(4, "network_deny_blocks_tcp_in_both_modes") {
        return;
    }
    if !Path::new("/usr/bin/curl").exists() {
        eprintln!("skipped network_deny_blocks_tcp_in_both_modes: curl is not installed");
        return;
    }
    let fx = Fixture::new("sbx-net");
    let (port, count) = listener();
    let url = format!("http://127.0.0.1:{port}/");
    let deny = ("YIELDSHELL_NETWORK", "deny");
    let server = fx.trusted(&[deny]);
    let (ok, text) = run(&server, &["fetch", "-sS", "-m", "5", &url]);
    assert!(!ok, "{text}");
    let server = fx.shell(&[deny]);
    let (code, text) = sh(&server, &format!("curl -sS -m 5 {url}"));
    assert_ne!(code, Some(0), "{text}");
    let server = fx.shell(&[deny, ("YIELDSHELL_SANDBOX", "workspace")]);
    let (code, text) = sh(&server, &format!("curl -sS -m 5 {url}"));
    assert_ne!(code, Some(0), "{text}");
    assert_eq!(
        count.load(Ordering::SeqCst),
        0,
        "a denied connection arrived"
    );
    // Allowed (the default), the same calls connect.
    let server = fx.trusted(&[]);
    let (ok, text) = run(&server, &["fetch", "-sS", "-m", "5", &url]);
    assert!(ok && text.contains("hello"), "{text}");
    let server = fx.shell(&[]);
    let (code, text) = sh(&server, &format!("curl -sS -m 5 {url}"));
    assert!(code == Some(0) && text.contains("hello"), "{text}");
    assert!(wait_until(Duration::from_secs(20), || count
        .load(Ordering::SeqCst)
        == 2));
}

fn startup(env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = run_binary(&[], env);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn auto_falls_back_with_one_warning_and_on_refuses_without_landlock() {
    let allow = ("ALLOW_COMMANDS", "ls");
    let none = ("YIELDSHELL_TEST_LANDLOCK_ABI", "0");
    let (code, err) = startup(&[allow, none]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("has no Landlock").count(), 1, "{err}");
    assert!(err.contains("argument hardening alone"), "{err}");
    let (code, err) = startup(&[allow, none, ("YIELDSHELL_SANDBOX", "on")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("YIELDSHELL_SANDBOX=on needs Landlock"),
        "{err}"
    );
    // Shell mode's default asks nothing of the kernel, so it starts silently.
    let (code, err) = startup(&[none]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("Landlock"), "{err}");
    for (env, needs) in [
        (
            ("YIELDSHELL_SANDBOX", "workspace"),
            "Landlock filesystem rules",
        ),
        (("YIELDSHELL_NETWORK", "deny"), "TCP connect and bind rules"),
    ] {
        let (code, err) = startup(&[none, env]);
        assert_eq!(code, Some(2), "{env:?}: {err}");
        assert!(err.contains(needs), "{env:?}: {err}");
    }
}

#[test]
fn an_older_abi_is_named_feature_by_feature() {
    if !kernel_has(6, "an_older_abi_is_named_feature_by_feature") {
        return;
    }
    let allow = ("ALLOW_COMMANDS", "ls");
    let (code, err) = startup(&[allow, ("YIELDSHELL_TEST_LANDLOCK_ABI", "5")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("Landlock ABI 5"), "{err}");
    assert!(
        err.contains("without signal and abstract unix socket scoping"),
        "{err}"
    );
    let (code, err) = startup(&[
        ("YIELDSHELL_SANDBOX", "workspace"),
        ("YIELDSHELL_TEST_LANDLOCK_ABI", "5"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("needs signal and abstract unix socket scoping (Landlock ABI 6)"),
        "{err}"
    );
    let (code, err) = startup(&[
        ("YIELDSHELL_NETWORK", "deny"),
        ("YIELDSHELL_TEST_LANDLOCK_ABI", "3"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("ABI 4") && err.contains("ABI 3"), "{err}");
    // With ABI 3 the write confinement still holds: the fallback keeps what it can.
    let fx = Fixture::new("sbx-abi3");
    let server = fx.trusted(&[("YIELDSHELL_TEST_LANDLOCK_ABI", "3")]);
    let outside = fx.out("f");
    let (ok, text) = run(&server, &["writer", &outside]);
    assert!(!ok && !Path::new(&outside).exists(), "{text}");
    assert!(server.stderr_text().contains("Landlock ABI 3"));
}

#[test]
fn sandbox_options_are_checked_and_documented() {
    for (env, bad) in [
        (
            ("YIELDSHELL_SANDBOX", "strict"),
            "YIELDSHELL_SANDBOX=\"strict\"",
        ),
        (
            ("YIELDSHELL_NETWORK", "block"),
            "YIELDSHELL_NETWORK=\"block\"",
        ),
    ] {
        let (code, err) = startup(&[env]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(bad) && err.contains("expected"), "{err}");
    }
    let (code, err) = startup(&[
        ("ALLOW_COMMANDS", "ls"),
        ("YIELDSHELL_SANDBOX", "workspace"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("shell-mode"), "{err}");
    let out = run_binary(&["--network", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--network=\"nope\""));
    let help = String::from_utf8_lossy(&run_binary(&["--help"], &[]).stdout).into_owned();
    for needle in [
        "--sandbox",
        "YIELDSHELL_SANDBOX",
        "--network",
        "YIELDSHELL_NETWORK",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}");
    }
    assert!(
        !help.contains("YIELDSHELL_TEST_"),
        "test-only variables stay hidden"
    );
}

/// Rulesets are kept between calls: the calls of one directory share one, and a
/// call in another directory never gets it. Alternating twice, so the second round runs on
/// the kept rulesets: each directory's calls write only beneath it.
#[test]
fn a_kept_domain_serves_only_its_own_working_directory() {
    if !kernel_has(1, "a_kept_domain_serves_only_its_own_working_directory") {
        return;
    }
    let fx = Fixture::new("sbx-keep");
    let server = fx.trusted(&[]);
    let write = |dir: &Path, target: &Path| {
        let r = server.call(
            "shell_execute",
            json!({ "command": ["writer", path_str(target)], "directory": path_str(dir) }),
        );
        (!is_error(&r), r.to_string())
    };
    for round in 0..2 {
        for (cwd, other) in [(&fx.work, &fx.outside), (&fx.outside, &fx.work)] {
            let mine = cwd.join(format!("mine{round}"));
            let theirs = other.join(format!("theirs{round}"));
            let (ok, text) = write(cwd, &mine);
            assert!(
                ok && mine.exists(),
                "round {round}, {}: {text}",
                cwd.display()
            );
            let (ok, text) = write(cwd, &theirs);
            assert!(
                !ok,
                "round {round}: a call in {} wrote {}: {text}",
                cwd.display(),
                theirs.display()
            );
            assert!(text.contains("Permission denied"), "{text}");
            assert!(!theirs.exists());
        }
    }
    // The same calls without the sandbox write across: the kernel did the refusing.
    let server = fx.trusted(&[OFF]);
    let theirs = fx.outside.join("theirs-off");
    let r = server.call(
        "shell_execute",
        json!({ "command": ["writer", path_str(&theirs)], "directory": path_str(&fx.work) }),
    );
    assert!(!is_error(&r) && theirs.exists(), "{r}");
}

/// Calls that share a kept ruleset (same directory, same rules) still cannot reach each
/// other's processes: each process restricts itself, which makes a domain of its own, as
/// when every call built its domain.
#[test]
fn calls_sharing_a_kept_domain_cannot_signal_or_read_each_other() {
    if !kernel_has(
        6,
        "calls_sharing_a_kept_domain_cannot_signal_or_read_each_other",
    ) {
        return;
    }
    let fx = Fixture::new("sbx-apart");
    for sandbox in ["workspace", "off"] {
        let server = fx.shell(&[
            ("YIELDSHELL_SANDBOX", sandbox),
            ("YIELDSHELL_ALLOWED_CWDS", path_str(&fx.work)),
        ]);
        let first = server.exec(json!({ "command": "sleep 30", "yield_ms": 100 }));
        assert_eq!(first["status"], "backgrounded", "{first}");
        let pid = first["pid"].as_u64().expect("pid");
        // Two more calls, so a kept domain is certainly reused.
        for _ in 0..2 {
            let (code, text) = sh(&server, &format!("kill -0 {pid}"));
            let (rcode, rtext) = sh(&server, &format!("head -c 1 /proc/{pid}/environ"));
            if sandbox == "off" {
                assert_eq!(code, Some(0), "{text}");
                assert_eq!(rcode, Some(0), "{rtext}");
            } else {
                assert_ne!(
                    code,
                    Some(0),
                    "another call's process was signalled: {text}"
                );
                assert_ne!(rcode, Some(0), "another call's environ was read: {rtext}");
            }
        }
        let id = first["process_id"].as_str().expect("process_id");
        server.call_ok("stop", json!({ "process_id": id, "force_after_ms": 1000 }));
    }
}

/// The directories of the server's calls' temporary directories (`yieldshell-<pid>-*`).
fn temp_bases(server: &Server) -> Vec<PathBuf> {
    let prefix = format!("yieldshell-{}-", server.pid());
    std::fs::read_dir(std::env::temp_dir())
        .expect("read the temporary directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Each sandboxed call writes in a temporary directory of its own (TMPDIR), 0700, that no
/// other call may write and that is emptied when the call's processes are gone (and then
/// serves a later call); /tmp itself stays unwritable. The server's directory of them goes
/// when the server ends.
#[test]
fn each_call_has_a_private_temporary_directory_until_it_ends() {
    use std::os::unix::fs::PermissionsExt;
    if !kernel_has(
        1,
        "each_call_has_a_private_temporary_directory_until_it_ends",
    ) {
        return;
    }
    let fx = Fixture::new("sbx-tmp");
    let server = fx.trusted(&[]);
    let first = server.exec(json!({"command": "reader", "yield_ms": 0, "close_stdin": false}));
    let id = first["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let bases = temp_bases(&server);
    assert_eq!(bases.len(), 1, "{bases:?}");
    // The call's environment names its directory. Read until it shows: the spawn returns
    // when the kernel swaps in the new program's memory, and /proc reads its environment
    // as empty until the loader has laid it out a moment later.
    let environ = format!("/proc/{}/environ", first["pid"].as_u64().expect("pid"));
    let tmpdir = || {
        std::fs::read_to_string(&environ)
            .ok()?
            .split('\0')
            .find_map(|v| v.strip_prefix("TMPDIR=").map(str::to_string))
    };
    assert!(
        wait_until(Duration::from_secs(10), || tmpdir().is_some()),
        "TMPDIR never set: {:?}",
        std::fs::read(&environ)
    );
    let mine = PathBuf::from(tmpdir().expect("TMPDIR set"));
    assert!(mine.starts_with(&bases[0]), "{mine:?}");
    let mode = std::fs::metadata(&mine)
        .expect("the call's directory")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    std::fs::write(mine.join("left-behind"), "x").expect("write");
    // Another call writes neither there, nor beside it, nor in /tmp.
    for target in [
        mine.join("x"),
        bases[0].join("y"),
        std::env::temp_dir().join(crate::support::unique_marker("sbx-tmp")),
    ] {
        let (ok, text) = run(&server, &["marker", path_str(&target)]);
        assert!(
            !ok && text.contains("Permission denied"),
            "{target:?}: {text}"
        );
        assert!(!target.exists());
    }
    // It has a directory of its own.
    let (ok, text) = run(&server, &["runner"]);
    assert!(ok, "{text}");
    let own = text
        .lines()
        .find_map(|l| l.strip_prefix("TMPDIR="))
        .expect("TMPDIR set")
        .to_string();
    assert!(
        Path::new(&own).starts_with(&bases[0]) && own != path_str(&mine),
        "{own}"
    );
    server.call_ok("stop", json!({ "process_id": id, "force_after_ms": 1000 }));
    assert!(
        wait_until(Duration::from_secs(10), || !mine
            .join("left-behind")
            .exists()),
        "a stopped call's directory is emptied"
    );
    // A server that ends at the end of its input removes its directory.
    server.close_stdin();
    assert!(
        server.wait_exit(Duration::from_secs(10)).is_some(),
        "the server ends at the end of its input"
    );
    assert_eq!(
        temp_bases(&server),
        Vec::<PathBuf>::new(),
        "removed at exit"
    );
    // Without the sandbox, nothing is made.
    let off = fx.trusted(&[OFF]);
    let (ok, text) = run(&off, &["runner"]);
    assert!(
        ok && !text.contains(&format!("yieldshell-{}-", off.pid())),
        "{text}"
    );
}

/// `YIELDSHELL_WRITABLE_PATHS`: further places every sandboxed call may write, each named
/// in a startup warning; trusted mode refuses one it would refuse as a working directory.
#[test]
fn writable_paths_are_granted_and_warned_about() {
    if !kernel_has(1, "writable_paths_are_granted_and_warned_about") {
        return;
    }
    let fx = Fixture::new("sbx-writable");
    let outside = fx.out("granted");
    let server = fx.trusted(&[("YIELDSHELL_WRITABLE_PATHS", path_str(&fx.outside))]);
    let (ok, text) = run(&server, &["writer", &outside]);
    assert!(ok && Path::new(&outside).exists(), "{text}");
    assert!(
        server.stderr_text().contains(&format!(
            "YIELDSHELL_WRITABLE_PATHS: every sandboxed call may write beneath {}",
            fx.outside.display()
        )),
        "{}",
        server.stderr_text()
    );
    // Not a working directory: a call there is still refused where cwds are limited.
    let (code, err) = startup(&[
        ("ALLOW_COMMANDS", "ls"),
        ("YIELDSHELL_WRITABLE_PATHS", "/usr/local/bin"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("YIELDSHELL_WRITABLE_PATHS"), "{err}");
    let (code, err) = startup(&[("YIELDSHELL_WRITABLE_PATHS", "relative/dir")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not an absolute path"), "{err}");
    let help = String::from_utf8_lossy(&run_binary(&["--help"], &[]).stdout).into_owned();
    assert!(help.contains("--writable-paths") && help.contains("YIELDSHELL_WRITABLE_PATHS"));
}

/// The dynamic loader runs any program it is handed, so it is in a stage's domain only when
/// the stage's own program needs it. A static program that runs what it is told (accepted
/// without rules) cannot hand a program to the loader, nor start a dynamic program; a
/// dynamic stage of the same call still starts, and with the sandbox off the loader runs.
#[test]
fn a_static_stage_runs_without_the_loader() {
    if !kernel_has(1, "a_static_stage_runs_without_the_loader") {
        return;
    }
    let Some(loader) = [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/ld-linux-x86-64.so.2",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists()) else {
        eprintln!("skipped a_static_stage_runs_without_the_loader: no dynamic loader found");
        return;
    };
    let fx = Fixture::new("sbx-static");
    let source = fx.root.join("srunner.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n#include <unistd.h>\nint main(int c, char **v) {\n  \
         if (c < 2) return 2;\n  execv(v[1], v + 1);\n  perror(\"execv\");\n  return 127;\n}\n",
    )
    .expect("write the runner's source");
    let built = std::process::Command::new("cc")
        .args(["-static", "-O2", "-o"])
        .arg(fx.bin.join("srunner"))
        .arg(&source)
        .output();
    if !built.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped a_static_stage_runs_without_the_loader: cc -static failed: {built:?}");
        return;
    }
    let id = "/usr/bin/id";
    let allow = "srunner,reader";
    for (sandbox, extra) in [("on", &[][..]), ("off", &[OFF][..])] {
        let server = fx.0.trusted(allow, extra);
        let (ok, text) = run(&server, &["srunner", loader, id, "-u"]);
        match sandbox {
            "on" => assert!(
                !ok && text.contains("Permission denied") && !text.contains("\n0\n"),
                "sandbox on: the loader ran for a static stage: {text}"
            ),
            _ => assert!(ok, "sandbox off: the loader runs {id}: {text}"),
        }
        // A dynamic program, allowed, needs the loader the static stage does not have.
        let reader = path_str(&fx.bin.join("reader")).to_string();
        let (ok, text) = run(&server, &["srunner", &reader, "/etc/hostname"]);
        assert_eq!(ok, sandbox == "off", "sandbox {sandbox}: {text}");
        // The dynamic stage of a pipeline with a static one keeps its loader.
        std::fs::write(fx.work.join("in.txt"), "static-and-dynamic\n").expect("write in.txt");
        let result = server.call(
            "exec",
            json!({"command": "srunner /bin/true | reader in.txt", "side_effects": ["NONE"]}),
        );
        let text = all_text(&result);
        assert!(
            text.contains("static-and-dynamic"),
            "sandbox {sandbox}: the dynamic stage did not run: {text}"
        );
    }
}

/// A call may not make a set-user-id or set-group-id file (a root server's call would
/// otherwise leave a set-user-id copy of any program for the host's other users); ordinary
/// modes are set as before. With the sandbox off the bit is set.
#[test]
fn a_confined_call_cannot_make_a_set_id_file() {
    if !kernel_has(1, "a_confined_call_cannot_make_a_set_id_file") {
        return;
    }
    let fx = Fixture::new("sbx-setid");
    std::fs::copy("/usr/bin/id", fx.work.join("myid")).expect("copy id");
    let mode = |name: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(fx.work.join(name))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    };
    for (sandbox, extra) in [("on", &[][..]), ("off", &[OFF][..])] {
        let server = Server::ready_with_env(
            &[
                &[
                    ("ALLOW_COMMANDS", "chmod"),
                    ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.work)),
                ][..],
                extra,
            ]
            .concat(),
        );
        let (ok, text) = run(&server, &["chmod", "755", "myid"]);
        assert!(ok && mode("myid") == 0o755, "sandbox {sandbox}: {text}");
        let (ok, text) = run(&server, &["chmod", "4755", "myid"]);
        let (ok_g, text_g) = run(&server, &["chmod", "g+s", "myid"]);
        match sandbox {
            "on" => {
                assert!(!ok && text.contains("Operation not permitted"), "{text}");
                assert!(!ok_g, "{text_g}");
                assert_eq!(mode("myid"), 0o755, "sandbox on: a set-id bit was set");
            }
            _ => {
                assert!(ok && ok_g, "sandbox off: {text} {text_g}");
                assert_eq!(mode("myid") & 0o6000, 0o6000, "sandbox off");
            }
        }
        std::fs::set_permissions(
            fx.work.join("myid"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("reset the mode");
    }
}
