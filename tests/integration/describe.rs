//! What the model reads, through the real
//! binary: descriptions that name what trusted mode allows and the defaults in force, one
//! JSON type per input property, startup warnings, `yieldshell call`'s quiet stderr, and the
//! `YIELDSHELL_API=1.1` profile running the shell-mode flow under mcp-yieldshell 1.1.2's
//! names.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_error, run_binary, tool_text, wait_until, Server, LATEST};

const TRUSTED: &[(&str, &str)] = &[
    ("ALLOW_COMMANDS", "ls,cat,git"),
    ("ALLOW_PATTERNS", "rg[0-9]*"),
];

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list}"))
}

fn description(list: &Value, name: &str) -> String {
    tool(list, name)["description"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn trusted_descriptions_name_three_commands_a_pattern_the_timeouts_and_the_cap() {
    let server = Server::with_env(TRUSTED);
    let init = server.initialize(LATEST);
    let list = server.result("tools/list", json!({}));
    let shell_execute = description(&list, "shell_execute");
    for want in [
        "Allowed commands: ls, cat, git.",
        "Allowed patterns (whole name): rg[0-9]*.",
        "Timeout: default 30 s, at most 300 s.",
        "Output cap: 1048576 bytes per stream",
    ] {
        assert!(shell_execute.contains(want), "{want:?} in {shell_execute}");
    }
    let exec = description(&list, "exec");
    for want in [
        "Allowed commands: ls, cat, git.",
        "rg[0-9]*",
        "| builds a pipeline",
        "are refused",
        "(default 30000)",
    ] {
        assert!(exec.contains(want), "{want:?} in {exec}");
    }
    assert!(!exec.contains("shell command"), "{exec}");
    let props = tool(&list, "exec")["inputSchema"]["properties"]
        .as_object()
        .expect("properties")
        .clone();
    for refused in ["shell", "tty", "rows", "cols", "raw", "env"] {
        assert!(
            !props.contains_key(refused),
            "trusted exec offers {refused}: {props:?}"
        );
    }
    let timeout = &tool(&list, "shell_execute")["inputSchema"]["properties"]["timeout"];
    assert!(
        timeout["description"]
            .as_str()
            .is_some_and(|d| d.contains("default 30, at most 300")),
        "{timeout}"
    );
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("ls, cat, git") && instructions.contains("rg[0-9]*"),
        "{instructions}"
    );
    // An interpreter's refusal says why and what to do instead, in the hardening's words
    // even when the allowlist refuses it too (the refusal is then final).
    let refused = server.call("shell_execute", json!({"command": ["python3", "-c", "1"]}));
    assert!(
        tool_text(&refused).contains("security policy: python")
            && tool_text(&refused).contains("interpreter"),
        "{refused}"
    );
    let python = Server::ready_with_env(&[("ALLOW_COMMANDS", "python3,ls")]);
    let refused = python.call("shell_execute", json!({"command": ["python3", "-c", "1"]}));
    assert!(is_error(&refused), "{refused}");
    let text = tool_text(&refused);
    assert!(
        text.contains("security policy: python") && text.contains("interpreter"),
        "{text}"
    );
    assert!(
        text.contains("call allowlisted programs directly"),
        "{text}"
    );
    // A name off the allowlist: the refusal lists what is allowed.
    let refused = server.call("shell_execute", json!({"command": ["rm", "x"]}));
    let text = tool_text(&refused);
    assert!(
        text.contains("Command not allowed: rm (allowed: ls, cat, git, names matching rg[0-9]*"),
        "{text}"
    );
}

#[test]
fn trusted_timeouts_and_cap_come_from_the_environment() {
    let mut env = TRUSTED.to_vec();
    env.extend([
        ("MCP_SHELL_DEFAULT_TIMEOUT_SECONDS", "12"),
        ("MCP_SHELL_MAX_TIMEOUT_SECONDS", "90"),
        ("MCP_SHELL_OUTPUT_LIMIT_BYTES", "5000"),
    ]);
    let server = Server::ready_with_env(&env);
    let list = server.result("tools/list", json!({}));
    let text = description(&list, "shell_execute");
    assert!(
        text.contains("default 12 s, at most 90 s") && text.contains("5000 bytes"),
        "{text}"
    );
}

#[test]
fn the_yield_default_shown_is_the_one_in_force() {
    let server = Server::ready_with_env(&[("YIELDSHELL_DEFAULT_YIELD_MS", "7000")]);
    let list = server.result("tools/list", json!({}));
    let exec = description(&list, "exec");
    assert!(exec.contains("yield_ms (default 7000)"), "{exec}");
    assert!(!exec.contains("30000"), "{exec}");
    let prop = &tool(&list, "exec")["inputSchema"]["properties"]["yield_ms"]["description"];
    assert!(
        prop.as_str().is_some_and(|d| d.contains("default 7000")),
        "{prop}"
    );

    // Client-aware: the list asked before initialize names the client shows the server's
    // default; after a client with a 30 s timeout (goose) it shows that client's.
    let server = Server::start();
    let before = server.result("tools/list", json!({}));
    assert!(description(&before, "exec").contains("(default 30000)"));
    let init = server.result(
        "initialize",
        json!({"protocolVersion": LATEST, "capabilities": {},
               "clientInfo": {"name": "goose", "version": "1"}}),
    );
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("25 s")),
        "{init}"
    );
    let after = server.result("tools/list", json!({}));
    assert!(
        description(&after, "exec").contains("(default 25000)"),
        "{}",
        description(&after, "exec")
    );
}

