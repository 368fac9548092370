//! Many hosts: the server carried by a remote channel such as
//! `ssh -T host yieldshell`. A `sh -c 'exec yieldshell'` wrapper stands in for the remote
//! login shell, its stdin and stdout are plain byte pipes (no terminal), and its stderr is
//! a separate pipe, as ssh keeps it. Only protocol lines may cross stdout, and end of
//! input must still shut the server down.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Reads a pipe to its end on a thread; the bytes arrive on the returned channel.
fn drain(mut pipe: impl Read + Send + 'static) -> crossbeam_channel::Receiver<Vec<u8>> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = pipe.read_to_end(&mut all);
        let _ = tx.send(all);
    });
    rx
}

#[test]
fn through_a_shell_wrapper_only_protocol_lines_cross_and_eof_shuts_down() {
    let _quiet = crate::support::time_bound();
    let mut command = Command::new("/bin/sh");
    // The remote side of `ssh -T host yieldshell`: a shell that execs the server.
    command
        .args(["-c", "exec \"$0\"", env!("CARGO_BIN_EXE_yieldshell")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("YIELDSHELL_")) {
            command.env_remove(name);
        }
    }
    // Ask for chatty logs: they must all stay on stderr.
    command.env("YIELDSHELL_LOG", "debug");
    let mut child = command.spawn().expect("spawn sh -c 'exec yieldshell'");
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "hosts-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "exec",
            "arguments": {"command": "echo out; echo err >&2", "side_effects": ["NONE"]}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ];
    let mut stdin = child.stdin.take().expect("stdin");
    for m in &messages {
        writeln!(stdin, "{m}").expect("write to the server");
    }
    // End of input, as when the client hangs up the ssh session.
    drop(stdin);
    let closed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("the server did not exit within 10 s of end of input");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = closed.elapsed();
    assert!(status.success(), "exit status {status:?}");
    assert!(
        took < crate::support::loaded(Duration::from_secs(3)),
        "exit took {took:?}"
    );

    let out = stdout
        .recv_timeout(Duration::from_secs(10))
        .expect("stdout ends");
    let err = stderr
        .recv_timeout(Duration::from_secs(10))
        .expect("stderr ends");
    let out = String::from_utf8(out).expect("stdout is UTF-8");
    assert!(
        out.ends_with('\n'),
        "stdout ends with a whole line: {out:?}"
    );
    let mut ids = Vec::new();
    for line in out.lines() {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a protocol line on stdout ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(
            message.get("result").is_some() || message.get("error").is_some(),
            "only answers are expected here: {line}"
        );
        ids.push(message["id"].as_i64().unwrap_or(-1));
        if message["id"] == 3 {
            let result = &message["result"]["structuredContent"];
            assert_eq!(result["stdout"], "out\n", "{line}");
            assert_eq!(result["stderr"], "err\n", "{line}");
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 3, 4], "each request answered once: {out}");
    let err = String::from_utf8_lossy(&err);
    assert!(
        err.contains("yieldshell"),
        "the logs went to stderr: {err:.2000}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("{\"")),
        "no protocol message on stderr: {err:.2000}"
    );
}
