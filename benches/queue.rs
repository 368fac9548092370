//! Queue: the server's memory while a client stops reading stdout and keeps sending
//! requests whose answers are large.
//!
//! A server whose `read` answers are 1 MiB of output each (`YIELDSHELL_MAX_OUTPUT_BYTES=
//! 1048576`; about 2.2 MB on the wire, as the output and its JSON text) gets `COUNT` reads
//! of a 1.2 MB record at 100 a second from a client that does not read stdout. The stall
//! lasts until nothing more can change: the server stopped reading stdin (it logs so) and
//! every read it took has queued its answer; for the baseline, until every read was
//! answered. Then the client reads everything, and the server's RSS is read again once the
//! queue drained.
//!
//! Figures: the peak RSS (VmHWM) with the default bound (64 MiB of queued answers), against
//! the same server with the bound lifted (`YIELDSHELL_MAX_QUEUED_BYTES=1024G`, the
//! behaviour before the bound) as the baseline measured in the same run; and the RSS after
//! the drain against the idle RSS before the stall (target: within 16 MiB).
#![allow(clippy::print_stdout)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use common::{Figure, Report, Target, BIN};

fn main() {
    let mut report = Report::new("queue");
    let count = common::size(600, 12);
    let page = common::size(1_048_576, 65_536);
    let bounded = stalled_client(count, page, None);
    let lifted = stalled_client(count, page, Some("1024G"));
    report.add(
        Figure::new("peak RSS, stalled client", "MiB", bounded.peak)
            .baseline(lifted.peak, "bound lifted")
            .target(Target::AtMost(200.0))
            .note(format!(
                "{count} reads of {} KiB at 100/s; idle {:.1} MiB; bound lifted: every answer queued",
                page / 1024,
                bounded.idle
            )),
    );
    report.add(
        Figure::new("RSS after the drain", "MiB", bounded.after)
            .baseline(bounded.idle, "idle, before the stall")
            .target(Target::AtMost(bounded.idle + 16.0))
            .note(format!(
                "all {count} answers read in {:.1} s after the stall; bound lifted: {:.1} MiB after",
                bounded.drain_s, lifted.after
            )),
    );
}

/// What one run measured, in MiB (and seconds).
struct Run {
    idle: f64,
    peak: f64,
    after: f64,
    drain_s: f64,
}

struct Shared {
    /// Answers received, and whether the reader is paused.
    state: Mutex<(usize, bool)>,
    cond: Condvar,
}

fn stalled_client(count: usize, page: usize, bound: Option<&str>) -> Run {
    let mut command = Command::new(BIN);
    command
        .env("YIELDSHELL_MAX_OUTPUT_BYTES", page.to_string())
        .env("YIELDSHELL_MAX_BUFFER_BYTES", (2 * page).to_string())
        .env("YIELDSHELL_LOG", "debug")
        .env_remove("YIELDSHELL_MAX_QUEUED_BYTES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(b) = bound {
        command.env("YIELDSHELL_MAX_QUEUED_BYTES", b);
    }
    if !common::full() {
        // Smoke: a small bound, so that the stall happens with small answers too.
        command.env("YIELDSHELL_MAX_QUEUED_BYTES", bound.unwrap_or("64K"));
    }
    let mut child = command.spawn().expect("spawn yieldshell");
    let pid = child.id();
    let stdin = Arc::new(Mutex::new(child.stdin.take().expect("stdin")));
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let log = Arc::new(Mutex::new(String::new()));
    {
        let log = log.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = stderr_pipe.read(&mut buf) {
                log.lock().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let shared = Arc::new(Shared {
        state: Mutex::new((0, false)),
        cond: Condvar::new(),
    });
    let first = Arc::new(Mutex::new(Vec::<Value>::new()));
    {
        let shared = shared.clone();
        let first = first.clone();
        thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            let mut line = Vec::new();
            loop {
                {
                    let mut state = shared.state.lock();
                    while state.1 {
                        shared.cond.wait(&mut state);
                    }
                }
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => (),
                }
                if line.len() < 65536 {
                    if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                        first.lock().push(v);
                    }
                }
                shared.state.lock().0 += 1;
                shared.cond.notify_all();
            }
        });
    }
    let send = {
        let stdin = stdin.clone();
        move |message: Value| {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            let mut stdin = stdin.lock();
            stdin
                .write_all(&line)
                .and_then(|()| stdin.flush())
                .expect("write to the server");
        }
    };
    let wait_answers = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut state = shared.state.lock();
        while state.0 < n {
            assert!(
                !shared.cond.wait_until(&mut state, deadline).timed_out(),
                "only {} of {n} answers came",
                state.0
            );
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "queue-bench", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let producer = format!("head -c {} /dev/zero | tr '\\0' x", page + page / 5);
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "exec", "arguments": {"command": producer, "side_effects": ["NONE"],
        "yield_ms": 30000, "max_output_bytes": 100}}}),
    );
    wait_answers(2);
    let exec = first.lock().last().cloned().unwrap_or(Value::Null);
    let process_id = exec["result"]["structuredContent"]["process_id"]
        .as_str()
        .unwrap_or_else(|| panic!("exec failed: {exec}"))
        .to_owned();
    let rss = |field: &str| common::proc_status_kib(pid, field).unwrap_or(0) as f64 / 1024.0;
    let idle = rss("VmRSS:");

    shared.state.lock().1 = true;
    let sender = {
        let send = send.clone();
        thread::spawn(move || {
            let start = Instant::now();
            for i in 0..count {
                let due = start + Duration::from_millis(10 * i as u64);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    thread::sleep(wait);
                }
                send(
                    json!({"jsonrpc": "2.0", "id": format!("r{i}"), "method": "tools/call",
                    "params": {"name": "read", "arguments": {"process_id": process_id,
                    "since_seq": 0, "max_output_bytes": page}}}),
                );
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let text = log.lock().clone();
        let taken = text.matches("<- {\"id\":\"r").count();
        let answered = text.matches("-> answer to request \"r").count();
        let stopped = text.contains("wait for the client to read stdout");
        if taken == answered && (answered == count || (stopped && taken > 0)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stall did not settle: {taken} taken, {answered} answered"
        );
        thread::sleep(Duration::from_millis(100));
    }
    let peak = rss("VmHWM:");
    let drain = Instant::now();
    {
        shared.state.lock().1 = false;
        shared.cond.notify_all();
    }
    wait_answers(count + 2);
    let drain_s = drain.elapsed().as_secs_f64();
    sender.join().expect("sender");
    // The queue is empty: its memory goes back once the writer saw it drain.
    let settle = Instant::now() + Duration::from_secs(5);
    let mut after = rss("VmRSS:");
    while after > idle + 16.0 && Instant::now() < settle {
        thread::sleep(Duration::from_millis(50));
        after = rss("VmRSS:");
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    Run {
        idle,
        peak,
        after,
        drain_s,
    }
}