#[test]
fn every_input_property_has_one_json_type() {
    for env in [&[][..], TRUSTED] {
        let server = Server::ready_with_env(env);
        let list = server.result("tools/list", json!({}));
        for t in list["tools"].as_array().expect("tools") {
            for (name, prop) in t["inputSchema"]["properties"]
                .as_object()
                .expect("properties")
            {
                assert!(
                    prop["type"].is_string(),
                    "{}.{name} has type {}",
                    t["name"],
                    prop["type"]
                );
            }
        }
        if env.is_empty() {
            assert_eq!(
                tool(&list, "stop")["inputSchema"]["properties"]["signal"]["type"],
                "string"
            );
            // "9" is a signal, and an integer is still taken leniently.
            let id = server.spawn_bg("sleep 30");
            let stopped = server.call_ok("stop", json!({"process_id": id, "signal": "9"}));
            assert_eq!(stopped["signal"], "SIGKILL", "{stopped}");
        }
    }
}

/// Runs the binary in `dir` with stdin closed (it starts, warns, and ends at EOF).
fn run_in(dir: &str, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_yieldshell"));
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("YIELDSHELL_")
            || name.starts_with("MCP_SHELL_")
            || name.starts_with("MCP_YIELDSHELL_")
            || ["ALLOW_COMMANDS", "ALLOWED_COMMANDS", "ALLOW_PATTERNS"].contains(&name)
        {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("run the binary");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn startup_warns_of_a_refused_directory_and_always_refused_entries() {
    let stderr = run_in(
        "/",
        &[
            ("ALLOW_COMMANDS", "ls,python3"),
            ("ALLOW_PATTERNS", "python[0-9.]*,rg"),
        ],
    );
    let lines: Vec<&str> = stderr.lines().collect();
    let find = |want: &[&str]| {
        lines
            .iter()
            .find(|l| want.iter().all(|w| l.contains(w)))
            .unwrap_or_else(|| panic!("no line with {want:?} in:\n{stderr}"))
    };
    find(&["working directory /,", "YIELDSHELL_DEFAULT_CWD"]);
    find(&["allowlist entry python3", "interpreter"]);
    find(&["ALLOW_PATTERNS entry python[0-9.]*", "always"]);
    assert!(!stderr.contains("entry ls "), "{stderr}");
    assert!(!stderr.contains("entry rg "), "{stderr}");

    // A configuration that can run its calls says nothing.
    let quiet = std::env::temp_dir();
    let stderr = run_in(
        quiet.to_str().expect("utf-8 temp dir"),
        &[("ALLOW_COMMANDS", "ls")],
    );
    assert!(!stderr.contains("WARN"), "{stderr}");
}

#[test]
fn call_prints_the_result_only_unless_log_is_given() {
    let args = [
        "call",
        "exec",
        r#"{"command":"echo hi","side_effects":["NONE"]}"#,
    ];
    let output = run_binary(&args, &[]);
    assert!(output.status.success(), "{output:?}");
    let stdout: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(stdout["stdout"], "hi\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("AUDIT"), "{stderr}");
    let mut with_log = vec!["--log", "warn"];
    with_log.extend(args);
    let output = run_binary(&with_log, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("AUDIT"), "{stderr}");
}

/// The shell-mode flow under mcp-yieldshell 1.1.2's names: execute -> backgrounded -> read
/// -> write -> wait -> stop -> ps -> cleanup.
#[test]
fn api_1_1_runs_the_shell_mode_flow_under_the_old_names() {
    let server = Server::spawn(&[], &["--api", "1.1"]);
    let init = server.initialize(LATEST);
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("execute") && i.contains("execution_id")),
        "{init}"
    );
    let list = server.result("tools/list", json!({}));
    let names: Vec<&str> = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["execute", "read", "write", "wait", "stop", "ps", "cleanup"]
    );
    for name in ["read", "wait", "stop"] {
        assert_eq!(
            tool(&list, name)["inputSchema"]["required"],
            json!(["execution_id"]),
            "{name}: 1.1.2 requires the id"
        );
    }

    // execute -> backgrounded, with the handle as execution_id and the OS pid as process_id.
    let started = server.call_ok(
        "execute",
        json!({"command": "echo ready; cat", "side_effects": ["NONE"],
               "close_stdin": false, "yield_ms": 0}),
    );
    assert_eq!(started["status"], "backgrounded", "{started}");
    let id = started["execution_id"]
        .as_str()
        .expect("execution_id")
        .to_string();
    // 1.1.2's handles are 12 lowercase hex digits, and its own tests check that.
    assert!(
        id.len() == 12 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        "{started}"
    );
    assert!(started["process_id"].is_u64(), "{started}");
    assert!(started.get("pid").is_none() && started.get("truncated").is_none());
    assert!(started.get("evicted").is_some(), "{started}");
    assert!(
        started["message"]
            .as_str()
            .is_some_and(|m| m.contains("execution_id")),
        "{started}"
    );

    // read
    let mut seen = String::new();
    assert!(
        wait_until(Duration::from_secs(20), || {
            let r = server.call_ok("read", json!({"execution_id": id, "since_seq": 1}));
            seen = r["stdout"].as_str().unwrap_or_default().to_string();
            seen.contains("ready")
        }),
        "read never showed the output: {seen:?}"
    );

    // write, then wait for the exit
    let wrote = server.call_ok(
        "write",
        json!({"execution_id": id, "input": "hello", "newline": true, "close_stdin": true}),
    );
    assert_eq!(wrote["ok"], true, "{wrote}");
    assert_eq!(wrote["execution_id"], id, "{wrote}");
    let waited = server.call_ok(
        "wait",
        json!({"execution_id": id, "timeout_ms": 20000, "since_seq": 1}),
    );
    assert_eq!(waited["wait_result"], "exited", "{waited}");
    assert_eq!(waited["max_wait_ms"], 20000, "{waited}");
    // `latest_seq` is one past the newest byte: "ready\nhello\n" is 12 bytes.
    assert_eq!(waited["latest_seq"], 13, "{waited}");
    assert_eq!(waited["next_seq"], 13, "{waited}");
    // Writing to a finished execution is a result that says so, as in 1.1.2.
    let late = server.call("write", json!({"execution_id": id, "input": "x"}));
    assert!(!is_error(&late), "{late}");
    assert_eq!(server.result_object(&late)["ok"], false, "{late}");
    assert!(
        waited["stdout"]
            .as_str()
            .is_some_and(|s| s.contains("hello")),
        "{waited}"
    );

    // A capped read carries 1.1.2's hint sentence.
    let capped = server.call_ok(
        "read",
        json!({"execution_id": id, "since_seq": 1, "max_output_bytes": 3}),
    );
    assert_eq!(capped["capped"], true, "{capped}");
    assert!(
        capped["hint"]
            .as_str()
            .is_some_and(|h| h.contains("since_seq=") && h.contains(&id)),
        "{capped}"
    );

    // stop
    let sleeper = server.call_ok(
        "execute",
        json!({"command": "sleep 60", "side_effects": ["NONE"], "yield_ms": 0}),
    );
    let sleeper_id = sleeper["execution_id"].as_str().expect("execution_id");
    let stopped = server.call_ok("stop", json!({"execution_id": sleeper_id}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    // A process ended by a signal has minus the signal as its exit code.
    let after = server.call_ok("read", json!({"execution_id": sleeper_id}));
    assert_eq!(after["exit_code"], -15, "{after}");
    assert_eq!(after["signal"], "SIGTERM", "{after}");

    // ps lists executions
    let ps = server.call_ok("ps", json!({}));
    let executions = ps["executions"].as_array().expect("executions");
    assert!(ps.get("processes").is_none(), "{ps}");
    for e in executions {
        assert!(e["execution_id"].is_string(), "{e}");
        assert!(e["process_id"].is_u64() || e["process_id"].is_null(), "{e}");
        // Times are epoch seconds, as 1.1.2 sends them.
        assert!(e["started_at"].is_f64(), "{e}");
        assert!(e.get("last_output_at").is_some(), "{e}");
    }
    let first = executions
        .iter()
        .find(|e| e["execution_id"] == id)
        .expect("listed");
    assert!(first["last_output_at"].is_f64(), "{first}");
    assert!(executions.iter().any(|e| e["execution_id"] == id), "{ps}");

    // cleanup
    let cleaned = server.call_ok(
        "cleanup",
        json!({"completed_older_than_ms": 0, "stopped_older_than_ms": 0}),
    );
    assert!(
        cleaned["removed"].as_u64().is_some_and(|n| n >= 2),
        "{cleaned}"
    );

    // An unknown id is a normal result that says so.
    let unknown = server.call("read", json!({"execution_id": id}));
    assert!(!is_error(&unknown), "{unknown}");
    let object = server.result_object(&unknown);
    assert_eq!(
        object["error"],
        format!("Unknown execution_id: {id}"),
        "{object}"
    );

    // An unknown id in stop and write: a result with `stopped`/`ok` false.
    let stop = server.call("stop", json!({"execution_id": id}));
    assert!(!is_error(&stop), "{stop}");
    assert_eq!(server.result_object(&stop)["stopped"], false, "{stop}");
    let write = server.call("write", json!({"execution_id": id, "input": "x"}));
    assert_eq!(server.result_object(&write)["ok"], false, "{write}");

    // The default names are not spoken under 1.1.
    let exec = server.request("tools/call", json!({"name": "exec", "arguments": {}}));
    assert!(exec.get("error").is_some(), "{exec}");
}

#[test]
fn api_1_1_accepts_the_environment_values_1_1_2_accepted() {
    // 1.1.2 read an empty or unparsable integer as the default, and an empty blocked list
    // as the default list; this server refuses them unless --api 1.1 is set.
    let env = [
        ("YIELDSHELL_MAX_OUTPUT_BYTES", ""),
        ("YIELDSHELL_DEFAULT_YIELD_MS", "abc"),
        ("YIELDSHELL_MAX_PROCESSES", "-3"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ""),
    ];
    let refused = run_binary(&["tools"], &env);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let mut with_api = env.to_vec();
    with_api.push(("YIELDSHELL_API", "1.1"));
    let accepted = run_binary(
        &[
            "call",
            "execute",
            r#"{"command":"echo ok","side_effects":["NONE"]}"#,
        ],
        &with_api,
    );
    assert!(accepted.status.success(), "{accepted:?}");
    let result: Value = serde_json::from_slice(&accepted.stdout).expect("JSON");
    assert_eq!(result["stdout"], "ok\n", "{result}");
    assert!(result["execution_id"].is_string(), "{result}");
    // The default blocked list is in force: RUNS_INLINE_CODE is refused.
    let blocked = run_binary(
        &[
            "call",
            "execute",
            r#"{"command":"true","side_effects":["RUNS_INLINE_CODE"]}"#,
        ],
        &with_api,
    );
    let result: Value = serde_json::from_slice(&blocked.stdout).expect("JSON");
    assert_eq!(result["status"], "failed_to_start", "{result}");
    // 1.1.2 took a default cwd that does not exist, and refused each call instead.
    let missing = [("YIELDSHELL_DEFAULT_CWD", "/nonexistent/yieldshell-dir")];
    assert_eq!(run_binary(&["tools"], &missing).status.code(), Some(2));
    let mut with_api = missing.to_vec();
    with_api.push(("YIELDSHELL_API", "1.1"));
    let listed = run_binary(&["tools"], &with_api);
    assert!(listed.status.success(), "{listed:?}");
    let call = run_binary(
        &[
            "call",
            "execute",
            r#"{"command":"true","side_effects":["NONE"]}"#,
        ],
        &with_api,
    );
    let result: Value = serde_json::from_slice(&call.stdout).expect("JSON");
    assert_eq!(result["status"], "failed_to_start", "{result}");
    assert!(
        result["error"]
            .as_str()
            .is_some_and(|e| e.contains("/nonexistent/yieldshell-dir")),
        "{result}"
    );
    let bad = run_binary(&["tools"], &[("YIELDSHELL_API", "2")]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}
