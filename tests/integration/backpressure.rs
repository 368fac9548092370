//! Outbound backpressure and answers a client can match.
//!
//! A client that stops reading stdout while it keeps sending requests must not make the
//! server's memory grow: past `YIELDSHELL_MAX_QUEUED_BYTES` of queued answers the server
//! stops reading stdin, and every request is still answered once the client reads again.
//! These tests drive the binary with their own small client (`RawClient`), whose reader can
//! be paused and keeps only a summary of each answer (the answers are megabytes each).
//! Refusals for size or depth keep the request's id, and an id still in flight is refused.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use crate::support::{
    heavy_load, marked_processes, piped_command, unique_marker, wait_until, Server, LATEST,
};

/// What the client keeps of one answer.
#[derive(Clone, Debug)]
struct Summary {
    /// Bytes of the line.
    len: usize,
    /// A `result` (not an `error`).
    ok: bool,
    /// The whole message, for answers under 64 KiB.
    small: Option<Value>,
}

#[derive(Default)]
struct Received {
    /// Answers by the JSON text of their id.
    answers: HashMap<String, Summary>,
    /// Ids in arrival order.
    order: Vec<String>,
    paused: bool,
    eof: bool,
}

struct Shared {
    state: Mutex<Received>,
    cond: Condvar,
}

