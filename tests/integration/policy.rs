//! Policy and bookkeeping tests: side-effect categories, command
//! regexes, allowed working directories, secret redaction, unknown ids, `ps`, `cleanup`,
//! retention, the process limit, and configuration errors at startup.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_error, path_str, process_id, tool_text, wait_until, Server, TempDir};

/// Calls `exec` and expects a `failed_to_start` tool error; returns its `error` text.
fn rejected(server: &Server, args: Value) -> String {
    let result = server.call_err("exec", args);
    let object = server.result_object(&result);
    assert_eq!(object["status"], "failed_to_start", "{object}");
    let keys: Vec<&String> = object.as_object().expect("object").keys().collect();
    assert_eq!(keys.len(), 2, "only status and error: {object}");
    object["error"]
        .as_str()
        .unwrap_or_else(|| panic!("error text: {object}"))
        .to_owned()
}

fn process_count(server: &Server) -> usize {
    server.call_ok("ps", json!({"limit": 1000}))["processes"]
        .as_array()
        .map_or(0, Vec::len)
}

// ---- side effects ----

#[test]
fn default_blocked_category_fails_before_any_process_starts() {
    let server = Server::ready();
    let marker = crate::support::unique_marker("blocked");
    let error = rejected(
        &server,
        json!({"command": format!("echo {marker} > /dev/null; sleep 5"),
               "side_effects": ["RUNS_INLINE_CODE"]}),
    );
    assert!(error.contains("RUNS_INLINE_CODE"), "{error}");
    let lower = error.to_lowercase();
    assert!(lower.contains("policy"), "{error}");
    assert!(
        lower.contains("before"),
        "stopped before any process started: {error}"
    );
    assert_eq!(process_count(&server), 0, "no record was created");
    assert!(crate::support::marked_processes(&marker).is_empty());
}

#[test]
fn every_default_blocked_category_is_named() {
    let server = Server::ready();
    let blocked = [
        "KILLS_AGENT_PROCESS",
        "MODIFIES_OS_SETTINGS",
        "MODIFIES_OS_USER_SETTINGS",
        "MODIFIES_PROTECTED_FILES",
        "RUNS_INLINE_CODE",
    ];
    for category in blocked {
        let error = rejected(
            &server,
            json!({"command": "true", "side_effects": ["MODIFIES_WORKSPACE_FILES", category]}),
        );
        assert!(error.contains(category), "{category}: {error}");
    }
    let error = rejected(
        &server,
        json!({"command": "true", "side_effects": ["RUNS_INLINE_CODE", "KILLS_AGENT_PROCESS"]}),
    );
    assert!(
        error.contains("RUNS_INLINE_CODE") && error.contains("KILLS_AGENT_PROCESS"),
        "each blocked category is named: {error}"
    );
    // Categories that are not blocked by default run.
    let result = server.exec(json!({
        "command": "echo ok",
        "side_effects": ["DELETES_FILES", "MAKES_NETWORK_REQUESTS", "OTHER", "UNKNOWN"]}));
    assert_eq!(result["stdout"], "ok\n", "{result}");
}

#[test]
fn none_combined_with_another_category_is_an_error() {
    let server = Server::ready();
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE", "DELETES_FILES"]}),
    );
    assert!(tool_text(&result).contains("NONE"), "{result}");
    assert_eq!(process_count(&server), 0);
}

#[test]
fn empty_side_effects_is_an_error() {
    let server = Server::ready();
    let result = server.call_err("exec", json!({"command": "true", "side_effects": []}));
    assert!(tool_text(&result).contains("side_effects"), "{result}");
    assert_eq!(process_count(&server), 0);
}

#[test]
fn custom_blocklist_replaces_the_default() {
    let server =
        Server::ready_with_env(&[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "DELETES_FILES")]);
    let error = rejected(
        &server,
        json!({"command": "true", "side_effects": ["DELETES_FILES"]}),
    );
    assert!(error.contains("DELETES_FILES"), "{error}");
    let result =
        server.exec(json!({"command": "echo inline", "side_effects": ["RUNS_INLINE_CODE"]}));
    assert_eq!(result["stdout"], "inline\n", "{result}");
}

