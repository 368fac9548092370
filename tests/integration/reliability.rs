//! Reliability under hostile input and load: a bounded randomized stream of
//! valid and malformed lines, a catalogue of bad messages, descriptor and thread hygiene
//! after many calls, floods, many concurrent calls, a client that closes stdout, and the
//! audit log under concurrency.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{
    fd_count, is_error, marked_processes, pid_gone, unique_marker, wait_until, zombie_children,
    Server, TempDir,
};

/// A small deterministic generator (xorshift64*), so a failure can be replayed with
/// `YIELDSHELL_FUZZ_SEED`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn random_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 2 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64 >> rng.below(60)),
        3 => json!(-(rng.below(1000) as i64)),
        4 => json!(rng.below(100_000) as f64 / 7.0),
        5 => json!(rng
            .pick(&[
                "",
                "x",
                "100",
                "true",
                "NONE",
                "proc_000000000000",
                "é€😀",
                "\u{0}",
                "../..",
                "/"
            ])
            .to_string()),
        6 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let keys = [
                "command",
                "side_effects",
                "process_id",
                "since_seq",
                "yield_ms",
                "signal",
                "cwd",
                "env",
                "streams",
            ];
            let mut m = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                m.insert(rng.pick(&keys).to_string(), random_value(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

/// Arguments for a tool: mostly plausible, sometimes of the wrong type.
fn random_args(rng: &mut Rng, tool: &str) -> Value {
    let mut args = match tool {
        "exec" => json!({
            "command": rng.pick(&["true", "echo fuzz", "printf 'a\\377b'", "exit 3", "echo é >&2"]).to_string(),
            "side_effects": [rng.pick(&["NONE", "OTHER", "RUNS_INLINE_CODE", "NOPE"]).to_string()],
            "yield_ms": rng.below(30),
            "timeout_ms": 5000,
        }),
        "read" | "wait" | "stop" | "write" => json!({
            "process_id": rng.pick(&["proc_000000000000", "", "nope"]).to_string(),
            "timeout_ms": rng.below(20),
            "input": "x",
            "signal": rng.pick(&["TERM", "SIGFOO", "0"]).to_string(),
            "force_after_ms": 10,
        }),
        "cleanup" => json!({"completed_older_than_ms": rng.below(5) as i64 - 2}),
        _ => json!({}),
    };
    // Corrupt one field now and then.
    if rng.below(3) == 0 {
        if let Value::Object(m) = &mut args {
            let keys: Vec<String> = m.keys().cloned().collect();
            if !keys.is_empty() {
                let k = rng.pick(&keys).clone();
                m.insert(k, random_value(rng, 0));
            }
        }
    }
    args
}

#[test]
fn randomized_lines_are_each_answered_once_and_the_server_survives() {
    let seed = std::env::var("YIELDSHELL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_u64);
    let mut rng = Rng(seed | 1);
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "200")]);
    let mut expected: HashMap<String, usize> = HashMap::new();
    let tools = [
        "exec", "read", "write", "wait", "stop", "ps", "cleanup", "nope",
    ];
    let methods = [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "initialize",
        "server/discover",
    ];
    let lines = 5000;
    for n in 0..lines {
        let id = if rng.below(2) == 0 {
            json!(format!("s{n}"))
        } else {
            json!(n as i64 + 1_000_000)
        };
        let method = *rng.pick(&methods);
        let mut params = match method {
            "tools/call" => {
                let tool = *rng.pick(&tools);
                json!({"name": tool, "arguments": random_args(&mut rng, tool)})
            }
            "initialize" => {
                json!({"protocolVersion": rng.pick(&["2025-06-18", "2024-11-05", "bogus"]).to_string()})
            }
            _ => json!({}),
        };
        if rng.below(20) == 0 {
            params = random_value(&mut rng, 0);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let text = message.to_string();
        match rng.below(10) {
            // A valid request (its params may still be nonsense): must be answered once.
            0..=5 => {
                *expected.entry(id.to_string()).or_default() += 1;
                server.send_raw(&text);
            }
            // A notification: never answered.
            6 => server.send_raw(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}).to_string()),
            // Truncated JSON.
            7 => {
                let cut = rng.below(text.len() as u64) as usize;
                let mut bytes = text.as_bytes()[..cut].to_vec();
                bytes.retain(|&b| b != b'\n');
                server.send_raw_bytes(&bytes);
            }
            // Random bytes.
            8 => {
                let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).filter(|&b| b != b'\n').collect();
                server.send_raw_bytes(&bytes);
            }
            // A response sent to the server: dropped.
            _ => server.send_raw(&json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string()),
        }
    }
    // Every request is answered exactly once (tool calls finish within their short yields).
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in expected.keys() {
        let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            server.try_response(&id, left).is_some(),
            "no response to {id} (seed {seed})"
        );
    }
    server.assert_alive();
    // Nothing was answered twice, and every line on stdout was a well-formed message.
    let mut seen: HashMap<String, usize> = HashMap::new();
    while let Some(message) = server.recv_any(Duration::from_millis(200)) {
        if message.get("method").is_none() {
            if let Some(id) = message.get("id") {
                *seen.entry(id.to_string()).or_default() += 1;
            }
        }
    }
    for (id, count) in &seen {
        // Only the ids of this test: strings "sN" and numbers from 1,000,000.
        let ours = id.starts_with("\"s") || id.parse::<i64>().is_ok_and(|n| n >= 1_000_000);
        if ours {
            let wanted = expected.get(id).copied().unwrap_or(0);
            assert_eq!(
                *count, wanted,
                "id {id} answered {count} times, sent {wanted} times (seed {seed})"
            );
        }
    }
    assert_eq!(
        seen.keys().filter(|id| expected.contains_key(*id)).count(),
        expected.len(),
        "every request was answered (seed {seed})"
    );
    server.check_violations();
}

