//! One line of stdin, as the server's read loop sees it: bytes → JSON → classification, and
//! the reply the server would build for it.
//!
//! Properties:
//! - `classify` never panics, and what it says agrees with the message: a `Request` came from
//!   an object with `"jsonrpc": "2.0"`, a string `method` and a string or number `id`, and it
//!   carries exactly that id, method and params; a `Notification` had no `id`; a `Response`
//!   had no `method` and a `result` or `error`; an `Invalid` id is the message's own id. And
//!   conversely every well-formed request is classified as a `Request`.
//! - Every reply (`response`, `error`, also for unparseable input) serialises with `to_line`
//!   to one line with no raw newline or carriage return, which parses back to the same value,
//!   so the id the client gets back is the id it sent.
//! - For requests, the MCP layer's pure functions hold up: `negotiate` answers a supported
//!   version (the requested one when supported), `initialize_result`, `tools_list` and
//!   `call_result` gate their fields on that version, and their results survive `to_line`;
//!   the hand-built `call_response_line` parses to exactly `response(id, call_result(..))`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use yieldshell::internals::config::{parse, Config, Parsed};
use yieldshell::internals::mcp::Reply;
use yieldshell::internals::jsonrpc::{
    classify, error, response, to_line, Incoming, INVALID_REQUEST, PARSE_ERROR,
};
use yieldshell::internals::mcp::{
    call_response_line, call_result, has_annotations, has_structured, initialize_result, negotiate,
    tools_list, LATEST, VERSIONS,
};

/// Shell mode lists the seven yield tools; trusted mode adds `shell_execute` first.
const SHELL_TOOLS: &[&str] = &["exec", "read", "write", "wait", "stop", "ps", "cleanup"];
const TRUSTED_TOOLS: &[&str] = &[
    "shell_execute",
    "exec",
    "read",
    "write",
    "wait",
    "stop",
    "ps",
    "cleanup",
];

/// A shell-mode and a trusted-mode configuration, made once, with the tools each lists.
fn configs() -> &'static [(Config, &'static [&'static str])] {
    static CONFIGS: std::sync::OnceLock<Vec<(Config, &'static [&'static str])>> =
        std::sync::OnceLock::new();
    CONFIGS.get_or_init(|| {
        let make = |env: &[(&str, &str)]| {
            let env = env.iter().map(|(k, v)| (k.into(), v.into())).collect();
            match parse(&[], env) {
                Ok(Parsed::Run(config)) => *config,
                _ => panic!("a configuration"),
            }
        };
        vec![
            (make(&[]), SHELL_TOOLS),
            (make(&[("ALLOW_COMMANDS", "ls,cat")]), TRUSTED_TOOLS),
        ]
    })
}

/// Serialises a message as the server does and checks it is one line that parses back to
/// the same value.
fn one_line(message: &Value) -> Value {
    let line = to_line(message);
    assert!(!line.is_empty(), "to_line produced nothing for {message}");
    assert!(
        !line.contains(&b'\n') && !line.contains(&b'\r'),
        "raw line break in {:?}",
        String::from_utf8_lossy(&line)
    );
    let back: Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
        panic!(
            "our own line does not parse ({e}): {:?}",
            String::from_utf8_lossy(&line)
        )
    });
    assert!(
        same(&back, message),
        "line does not round-trip: {:?}\n  sent {message:?}\n  read {back:?}",
        String::from_utf8_lossy(&line)
    );
    back
}

/// Exact structural equality. (An earlier run of this target found fractional ids coming
/// back one unit in the last place off: serde_json now parses floats exactly, with its
/// `float_roundtrip` feature, so ids round-trip exactly.)
fn same(a: &Value, b: &Value) -> bool {
    a == b
}

fn is_id(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_))
}

fn check_message(value: Value) {
    let original = value.clone();
    let obj = original.as_object();
    let incoming = classify(value);

    // Completeness: a well-formed request is a request.
    if let Some(o) = obj {
        let well_formed = o.get("jsonrpc") == Some(&Value::from("2.0"))
            && o.get("method").is_some_and(Value::is_string)
            && o.get("id").is_some_and(is_id)
            && matches!(
                o.get("params"),
                None | Some(Value::Null) | Some(Value::Object(_))
            );
        if well_formed {
            assert!(
                matches!(incoming, Incoming::Request { .. }),
                "well-formed request not classified as one: {original} → {incoming:?}"
            );
        }
    }

    match incoming {
        Incoming::Request { id, method, params } => {
            let o = obj.expect("a request comes from an object");
            assert_eq!(o.get("jsonrpc"), Some(&Value::from("2.0")));
            assert_eq!(o.get("id"), Some(&id));
            assert!(is_id(&id), "request id {id} is not a string or number");
            assert_eq!(o.get("method"), Some(&Value::from(method.clone())));
            match o.get("params") {
                None | Some(Value::Null) => assert!(params.is_empty()),
                Some(Value::Object(p)) => assert_eq!(p, &params),
                Some(other) => panic!("request accepted with params {other}"),
            }

            // The server's success reply.
            let back = one_line(&response(&id, json!({})));
            assert!(back.get("id").is_some_and(|b| same(b, &id)));
            assert_eq!(back.get("result"), Some(&json!({})));
            // The server's error replies for a request.
            for code in [-32601, -32602, -32603] {
                let back = one_line(&error(Some(&id), code, &method));
                assert!(back.get("id").is_some_and(|b| same(b, &id)));
                assert_eq!(back["error"]["message"], Value::from(method.clone()));
            }
            check_mcp(&id, &method, &params);
        }
        Incoming::Notification { method, params } => {
            let o = obj.expect("a notification comes from an object");
            assert!(!o.contains_key("id"), "notification with an id: {original}");
            assert_eq!(o.get("jsonrpc"), Some(&Value::from("2.0")));
            assert_eq!(o.get("method"), Some(&Value::from(method)));
            if let Some(Value::Object(p)) = o.get("params") {
                assert_eq!(p, &params);
            }
        }
        Incoming::Response => {
            let o = obj.expect("a response comes from an object");
            assert!(!o.contains_key("method"));
            assert!(o.contains_key("result") || o.contains_key("error"));
        }
        Incoming::Invalid { id, message } => {
            if let Some(id) = &id {
                assert!(is_id(id));
                assert_eq!(obj.and_then(|o| o.get("id")), Some(id));
            }
            let back = one_line(&error(id.as_ref(), INVALID_REQUEST, &message));
            match (&id, back.get("id")) {
                (Some(sent), Some(got)) => assert!(same(sent, got)),
                (None, None) => (),
                (sent, got) => panic!("id {sent:?} came back as {got:?}"),
            }
            assert_eq!(back["error"]["code"], Value::from(INVALID_REQUEST));
            assert_eq!(back["error"]["message"], Value::from(message));
        }
    }
}