#[test]
fn comma_alone_clears_the_blocklist() {
    let server = Server::ready_with_env(&[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ",")]);
    for category in [
        "RUNS_INLINE_CODE",
        "KILLS_AGENT_PROCESS",
        "MODIFIES_PROTECTED_FILES",
    ] {
        let result = server.exec(json!({"command": "echo ran", "side_effects": [category]}));
        assert_eq!(result["status"], "completed", "{category}: {result}");
    }
}

#[test]
fn unknown_category_in_the_blocklist_stops_the_server() {
    let server = Server::with_env(&[(
        "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS",
        "DELETES_FILES,BOGUS_CAT",
    )]);
    assert_startup_error(&server, "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "BOGUS_CAT");
}

fn assert_startup_error(server: &Server, variable: &str, value: &str) {
    let status = server
        .wait_exit(Duration::from_secs(5))
        .unwrap_or_else(|| server.fail(&format!("{variable}={value}: the server kept running")));
    assert_eq!(status.code(), Some(2), "{variable}={value}: {status:?}");
    // The stderr reader may lag the exit by a moment.
    let mut stderr = String::new();
    wait_until(Duration::from_secs(20), || {
        stderr = server.stderr_text();
        stderr.ends_with('\n')
    });
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr:?}");
    assert!(stderr.contains(variable), "names the variable: {stderr:?}");
    assert!(stderr.contains(value), "names the value: {stderr:?}");
}

#[test]
fn malformed_configuration_values_stop_the_server() {
    let cases = [
        ("YIELDSHELL_MAX_PROCESSES", "many"),
        ("YIELDSHELL_MAX_BUFFER_BYTES", "-5"),
        ("YIELDSHELL_DENY_COMMAND_REGEX", "(unclosed"),
        ("YIELDSHELL_ALLOW_COMMAND_REGEX", "[z-a]"),
        ("YIELDSHELL_REDACT_ENV_REGEX", "*oops"),
        ("YIELDSHELL_PROCESS_RETENTION_MS", "1.5x"),
    ];
    for (variable, value) in cases {
        let server = Server::with_env(&[(variable, value)]);
        assert_startup_error(&server, variable, value);
    }
}

// ---- command regexes ----

#[test]
fn deny_regex_rejects_matching_commands_and_shells() {
    let server =
        Server::ready_with_env(&[("YIELDSHELL_DENY_COMMAND_REGEX", r"rm\s+-rf|/bin/bash")]);
    let error = rejected(
        &server,
        json!({"command": "echo x; rm -rf /nonexistent-ys-dir", "side_effects": ["DELETES_FILES"]}),
    );
    assert!(error.contains("Command denied by policy"), "{error}");
    let error = rejected(
        &server,
        json!({"command": "echo x", "shell": "/bin/bash", "side_effects": ["NONE"]}),
    );
    assert!(
        error.contains("Command denied by policy"),
        "the shell is checked: {error}"
    );
    let result = server.exec(json!({"command": "echo allowed", "shell": "/bin/sh"}));
    assert_eq!(result["stdout"], "allowed\n", "{result}");
    assert_eq!(process_count(&server), 1, "rejected calls create no record");
}

#[test]
fn allow_regex_rejects_other_commands_and_shells() {
    let server =
        Server::ready_with_env(&[("YIELDSHELL_ALLOW_COMMAND_REGEX", r"^(echo [a-z]+|/bin/sh)$")]);
    let result = server.sh("echo fine");
    assert_eq!(result["stdout"], "fine\n", "{result}");
    let error = rejected(
        &server,
        json!({"command": "ls /", "side_effects": ["NONE"]}),
    );
    assert!(error.contains("Command not allowed by policy"), "{error}");
    let result = server.exec(json!({"command": "echo viash", "shell": "/bin/sh"}));
    assert_eq!(result["stdout"], "viash\n", "{result}");
    let error = rejected(
        &server,
        json!({"command": "echo x", "shell": "/bin/dash", "side_effects": ["NONE"]}),
    );
    assert!(
        error.contains("Command not allowed by policy"),
        "the shell is checked: {error}"
    );
}

// ---- allowed working directories ----

struct Tree {
    _dir: TempDir,
    allowed: String,
    sub: String,
    outside: String,
    sibling: String,
    link: String,
    other_root: String,
}

