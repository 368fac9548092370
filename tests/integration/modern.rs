//! Protocol 2026-07-28 beside the legacy versions: `server/discover`,
//! stateless requests that carry their version in `_meta`, and the client-aware default yield.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::*;

const MODERN: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The `_meta` object a 2026-07-28 client puts on every request.
fn modern_meta() -> Value {
    json!({
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: {},
        CLIENT_INFO: {"name": "yieldshell-tests", "version": "0.0.0"},
    })
}

/// A modern `tools/call` of `tool`; returns the whole result.
fn modern_call(server: &Server, tool: &str, arguments: Value) -> Value {
    server.result(
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": modern_meta()}),
    )
}

fn check_discover(result: &Value) {
    assert_eq!(result["resultType"], "complete", "{result}");
    let versions: Vec<&str> = result["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("supportedVersions: {result}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(versions.contains(&MODERN), "{result}");
    for legacy in VERSIONS {
        assert!(versions.contains(&legacy), "{legacy} missing: {result}");
    }
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(
        result["instructions"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{result}"
    );
    assert!(result["ttlMs"].as_u64().is_some(), "{result}");
    assert!(
        result["cacheScope"] == "public" || result["cacheScope"] == "private",
        "{result}"
    );
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "yieldshell", "{result}");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"), "{result}");
}

#[test]
fn discover_then_initialize_on_one_process() {
    let server = Server::start();
    let discovered = server.result("server/discover", json!({"_meta": modern_meta()}));
    check_discover(&discovered);
    // Answering the probe did not lock the process into the modern era.
    let init = server.initialize(LATEST);
    assert_eq!(init["protocolVersion"], LATEST, "{init}");
    let tools = server.result("tools/list", json!({}));
    assert!(tools.get("resultType").is_none(), "legacy result: {tools}");
    assert!(tools.get("ttlMs").is_none(), "legacy result: {tools}");
    let echoed = server.sh("echo legacy");
    assert_eq!(echoed["stdout"], "legacy\n", "{echoed}");
    assert_eq!(server.result("ping", json!({})), json!({}));
}

#[test]
fn discover_without_modern_meta_is_still_answered() {
    let server = Server::start();
    let discovered = server.result("server/discover", json!({}));
    check_discover(&discovered);
    let init = server.initialize("2025-06-18");
    assert_eq!(init["protocolVersion"], "2025-06-18");
}

/// A probe process sees one `server/discover`, then EOF: it answers, starts no process and
/// exits at once.
#[test]
fn a_probe_process_answers_and_exits_within_100_ms_of_eof() {
    let _time = time_bound();
    let mut child = Command::new(env!("CARGO_BIN_EXE_yieldshell"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start yieldshell");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let request = json!({"jsonrpc": "2.0", "id": "probe-1", "method": "server/discover",
        "params": {"_meta": modern_meta()}});
    std::io::Write::write_all(&mut stdin, format!("{request}\n").as_bytes()).expect("write");
    // Read the answer before closing stdin, so the exit time is measured from EOF.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).expect("read") == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let answer: Value = serde_json::from_slice(&line).expect("one JSON line");
    assert_eq!(answer["id"], "probe-1", "{answer}");
    check_discover(&answer["result"]);
    // Discovery starts nothing: the server has no child process.
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    assert!(
        children.trim().is_empty(),
        "a probe process started children: {children}"
    );
    let closed = Instant::now();
    drop(stdin);
    let deadline = closed + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the probe process did not exit");
        std::thread::yield_now();
    };
    let took = closed.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took < crate::support::loaded(Duration::from_millis(100)),
        "exit took {took:?} after EOF"
    );
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).expect("read the rest");
    assert!(rest.is_empty(), "only the answer crosses stdout: {rest:?}");
}

#[test]
fn modern_tools_list_is_cacheable_and_complete() {
    let server = Server::start();
    let tools = server.result("tools/list", json!({"_meta": modern_meta()}));
    assert_eq!(tools["resultType"], "complete", "{tools}");
    assert!(tools["ttlMs"].as_u64().is_some(), "{tools}");
    assert!(tools["cacheScope"].is_string(), "{tools}");
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, SHELL_TOOLS, "{tools}");
    // The newest fields are present in the modern era.
    let exec = &tools["tools"][0];
    assert!(exec["outputSchema"].is_object(), "{exec}");
    assert!(exec["annotations"].is_object(), "{exec}");
}

