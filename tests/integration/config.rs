//! Configuration tests: `--help`, `--version`, flags and their environment
//! variables, limits that shape `exec`, tool narrowing, and logging that never reaches stdout.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{process_id, run_binary, Server};

fn combined_output(output: &std::process::Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

#[test]
fn version_flag_prints_the_crate_version() {
    let output = run_binary(&["--version"], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = combined_output(&output);
    assert!(text.contains(env!("CARGO_PKG_VERSION")), "{text:?}");
    assert_eq!(text.lines().count(), 1, "{text:?}");
}

#[test]
fn help_lists_the_variables_with_defaults() {
    let output = run_binary(&["--help"], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = combined_output(&output);
    for needle in [
        "YIELDSHELL_MAX_BUFFER_BYTES",
        "262144",
        "YIELDSHELL_MAX_PROCESSES",
        "YIELDSHELL_MAX_RETAINED_PROCESSES",
        "YIELDSHELL_PROCESS_RETENTION_MS",
        "3600000",
        "YIELDSHELL_DEFAULT_YIELD_MS",
        "30000",
        "YIELDSHELL_MAX_YIELD_MS",
        "YIELDSHELL_DEFAULT_TIMEOUT_MS",
        "YIELDSHELL_MAX_OUTPUT_BYTES",
        "20000",
        "YIELDSHELL_ALLOWED_CWDS",
        "YIELDSHELL_DEFAULT_CWD",
        "YIELDSHELL_DENY_COMMAND_REGEX",
        "YIELDSHELL_ALLOW_COMMAND_REGEX",
        "YIELDSHELL_REDACT_ENV_REGEX",
        "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS",
        "RUNS_INLINE_CODE",
        "YIELDSHELL_LOG",
        "YIELDSHELL_TOOLS",
        "YIELDSHELL_MODE",
    ] {
        assert!(text.contains(needle), "--help should mention {needle}");
    }
}

#[test]
fn eof_on_an_empty_stdin_exits_zero_with_nothing_on_stdout() {
    let started = Instant::now();
    let output = run_binary(&[], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    assert!(
        started.elapsed() < crate::support::loaded(Duration::from_secs(2)),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn malformed_flag_value_stops_the_server() {
    let output = run_binary(&["--max-processes", "abc"], &[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.contains("abc"), "{stderr:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
}

#[test]
fn a_flag_wins_over_its_variable() {
    let server = Server::spawn(
        &[("YIELDSHELL_MAX_PROCESSES", "5")],
        &["--max-processes", "1"],
    );
    server.initialize(crate::support::LATEST);
    let first = server.spawn_bg("sleep 30");
    let result = server.call_err(
        "exec",
        json!({"command": "sleep 30", "side_effects": ["NONE"], "yield_ms": 0}),
    );
    let object = server.result_object(&result);
    assert!(
        object["error"]
            .as_str()
            .is_some_and(|e| e.contains("Maximum process limit (1) reached")),
        "{object}"
    );
    server.call_ok("stop", json!({"process_id": first, "force_after_ms": 1000}));
}

#[test]
fn max_yield_ms_clamps_the_requested_yield() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_YIELD_MS", "300")]);
    let started = Instant::now();
    let result = server.exec(json!({"command": "sleep 10", "yield_ms": 10000}));
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "backgrounded", "{result}");
    assert!(
        elapsed >= Duration::from_millis(250) && elapsed < Duration::from_secs(8),
        "clamped to 300 ms, returned after {elapsed:?}"
    );
    server.call_ok(
        "stop",
        json!({"process_id": process_id(&result), "force_after_ms": 1000}),
    );
}

#[test]
fn default_yield_ms_applies_when_none_is_given() {
    let server = Server::ready_with_env(&[("YIELDSHELL_DEFAULT_YIELD_MS", "300")]);
    let started = Instant::now();
    let result = server.sh("sleep 10");
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "backgrounded", "{result}");
    assert!(
        elapsed >= Duration::from_millis(250) && elapsed < Duration::from_secs(8),
        "returned after {elapsed:?}"
    );
    server.call_ok(
        "stop",
        json!({"process_id": process_id(&result), "force_after_ms": 1000}),
    );
}

#[test]
fn default_timeout_applies_and_zero_means_unlimited() {
    let server = Server::ready_with_env(&[("YIELDSHELL_DEFAULT_TIMEOUT_MS", "400")]);
    let result = server.exec(json!({"command": "sleep 10", "yield_ms": 10000}));
    assert_eq!(result["status"], "timed_out", "{result}");
    let result = server.exec(json!({"command": "sleep 30", "yield_ms": 0, "timeout_ms": 0}));
    let id = process_id(&result);
    let waited = server.call_ok("wait", json!({"process_id": id, "timeout_ms": 900}));
    assert_eq!(waited["wait_result"], "deadline_reached", "{waited}");
    assert_eq!(
        waited["status"], "running",
        "timeout_ms 0 is unlimited: {waited}"
    );
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn max_output_bytes_is_capped_by_the_variable() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_OUTPUT_BYTES", "100")]);
    let result = server.exec(json!({"command": "seq 1 1000", "max_output_bytes": 5000}));
    // The ended command shows its start and end around a marker, within 100 bytes
    // of output (the marker line aside).
    let out = result["stdout"].as_str().unwrap_or_default();
    let marker = out.lines().find(|l| l.starts_with("[… ")).expect("marker");
    let shown = out.len() - marker.len() - 1;
    assert!(
        shown <= 100 && out.ends_with("1000\n"),
        "{shown} bytes: {result}"
    );
    assert!(
        result["omitted"]["stdout"]["bytes"].as_u64() > Some(3700),
        "{result}"
    );
    let id = process_id(&result);
    let read = server.call_ok("read", json!({"process_id": id, "since_seq": 1}));
    let out = read["stdout"].as_str().unwrap_or_default();
    assert!(
        out.len() <= 100 && out.len() >= 90,
        "the default too: {read}"
    );
}

fn listed_tools(server: &Server) -> Vec<String> {
    let result = server.result("tools/list", json!({}));
    let mut names: Vec<String> = result["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn tools_variable_and_flag_narrow_the_tools() {
    let server = Server::ready_with_env(&[("YIELDSHELL_TOOLS", "exec,read")]);
    assert_eq!(listed_tools(&server), ["exec", "read"]);
    let response = server.request("tools/call", json!({"name": "ps", "arguments": {}}));
    assert_eq!(
        response["error"]["code"], -32602,
        "an unlisted tool: {response}"
    );
    let result = server.exec(json!({"command": "echo narrowed"}));
    assert_eq!(result["stdout"], "narrowed\n");

    let server = Server::spawn(&[], &["--tools", "ps"]);
    server.initialize(crate::support::LATEST);
    assert_eq!(listed_tools(&server), ["ps"]);
    let response = server.request(
        "tools/call",
        json!({"name": "exec", "arguments": {"command": "true", "side_effects": ["NONE"]}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn shell_variable_and_parameter_choose_the_shell() {
    let server = Server::ready_with_env(&[("YIELDSHELL_SHELL", "/bin/bash")]);
    let result = server.sh("echo \"bash=${BASH_VERSION:+yes}\"");
    assert_eq!(result["stdout"], "bash=yes\n", "{result}");
    let server = Server::ready();
    let result = server.sh("echo \"bash=${BASH_VERSION:+yes}\"");
    assert_eq!(
        result["stdout"], "bash=\n",
        "the default is /bin/sh: {result}"
    );
    let result = server.exec(json!({
        "command": "echo \"bash=${BASH_VERSION:+yes}\"", "shell": "/bin/bash"}));
    assert_eq!(result["stdout"], "bash=yes\n", "{result}");
}

#[test]
fn debug_logging_goes_to_stderr_only() {
    let server = Server::ready_with_env(&[("YIELDSHELL_LOG", "debug")]);
    let id = server.spawn_bg("echo logged; sleep 0.2");
    server.wait_exit_of(&id);
    server.call_ok("ps", json!({}));
    server.request("no/such", json!({}));
    server.send_raw("not json");
    server.assert_alive();
    server.check_violations();
    assert!(!server.stderr_text().is_empty(), "debug logs go to stderr");
}
