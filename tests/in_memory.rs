//! The protocol driven in-process, over the in-memory transport (no binary, no pipes).
//!
//! This binary runs the server's engine inside the test process, so it stays apart from
//! the black-box suite (its reaper would reap the children of other tests).

use std::time::Duration;

use serde_json::{json, Value};
use yieldshell::internals::jsonrpc::RequestId;
use yieldshell::internals::serve_in_memory;
use yieldshell::internals::transport::Input;

fn start() -> yieldshell::internals::transport::MemoryClient {
    start_with(&[])
}

/// An in-process server with `PATH` and the variables of `env`, after the handshake.
fn start_with(env: &[(&str, &str)]) -> yieldshell::internals::transport::MemoryClient {
    let env = std::iter::once(("PATH", "/usr/bin:/bin"))
        .chain(env.iter().copied())
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    let config = match yieldshell::internals::config::parse(&[], env).expect("configuration") {
        yieldshell::internals::config::Parsed::Run(c) => *c,
        yieldshell::internals::config::Parsed::Print(_) => panic!("no run configuration"),
    };
    let client = serve_in_memory(config, Duration::from_secs(5)).expect("start the server");
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(
        &client,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    client
}

fn send(client: &yieldshell::internals::transport::MemoryClient, message: Value) {
    let line = serde_json::to_vec(&message).expect("serialise");
    client
        .to_server
        .send(Input::Line(line))
        .expect("server alive");
}

#[test]
fn handshake_ping_list_and_errors_in_process() {
    let client = start();
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 4, "method": "nope"}),
    );
    client
        .to_server
        .send(Input::TooLong { id: None })
        .expect("server alive");
    client
        .to_server
        .send(Input::TooLong {
            id: RequestId::new(json!("long")),
        })
        .expect("server alive");
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "ps", "arguments": {}}}),
    );
    // End of input: the server answers what it has, then closes its side.
    let yieldshell::internals::transport::MemoryClient {
        to_server,
        from_server,
    } = client;
    drop(to_server);
    let messages: Vec<Value> = from_server
        .iter()
        .map(|l| serde_json::from_slice(&l).expect("a JSON line"))
        .collect();
    let by_id = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to {id}: {messages:?}"))
    };
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(2)["result"], json!({}));
    let tools = by_id(3)["result"]["tools"].as_array().expect("tools").len();
    assert_eq!(tools, 7);
    assert_eq!(by_id(4)["error"]["code"], -32601);
    assert_eq!(by_id(5)["result"]["isError"], false);
    let too_long = messages.iter().filter(|m| m["id"].is_null()).count();
    assert_eq!(too_long, 1, "{messages:?}");
    // A refused line whose id was read is answered with it.
    let long = messages
        .iter()
        .find(|m| m["id"] == json!("long"))
        .unwrap_or_else(|| panic!("no answer to \"long\": {messages:?}"));
    assert_eq!(long["error"]["code"], -32600, "{long}");
    assert_eq!(messages.len(), 7, "{messages:?}");
}

/// Starts an in-process server with `YIELDSHELL_LIMITS=limits`, runs `command` with `exec`
/// and returns the answer's text after the server has shut down.
fn exec_with_limits(limits: &str, command: &str) -> String {
    let client = start_with(&[("YIELDSHELL_LIMITS", limits)]);
    send(
        &client,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "exec", "arguments": {"command": command, "side_effects": ["NONE"]}}}),
    );
    let yieldshell::internals::transport::MemoryClient {
        to_server,
        from_server,
    } = client;
    let answer: Value = from_server
        .iter()
        .map(|l| serde_json::from_slice::<Value>(&l).expect("a JSON line"))
        .find(|m| m["id"] == json!(2))
        .expect("an answer to the exec");
    drop(to_server);
    for _ in from_server.iter() {}
    answer["result"]["structuredContent"]["stdout"]
        .as_str()
        .unwrap_or_else(|| panic!("no stdout: {answer}"))
        .to_string()
}

#[test]
fn a_second_engine_keeps_its_own_limits() {
    // Two engines, one after the other, in one process: each command runs under its own
    // engine's limits, not under those of the first engine the process started.
    assert_eq!(exec_with_limits("nofile=64", "ulimit -n"), "64\n");
    assert_eq!(exec_with_limits("nofile=96", "ulimit -n"), "96\n");
}