fn tree() -> Tree {
    let dir = TempDir::new("cwds");
    let allowed = dir.mkdir("a");
    let sub = dir.mkdir("a/sub");
    let outside = dir.mkdir("outside");
    let sibling = dir.mkdir("ab");
    let other_root = dir.mkdir("second");
    let link = allowed.join("link");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    Tree {
        allowed: path_str(&allowed).to_owned(),
        sub: path_str(&sub).to_owned(),
        outside: path_str(&outside).to_owned(),
        sibling: path_str(&sibling).to_owned(),
        link: path_str(&link).to_owned(),
        other_root: path_str(&other_root).to_owned(),
        _dir: dir,
    }
}

fn pwd_in(server: &Server, cwd: &str) -> String {
    let result = server.exec(json!({"command": "pwd -P", "cwd": cwd}));
    assert_eq!(result["status"], "completed", "{result}");
    result["stdout"]
        .as_str()
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

#[test]
fn allowed_cwds_accept_paths_inside() {
    let t = tree();
    let roots = format!("{}:{}", t.allowed, t.other_root);
    let server = Server::ready_with_env(&[("YIELDSHELL_ALLOWED_CWDS", &roots)]);
    assert_eq!(pwd_in(&server, &t.allowed), t.allowed, "the root itself");
    assert_eq!(pwd_in(&server, &t.sub), t.sub);
    assert_eq!(
        pwd_in(&server, &t.other_root),
        t.other_root,
        "the second root"
    );
    let dotted = format!("{}/sub/../sub", t.allowed);
    assert_eq!(pwd_in(&server, &dotted), t.sub, "`..` that stays inside");
}

#[test]
fn allowed_cwds_reject_paths_outside() {
    let t = tree();
    let server = Server::ready_with_env(&[("YIELDSHELL_ALLOWED_CWDS", &t.allowed)]);
    let escaping = format!("{}/sub/../../outside", t.allowed);
    for cwd in [&t.outside, &t.sibling, &t.link, &escaping, &"/".to_owned()] {
        let error = rejected(
            &server,
            json!({"command": "pwd", "side_effects": ["NONE"], "cwd": cwd}),
        );
        assert!(!error.is_empty(), "{cwd}");
    }
    assert_eq!(process_count(&server), 0);
}

#[test]
fn allowed_cwds_apply_to_the_default_cwd_and_relative_paths() {
    let t = tree();
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_ALLOWED_CWDS", &t.allowed),
        ("YIELDSHELL_DEFAULT_CWD", &t.allowed),
    ]);
    let result = server.sh("pwd -P");
    assert_eq!(result["stdout"], format!("{}\n", t.allowed), "{result}");
    assert_eq!(pwd_in(&server, "sub"), t.sub, "relative to the default cwd");
    let error = rejected(
        &server,
        json!({"command": "pwd", "side_effects": ["NONE"], "cwd": "../outside"}),
    );
    assert!(!error.is_empty());
    let error = rejected(
        &server,
        json!({"command": "pwd", "side_effects": ["NONE"], "cwd": "link"}),
    );
    assert!(!error.is_empty());
}

// ---- redaction ----

const SECRET: &str = "supersecretvalue123";

#[test]
fn redaction_replaces_a_secret_split_across_writes() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("SECRET_TOKEN", SECRET),
    ]);
    let result = server.sh("printf supersecr; sleep 0.2; printf etvalue123; echo");
    let expected = "[REDACTED:SECRET_TOKEN]\n";
    assert_eq!(result["stdout"], expected, "{result}");
    assert_eq!(
        result["next_seq"],
        expected.len() + 1,
        "positions count the redacted text: {result}"
    );
    let result = server.sh("echo \"$SECRET_TOKEN\" >&2");
    assert_eq!(result["stderr"], expected, "{result}");
}

// See: issues/8 (a call's env value matched first and uncovered the rest of the secret).
#[test]
fn a_decoy_in_the_calls_env_cannot_uncover_a_server_secret() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET|TOKEN"),
        ("MY_SECRET", "zTOPSECRETVALUE42"),
    ]);
    let result = server.call_ok(
        "exec",
        json!({
            "command": "printf 'XXXXXXX%s\\n' \"$MY_SECRET\"; printf '%s\\n' \"$MY_SECRET\" >&2",
            "side_effects": ["NONE"],
            "env": {"DECOY_TOKEN": "XXXXXXXz"},
        }),
    );
    let stdout = result["stdout"].as_str().expect("stdout");
    assert!(!stdout.contains("TOPSECRET"), "the secret leaked: {result}");
    assert_eq!(stdout, "[REDACTED:DECOY_TOKEN,MY_SECRET]\n", "{result}");
    assert_eq!(result["stderr"], "[REDACTED:MY_SECRET]\n", "{result}");
}

