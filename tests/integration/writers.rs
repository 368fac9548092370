//! No writer blocks the server: the audit log on a FIFO without a reader and on a full
//! file system, an audit line too long for any queue, an answer too large for the memory
//! the server may have, and `stop` after the server itself was frozen past the grace.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{path_str, wait_until, Server, TempDir};

fn audit_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not a whole JSON line ({e}): {l:?}"))
        })
        .collect()
}

#[test]
fn an_audit_fifo_without_a_reader_blocks_nothing() {
    let dir = TempDir::new("audit-fifo");
    let fifo = dir.path().join("audit.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // `ready` is `initialize`, answered although nobody reads the FIFO.
    let server = Server::ready_with_env(&[("YIELDSHELL_AUDIT_LOG", path_str(&fifo))]);
    let n = 60;
    for i in 0..n {
        let r = server.sh(&format!("echo {i}"));
        assert_eq!(r["stdout"], format!("{i}\n"), "{r}");
    }
    // A reader comes: every queued line arrives whole, in order.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap_or_default())
    };
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(5)).is_some());
    let lines = audit_lines(&reader.join().expect("reader"));
    assert_eq!(lines.len(), n, "{lines:?}");
    assert!(lines.iter().all(|l| l["event"] == "execution"));
}

/// A tmpfs of 64 KiB, unmounted on drop.
struct SmallFs(std::path::PathBuf);

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn an_audit_log_on_a_full_disk_keeps_whole_lines_and_counts_what_it_lost() {
    let dir = TempDir::new("audit-full");
    let mnt = dir.mkdir("fs");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs here (not root?)");
        return;
    }
    let _fs = SmallFs(mnt.clone());
    let filler = mnt.join("filler");
    std::fs::write(&filler, vec![b'x'; 40 * 1024]).expect("filler");
    let log = mnt.join("audit.log");
    let server = Server::ready_with_env(&[("YIELDSHELL_AUDIT_LOG", path_str(&log))]);
    // Lines of about 2 KiB: the disk fills after a dozen; every call is still answered.
    let long = "x".repeat(2000);
    let mut calls = 0;
    while !server.stderr_text().contains("cannot write the audit log") {
        server.sh(&format!("true {long}"));
        calls += 1;
        assert!(
            calls < 200,
            "the disk never filled: {}",
            server.stderr_text()
        );
    }
    for _ in 0..10 {
        server.sh(&format!("true {long}"));
    }
    // Room again: the next line is written, and the count of lost lines reported (the
    // writer may still hold lines of the calls above: they are written or lost in order).
    std::fs::remove_file(&filler).expect("free the disk");
    server.sh("echo after");
    let last_is_after = || {
        std::fs::read_to_string(&log)
            .ok()
            .and_then(|t| t.lines().last().map(str::to_string))
            .is_some_and(|l| l.contains("\"command\":\"echo after\""))
    };
    assert!(
        wait_until(Duration::from_secs(10), last_is_after),
        "{}",
        server.stderr_text()
    );
    let lines = audit_lines(&std::fs::read_to_string(&log).expect("log"));
    let lost = calls + 10 + 1 - lines.len();
    assert!(lost > 0, "nothing was lost on a full disk");
    let notice = format!("takes lines again; {lost} were dropped");
    assert!(
        wait_until(Duration::from_secs(10), || server
            .stderr_text()
            .contains(&notice)),
        "{lost} lost: {}",
        server.stderr_text()
    );
}

#[test]
fn an_audit_line_too_long_for_stderr_is_dropped_with_its_size() {
    let server = Server::ready();
    let command = format!("true # {}", "y".repeat(1_200_000));
    server.call(
        "exec",
        json!({"command": command, "side_effects": ["NONE"]}),
    );
    server.assert_alive();
    assert!(
        wait_until(Duration::from_secs(10), || server
            .stderr_text()
            .contains("bytes was dropped: longer than the 1048576 bytes")),
        "{}",
        server.stderr_text()
    );
    assert!(!server.stderr_text().contains("not being read"));
}

#[test]
fn a_read_larger_than_the_memory_limit_is_refused_not_fatal() {
    let cap = (200u64 << 20).to_string();
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_MAX_OUTPUT_BYTES", &cap),
        ("YIELDSHELL_MAX_BUFFER_BYTES", &cap),
    ]);
    // The server's address space: what it has now plus 350 MiB (as `ulimit -v` would).
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).expect("status");
    let vm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmSize");
    let bytes = (vm_kib << 10) + (350 << 20);
    let set = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", server.pid()))
        .arg(format!("--as={bytes}:{bytes}"))
        .status();
    if !set.is_ok_and(|s| s.success()) {
        eprintln!("skipped: prlimit (util-linux) cannot set the server's RLIMIT_AS here");
        return;
    }
    let r = server.exec(json!({
        "command": "head -c 150000000 /dev/zero | tr '\\0' a",
        "yield_ms": 0, "max_output_bytes": 100}));
    let id = r["process_id"].as_str().expect("id").to_string();
    let done = server.call_ok(
        "wait",
        json!({"process_id": id, "timeout_ms": 60000, "max_output_bytes": 100}),
    );
    assert_eq!(done["wait_result"], "exited", "{done}");
    let refused = server.call(
        "read",
        json!({"process_id": id, "since_seq": 0, "max_output_bytes": 200u64 << 20}),
    );
    let text = refused.to_string();
    assert!(
        text.contains("more than the server can allocate"),
        "{}",
        &text[..text.len().min(500)]
    );
    let small = server.call_ok("read", json!({"process_id": id, "max_output_bytes": 1000}));
    assert!(
        small["stdout"].as_str().is_some_and(|s| s.starts_with('a')),
        "{small}"
    );
    server.assert_alive();
}

#[test]
fn stop_after_the_server_was_frozen_reports_in_order() {
    let server = Server::ready();
    let dir = TempDir::new("stop-order");
    let flag = dir.path().join("got-term");
    let id = server.spawn_bg(&format!(
        "trap 'touch {}' TERM; echo ready; while :; do sleep 0.05; done",
        path_str(&flag)
    ));
    server.wait_for_output(&id, "ready");
    let stop = server.send_request(
        "tools/call",
        json!({"name": "stop", "arguments": {"process_id": id, "force_after_ms": 100}}),
    );
    assert!(wait_until(Duration::from_secs(10), || flag.exists()));
    // The server frozen past the grace and the room after SIGKILL (4 s): its escalation and
    // the stop's deadline come due together when it runs again.
    server.signal(libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(4600));
    let resumed = Instant::now();
    server.signal(libc::SIGCONT);
    let answer = server.response(&stop, Duration::from_secs(20));
    let text = answer.to_string();
    assert!(
        !text.contains("after SIGKILL"),
        "stop reported a SIGKILL it had not sent yet: {text}"
    );
    // `stopped` is left out at its default, true.
    assert_eq!(answer["result"]["isError"], false, "{text}");
    assert_ne!(
        answer["result"]["structuredContent"]["stopped"], false,
        "{text}"
    );
    assert!(
        resumed.elapsed() < Duration::from_secs(6),
        "{:?}",
        resumed.elapsed()
    );
}