/// One hostile message and what must come back.
enum Want {
    /// A JSON-RPC error with this code.
    Code(i64),
    /// A tool result with `isError: true` whose text contains this.
    ToolError(&'static str),
    /// A successful response.
    Ok,
}

#[test]
fn bad_input_catalogue() {
    let dir = TempDir::new("catalogue");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").expect("write");
    let server = Server::ready();
    let deep_array = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    let big_string = "x".repeat(10 * 1024 * 1024);
    let ten_mb = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"ping","params":{{"pad":"{big_string}"}}}}"#
    );
    let call = |id: &str, tool: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}).to_string()
    };
    // Raw lines that have no usable id: answered with an error that has no id (or none at all).
    let anonymous: &[(&str, i64)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping""#, -32700),
        (r#"{"jsonrpc":"2.0","#, -32700),
        ("{", -32700),
        ("]", -32700),
        ("nul\u{0}byte", -32700),
        (r#"{"jsonrpc":"2.0","id":1e99999,"method":"ping"}"#, -32700),
        (&deep_array, -32700),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, -32600),
        ("[]", -32600),
        ("[1,2]", -32600),
        ("42", -32600),
        (r#""ping""#, -32600),
        ("null", -32600),
    ];
    for (line, code) in anonymous {
        server.skip_received();
        server.send_raw(line);
        let message = server
            .recv_any(Duration::from_secs(10))
            .unwrap_or_else(|| panic!("no answer to {line:.80}"));
        assert_eq!(
            message["error"]["code"],
            json!(code),
            "{line:.80}: {message}"
        );
        assert_eq!(
            message.get("id"),
            Some(&Value::Null),
            "{line:.80}: {message}"
        );
    }
    // Lines with a readable id: answered with that id.
    let cases: Vec<(String, &str, Want)> = vec![
        (r#"{"jsonrpc":"1.0","id":"v","method":"ping"}"#.into(), "\"v\"", Want::Code(-32600)),
        (r#"{"id":"nov","method":"ping"}"#.into(), "\"nov\"", Want::Code(-32600)),
        (r#"{"jsonrpc":"2.0","id":"m","method":7}"#.into(), "\"m\"", Want::Code(-32600)),
        (r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":[1]}"#.into(), "\"p\"", Want::Code(-32600)),
        (r#"{"jsonrpc":"2.0","id":"p2","method":"ping","params":"x"}"#.into(), "\"p2\"", Want::Code(-32600)),
        (r#"{"jsonrpc":"2.0","id":-5,"method":"ping"}"#.into(), "-5", Want::Ok),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.into(), "1.5", Want::Ok),
        (r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#.into(), "9007199254740993", Want::Ok),
        (r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#.into(), "\"\"", Want::Ok),
        (r#"{"jsonrpc":"2.0","id":"é😀","method":"ping"}"#.into(), "\"é😀\"", Want::Ok),
        (deep_params, "\"deep\"", Want::Ok),
        (ten_mb, "\"big\"", Want::Ok),
        (r#"{"jsonrpc":"2.0","id":"um","method":"does/not/exist"}"#.into(), "\"um\"", Want::Code(-32601)),
        (r#"{"jsonrpc":"2.0","id":"res","method":"resources/list"}"#.into(), "\"res\"", Want::Code(-32601)),
        (r#"{"jsonrpc":"2.0","id":"pr","method":"prompts/list"}"#.into(), "\"pr\"", Want::Code(-32601)),
        (r#"{"jsonrpc":"2.0","id":"nn","method":"tools/call","params":{}}"#.into(), "\"nn\"", Want::Code(-32602)),
        (r#"{"jsonrpc":"2.0","id":"nt","method":"tools/call","params":{"name":5}}"#.into(), "\"nt\"", Want::Code(-32602)),
        (r#"{"jsonrpc":"2.0","id":"ut","method":"tools/call","params":{"name":"rm"}}"#.into(), "\"ut\"", Want::Code(-32602)),
        (r#"{"jsonrpc":"2.0","id":"se","method":"tools/call","params":{"name":"shell_execute"}}"#.into(), "\"se\"", Want::Code(-32602)),
        (r#"{"jsonrpc":"2.0","id":"aa","method":"tools/call","params":{"name":"ps","arguments":[1]}}"#.into(), "\"aa\"", Want::Code(-32602)),
        (r#"{"jsonrpc":"2.0","id":"as","method":"tools/call","params":{"name":"ps","arguments":"x"}}"#.into(), "\"as\"", Want::Code(-32602)),
        // Wrong types, for every parameter of every tool.
        (call("e1", "exec", json!({"side_effects": ["NONE"]})), "\"e1\"", Want::ToolError("command")),
        (call("e2", "exec", json!({"command": 5, "side_effects": ["NONE"]})), "\"e2\"", Want::ToolError("command")),
        (call("e3", "exec", json!({"command": "true"})), "\"e3\"", Want::ToolError("side_effects")),
        (call("e4", "exec", json!({"command": "true", "side_effects": "NONE"})), "\"e4\"", Want::ToolError("side_effects")),
        (call("e5", "exec", json!({"command": "true", "side_effects": ["BOGUS"]})), "\"e5\"", Want::ToolError("BOGUS")),
        (call("e6", "exec", json!({"command": "true", "side_effects": [7]})), "\"e6\"", Want::ToolError("side_effects")),
        (call("e7", "exec", json!({"command": "true", "side_effects": []})), "\"e7\"", Want::ToolError("side_effects")),
        (call("e8", "exec", json!({"command": "true", "side_effects": ["NONE"], "cwd": 1})), "\"e8\"", Want::ToolError("cwd")),
        (call("e9", "exec", json!({"command": "true", "side_effects": ["NONE"], "cwd": ""})), "\"e9\"", Want::ToolError("cwd")),
        (call("e10", "exec", json!({"command": "true", "side_effects": ["NONE"], "cwd": file})), "\"e10\"", Want::ToolError("directory")),
        (call("e11", "exec", json!({"command": "true", "side_effects": ["NONE"], "env": "A=1"})), "\"e11\"", Want::ToolError("env")),
        (call("e12", "exec", json!({"command": "true", "side_effects": ["NONE"], "env": {"A": 1}})), "\"e12\"", Want::ToolError("env")),
        (call("e13", "exec", json!({"command": "true", "side_effects": ["NONE"], "env": {"A=B": "1"}})), "\"e13\"", Want::ToolError("env")),
        (call("e14", "exec", json!({"command": "true", "side_effects": ["NONE"], "shell": []})), "\"e14\"", Want::ToolError("shell")),
        (call("e15", "exec", json!({"command": "true", "side_effects": ["NONE"], "shell": ""})), "\"e15\"", Want::ToolError("shell")),
        (call("e16", "exec", json!({"command": "true", "side_effects": ["NONE"], "shell": "/no/such/shell"})), "\"e16\"", Want::ToolError("/no/such/shell")),
        (call("e17", "exec", json!({"command": "true", "side_effects": ["NONE"], "stdin": 1})), "\"e17\"", Want::ToolError("stdin")),
        (call("e18", "exec", json!({"command": "true", "side_effects": ["NONE"], "close_stdin": "maybe"})), "\"e18\"", Want::ToolError("close_stdin")),
        (call("e19", "exec", json!({"command": "true", "side_effects": ["NONE"], "name": {}})), "\"e19\"", Want::ToolError("name")),
        (call("e20", "exec", json!({"command": "true", "side_effects": ["NONE"], "yield_ms": -1})), "\"e20\"", Want::ToolError("yield_ms")),
        (call("e21", "exec", json!({"command": "true", "side_effects": ["NONE"], "yield_ms": "soon"})), "\"e21\"", Want::ToolError("yield_ms")),
        (call("e22", "exec", json!({"command": "true", "side_effects": ["NONE"], "timeout_ms": 1.5})), "\"e22\"", Want::ToolError("timeout_ms")),
        (call("e23", "exec", json!({"command": "true", "side_effects": ["NONE"], "max_output_bytes": true})), "\"e23\"", Want::ToolError("max_output_bytes")),
        (call("e24", "exec", json!({"command": "true", "side_effects": ["NONE"], "tail_lines": -3})), "\"e24\"", Want::ToolError("tail_lines")),
        (call("e25", "exec", json!({"command": "true", "side_effects": ["NONE"], "timeout_ms": -99999999999999999999.0})), "\"e25\"", Want::ToolError("timeout_ms")),
        (call("r1", "read", json!({})), "\"r1\"", Want::ToolError("process_id")),
        (call("r2", "read", json!({"process_id": 12})), "\"r2\"", Want::ToolError("process_id")),
        (call("r3", "read", json!({"process_id": ""})), "\"r3\"", Want::ToolError("Unknown process_id")),
        (call("r4", "read", json!({"process_id": "proc_000000000000", "since_seq": -1})), "\"r4\"", Want::ToolError("since_seq")),
        (call("r5", "read", json!({"process_id": "proc_000000000000", "streams": "all"})), "\"r5\"", Want::ToolError("streams")),
        (call("r6", "read", json!({"process_id": "proc_000000000000", "max_output_bytes": "lots"})), "\"r6\"", Want::ToolError("max_output_bytes")),
        (call("r7", "read", json!({"process_id": "proc_000000000000", "tail_lines": [] })), "\"r7\"", Want::ToolError("tail_lines")),
        (call("w1", "write", json!({"process_id": "proc_000000000000"})), "\"w1\"", Want::ToolError("input")),
        (call("w2", "write", json!({"process_id": "proc_000000000000", "input": 3})), "\"w2\"", Want::ToolError("input")),
        (call("w3", "write", json!({"process_id": "proc_000000000000", "input": "x", "newline": "yes"})), "\"w3\"", Want::ToolError("newline")),
        (call("w4", "write", json!({"process_id": "proc_000000000000", "input": "x", "close_stdin": 2})), "\"w4\"", Want::ToolError("close_stdin")),
        (call("t1", "wait", json!({"process_id": "proc_000000000000", "timeout_ms": "x"})), "\"t1\"", Want::ToolError("timeout_ms")),
        (call("t2", "wait", json!({"process_id": "proc_000000000000", "until": "("})), "\"t2\"", Want::ToolError("until")),
        (call("t3", "wait", json!({"process_id": "proc_000000000000", "until": 5})), "\"t3\"", Want::ToolError("until")),
        (call("s1", "stop", json!({"process_id": "proc_000000000000", "signal": 9.5})), "\"s1\"", Want::ToolError("signal")),
        (call("s2", "stop", json!({"process_id": "proc_000000000000", "force_after_ms": -1})), "\"s2\"", Want::ToolError("force_after_ms")),
        (call("s3", "stop", json!({"process_id": null})), "\"s3\"", Want::ToolError("process_id")),
        (call("p1", "ps", json!({"include_completed": "sometimes"})), "\"p1\"", Want::ToolError("include_completed")),
        (call("p2", "ps", json!({"limit": -1})), "\"p2\"", Want::ToolError("limit")),
        (call("c1", "cleanup", json!({"completed_older_than_ms": -1})), "\"c1\"", Want::ToolError("non-negative")),
        (call("c2", "cleanup", json!({"stopped_older_than_ms": "old"})), "\"c2\"", Want::ToolError("stopped_older_than_ms")),
    ];
    let total = anonymous.len() + cases.len();
    assert!(
        total >= 60,
        "the catalogue must hold at least 60 messages, has {total}"
    );
    for (line, id, want) in &cases {
        let id: Value = serde_json::from_str(id).expect("id");
        server.send_raw(line);
        let response = server.response(&id, Duration::from_secs(20));
        let shown = &line[..line.len().min(100)];
        match want {
            Want::Code(code) => assert_eq!(
                response["error"]["code"],
                json!(code),
                "{shown}: {response}"
            ),
            Want::Ok => assert!(response.get("result").is_some(), "{shown}: {response}"),
            Want::ToolError(text) => {
                let result = &response["result"];
                assert!(is_error(result), "{shown}: {response}");
                let body = result["content"][0]["text"].as_str().unwrap_or_default();
                assert!(body.contains(text), "{shown}: expected {text:?} in {body}");
            }
        }
    }
    server.assert_alive();
    server.check_violations();
}

#[test]
fn ten_thousand_execs_leave_descriptors_threads_and_memory_flat() {
    let _load = crate::support::heavy_load();
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_RETAINED_PROCESSES", "20")]);
    let pid = server.pid();
    let threads = || std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    let rss_kib = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Warm up (the worker pool and allocator reach their steady state), then measure.
    for _ in 0..200 {
        server.sh("true");
    }
    let base_fds = fd_count(pid);
    let base_threads = threads();
    let base_rss = rss_kib();
    for i in 0..10_000 {
        let result = server.sh("echo hi");
        assert_eq!(result["stdout"], "hi\n", "call {i}: {result}");
    }
    // Pump threads end with their pipes; give the last ones a moment to exit.
    assert!(
        wait_until(Duration::from_secs(20), || fd_count(pid) <= base_fds
            && threads() <= base_threads + 1),
        "fds {} (baseline {base_fds}), threads {} (baseline {base_threads})",
        fd_count(pid),
        threads()
    );
    assert!(
        zombie_children(pid).is_empty(),
        "zombies: {:?}",
        zombie_children(pid)
    );
    let rss = rss_kib();
    assert!(
        rss < base_rss + 8 * 1024,
        "memory grew from {base_rss} KiB to {rss} KiB"
    );
}

#[test]
fn floods_keep_ping_answering_and_memory_within_the_rings() {
    let _load = crate::support::heavy_load();
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "20")]);
    let pid = server.pid();
    let mut ids = Vec::new();
    for _ in 0..10 {
        // 100 MB each, as fast as the pipe takes it.
        let result = server.exec(json!({"command": "head -c 100000000 /dev/zero", "yield_ms": 0}));
        ids.push(
            result["process_id"]
                .as_str()
                .expect("process_id")
                .to_string(),
        );
    }
    let mut worst = Duration::ZERO;
    let mut peak_rss = 0u64;
    let all_done = |server: &Server| {
        ids.iter().all(|id| {
            server.call_ok("read", json!({"process_id": id, "max_output_bytes": 1}))["status"]
                != "running"
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !all_done(&server) {
        assert!(Instant::now() < deadline, "the floods did not finish");
        let started = Instant::now();
        server.result("ping", json!({}));
        worst = worst.max(started.elapsed());
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if let Some(kib) = status.lines().find_map(|l| l.strip_prefix("VmRSS:")) {
            peak_rss = peak_rss.max(
                kib.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .unwrap_or(0),
            );
        }
    }
    // Generous bounds: this catches a blocked main loop or unbounded buffering, not speed.
    assert!(
        worst < Duration::from_millis(500),
        "a ping took {worst:?} during the floods"
    );
    assert!(
        peak_rss < 96 * 1024,
        "resident memory reached {peak_rss} KiB with 10 x 2 x 256 KiB of rings"
    );
    for id in &ids {
        let read = server.call_ok("read", json!({"process_id": id, "max_output_bytes": 10}));
        assert_eq!(read["latest_seq"], 100_000_000, "{read}");
        assert_eq!(read["truncated"], true, "{read}");
    }
}

#[test]
fn two_hundred_concurrent_calls_all_yield_and_all_stop() {
    let _load = crate::support::heavy_load();
    let marker = unique_marker("conc");
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "250")]);
    let requests: Vec<Value> = (0..200)
        .map(|_| {
            server.send_request(
                "tools/call",
                json!({"name": "exec", "arguments": {"command": "echo ready; sleep 300", "side_effects": ["NONE"],
                    "yield_ms": 1500, "env": {"TEST_MARK": marker}}}),
            )
        })
        .collect();
    let mut ids = Vec::new();
    for id in &requests {
        let response = server.response(id, Duration::from_secs(60));
        let object = &response["result"]["structuredContent"];
        assert_eq!(object["status"], "backgrounded", "{response}");
        ids.push(
            object["process_id"]
                .as_str()
                .expect("process_id")
                .to_string(),
        );
    }
    let stops: Vec<Value> = ids
        .iter()
        .map(|id| {
            server.send_request(
                "tools/call",
                json!({"name": "stop", "arguments": {"process_id": id}}),
            )
        })
        .collect();
    for id in &stops {
        let response = server.response(id, Duration::from_secs(60));
        // `stopped` is left out at its default, true.
        assert_eq!(response["result"]["isError"], false, "{response}");
        assert_ne!(
            response["result"]["structuredContent"]["stopped"], false,
            "{response}"
        );
    }
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "survivors: {:?}",
        marked_processes(&marker)
    );
    let ps = server.call_ok("ps", json!({"include_completed": false, "limit": 1000}));
    assert_eq!(ps["processes"].as_array().map(Vec::len), Some(0), "{ps}");
}

#[test]
fn a_client_that_closes_stdout_ends_the_server_and_its_children() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let marker = unique_marker("epipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_yieldshell"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start yieldshell");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let exec = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "exec",
        "arguments": {"command": "sleep 300", "side_effects": ["NONE"], "yield_ms": 0, "env": {"TEST_MARK": marker}}}});
    writeln!(stdin, "{exec}").expect("write");
    let mut reader = std::io::BufReader::new(stdout);
    let mut first = String::new();
    std::io::BufRead::read_line(&mut reader, &mut first).expect("read");
    assert!(first.contains("backgrounded"), "{first}");
    assert!(wait_until(Duration::from_secs(20), || !marked_processes(
        &marker
    )
    .is_empty()));
    // The client goes away on the reading side; the next answer hits a closed pipe.
    drop(reader);
    for n in 0..50 {
        if writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#,
            n + 2
        )
        .is_err()
        {
            break;
        }
    }
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(5) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(
        status.is_some(),
        "the server kept running after its stdout was closed"
    );
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "its child survived"
    );
    assert!(pid_gone(child.id()));
}

#[test]
fn five_hundred_concurrent_executions_give_five_hundred_whole_audit_lines() {
    let _load = crate::support::heavy_load();
    let dir = TempDir::new("audit-load");
    let log = dir.path().join("audit.log");
    let log_text = log.to_str().expect("utf-8").to_string();
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_AUDIT_LOG", &log_text),
        ("YIELDSHELL_MAX_PROCESSES", "1000"),
    ]);
    let requests: Vec<Value> = (0..500)
        .map(|i| {
            server.send_request(
                "tools/call",
                json!({"name": "exec", "arguments": {"command": format!("echo {i} # {}", "x".repeat(i % 300)), "side_effects": ["NONE"]}}),
            )
        })
        .collect();
    for id in &requests {
        server.response(id, Duration::from_secs(120));
    }
    // The audit file has a writer thread of its own: on a loaded machine the last lines
    // may land shortly after their answers.
    let mut text = String::new();
    let complete = wait_until(Duration::from_secs(30), || {
        text = std::fs::read_to_string(&log).expect("audit log");
        text.lines().count() >= 500
    });
    assert!(complete, "{} audit lines of 500", text.lines().count());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 500);
    let mut commands: Vec<String> = lines
        .iter()
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("torn audit line {l:.80}: {e}"));
            v["command"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    commands.sort();
    commands.dedup();
    assert_eq!(commands.len(), 500, "every execution has its own line");
}

#[test]
fn sigkill_of_the_server_with_twenty_stubborn_processes_leaves_none() {
    let _load = crate::support::heavy_load();
    let marker = unique_marker("kill9x20");
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "50")]);
    let commands = [
        // Ignores SIGTERM.
        "trap '' TERM; echo ready; sleep 300",
        // A background grandchild in the group.
        "sleep 300 & echo ready; sleep 300",
        // A descendant that left the group, ignoring SIGTERM too.
        "setsid sh -c 'trap \"\" TERM; sleep 300' & echo ready; sleep 300",
        // A plain one.
        "echo ready; exec sleep 300",
    ];
    for i in 0..20 {
        let command = commands[i % commands.len()];
        let result =
            server.exec(json!({"command": command, "yield_ms": 0, "env": {"TEST_MARK": marker}}));
        let id = result["process_id"]
            .as_str()
            .expect("process_id")
            .to_string();
        server.wait_for_output(&id, "ready");
    }
    // sh + sleep each, two sleeps for the grandchild case, sh -c + sleep for the setsid case.
    assert!(
        wait_until(Duration::from_secs(10), || marked_processes(&marker).len()
            >= 45),
        "not everything started: {}",
        marked_processes(&marker).len()
    );
    let before = marked_processes(&marker).len();
    server.signal(libc::SIGKILL);
    let killed = Instant::now();
    server
        .wait_exit(Duration::from_secs(5))
        .expect("the server died");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "{} of {before} processes survived SIGKILL of the server by 3 s: {:?}",
        marked_processes(&marker).len(),
        marked_processes(&marker)
    );
    assert!(killed.elapsed() < crate::support::loaded(Duration::from_secs(3)));
}

/// Threads of a process, from `/proc/<pid>/status`.
fn thread_count(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn two_thousand_parked_waits_hold_no_thread_and_ps_answers_at_once() {
    let _load = crate::support::heavy_load();
    let server = Server::ready();
    let id = server.spawn_bg("sleep 600");
    let waits: Vec<Value> = (0..2000)
        .map(|_| {
            server.send_request(
                "tools/call",
                json!({"name": "wait", "arguments": {"process_id": id, "timeout_ms": 50000}}),
            )
        })
        .collect();
    // The first ps is queued behind the 2,000 calls; once it answers, every wait is parked.
    server.call_ok("ps", json!({}));
    let threads = thread_count(server.pid());
    assert!(threads <= 16, "{threads} threads with 2,000 parked waits");
    for _ in 0..5 {
        let start = Instant::now();
        let ps = server.call_ok("ps", json!({}));
        let took = start.elapsed();
        assert_eq!(ps["processes"][0]["process_id"], json!(id));
        assert!(
            took < crate::support::loaded(Duration::from_millis(100)),
            "ps took {took:?} with 2,000 parked waits"
        );
    }
    for _ in 0..5 {
        let start = Instant::now();
        server.result("ping", json!({}));
        let took = start.elapsed();
        assert!(
            took < crate::support::loaded(Duration::from_millis(100)),
            "ping took {took:?}"
        );
    }
    // Ending the process completes every wait, each with its own answer.
    server.call_ok("stop", json!({"process_id": id, "signal": "SIGKILL"}));
    for w in &waits {
        let r = server.response(w, Duration::from_secs(20));
        let body = server.result_object(&r["result"]);
        assert_eq!(body["wait_result"], "exited", "{r}");
    }
}

/// Sends every call at once and returns the answers' result objects.
fn concurrent_calls(server: &Server, calls: &[Value]) -> Vec<Value> {
    let ids: Vec<Value> = calls
        .iter()
        .map(|c| server.send_request("tools/call", c.clone()))
        .collect();
    ids.iter()
        .map(|id| {
            let r = server.response(id, Duration::from_secs(30));
            r["result"].clone()
        })
        .collect()
}

#[test]
fn the_process_limit_holds_for_300_concurrent_execs() {
    let _load = crate::support::heavy_load();
    let marker = unique_marker("limit");
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "2")]);
    let call = json!({"name": "exec", "arguments": {
        "command": format!("sleep 30 # {marker}"), "side_effects": ["NONE"], "yield_ms": 0}});
    let results = concurrent_calls(&server, &vec![call; 300]);
    let started: Vec<&Value> = results
        .iter()
        .filter(|r| server.result_object(r)["status"] != "failed_to_start")
        .collect();
    assert_eq!(
        started.len(),
        2,
        "{} of 300 execs ran under a limit of 2",
        started.len()
    );
    for r in &results {
        let body = server.result_object(r);
        if body["status"] == "failed_to_start" {
            let error = body["error"].as_str().unwrap_or("");
            assert!(error.contains("Maximum process limit (2)"), "{body}");
        }
    }
    let ps = server.call_ok("ps", json!({"include_completed": true, "limit": 1000}));
    assert_eq!(ps["processes"].as_array().map(Vec::len), Some(2), "{ps}");
}

#[test]
fn the_process_limit_holds_for_100_concurrent_shell_executes() {
    let _load = crate::support::heavy_load();
    let server = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "sleep"),
        ("YIELDSHELL_MAX_PROCESSES", "2"),
    ]);
    // Every call arrives while the first two still run, so all others must be refused.
    let call = json!({"name": "shell_execute", "arguments": {"command": ["sleep", "4"]}});
    let results = concurrent_calls(&server, &vec![call; 100]);
    let ran = results.iter().filter(|r| !is_error(r)).count();
    let refused = results
        .iter()
        .filter(|r| {
            let text = crate::support::tool_text(r);
            is_error(r) && text.contains("Maximum process limit (2) reached")
        })
        .count();
    assert_eq!(
        ran, 2,
        "{ran} of 100 shell_execute calls ran under a limit of 2"
    );
    assert_eq!(refused, 98, "every other call is refused for the limit");
}
