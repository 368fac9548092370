//! Protocol tests: handshake and version negotiation, version-gated fields,
//! JSON-RPC error codes, batches, notifications, and concurrency of `ping`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{is_error, tool_text, Server, LATEST, SHELL_TOOLS, VERSIONS};

#[test]
fn initialize_echoes_each_supported_version() {
    for version in VERSIONS {
        let server = Server::start();
        let result = server.initialize(version);
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "yieldshell", "{result}");
        assert_eq!(
            result["serverInfo"]["version"],
            env!("CARGO_PKG_VERSION"),
            "serverInfo.version must be the crate version: {result}"
        );
        assert_eq!(
            result["capabilities"],
            json!({"tools": {"listChanged": false}}),
            "capabilities must be tools only: {result}"
        );
        let instructions = result["instructions"].as_str().unwrap_or_default();
        assert!(
            instructions.len() > 40,
            "instructions must explain the tools: {result}"
        );
        if version >= "2025-06-18" {
            let title = result["serverInfo"]["title"].as_str().unwrap_or_default();
            assert!(
                !title.is_empty(),
                "serverInfo.title under {version}: {result}"
            );
        }
        server.assert_alive();
    }
}

#[test]
fn initialize_with_unknown_version_answers_latest() {
    for requested in ["2099-01-01", "2024-01-01", "not-a-version"] {
        let server = Server::start();
        let response = server.request(
            "initialize",
            json!({
                "protocolVersion": requested,
                "capabilities": {"elicitation": {}, "experimental": {"x": {}}},
                "clientInfo": {"name": "t", "version": "1"},
            }),
        );
        assert!(response.get("error").is_none(), "{response}");
        assert_eq!(response["result"]["protocolVersion"], LATEST, "{response}");
        server.assert_alive();
    }
}

#[test]
fn serverinfo_version_is_non_empty() {
    let server = Server::start();
    let result = server.initialize(LATEST);
    let version = result["serverInfo"]["version"].as_str().unwrap_or_default();
    assert!(!version.is_empty(), "{result}");
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn tools_list_gates_fields_on_the_version() {
    let mut expected_names: Vec<String> = SHELL_TOOLS.iter().map(|s| s.to_string()).collect();
    expected_names.sort();
    for version in VERSIONS {
        let server = Server::start();
        server.initialize(version);
        let result = server.result("tools/list", json!({}));
        let tools = result["tools"].as_array().expect("tools array").clone();
        assert_eq!(tool_names(&tools), expected_names, "under {version}");
        for tool in &tools {
            let name = tool["name"].as_str().unwrap_or_default();
            let description = tool["description"].as_str().unwrap_or_default();
            assert!(description.len() > 20, "{name} description: {tool}");
            assert_eq!(tool["inputSchema"]["type"], "object", "{name}: {tool}");
            let has_new = version >= "2025-06-18";
            assert_eq!(
                tool.get("title").is_some(),
                has_new,
                "{name} title under {version}: {tool}"
            );
            assert_eq!(
                tool.get("outputSchema").is_some(),
                has_new,
                "{name} outputSchema under {version}: {tool}"
            );
            if has_new {
                assert_eq!(tool["outputSchema"]["type"], "object", "{name}: {tool}");
                assert!(tool["title"].as_str().is_some_and(|t| !t.is_empty()));
            }
            assert_eq!(
                tool.get("annotations").is_some(),
                version >= "2025-03-26",
                "{name} annotations under {version}: {tool}"
            );
        }
    }
}

#[test]
fn tool_annotations_mark_read_only_and_destructive_tools() {
    let server = Server::ready();
    let result = server.result("tools/list", json!({}));
    let tools = result["tools"].as_array().expect("tools array");
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("tool {name} listed: {result}"))
            .clone()
    };
    for name in ["ps", "read"] {
        let tool = find(name);
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }
    for name in ["exec", "stop"] {
        let tool = find(name);
        assert_ne!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        assert_eq!(tool["annotations"]["destructiveHint"], true, "{tool}");
        assert_eq!(tool["annotations"]["openWorldHint"], true, "{tool}");
    }
    let exec = find("exec");
    let required = exec["inputSchema"]["required"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(required.contains(&json!("command")), "{exec}");
    assert!(required.contains(&json!("side_effects")), "{exec}");
}