fn check_mcp(id: &Value, method: &str, params: &Map<String, Value>) {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = negotiate(requested);
    assert!(VERSIONS.contains(&version));
    match requested {
        Some(r) if VERSIONS.iter().any(|v| v.as_str() == r) => assert_eq!(version.as_str(), r),
        _ => assert_eq!(version, LATEST),
    }

    if method == "initialize" {
        let result = initialize_result(version, 30_000);
        assert_eq!(result["protocolVersion"], Value::from(version.as_str()));
        assert_eq!(result["serverInfo"]["name"], Value::from("yieldshell"));
        assert_eq!(
            result["serverInfo"].get("title").is_some(),
            has_structured(version)
        );
        one_line(&response(id, result));
    }

    if method.starts_with("tools/") {
        for (config, tools) in configs() {
            let list = tools_list(config, 30_000, version, true);
            let listed = list["tools"].as_array().expect("tools is an array");
            let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
            assert_eq!(&names, tools, "the tools of the mode, in order");
            for tool in listed {
                assert!(tool["inputSchema"].is_object());
                assert!(!tool["description"].as_str().unwrap_or("").is_empty());
                assert_eq!(tool.get("title").is_some(), has_structured(version));
                assert_eq!(tool.get("outputSchema").is_some(), has_structured(version));
                assert_eq!(tool.get("annotations").is_some(), has_annotations(version));
            }
            one_line(&response(id, list));
        }
    }

    // Any params object as a tool's result object.
    let is_error = id.is_string();
    let texts: Option<Vec<String>> = params
        .get("texts")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| v.to_string()).collect());
    let reply = || Reply {
        value: params.clone(),
        is_error,
        texts: texts.clone(),
    };
    let result = call_result(reply(), version, true);

    // The hand-built response line of tools/call equals the tree-built one.
    let line = call_response_line(id, reply(), version, true);
    assert!(
        !line.contains(&b'\n') && !line.contains(&b'\r'),
        "raw line break in call_response_line: {:?}",
        String::from_utf8_lossy(&line)
    );
    let parsed: Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
        panic!(
            "call_response_line is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&line)
        )
    });
    let tree = response(id, result.clone());
    assert!(
        same(&parsed, &tree),
        "call_response_line differs from response(call_result):\n  line {:?}\n  tree {tree}",
        String::from_utf8_lossy(&line)
    );

    assert_eq!(result["isError"], Value::Bool(is_error));
    let content = result["content"].as_array().expect("content is an array");
    for block in content {
        assert_eq!(block["type"], Value::from("text"));
        assert!(block["text"].is_string());
    }
    match texts {
        Some(texts) => {
            assert_eq!(content.len(), texts.len());
            for (block, text) in content.iter().zip(&texts) {
                assert_eq!(block["text"], Value::from(text.as_str()));
            }
        }
        None => {
            assert_eq!(content.len(), 1);
            let text = content[0]["text"].as_str().unwrap();
            let parsed: Value = serde_json::from_str(text).expect("content text is JSON");
            assert!(
                same(&parsed, &Value::Object(params.clone())),
                "content text {text:?}"
            );
        }
    }
    match result.get("structuredContent") {
        Some(s) => {
            assert!(has_structured(version));
            assert_eq!(s, &Value::Object(params.clone()));
        }
        None => assert!(!has_structured(version)),
    }
    one_line(&response(id, result));
}

fuzz_target!(|data: &[u8]| {
    // The read loop strips the line terminator (`\n`, and a `\r` before it) first.
    let line = data.strip_suffix(b"\n").unwrap_or(data);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Array(items)) => {
            // A batch: answered per element (2025-03-26) or as a whole with -32600.
            one_line(&error(None, INVALID_REQUEST, "batch"));
            for item in items {
                check_message(item);
            }
        }
        Ok(value) => check_message(value),
        Err(e) => {
            let back = one_line(&error(None, PARSE_ERROR, &e.to_string()));
            assert!(back.get("id").is_none());
            assert_eq!(back["error"]["code"], Value::from(PARSE_ERROR));
        }
    }
});