/// A client over the binary's stdio whose stdout reader can be paused.
struct RawClient {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    shared: Arc<Shared>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl RawClient {
    fn start(env: &[(&str, &str)]) -> RawClient {
        let mut child = piped_command(env, &[])
            .spawn()
            .expect("spawn the yieldshell binary");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let shared = Arc::new(Shared {
            state: Mutex::new(Received::default()),
            cond: Condvar::new(),
        });
        {
            let shared = shared.clone();
            thread::spawn(move || read_answers(stdout, &shared));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        {
            let stderr = stderr.clone();
            thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n @ 1..) = stderr_pipe.read(&mut buf) {
                    stderr.lock().extend_from_slice(&buf[..n]);
                }
            });
        }
        RawClient {
            child,
            stdin: Arc::new(Mutex::new(stdin)),
            shared,
            stderr,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock()).into_owned()
    }

    fn send(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let mut stdin = self.stdin.lock();
        stdin
            .write_all(&line)
            .and_then(|()| stdin.flush())
            .expect("write to the server");
    }

    fn request(&self, id: &str, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn pause(&self) {
        self.shared.state.lock().paused = true;
    }

    fn resume(&self) {
        self.shared.state.lock().paused = false;
        self.shared.cond.notify_all();
    }

    /// Waits for the answer to `id` (a string id), failing the test at the deadline.
    fn answer(&self, id: &str, timeout: Duration) -> Summary {
        let key = json!(id).to_string();
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state.lock();
        loop {
            if let Some(s) = state.answers.get(&key) {
                return s.clone();
            }
            if state.eof
                || self
                    .shared
                    .cond
                    .wait_until(&mut state, deadline)
                    .timed_out()
            {
                drop(state);
                self.fail(&format!("no answer to {key} within {timeout:?}"));
            }
        }
    }

    /// The whole (small) answer to `id`.
    fn small_answer(&self, id: &str) -> Value {
        let summary = self.answer(id, Duration::from_secs(60));
        match summary.small {
            Some(value) => value,
            None => self.fail(&format!(
                "the answer to {id} is large: {} bytes",
                summary.len
            )),
        }
    }

    /// Waits until stderr contains `needle`, failing the test at the deadline.
    fn wait_for_log(&self, needle: &str, timeout: Duration) {
        if !wait_until(timeout, || self.stderr_text().contains(needle)) {
            self.fail(&format!(
                "the server did not log {needle:?} within {timeout:?}"
            ));
        }
    }

    fn initialize(&self) {
        self.request(
            "init",
            "initialize",
            json!({"protocolVersion": LATEST, "capabilities": {},
                   "clientInfo": {"name": "backpressure-test", "version": "0"}}),
        );
        let init = self.small_answer("init");
        assert!(init.get("result").is_some(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Runs `command` to completion and returns its process_id.
    fn exec_completed(&self, command: &str) -> String {
        self.request(
            "exec",
            "tools/call",
            json!({"name": "exec", "arguments": {"command": command, "yield_ms": 30000,
                   "side_effects": ["NONE"], "max_output_bytes": 100}}),
        );
        let answer = self.small_answer("exec");
        let result = &answer["result"]["structuredContent"];
        assert_eq!(result["status"], "completed", "{answer}");
        result["process_id"]
            .as_str()
            .expect("process_id")
            .to_owned()
    }

    fn fail(&self, message: &str) -> ! {
        let stderr = self.stderr_text();
        let tail = &stderr[stderr.len().saturating_sub(4000)..];
        panic!("{message}\n--- yieldshell stderr (tail) ---\n{tail}\n--- end ---");
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        self.resume();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_answers(stdout: std::process::ChildStdout, shared: &Shared) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        {
            let mut state = shared.state.lock();
            while state.paused {
                shared.cond.wait(&mut state);
            }
        }
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => (),
        }
        let (id, summary) = summarize(&line);
        let mut state = shared.state.lock();
        if let Some(id) = id {
            state.order.push(id.clone());
            state.answers.insert(id, summary);
        }
        drop(state);
        shared.cond.notify_all();
    }
    shared.state.lock().eof = true;
    shared.cond.notify_all();
}

/// The id (JSON text) and summary of one line. Large lines are tool answers, which start
/// with `{"jsonrpc":"2.0","id":ID,"result":`; they are not parsed whole.
fn summarize(line: &[u8]) -> (Option<String>, Summary) {
    if line.len() < 64 * 1024 {
        let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        let id = value.get("id").map(Value::to_string);
        let summary = Summary {
            len: line.len(),
            ok: value.get("result").is_some(),
            small: Some(value),
        };
        return (id, summary);
    }
    let head = String::from_utf8_lossy(&line[..200]);
    let id = head
        .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
        .and_then(|rest| rest.find(",\"result\":").map(|end| rest[..end].to_owned()));
    let summary = Summary {
        len: line.len(),
        ok: id.is_some(),
        small: None,
    };
    (id, summary)
}

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let line = text
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    line[field.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .expect("a number of kB")
        * 1024
}

const MIB: u64 = 1024 * 1024;

/// The environment of a server whose `read` answers are a megabyte each.
const BIG_READS: [(&str, &str); 3] = [
    ("YIELDSHELL_MAX_OUTPUT_BYTES", "1048576"),
    ("YIELDSHELL_MAX_BUFFER_BYTES", "2097152"),
    ("YIELDSHELL_LOG", "info"),
];

/// A command whose output is 1.2 MB.
const BIG_OUTPUT: &str = "head -c 1200000 /dev/zero | tr '\\0' x";

#[test]
fn a_client_that_stops_reading_cannot_make_the_answers_grow() {
    // See: issues/18. Without the bound, these 600 answers (2 MB each on the wire: the
    // output and its JSON text) were all queued: over a gigabyte.
    let _heavy = heavy_load();
    const COUNT: usize = 600;
    const LIMIT: u64 = 200 * MIB;
    let mut env = BIG_READS.to_vec();
    env.push(("YIELDSHELL_LOG", "debug"));
    let client = Arc::new(RawClient::start(&env));
    client.initialize();
    let process_id = client.exec_completed(BIG_OUTPUT);
    let pid = client.pid();
    let before = status_bytes(pid, "VmRSS:");

    client.pause();
    // 100 reads a second; the writes block once the server stops reading.
    let sender = {
        let client = client.clone();
        thread::spawn(move || {
            let start = Instant::now();
            for i in 0..COUNT {
                if let Some(wait) = (start + Duration::from_millis(10 * i as u64))
                    .checked_duration_since(Instant::now())
                {
                    thread::sleep(wait);
                }
                client.request(
                    &format!("r{i}"),
                    "tools/call",
                    json!({"name": "read", "arguments": {"process_id": process_id,
                           "since_seq": 0, "max_output_bytes": 1_048_576}}),
                );
            }
        })
    };
    // The stall lasts until the server stopped reading and every read it took has queued
    // its answer: from then on nothing can add to its memory until the client reads. (A
    // server without the bound never stops reading: its memory passes the limit first.)
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut stalled = 0;
    loop {
        let rss = status_bytes(pid, "VmRSS:");
        stalled = stalled.max(rss);
        if rss > LIMIT {
            client.fail(&format!(
                "RSS reached {} MiB while the client did not read (limit {} MiB)",
                rss / MIB,
                LIMIT / MIB
            ));
        }
        let log = client.stderr_text();
        let taken = log.matches("<- {\"id\":\"r").count();
        let answered = log.matches("-> answer to request \"r").count();
        if log.contains("wait for the client to read stdout") && taken > 0 && taken == answered {
            break;
        }
        if Instant::now() > deadline {
            client.fail(&format!(
                "the server did not stop reading: {taken} reads taken, {answered} answered"
            ));
        }
        thread::sleep(Duration::from_millis(100));
    }
    client.resume();

    for i in 0..COUNT {
        let answer = client.answer(&format!("r{i}"), Duration::from_secs(300));
        assert!(
            answer.ok && answer.len > 1_048_576,
            "r{i} was not a full read: {answer:?}"
        );
    }
    sender.join().expect("the sender thread");
    let peak = status_bytes(pid, "VmHWM:");
    // Once the queue drained, its memory went back to the system.
    let returned = wait_until(Duration::from_secs(30), || {
        status_bytes(pid, "VmRSS:") < before + 48 * MIB
    });
    let after = status_bytes(pid, "VmRSS:");
    eprintln!(
        "stalled client, {COUNT} reads of 1 MiB: RSS before {} MiB, while stalled {} MiB, peak {} MiB, after the drain {} MiB",
        before / MIB,
        stalled / MIB,
        peak / MIB,
        after / MIB
    );
    assert!(
        peak < LIMIT,
        "peak RSS {} MiB with a stalled client (limit {} MiB)",
        peak / MIB,
        LIMIT / MIB
    );
    assert!(
        returned,
        "RSS stayed at {} MiB after the queue drained (before: {} MiB)",
        after / MIB,
        before / MIB
    );
    let order = client.shared.state.lock().order.clone();
    let reads = order.iter().filter(|id| id.starts_with("\"r")).count();
    assert_eq!(reads, COUNT, "every read answered exactly once");
}

#[test]
fn a_cancel_drops_an_answer_still_waiting_for_stdout() {
    let _heavy = heavy_load();
    let mut env = BIG_READS.to_vec();
    env.push(("YIELDSHELL_LOG", "debug"));
    let client = RawClient::start(&env);
    client.initialize();
    let process_id = client.exec_completed(BIG_OUTPUT);
    client.pause();
    // Four answers of 2 MB: the pipe (1 MiB at most) holds part of the first, so the
    // fourth waits in the server's queue.
    for i in 1..=4 {
        client.request(
            &format!("q{i}"),
            "tools/call",
            json!({"name": "read", "arguments": {"process_id": process_id,
                   "since_seq": 0, "max_output_bytes": 1_048_576}}),
        );
    }
    for i in 1..=4 {
        client.wait_for_log(
            &format!("-> answer to request \"q{i}\" queued"),
            Duration::from_secs(120),
        );
    }
    // The four reads run on the pool at once, so their answers are queued in the order
    // they finished: that order, as the server logged it, is what the client must see.
    let log = client.stderr_text();
    let mut queued: Vec<(usize, String)> = (1..=3)
        .filter_map(|i| {
            let at = log.find(&format!("-> answer to request \"q{i}\" queued"))?;
            Some((at, format!("\"q{i}\"")))
        })
        .collect();
    queued.sort();
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "q4", "reason": "changed my mind"}}),
    );
    client.request("after", "ping", json!({}));
    client.wait_for_log(
        "request \"q4\" cancelled by the client: dropped",
        Duration::from_secs(60),
    );
    client.resume();
    assert_eq!(client.small_answer("after")["result"], json!({}));
    let order = client.shared.state.lock().order.clone();
    let mut expected: Vec<String> = vec!["\"init\"".into(), "\"exec\"".into()];
    expected.extend(queued.into_iter().map(|(_, id)| id));
    expected.push("\"after\"".into());
    assert_eq!(
        order, expected,
        "q4's answer was dropped, the others kept the order they were queued in"
    );
}