#[test]
fn redaction_holds_across_incremental_reads() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("SECRET_TOKEN", SECRET),
    ]);
    let id = server.spawn_bg(
        "echo start; printf supersecr; sleep 0.5; printf etvalue123; sleep 0.3; echo; echo end",
    );
    let mut collected = String::new();
    let mut next = 1;
    for _ in 0..2000 {
        let r = server.call_ok("read", json!({"process_id": id, "since_seq": next}));
        let chunk = r["stdout"].as_str().unwrap_or_default();
        assert!(
            !chunk.contains("supersecr"),
            "a piece of the secret leaked: {r}"
        );
        collected.push_str(chunk);
        next = r["next_seq"].as_u64().expect("next_seq");
        if r["status"] != "running" && chunk.is_empty() {
            break;
        }
        if chunk.is_empty() {
            server.call_ok(
                "wait",
                json!({"process_id": id, "since_seq": next, "until": "\\S", "timeout_ms": 5000}),
            );
        }
    }
    assert_eq!(collected, "start\n[REDACTED:SECRET_TOKEN]\nend\n");
}

#[test]
fn redaction_covers_ps_command_and_env_overlay_but_not_short_values() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("SECRET_TOKEN", SECRET),
        ("SHORT_SECRET", "abc"),
    ]);
    let result = server.sh(&format!("echo {SECRET} | wc -c; echo $SHORT_SECRET"));
    assert_eq!(
        result["stdout"], "20\nabc\n",
        "short values are not redacted: {result}"
    );
    let id = process_id(&result);
    let entry = server.ps_entry(&id).expect("listed");
    let command = entry["command"].as_str().unwrap_or_default();
    assert!(!command.contains(SECRET), "{entry}");
    assert!(command.contains("[REDACTED:SECRET_TOKEN]"), "{entry}");
    // The label given by the call is shown by ps too, so it is redacted as well.
    let named = server.exec(json!({"command": "true", "name": format!("job-{SECRET}-x")}));
    let entry = server.ps_entry(&process_id(&named)).expect("listed");
    assert_eq!(entry["name"], "job-[REDACTED:SECRET_TOKEN]-x", "{entry}");
    let result = server.exec(json!({
        "command": "echo \"$MY_SECRET\"",
        "env": {"MY_SECRET": "overlaysecret42"},
    }));
    assert_eq!(result["stdout"], "[REDACTED:MY_SECRET]\n", "{result}");
}

#[test]
fn without_the_regex_nothing_is_redacted() {
    let server = Server::ready_with_env(&[("SECRET_TOKEN", SECRET)]);
    let result = server.sh("echo \"$SECRET_TOKEN\"");
    assert_eq!(result["stdout"], format!("{SECRET}\n"), "{result}");
}

// ---- unknown ids ----

#[test]
fn unknown_process_id_is_a_structured_error() {
    let server = Server::ready();
    let id = "proc_000000000000";
    let expected = json!({"process_id": id, "error": format!("Unknown process_id: {id}")});
    for (tool, args) in [
        ("read", json!({"process_id": id})),
        ("write", json!({"process_id": id, "input": "x"})),
        ("wait", json!({"process_id": id, "timeout_ms": 100})),
        ("stop", json!({"process_id": id})),
    ] {
        let result = server.call_err(tool, args);
        assert_eq!(server.result_object(&result), expected, "{tool}: {result}");
    }
    let result = server.call_err("read", json!({"process_id": "nonsense"}));
    assert_eq!(
        server.result_object(&result),
        json!({"process_id": "nonsense", "error": "Unknown process_id: nonsense"})
    );
}

// ---- ps ----

