//! Bounded memory: hostile lines are answered without building what a method
//! ignores, and the server's peak RSS stays a small multiple of the line.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{heavy_load, Server};

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let line = text
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kib: u64 = line[field.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number of kB");
    kib * 1024
}

/// `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":{PREFIX"x":[0,0,...]}}` of about
/// `size` bytes.
fn zeros_line(id: &str, method: &str, prefix: &str, size: usize) -> Vec<u8> {
    let mut line =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{prefix}"x":[0"#)
            .into_bytes();
    line.reserve(size + 16);
    while line.len() < size {
        line.extend_from_slice(b",0");
    }
    line.extend_from_slice(b"]}}");
    line
}

#[test]
fn a_60_mib_array_line_is_answered_within_200_mib_of_peak_rss() {
    let _heavy = heavy_load();
    let server = Server::ready();
    server.skip_received();
    let line = zeros_line("\"big\"", "ping", "", 60 * 1024 * 1024);
    server.send_raw_bytes(&line);
    drop(line);
    let response = server.response(&json!("big"), Duration::from_secs(300));
    assert_eq!(response["result"], json!({}), "{response:.200}");
    server.skip_received();
    let peak = status_bytes(server.pid(), "VmHWM:");
    assert!(
        peak < 200 * 1024 * 1024,
        "peak RSS {} MiB for a 60 MiB line (limit 200 MiB)",
        peak / (1024 * 1024)
    );
    server.assert_ping_is_next();
}

#[test]
fn unknown_tool_arguments_are_skipped_and_oversized_known_ones_refused() {
    let _heavy = heavy_load();
    let server = Server::ready();
    // 16 MiB of an argument ps does not have: skipped unparsed, ps answers.
    let line = zeros_line(
        "\"ps\"",
        "tools/call",
        r#""name":"ps","arguments":{"limit":"5","#,
        16 * 1024 * 1024,
    );
    // zeros_line closes params after the array: close arguments too.
    let mut line = line;
    line.truncate(line.len() - 2);
    line.extend_from_slice(b"}}}");
    server.send_raw_bytes(&line);
    drop(line);
    let response = server.response(&json!("ps"), Duration::from_secs(300));
    assert_eq!(response["result"]["isError"], false, "{response:.300}");
    let peak = status_bytes(server.pid(), "VmHWM:");
    assert!(
        peak < 64 * 1024 * 1024,
        "peak RSS {} MiB for a 16 MiB line",
        peak / (1024 * 1024)
    );
    // A declared argument with more values than any real call needs: a tool error that
    // names it, not a tree of a million values.
    let env: serde_json::Map<String, Value> = (0..5000)
        .map(|i| (format!("V{i}"), Value::from("x")))
        .collect();
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "env": env}),
    );
    let text = result.to_string();
    assert!(
        text.contains("invalid argument env holds more than 4096 values"),
        "{text:.400}"
    );
}

#[test]
fn lone_surrogates_are_read_as_replacement_characters() {
    let server = Server::ready();
    server.skip_received();
    server.send_raw(
        r#"{"jsonrpc":"2.0","id":"s\ud800","method":"tools/call","params":{"name":"exec","arguments":{"command":"printf '%s' 'a\udc00b'","side_effects":["NONE"]}}}"#,
    );
    let response = server.response(&json!("s\u{fffd}"), Duration::from_secs(30));
    let object = server.result_object(&response["result"]);
    assert_eq!(object["stdout"], "a\u{fffd}b", "{response}");
}

#[test]
fn integer_ids_of_any_size_are_echoed_digit_for_digit() {
    let server = Server::ready();
    for digits in [
        "18446744073709551616",
        "-99999999999999999999999",
        "123456789012345678901234567890",
    ] {
        server.send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{digits},"method":"ping"}}"#
        ));
        let id: Value = serde_json::from_str(digits).expect("a number");
        let response = server.response(&id, Duration::from_secs(10));
        assert_eq!(response["id"].to_string(), digits, "{response}");
    }
}

#[test]
fn a_large_declared_argument_costs_at_most_twice_the_line() {
    let _heavy = heavy_load();
    let server = Server::ready();
    let started = server.exec(json!({
        "command": "cat >/dev/null", "side_effects": ["NONE"], "close_stdin": false, "yield_ms": 0
    }));
    let id = started["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let idle = status_bytes(server.pid(), "VmRSS:");
    let size = 24 * 1024 * 1024;
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{{"name":"write","arguments":{{"process_id":"{id}","input":""#
    )
    .into_bytes();
    line.resize(line.len() + size, b'a');
    line.extend_from_slice(br#""}}}"#);
    let n = line.len() as u64;
    server.send_raw_bytes(&line);
    drop(line);
    let response = server.response(&json!("w"), Duration::from_secs(300));
    assert_eq!(response["result"]["isError"], false, "{response:.300}");
    let peak = status_bytes(server.pid(), "VmHWM:");
    // The line, then the argument as a value and as a typed string: never three copies.
    assert!(
        peak.saturating_sub(idle) < 2 * n + 8 * 1024 * 1024,
        "peak {} MiB above idle for a {} MiB line",
        peak.saturating_sub(idle) / (1024 * 1024),
        n / (1024 * 1024)
    );
}