/// A process handle from a stateless call keeps working in the next call on the process.
#[test]
fn modern_exec_then_read_and_stop_by_handle() {
    let server = Server::start();
    let started = modern_call(
        &server,
        "exec",
        json!({"command": "echo first; echo ready; sleep 30", "side_effects": ["NONE"],
               "yield_ms": 0}),
    );
    assert_eq!(started["resultType"], "complete", "{started}");
    assert_eq!(started["isError"], false, "{started}");
    let structured = &started["structuredContent"];
    let id = structured["process_id"]
        .as_str()
        .unwrap_or_else(|| panic!("process_id: {started}"))
        .to_owned();
    let waited = modern_call(
        &server,
        "wait",
        json!({"process_id": id, "until": "ready", "timeout_ms": 10000}),
    );
    assert_eq!(waited["resultType"], "complete", "{waited}");
    assert_eq!(
        waited["structuredContent"]["wait_result"], "matched",
        "{waited}"
    );
    let read = modern_call(&server, "read", json!({"process_id": id, "since_seq": 1}));
    assert!(
        read["structuredContent"]["stdout"]
            .as_str()
            .is_some_and(|s| s.starts_with("first\n")),
        "{read}"
    );
    let stopped = modern_call(
        &server,
        "stop",
        json!({"process_id": id, "force_after_ms": 1000}),
    );
    // `stopped` is left out at its default, true.
    assert_eq!(
        stopped["structuredContent"]["status"], "stopped",
        "{stopped}"
    );
    assert_ne!(stopped["structuredContent"]["stopped"], false, "{stopped}");
    // The legacy era is still open on the same process.
    let init = server.initialize(LATEST);
    assert_eq!(init["protocolVersion"], LATEST);
}

#[test]
fn modern_requests_without_required_meta_are_invalid_params() {
    let server = Server::start();
    for meta in [
        json!({PROTOCOL_VERSION: MODERN}),
        json!({CLIENT_CAPABILITIES: {}}),
        json!({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: "none"}),
        json!({PROTOCOL_VERSION: 20260728, CLIENT_CAPABILITIES: {}}),
    ] {
        let error = server.rpc_error("tools/list", json!({"_meta": meta}));
        assert_eq!(error["code"], -32602, "{meta}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("io.modelcontextprotocol/"), "{error}");
    }
    server.assert_alive();
}

#[test]
fn an_unsupported_version_gets_32022_with_the_supported_list() {
    let server = Server::start();
    let error = server.rpc_error(
        "tools/list",
        json!({"_meta": {PROTOCOL_VERSION: "1900-01-01", CLIENT_CAPABILITIES: {}}}),
    );
    assert_eq!(error["code"], -32022, "{error}");
    assert_eq!(error["data"]["requested"], "1900-01-01", "{error}");
    let supported = error["data"]["supported"].as_array().expect("supported");
    assert!(supported.contains(&json!(MODERN)), "{error}");
    // A legacy version named in the modern key is not a modern request either.
    let error = server.rpc_error(
        "tools/call",
        json!({"name": "ps", "_meta": {PROTOCOL_VERSION: "2025-11-25", CLIENT_CAPABILITIES: {}}}),
    );
    assert_eq!(error["code"], -32022, "{error}");
    server.assert_alive();
}

#[test]
fn modern_ping_and_initialize_are_not_methods() {
    let server = Server::start();
    let error = server.rpc_error("ping", json!({"_meta": modern_meta()}));
    assert_eq!(error["code"], -32601, "{error}");
    // Legacy ping still works on the same process.
    assert_eq!(server.result("ping", json!({})), json!({}));
}

#[test]
fn modern_tool_errors_are_complete_results_with_is_error() {
    let server = Server::start();
    let result = modern_call(&server, "read", json!({"process_id": "proc_000000000000"}));
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["isError"], true, "{result}");
}

/// The default `yield_ms` stays below a known client's request timeout; the instructions
/// say what it is.
#[test]
fn the_default_yield_follows_the_clients_timeout() {
    let yield_text = |client: &str, env: &[(&str, &str)]| -> String {
        let server = Server::with_env(env);
        let init = server.result(
            "initialize",
            json!({"protocolVersion": LATEST, "capabilities": {},
                   "clientInfo": {"name": client, "version": "1.0"}}),
        );
        init["instructions"].as_str().unwrap_or_default().to_owned()
    };
    let goose = yield_text("goose", &[]);
    assert!(goose.contains("after 25 s"), "{goose}");
    let unknown = yield_text("some-new-client", &[]);
    assert!(unknown.contains("after 30 s"), "{unknown}");
    // The operator's variable always wins.
    let forced = yield_text("goose", &[("YIELDSHELL_DEFAULT_YIELD_MS", "40000")]);
    assert!(forced.contains("after 40 s"), "{forced}");
}