#[test]
fn ps_lists_newest_first_with_all_fields() {
    let server = Server::ready();
    let first = process_id(&server.exec(json!({"command": "echo hello", "name": "first"})));
    let second = process_id(&server.exec(json!({"command": "exit 2", "name": "second"})));
    let third = server.spawn_bg_with(json!({"command": "sleep 30", "name": "third"}));
    let ps = server.call_ok("ps", json!({}));
    let processes = ps["processes"].as_array().expect("processes").clone();
    let ids: Vec<&str> = processes
        .iter()
        .map(|p| p["process_id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        ids,
        [third.as_str(), second.as_str(), first.as_str()],
        "{ps}"
    );
    let rfc3339 =
        regex_lite::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$").unwrap();
    for p in &processes {
        for field in [
            "process_id",
            "pid",
            "name",
            "command",
            "cwd",
            "status",
            "exit_code",
            "signal",
            "started_at",
            "ended_at",
            "duration_ms",
            "stdout_bytes",
            "stderr_bytes",
            "idle_ms",
            "latest_seq",
            "stdin_error",
        ] {
            assert!(p.get(field).is_some(), "{field} missing: {p}");
        }
        assert!(
            rfc3339.is_match(p["started_at"].as_str().unwrap_or_default()),
            "{p}"
        );
        assert!(p["cwd"].as_str().is_some_and(|c| c.starts_with('/')), "{p}");
    }
    let [newest, middle, oldest] = &processes[..] else {
        panic!("three records: {ps}")
    };
    assert_eq!(newest["name"], "third");
    assert_eq!(newest["status"], "running");
    assert_eq!(newest["ended_at"], Value::Null, "{newest}");
    assert_eq!(newest["exit_code"], Value::Null, "{newest}");
    assert_eq!(newest["command"], "sleep 30");
    assert_eq!(middle["status"], "completed");
    assert_eq!(middle["exit_code"], 2, "{middle}");
    assert_eq!(oldest["command"], "echo hello");
    assert_eq!(oldest["stdout_bytes"], 6, "{oldest}");
    assert_eq!(oldest["stderr_bytes"], 0, "{oldest}");
    assert!(
        rfc3339.is_match(oldest["ended_at"].as_str().unwrap_or_default()),
        "{oldest}"
    );

    let live = server.call_ok("ps", json!({"include_completed": false}));
    let live_ids: Vec<&Value> = live["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .map(|p| &p["process_id"])
        .collect();
    assert_eq!(live_ids, [&json!(third)], "{live}");
    let limited = server.call_ok("ps", json!({"limit": 2}));
    let limited_ids: Vec<&Value> = limited["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .map(|p| &p["process_id"])
        .collect();
    assert_eq!(limited_ids, [&json!(third), &json!(second)], "{limited}");
    server.call_ok("stop", json!({"process_id": third, "force_after_ms": 1000}));
}

// ---- cleanup and retention ----

#[test]
fn cleanup_removes_finished_records_but_never_live_ones() {
    let server = Server::ready();
    let done = process_id(&server.sh("true"));
    let stopped = server.spawn_bg("sleep 30");
    server.call_ok(
        "stop",
        json!({"process_id": stopped, "force_after_ms": 1000}),
    );
    let live = server.spawn_bg("sleep 30");

    let result = server.call_ok("cleanup", json!({}));
    assert_eq!(
        result["removed"], 0,
        "defaults keep records for an hour: {result}"
    );

    let result = server.call_ok(
        "cleanup",
        json!({"completed_older_than_ms": 3600000, "stopped_older_than_ms": 0}),
    );
    assert_eq!(result["removed"], 1, "only the stopped record: {result}");
    assert!(server.ps_entry(&stopped).is_none());
    assert!(server.ps_entry(&done).is_some());

    let result = server.call_ok(
        "cleanup",
        json!({"completed_older_than_ms": 0, "stopped_older_than_ms": 0}),
    );
    assert_eq!(result["removed"], 1, "the completed record: {result}");
    assert_eq!(
        server.ps_entry(&live).expect("live kept")["status"],
        "running"
    );
    let gone = server.call_err("read", json!({"process_id": done}));
    assert_eq!(
        server.result_object(&gone)["error"],
        format!("Unknown process_id: {done}")
    );
    server.call_ok("stop", json!({"process_id": live, "force_after_ms": 1000}));
}

#[test]
fn cleanup_with_negative_threshold_removes_nothing() {
    let server = Server::ready();
    process_id(&server.sh("true"));
    for args in [
        json!({"completed_older_than_ms": -1}),
        json!({"completed_older_than_ms": 0, "stopped_older_than_ms": -5}),
    ] {
        let result = server.call("cleanup", args.clone());
        assert!(is_error(&result), "{args}: {result}");
        assert_eq!(process_count(&server), 1, "nothing removed by {args}");
    }
}

#[test]
fn retention_keeps_only_the_newest_finished_records() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_RETAINED_PROCESSES", "2")]);
    let ids: Vec<String> = (0..4)
        .map(|i| process_id(&server.sh(&format!("echo {i}"))))
        .collect();
    let live = server.spawn_bg("sleep 30");
    let ps = server.call_ok("ps", json!({}));
    let listed: Vec<&str> = ps["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .map(|p| p["process_id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        listed,
        [live.as_str(), ids[3].as_str(), ids[2].as_str()],
        "{ps}"
    );
    for old in &ids[..2] {
        let result = server.call_err("read", json!({"process_id": old}));
        assert_eq!(
            server.result_object(&result)["error"],
            format!("Unknown process_id: {old}")
        );
    }
    server.call_ok("stop", json!({"process_id": live, "force_after_ms": 1000}));
}

#[test]
fn retention_age_removes_old_finished_records_before_a_spawn() {
    let server = Server::ready_with_env(&[("YIELDSHELL_PROCESS_RETENTION_MS", "1")]);
    let old = process_id(&server.sh("true"));
    // The record must be older than 1 ms before the next spawn prunes it.
    let finished = std::time::Instant::now();
    wait_until(Duration::from_secs(20), || {
        finished.elapsed() > Duration::from_millis(3)
    });
    let live = server.spawn_bg("sleep 30");
    assert!(
        server.ps_entry(&old).is_none(),
        "finished > 1 ms ago: removed"
    );
    assert!(server.ps_entry(&live).is_some());
    let newer = process_id(&server.sh("true"));
    assert!(
        server.ps_entry(&live).is_some(),
        "a live record is never removed"
    );
    assert!(server.ps_entry(&newer).is_some());
    server.call_ok("stop", json!({"process_id": live, "force_after_ms": 1000}));
}

#[test]
fn process_limit_rejects_the_next_live_process() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_PROCESSES", "2")]);
    let a = server.spawn_bg("sleep 30");
    let _b = server.spawn_bg("sleep 30");
    let error = rejected(
        &server,
        json!({"command": "sleep 30", "side_effects": ["NONE"]}),
    );
    assert!(
        error.contains("Maximum process limit (2) reached"),
        "{error}"
    );
    server.call_ok("stop", json!({"process_id": a, "force_after_ms": 1000}));
    let c = server.spawn_bg("sleep 30");
    server.call_ok("stop", json!({"process_id": c, "force_after_ms": 1000}));
    // Finished records do not count.
    let result = server.sh("echo counted");
    assert_eq!(result["stdout"], "counted\n");
}

// ---- audit ----

// See: issues/8 (secret-looking values in exec command strings were logged verbatim).
#[test]
fn audit_log_hides_secret_looking_values_in_command_strings() {
    let dir = TempDir::new("audit-args");
    let log = dir.path().join("audit.log");
    let server = Server::ready_with_env(&[("YIELDSHELL_AUDIT_LOG", path_str(&log))]);
    server.sh(
        "API_KEY=k3y-v4lue echo --password hunt3r2 --token=t0ken https://bob:pa55w0rd@example.com/",
    );
    let mut text = String::new();
    wait_until(Duration::from_secs(20), || {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("\"exec\"")
    });
    for value in ["k3y-v4lue", "hunt3r2", "t0ken", "pa55w0rd"] {
        assert!(
            !text.contains(value),
            "{value} reached the audit log: {text}"
        );
    }
    assert!(text.contains("--password [REDACTED]"), "{text}");
    assert!(
        text.contains("https://bob:[REDACTED]@example.com/"),
        "{text}"
    );
}

// See: issues/8 (attempts refused for malformed arguments left no audit line).
#[test]
fn attempts_with_malformed_arguments_are_audited() {
    let dir = TempDir::new("audit-bad-args");
    let log = dir.path().join("audit.log");
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_AUDIT_LOG", path_str(&log)),
        ("ALLOW_COMMANDS", "echo"),
    ]);
    server.call_err(
        "exec",
        json!({"command": "echo --token=s3cr3t-value", "side_effects": ["NONE"], "yield_ms": "soon"}),
    );
    server.call_err(
        "shell_execute",
        json!({"command": ["echo", "hi"], "timeout": "later"}),
    );
    server.call_err("shell_execute", json!({"command": "echo hi"}));
    let mut lines: Vec<Value> = Vec::new();
    wait_until(Duration::from_secs(20), || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        lines = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        lines.len() >= 3
    });
    assert_eq!(lines.len(), 3, "one line per refused attempt: {lines:?}");
    for line in &lines {
        assert_eq!(line["result_type"], "rejected", "{line}");
        assert!(line["rejection_reason"].as_str().is_some(), "{line}");
    }
    assert_eq!(lines[0]["tool"], "exec");
    assert_eq!(
        lines[0]["command"], "echo --token=[REDACTED]",
        "{}",
        lines[0]
    );
    assert!(lines[0]["rejection_reason"]
        .as_str()
        .unwrap_or_default()
        .contains("yield_ms"));
    assert_eq!(lines[1]["argv"], json!(["echo", "hi"]), "{}", lines[1]);
    assert!(lines[1]["rejection_reason"]
        .as_str()
        .unwrap_or_default()
        .contains("timeout"));
    assert_eq!(lines[2]["command"], "echo hi", "{}", lines[2]);
}