#[test]
fn a_second_request_with_an_id_in_flight_is_refused_and_the_first_goes_on() {
    // See: issues/18.
    let server = Server::ready();
    let marker = unique_marker("dup");
    server.send(
        &json!({"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
        "params": {"name": "exec", "arguments": {
            "command": format!("sleep 60; echo {marker}"), "yield_ms": 50000,
            "side_effects": ["NONE"]}}}),
    );
    assert!(
        wait_until(Duration::from_secs(20), || !marked_processes(&marker)
            .is_empty()),
        "the first call did not start its command"
    );
    server.send(
        &json!({"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
        "params": {"name": "ps", "arguments": {}}}),
    );
    let refused = server.response(&json!("dup"), Duration::from_secs(20));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"dup\"") && message.contains("in flight"),
        "{refused}"
    );
    // A ping under the same id is refused too; a new id is served.
    let refused = {
        server.send(&json!({"jsonrpc": "2.0", "id": "dup", "method": "ping"}));
        server.response(&json!("dup"), Duration::from_secs(20))
    };
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    server.assert_alive();
    // The cancel for the id reaches the first call, which stops its command.
    server.notify(
        "notifications/cancelled",
        json!({"requestId": "dup", "reason": "test"}),
    );
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "the cancel did not reach the first call"
    );
    // Cancelled: the first call sends nothing.
    server.skip_received();
    server.assert_ping_is_next();
}

#[test]
fn a_request_refused_for_depth_or_size_keeps_its_id() {
    // See: issues/18.
    let _heavy = heavy_load();
    let server = Server::ready();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"ps","arguments":{{"x":{}1{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    server.send_raw(&deep);
    let refused = server.response(&json!("deep"), Duration::from_secs(60));
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nesting deeper than 128")),
        "{refused}"
    );
    // A line over 64 MiB, its id first (the common shape), is refused with that id.
    let mut long = br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"write","arguments":{"input":""#.to_vec();
    long.resize(long.len() + 64 * 1024 * 1024, b'a');
    long.extend_from_slice(br#"","process_id":"proc_000000000000"}}}"#);
    server.send_raw_bytes(&long);
    drop(long);
    let refused = server.response(&json!(77), Duration::from_secs(120));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("message too long")),
        "{refused}"
    );
    server.skip_received();
    server.assert_ping_is_next();
}