#[test]
fn structured_content_only_from_2025_06_18() {
    for version in VERSIONS {
        let server = Server::start();
        server.initialize(version);
        let result = server.call(
            "exec",
            json!({"command": "echo hi", "side_effects": ["NONE"]}),
        );
        assert!(!is_error(&result), "{result}");
        // Every version has the text; a model shown it reads the status and the output.
        let text = tool_text(&result);
        assert!(
            text.starts_with("status=completed exit_code=0 ") && text.ends_with("\nhi\n"),
            "{result}"
        );
        if version >= "2025-06-18" {
            let object = server.result_object(&result);
            assert_eq!(object["stdout"], "hi\n", "{result}");
        }
        assert_eq!(
            result.get("structuredContent").is_some(),
            version >= "2025-06-18",
            "under {version}: {result}"
        );
    }
}

#[test]
fn ping_answers_empty_object_before_initialize() {
    let server = Server::start();
    let response = server.request("ping", json!({}));
    assert_eq!(response["result"], json!({}), "{response}");
    let response = server.request("ping", Value::Null);
    assert_eq!(
        response["result"],
        json!({}),
        "ping without params: {response}"
    );
    server.initialize(LATEST);
    server.assert_alive();
}

#[test]
fn requests_before_initialize_are_served() {
    let server = Server::start();
    let result = server.result("tools/list", json!({}));
    assert_eq!(
        result["tools"].as_array().map(Vec::len),
        Some(SHELL_TOOLS.len()),
        "{result}"
    );
    let response = server.request(
        "tools/call",
        json!({"name": "exec", "arguments": {"command": "echo early", "side_effects": ["NONE"]}}),
    );
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("status=completed exit_code=0 ") && text.ends_with("\nearly\n"),
        "{response}"
    );
    // A late initialize still works.
    let init = server.initialize(LATEST);
    assert_eq!(init["protocolVersion"], LATEST);
}