// A refusal's reason and a directory as given must not carry the secret in clear.
#[test]
fn audit_texts_that_quote_the_call_are_redacted_too() {
    let dir = TempDir::new("audit-texts");
    let log = dir.path().join("audit.log");
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_AUDIT_LOG", path_str(&log)),
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("MY_SECRET", "hunter2hunter2"),
        ("ALLOW_COMMANDS", "ls"),
    ]);
    server.call_err("shell_execute", json!({"command": ["hunter2hunter2"]}));
    server.call_err(
        "exec",
        json!({"command": "ls", "cwd": "/nonexistent/hunter2hunter2", "side_effects": ["NONE"]}),
    );
    let mut text = String::new();
    wait_until(Duration::from_secs(20), || {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        text.lines().count() >= 2
    });
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        !text.contains("hunter2hunter2"),
        "the secret reached the audit log: {text}"
    );
    assert!(text.contains("[REDACTED:MY_SECRET]"), "{text}");
}

#[test]
fn audit_log_records_every_exec_attempt_with_secrets_redacted() {
    let dir = TempDir::new("audit");
    let log = dir.path().join("audit.log");
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_AUDIT_LOG", path_str(&log)),
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("SECRET_TOKEN", SECRET),
    ]);
    let done = process_id(&server.sh(&format!("echo {SECRET}")));
    rejected(
        &server,
        json!({"command": "true", "side_effects": ["RUNS_INLINE_CODE"]}),
    );
    let live = server.spawn_bg("sleep 30");
    rejected(
        &server,
        json!({"command": "true", "side_effects": ["NONE"], "cwd": "/nonexistent"}),
    );
    server.call_ok("stop", json!({"process_id": live, "force_after_ms": 1000}));
    let mut lines: Vec<Value> = Vec::new();
    wait_until(Duration::from_secs(20), || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
            .collect();
        lines.len() >= 4
    });
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !text.contains(SECRET),
        "the secret reached the audit log: {text}"
    );
    let execs: Vec<&Value> = lines.iter().filter(|l| l["tool"] == "exec").collect();
    assert_eq!(execs.len(), 4, "one line per exec attempt: {text}");
    let results: Vec<&Value> = execs.iter().map(|l| &l["result_type"]).collect();
    assert_eq!(
        results,
        [
            &json!("success"),
            &json!("rejected"),
            &json!("backgrounded"),
            &json!("rejected")
        ],
        "{text}"
    );
    assert_eq!(execs[0]["process_id"], done.as_str(), "{text}");
    assert_eq!(
        execs[0]["command"], "echo [REDACTED:SECRET_TOKEN]",
        "{text}"
    );
    assert_eq!(execs[2]["process_id"], live.as_str(), "{text}");
    for line in &execs {
        assert_eq!(line["mode"], "shell", "{line}");
        assert!(
            line["time"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{line}"
        );
        assert!(
            line.get("directory").or_else(|| line.get("cwd")).is_some(),
            "the working directory is recorded: {line}"
        );
    }
    for line in [execs[1], execs[3]] {
        assert!(
            line["rejection_reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{line}"
        );
    }
}
