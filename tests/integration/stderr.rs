//! A client that never reads the server's stderr (for example audit and log lines
//! filled the pipe and the server stopped answering after about 80 calls). Every line for
//! stderr goes through one writer thread with a bounded queue, so the server keeps
//! answering; what did not fit is counted, and the count is written once stderr is read.

use std::io::{BufRead, BufReader, Read, Write};

use serde_json::{json, Value};

use crate::support::{piped_command, send_signal, LATEST};

#[test]
fn a_client_that_never_reads_stderr_is_still_answered() {
    // Debug logging and an audit line per call: far more than a pipe holds (64 KiB).
    let mut child = piped_command(
        &[("ALLOW_COMMANDS", "echo"), ("YIELDSHELL_LOG", "debug")],
        &[],
    )
    .spawn()
    .expect("start the server");
    // A server that stops answering is killed after a minute, so the test fails (an
    // answer's read meets the end of stdout) instead of hanging.
    let pid = child.id() as i32;
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            send_signal(pid, libc::SIGKILL);
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut stderr = child.stderr.take().expect("stderr");
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}").expect("write a request");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read an answer");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    };
    request(
        0,
        "initialize",
        json!({"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let word = "x".repeat(2000);
    for id in 1..=400 {
        let r = request(
            id,
            "tools/call",
            json!({"name": "shell_execute", "arguments": {"command": ["echo", word]}}),
        );
        assert_eq!(
            r["result"]["structuredContent"]["status"], 0,
            "call {id}: {r}"
        );
    }
    let _ = done.send(());
    drop(stdin);
    let mut text = String::new();
    stderr.read_to_string(&mut text).expect("read stderr");
    assert!(child.wait().expect("wait").success());
    assert!(
        text.contains("lines of log and audit were dropped: stderr was not being read"),
        "{} bytes of stderr, no notice of what was dropped",
        text.len()
    );
    // What was written is whole lines, the last call's audit line among them.
    assert!(text.ends_with('\n'));
    assert!(text.contains("yieldshell: AUDIT"), "no audit line");
}