#[test]
fn tools_list_without_initialized_notification() {
    let server = Server::start();
    server.result(
        "initialize",
        json!({"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let result = server.result("tools/list", json!({"_meta": {"progressToken": "x"}}));
    assert_eq!(
        result["tools"].as_array().map(Vec::len),
        Some(7),
        "{result}"
    );
}

#[test]
fn string_and_integer_ids_are_echoed_exactly() {
    let server = Server::ready();
    server.skip_received();
    for id in [
        json!("abc"),
        json!("1"),
        json!(1),
        json!(9_007_199_254_740_993_i64),
    ] {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let response = server.recv_any(Duration::from_secs(10)).expect("answer");
        assert_eq!(response, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
}

fn assert_error_code(response: &Value, code: i64) {
    assert_eq!(response["error"]["code"], code, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "error message: {response}"
    );
    assert!(response.get("result").is_none(), "{response}");
}

#[test]
fn malformed_json_gets_parse_error_without_id() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw(r#"{"jsonrpc":"2.0","id":41,"method":"ping""#);
    let response = server
        .recv_any(Duration::from_secs(10))
        .expect("parse error");
    assert_error_code(&response, -32700);
    assert_eq!(
        response.get("id"),
        Some(&Value::Null),
        "JSON-RPC 2.0: a parse error carries \"id\": null: {response}"
    );
    server.send_raw("this is not json");
    let ping = server.send_request("ping", json!({}));
    let seen = server.collect_until_response(&ping, Duration::from_secs(10));
    assert_eq!(
        seen.len(),
        2,
        "a parse error, then the ping's answer: {seen:?}"
    );
    assert_error_code(&seen[0], -32700);
    server.assert_ping_is_next();
}

#[test]
fn invalid_utf8_gets_parse_error() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
    );
    let response = server
        .recv_any(Duration::from_secs(10))
        .expect("parse error");
    assert_error_code(&response, -32700);
    assert_eq!(response.get("id"), Some(&Value::Null), "{response}");
    server.assert_ping_is_next();
}

#[test]
fn wrong_jsonrpc_version_is_invalid_request() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
    let response = server.recv_any(Duration::from_secs(10)).expect("answer");
    assert_error_code(&response, -32600);
    assert_eq!(response["id"], 7, "the readable id is echoed: {response}");
    server.assert_ping_is_next();
}

#[test]
fn request_with_bad_method_or_params_is_invalid_request() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw(r#"{"jsonrpc":"2.0","id":8,"method":42}"#);
    let response = server.recv_any(Duration::from_secs(10)).expect("answer");
    assert_error_code(&response, -32600);
    server.send_raw(r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":[1,2]}"#);
    let response = server.recv_any(Duration::from_secs(10)).expect("answer");
    assert_error_code(&response, -32600);
    assert_eq!(response["id"], 9, "{response}");
    server.assert_ping_is_next();
}

#[test]
fn unknown_methods_get_method_not_found() {
    let server = Server::ready();
    for method in ["resources/list", "prompts/list", "no/such"] {
        let error = server.rpc_error(method, json!({}));
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    server.assert_alive();
}

/// `server/discover` is answered (it was `-32601` before protocol
/// 2026-07-28 support), and a probe does not keep the client from initializing.
#[test]
fn server_discover_before_initialize_is_answered_and_initialize_still_works() {
    let server = Server::start();
    let discovered = server.result("server/discover", json!({}));
    assert_eq!(discovered["resultType"], "complete", "{discovered}");
    let init = server.initialize(LATEST);
    assert_eq!(init["protocolVersion"], LATEST);
}

#[test]
fn tools_call_with_unknown_tool_or_without_name_is_invalid_params() {
    let server = Server::ready();
    let response = server.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_error_code(&response, -32602);
    let response = server.request("tools/call", json!({"arguments": {"command": "true"}}));
    assert_error_code(&response, -32602);
    // shell_execute is not listed in shell mode, so it is not callable either.
    let response = server.request(
        "tools/call",
        json!({"name": "shell_execute", "arguments": {"command": ["true"]}}),
    );
    assert_error_code(&response, -32602);
    server.assert_alive();
}

#[test]
fn tools_call_without_arguments_is_a_tool_error() {
    let server = Server::ready();
    let response = server.request("tools/call", json!({"name": "ps"}));
    let result = &response["result"];
    assert!(!is_error(result), "ps without arguments: {response}");
    let response = server.request("tools/call", json!({"name": "exec"}));
    let result = &response["result"];
    assert!(is_error(result), "exec without arguments: {response}");
    assert!(tool_text(result).contains("command"), "{response}");
}

#[test]
fn batch_is_answered_per_element_under_2025_03_26() {
    let server = Server::start();
    server.initialize("2025-03-26");
    server.skip_received();
    server.send_raw(
        r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/foo"},{"jsonrpc":"2.0","id":"b2","method":"no/such"}]"#,
    );
    let answer = server.recv_any(Duration::from_secs(10)).expect("answer");
    let items = answer
        .as_array()
        .unwrap_or_else(|| panic!("a batch is answered with an array: {answer}"));
    assert_eq!(items.len(), 2, "one response per request: {answer}");
    let ping = items.iter().find(|r| r["id"] == "b1").expect("b1 answered");
    assert_eq!(ping["result"], json!({}), "{answer}");
    let unknown = items.iter().find(|r| r["id"] == "b2").expect("b2 answered");
    assert_eq!(unknown["error"]["code"], -32601, "{answer}");

    server.send_raw("[]");
    let answer = server.recv_any(Duration::from_secs(10)).expect("answer");
    assert_error_code(&answer, -32600);
    server.assert_ping_is_next();
}

#[test]
fn batch_is_invalid_request_under_2025_06_18() {
    for version in ["2025-06-18", "2025-11-25"] {
        let server = Server::start();
        server.initialize(version);
        server.skip_received();
        server.send_raw(
            r#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#,
        );
        let answer = server.recv_any(Duration::from_secs(10)).expect("answer");
        assert!(answer.is_object(), "a single error, not an array: {answer}");
        assert_error_code(&answer, -32600);
        server.assert_ping_is_next();
    }
}

#[test]
fn responses_sent_to_the_server_get_no_answer() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    server.send_raw(r#"{"jsonrpc":"2.0","id":100,"error":{"code":-1,"message":"x"}}"#);
    server.assert_ping_is_next();
    server.assert_ping_is_next();
}

#[test]
fn notifications_get_no_answer() {
    let server = Server::ready();
    server.skip_received();
    server.notify("notifications/initialized", json!({}));
    server.notify("notifications/roots/list_changed", json!({}));
    server.notify("notifications/cancelled", json!({"requestId": 12345}));
    server.send_raw(r#"{"jsonrpc":"2.0","method":"no/such/notification"}"#);
    server.send_raw(r#"{"jsonrpc":"2.0","method":"tools/list"}"#);
    server.assert_ping_is_next();
    server.assert_ping_is_next();
}

#[test]
fn crlf_line_endings_are_accepted() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw("{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r");
    let answer = server.recv_any(Duration::from_secs(10)).expect("answer");
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": "crlf", "result": {}})
    );
}

#[test]
fn ping_and_ps_answer_quickly_while_exec_and_wait_block() {
    let _quiet = crate::support::time_bound();
    let server = Server::ready();
    let waited = server.spawn_bg("sleep 5");
    let wait_id = server.send_request(
        "tools/call",
        json!({"name": "wait", "arguments": {"process_id": waited, "timeout_ms": 5000}}),
    );
    let exec_id = server.send_request(
        "tools/call",
        json!({"name": "exec", "arguments": {
            "command": "sleep 5", "side_effects": ["NONE"], "yield_ms": 5000, "name": "blocker"}}),
    );
    // The blocking exec is in flight once ps lists it.
    let listed = crate::support::wait_until(Duration::from_secs(20), || {
        let ps = server.call_ok("ps", json!({}));
        ps["processes"]
            .as_array()
            .is_some_and(|p| p.iter().any(|e| e["name"] == "blocker"))
    });
    assert!(listed, "the blocking exec never showed up in ps");
    let mut latencies = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let response = server.request("ping", json!({}));
        latencies.push(started.elapsed());
        assert_eq!(response["result"], json!({}));
    }
    let started = Instant::now();
    server.call_ok("ps", json!({}));
    let ps_latency = started.elapsed();
    latencies.sort();
    assert!(
        latencies[2] < crate::support::loaded(Duration::from_millis(100)),
        "ping latencies while exec and wait block: {latencies:?}"
    );
    assert!(
        latencies[4] < Duration::from_millis(1000),
        "ping latencies: {latencies:?}"
    );
    assert!(
        ps_latency < Duration::from_millis(500),
        "ps took {ps_latency:?}"
    );
    assert!(
        server.try_response(&exec_id, Duration::ZERO).is_none()
            && server.try_response(&wait_id, Duration::ZERO).is_none(),
        "exec and wait should still be blocked"
    );
}

#[test]
fn error_results_match_the_output_schema_too() {
    let server = Server::ready();
    let unknown = "proc_000000000000";
    let cases = [
        ("exec", json!({"side_effects": ["NONE"]})),
        ("exec", json!({"command": 1, "side_effects": ["NONE"]})),
        (
            "exec",
            json!({"command": "true", "side_effects": ["RUNS_INLINE_CODE"]}),
        ),
        (
            "exec",
            json!({"command": "true", "side_effects": ["NONE"], "cwd": "/nonexistent"}),
        ),
        ("read", json!({})),
        ("read", json!({"process_id": unknown})),
        ("write", json!({"process_id": unknown, "input": "x"})),
        ("wait", json!({"process_id": unknown, "timeout_ms": 10})),
        ("stop", json!({"process_id": unknown})),
        ("stop", json!({})),
        ("cleanup", json!({"completed_older_than_ms": -1})),
        ("ps", json!({"limit": "many"})),
    ];
    for (tool, args) in cases {
        let result = server.call_err(tool, args.clone());
        if let Some(structured) = result.get("structuredContent") {
            let listed = server.result("tools/list", json!({}));
            let schema = &listed["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .find(|t| t["name"] == tool)
                .expect("listed")["outputSchema"];
            let mut problems = Vec::new();
            crate::support::schema_problems(schema, structured, "$", &mut problems);
            assert!(
                problems.is_empty(),
                "{tool} {args}: structuredContent {structured} breaks the outputSchema: {problems:?}"
            );
        }
    }
}

#[test]
fn tools_list_with_an_unknown_cursor_is_invalid_params() {
    let server = Server::ready();
    // The server never hands out a cursor, so any cursor is invalid (mcp-protocol.md §4).
    let error = server.rpc_error("tools/list", json!({"cursor": "bogus"}));
    assert_eq!(error["code"], -32602, "{error}");
    let result = server.result("tools/list", json!({}));
    assert!(result.get("nextCursor").is_none(), "{result}");
}
