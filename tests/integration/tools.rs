//! Shell-mode tool tests: argument validation and leniency, and the behaviour
//! of `exec`, `write`, `wait` and `stop` on real child processes.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{
    pgid_gone, pid_gone, pid_of, process_id, tool_text, unique_marker, wait_until, zombie_children,
    Server,
};

fn assert_names(text: &str, words: &[&str]) {
    for word in words {
        assert!(text.contains(word), "{text:?} should mention {word:?}");
    }
}

// ---- argument errors and leniency ----

#[test]
fn exec_without_command_names_the_field() {
    let server = Server::ready();
    let result = server.call_err("exec", json!({"side_effects": ["NONE"]}));
    assert_names(&tool_text(&result), &["command"]);
    server.assert_alive();
}

#[test]
fn exec_with_command_of_wrong_type_names_field_and_value() {
    let server = Server::ready();
    let result = server.call_err("exec", json!({"command": 123, "side_effects": ["NONE"]}));
    assert_names(&tool_text(&result), &["command", "123"]);
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "yield_ms": "soon"}),
    );
    assert_names(&tool_text(&result), &["yield_ms", "soon"]);
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "env": {"A": 1}}),
    );
    assert_names(&tool_text(&result), &["env"]);
    assert_eq!(
        server.call_ok("ps", json!({}))["processes"],
        json!([]),
        "nothing may have been started"
    );
}

#[test]
fn exec_with_bad_side_effect_names_field_value_and_choices() {
    let server = Server::ready();
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["BOGUS_EFFECT"]}),
    );
    assert_names(
        &tool_text(&result),
        &["side_effects", "BOGUS_EFFECT", "DELETES_FILES"],
    );
    // Categories are case-sensitive.
    let result = server.call_err("exec", json!({"command": "true", "side_effects": ["none"]}));
    assert_names(&tool_text(&result), &["side_effects", "none"]);
    let result = server.call_err("exec", json!({"command": "true", "side_effects": "NONE"}));
    assert_names(&tool_text(&result), &["side_effects"]);
    let result = server.call_err("exec", json!({"command": "true"}));
    assert_names(&tool_text(&result), &["side_effects"]);
}

#[test]
fn read_with_bad_streams_value_names_the_field() {
    let server = Server::ready();
    let id = process_id(&server.sh("true"));
    let result = server.call_err("read", json!({"process_id": id, "streams": "stdin"}));
    assert_names(&tool_text(&result), &["streams", "stdin"]);
    let result = server.call_err("read", json!({}));
    assert_names(&tool_text(&result), &["process_id"]);
}

#[test]
fn integers_given_as_strings_or_integral_floats_are_accepted() {
    let server = Server::ready();
    for yield_ms in [json!("100"), json!(100.0)] {
        let started = Instant::now();
        let result = server.exec(json!({"command": "sleep 60", "yield_ms": yield_ms}));
        let elapsed = started.elapsed();
        assert_eq!(
            result["status"], "backgrounded",
            "yield_ms {yield_ms}: {result}"
        );
        // Well under the default yield (30 s): the given one was used. (Generous: the
        // machine may be loaded.)
        assert!(
            elapsed < Duration::from_secs(15),
            "yield_ms {yield_ms} took {elapsed:?}"
        );
        server.call_ok(
            "stop",
            json!({"process_id": process_id(&result), "force_after_ms": "1000"}),
        );
    }
    let result = server.exec(json!({
        "command": "seq 1 100", "max_output_bytes": "10", "timeout_ms": 60000.0}));
    assert_eq!(result["status"], "completed", "{result}");
    // An ended command shows head, marker, tail within the budget.
    let out = result["stdout"].as_str().unwrap_or_default();
    assert!(
        out.starts_with("1\n[… "),
        "max_output_bytes \"10\": {result}"
    );
    assert!(result["omitted"]["stdout"].is_object(), "{result}");
}

#[test]
fn booleans_given_as_strings_are_accepted() {
    let server = Server::ready();
    // close_stdin "false": cat keeps waiting for input.
    let result = server.exec(json!({"command": "cat", "close_stdin": "false", "yield_ms": 300}));
    assert_eq!(result["status"], "backgrounded", "{result}");
    let id = process_id(&result);
    let written = server.call_ok(
        "write",
        json!({"process_id": id, "input": "x", "newline": "true", "close_stdin": "true"}),
    );
    assert_eq!(written["ok"], true, "{written}");
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["exit_code"], 0, "{waited}");
    assert_eq!(server.read_all(&id).0, "x\n");
    // close_stdin "true": cat sees EOF at once.
    let result = server.exec(json!({"command": "cat", "close_stdin": "true", "yield_ms": 5000}));
    assert_eq!(result["status"], "completed", "{result}");
}

#[test]
fn nulls_and_unknown_fields_are_accepted() {
    let server = Server::ready();
    let result = server.exec(json!({
        "command": "echo ok",
        "cwd": null, "env": null, "shell": null, "stdin": null, "name": null,
        "yield_ms": null, "timeout_ms": null, "max_output_bytes": null, "tail_lines": null,
        "close_stdin": null, "an_unknown_field": {"nested": [1, 2]},
    }));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "ok\n", "{result}");
    let id = process_id(&result);
    let read = server.call_ok(
        "read",
        json!({"process_id": id, "since_seq": null, "streams": null, "extra": true}),
    );
    // Without since_seq the read goes on after exec's answer.
    assert_eq!(read["stdout"], "", "{read}");
    let ps = server.call_ok(
        "ps",
        json!({"include_completed": null, "limit": null, "x": 1}),
    );
    assert_eq!(ps["processes"].as_array().map(Vec::len), Some(1), "{ps}");
}

// ---- exec ----

#[test]
fn exec_fast_command_completes_with_output_and_exit_code() {
    let server = Server::ready();
    let result = server.sh("echo hello; echo err >&2");
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "hello\n", "{result}");
    assert_eq!(result["stderr"], "err\n", "{result}");
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["signal"], Value::Null, "{result}");
    assert!(
        result.get("signal").is_some(),
        "signal is present: {result}"
    );
    assert_eq!(result["start_seq"], 1, "{result}");
    assert_eq!(result["next_seq"], 11, "10 bytes of output: {result}");
    assert_eq!(result["truncated"], false, "{result}");
    assert_eq!(result["capped"], false, "{result}");
    process_id(&result);
    assert!(pid_of(&result) > 1, "{result}");
    assert!(result["duration_ms"].is_u64(), "{result}");
    assert!(result["latest_seq"].is_u64(), "{result}");
    assert!(result.get("message").is_none() || result["message"].is_null());
}

#[test]
fn exec_non_zero_exit_is_not_a_tool_error() {
    let server = Server::ready();
    let result = server.sh("echo failing >&2; exit 3");
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["exit_code"], 3, "{result}");
    assert_eq!(result["signal"], Value::Null, "{result}");
    assert_eq!(result["stderr"], "failing\n", "{result}");
}

#[test]
fn exec_killed_by_a_signal_reports_it() {
    let server = Server::ready();
    let result = server.sh("kill -9 $$");
    assert_eq!(result["exit_code"], Value::Null, "{result}");
    assert_eq!(result["signal"], "SIGKILL", "{result}");
}

#[test]
fn exec_output_without_final_newline() {
    let server = Server::ready();
    let result = server.sh("printf 'no newline'");
    assert_eq!(result["stdout"], "no newline", "{result}");
}

#[test]
fn exec_stdin_parameter_feeds_the_child() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "cat; echo end", "stdin": "line1\nline2"}));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "line1\nline2end\n", "{result}");
    // Without stdin the child reads EOF at once.
    let result = server.exec(json!({"command": "cat; echo done", "yield_ms": 5000}));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "done\n", "{result}");
}

#[test]
fn exec_env_is_added_and_cwd_is_used() {
    let server = Server::ready();
    let dir = crate::support::TempDir::new("cwd");
    let result = server.exec(json!({
        "command": "echo \"$YS_A-$YS_B\"; pwd",
        "env": {"YS_A": "one", "YS_B": "two"},
        "cwd": crate::support::path_str(dir.path()),
    }));
    assert_eq!(
        result["stdout"],
        format!("one-two\n{}\n", dir.path().display()),
        "{result}"
    );
    // The server's environment is inherited.
    let result = server.sh("test -n \"$PATH\" && echo has-path");
    assert_eq!(result["stdout"], "has-path\n", "{result}");
}

#[test]
fn exec_backgrounds_at_yield_ms() {
    let server = Server::ready();
    let started = Instant::now();
    let result = server.exec(json!({"command": "echo first; sleep 30", "yield_ms": 400}));
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "backgrounded", "{result}");
    let id = process_id(&result);
    // How to go on is said once, in the instructions.
    assert!(result.get("message").is_none(), "{result}");
    assert_eq!(result["stdout"], "first\n", "initial snapshot: {result}");
    // At its yield, not at the command's end (30 s); generous for a loaded machine.
    assert!(
        elapsed >= Duration::from_millis(380) && elapsed < Duration::from_secs(15),
        "yield_ms 400 returned after {elapsed:?}"
    );
    let duration = result["duration_ms"].as_u64().unwrap_or(0);
    assert!((380..15_000).contains(&duration), "{result}");
    let entry = server.ps_entry(&id).expect("listed in ps");
    assert_eq!(entry["status"], "running", "{entry}");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn exec_yield_zero_returns_at_once() {
    let server = Server::ready();
    let started = Instant::now();
    let result = server.exec(json!({"command": "sleep 30", "yield_ms": 0}));
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "backgrounded", "{result}");
    assert!(
        elapsed < Duration::from_secs(15),
        "yield_ms 0 took {elapsed:?}"
    );
    let id = process_id(&result);
    let pid = pid_of(&result);
    assert!(!pid_gone(pid), "the child runs");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn exec_timeout_stops_the_group() {
    let server = Server::ready();
    let started = Instant::now();
    let result = server.exec(json!({
        "command": "echo begun; sleep 30", "timeout_ms": 500, "yield_ms": 20000}));
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "timed_out", "{result}");
    assert_eq!(result["signal"], "SIGTERM", "{result}");
    assert_eq!(result["exit_code"], Value::Null, "{result}");
    assert_eq!(
        result["stdout"], "begun\n",
        "output survives the timeout: {result}"
    );
    assert!(
        elapsed >= Duration::from_millis(450) && elapsed < Duration::from_secs(15),
        "timeout 500 ms returned after {elapsed:?}"
    );
    let pid = pid_of(&result);
    assert!(
        wait_until(Duration::from_secs(20), || pgid_gone(pid)),
        "group is gone"
    );
    let id = process_id(&result);
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "timed_out", "{read}");
}

#[test]
fn exec_timeout_applies_after_backgrounding() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "sleep 30", "timeout_ms": 700, "yield_ms": 0}));
    let id = process_id(&result);
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["status"], "timed_out", "{waited}");
    assert_eq!(waited["signal"], "SIGTERM", "{waited}");
    let pid = pid_of(&result);
    assert!(
        wait_until(Duration::from_secs(20), || pgid_gone(pid)),
        "group is gone"
    );
}

#[test]
fn exec_returns_promptly_when_the_shell_leaves_a_background_job() {
    let server = Server::ready();
    let dir = crate::support::TempDir::new("bgjob");
    let gate = dir.path().join("go");
    let gate = gate.to_str().expect("utf-8 path");
    let started = Instant::now();
    // The job ends only once the test opens the gate: exec cannot have waited for it.
    let result = server.exec(json!({
        "command": format!("(while [ ! -e '{gate}' ]; do sleep 0.05; done; echo late) & echo started"),
        "yield_ms": 40000}));
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(20),
        "the shell exited at once, exec waited for its yield (40 s): {elapsed:?}: {result}"
    );
    assert_eq!(result["status"], "backgrounded", "{result}");
    assert_eq!(result["exit_code"], 0, "the shell's exit code: {result}");
    assert_eq!(result["stdout"], "started\n", "{result}");
    let id = process_id(&result);
    std::fs::write(gate, b"").expect("open the gate");
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["status"], "completed", "{waited}");
    assert_eq!(waited["exit_code"], 0, "{waited}");
    let (stdout, _) = server.read_all(&id);
    assert_eq!(stdout, "started\nlate\n", "the later output stays readable");
}

#[test]
fn exec_with_a_server_like_background_job_can_be_stopped() {
    let server = Server::ready();
    let marker = unique_marker("bgjob");
    let started = Instant::now();
    let result = server.exec(json!({
        "command": "sleep 30 & echo started",
        "env": {"YS_MARKER": marker},
        "yield_ms": 40000,
    }));
    // The shell's exit ended the call, not its yield (40 s).
    assert!(started.elapsed() < Duration::from_secs(20), "{result}");
    assert_eq!(result["status"], "backgrounded", "{result}");
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["stdout"], "started\n", "{result}");
    let id = process_id(&result);
    assert_eq!(
        server.ps_entry(&id).expect("listed")["status"],
        "running",
        "the group still runs"
    );
    assert_eq!(crate::support::marked_processes(&marker).len(), 1);
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(
        crate::support::marked_processes(&marker).is_empty(),
        "sleep survived stop"
    );
}

#[test]
fn exec_in_missing_cwd_fails_to_start() {
    let server = Server::ready();
    let missing = "/nonexistent/yieldshell-test-dir";
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "cwd": missing}),
    );
    let object = server.result_object(&result);
    assert_eq!(object["status"], "failed_to_start", "{object}");
    let keys: Vec<&String> = object.as_object().expect("object").keys().collect();
    assert_eq!(keys.len(), 2, "only status and error: {object}");
    assert!(
        object["error"]
            .as_str()
            .is_some_and(|e| e.contains(missing)),
        "{object}"
    );
    assert_eq!(server.call_ok("ps", json!({}))["processes"], json!([]));
}

#[test]
fn exec_cwd_that_is_a_file_fails_to_start() {
    let server = Server::ready();
    let dir = crate::support::TempDir::new("file-cwd");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").expect("write a file");
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"],
               "cwd": crate::support::path_str(&file)}),
    );
    assert_eq!(server.result_object(&result)["status"], "failed_to_start");
}

#[test]
fn exec_process_ids_are_unique() {
    let server = Server::ready();
    let mut ids = std::collections::HashSet::new();
    for _ in 0..5 {
        assert!(ids.insert(process_id(&server.sh("true"))));
    }
}

// ---- write ----

#[test]
fn write_feeds_an_open_stdin_until_closed() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "cat", "close_stdin": false, "yield_ms": 200}));
    assert_eq!(result["status"], "backgrounded", "{result}");
    let id = process_id(&result);
    let written = server.call_ok(
        "write",
        json!({"process_id": id, "input": "hello", "newline": true}),
    );
    assert_eq!(written["ok"], true, "{written}");
    assert_eq!(written["process_id"], id.as_str(), "{written}");
    let echoed = server.wait_for_output(&id, "hello");
    assert_eq!(echoed["stdout"], "hello\n", "{echoed}");
    assert_eq!(echoed["status"], "running", "{echoed}");
    let written = server.call_ok(
        "write",
        json!({"process_id": id, "input": "bye", "close_stdin": true}),
    );
    assert_eq!(written["ok"], true, "{written}");
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["status"], "completed", "{waited}");
    assert_eq!(waited["exit_code"], 0, "{waited}");
    assert_eq!(server.read_all(&id).0, "hello\nbye");
}

#[test]
fn write_to_a_finished_process_fails() {
    let server = Server::ready();
    let id = process_id(&server.sh("true"));
    let result = server.call_err("write", json!({"process_id": id, "input": "x"}));
    let object = server.result_object(&result);
    assert_eq!(object["ok"], false, "{object}");
    assert_eq!(object["process_id"], id.as_str(), "{object}");
    assert!(
        object["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{object}"
    );
}

#[test]
fn write_after_stdin_was_closed_fails() {
    let server = Server::ready();
    let id = server.spawn_bg("sleep 30");
    let result = server.call_err("write", json!({"process_id": id, "input": "x"}));
    let object = server.result_object(&result);
    assert_eq!(object["ok"], false, "{object}");
    assert!(
        object["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{object}"
    );
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

// ---- wait ----

#[test]
fn wait_returns_exited_with_the_output() {
    let server = Server::ready();
    let id = server.spawn_bg("sleep 0.3; echo done; exit 4");
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["wait_result"], "exited", "{waited}");
    assert_eq!(waited["status"], "completed", "{waited}");
    assert_eq!(waited["exit_code"], 4, "{waited}");
    assert_eq!(waited["stdout"], "done\n", "{waited}");
    assert!(
        waited["waited_ms"].as_u64().is_some_and(|ms| ms < 10_000),
        "{waited}"
    );
    // Waiting on a finished process returns at once.
    let started = Instant::now();
    let again = server.wait_exit_of(&id);
    assert!(started.elapsed() < Duration::from_secs(15), "{again}");
}

#[test]
fn wait_until_matches_new_output() {
    let server = Server::ready();
    let id = server.spawn_bg("sleep 0.5; echo not-yet; sleep 0.5; echo ready; sleep 30");
    let started = Instant::now();
    let waited = server.call_ok(
        "wait",
        json!({"process_id": id, "until": "re[a-z]dy", "timeout_ms": 20000}),
    );
    let elapsed = started.elapsed();
    assert_eq!(waited["wait_result"], "matched", "{waited}");
    assert_eq!(waited["status"], "running", "{waited}");
    assert!(
        waited["stdout"]
            .as_str()
            .is_some_and(|s| s.contains("ready")),
        "{waited}"
    );
    // Matched, well before its timeout (20 s).
    assert!(
        elapsed < Duration::from_secs(15),
        "matched after {elapsed:?}"
    );
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn wait_until_ignores_output_before_since_seq() {
    let server = Server::ready();
    let id = server.spawn_bg("echo ready; sleep 30");
    let first = server.wait_for_output(&id, "ready");
    let next = first["next_seq"].as_u64().expect("next_seq");
    assert_eq!(next, 7, "\"ready\\n\" is 6 bytes: {first}");
    let waited = server.call_ok(
        "wait",
        json!({"process_id": id, "until": "ready", "since_seq": next, "timeout_ms": 400}),
    );
    assert_eq!(waited["wait_result"], "deadline_reached", "{waited}");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn wait_with_invalid_until_regex_is_an_error() {
    let server = Server::ready();
    let id = server.spawn_bg("sleep 30");
    let result = server.call_err("wait", json!({"process_id": id, "until": "(unclosed"}));
    assert_names(&tool_text(&result), &["until"]);
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

#[test]
fn wait_deadline_never_kills() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "sleep 30", "yield_ms": 0}));
    let id = process_id(&result);
    let started = Instant::now();
    let waited = server.call_ok("wait", json!({"process_id": id, "timeout_ms": 300}));
    let elapsed = started.elapsed();
    assert_eq!(waited["wait_result"], "deadline_reached", "{waited}");
    assert_eq!(waited["status"], "running", "{waited}");
    assert!(
        elapsed >= Duration::from_millis(280),
        "returned after {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(15),
        "returned after {elapsed:?}"
    );
    assert!(
        waited["waited_ms"].as_u64().is_some_and(|ms| ms >= 280),
        "{waited}"
    );
    assert!(!pid_gone(pid_of(&result)), "wait must not stop the process");
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "running", "{read}");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

// ---- stop ----

#[test]
fn stop_terminates_with_sigterm() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "sleep 100", "yield_ms": 0}));
    let id = process_id(&result);
    let pid = pid_of(&result);
    let stopped = server.call_ok("stop", json!({"process_id": id}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert_eq!(stopped["signal"], "SIGTERM", "{stopped}");
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["process_id"], id.as_str(), "{stopped}");
    assert_eq!(stopped["exit_code"], Value::Null, "{stopped}");
    assert!(pgid_gone(pid), "stop returns once the group is gone");
    assert!(
        wait_until(Duration::from_secs(20), || zombie_children(server.pid())
            .is_empty()),
        "zombies left: {:?}",
        zombie_children(server.pid())
    );
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "stopped", "{read}");
    assert_eq!(read["signal"], "SIGTERM", "{read}");
}

#[test]
fn stop_escalates_to_sigkill_after_the_grace() {
    let server = Server::ready();
    let result = server.exec(json!({
        "command": "trap '' TERM; echo ready; sleep 100", "yield_ms": 0}));
    let id = process_id(&result);
    let pid = pid_of(&result);
    server.wait_for_output(&id, "ready");
    let started = Instant::now();
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 500}));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(450),
        "stop returned before the grace: {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(15), "stop took {elapsed:?}");
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(
        stopped["signal"], "SIGTERM",
        "the requested signal: {stopped}"
    );
    assert!(pgid_gone(pid), "the group is gone when stop returns");
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "stopped", "{read}");
    assert_eq!(read["exit_code"], Value::Null, "{read}");
    assert_eq!(
        read["signal"], "SIGKILL",
        "killed by the escalation: {read}"
    );
}

#[test]
fn stop_reaches_a_background_grandchild() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "sleep 100 & echo $!; wait", "yield_ms": 0}));
    let id = process_id(&result);
    server.wait_for_output(&id, "[0-9]+\n");
    // The pid may have come with `exec`'s own answer (which moved the cursor past it), so
    // it is read from the start.
    let (stdout, _) = server.read_all(&id);
    let grandchild: u32 = stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("grandchild pid: {stdout:?}"));
    assert!(!pid_gone(grandchild), "the grandchild runs");
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 2000}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(pid_gone(grandchild), "the grandchild survived stop");
    assert!(pgid_gone(pid_of(&result)));
}

#[test]
fn stop_with_invalid_signal_sends_nothing() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "sleep 100", "yield_ms": 0}));
    let id = process_id(&result);
    let pid = pid_of(&result);
    let failed = server.call_err("stop", json!({"process_id": id, "signal": "SIGFOO"}));
    assert_names(&tool_text(&failed), &["SIGFOO"]);
    assert!(
        !pid_gone(pid),
        "an invalid signal must not stop the process"
    );
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "running", "{read}");
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
}

#[test]
fn stop_signal_names_are_case_insensitive_without_sig() {
    let server = Server::ready();
    for (given, normalised) in [("int", "SIGINT"), ("sigkill", "SIGKILL"), ("Hup", "SIGHUP")] {
        let result = server.exec(json!({"command": "sleep 100", "yield_ms": 0}));
        let id = process_id(&result);
        let stopped = server.call_ok(
            "stop",
            json!({"process_id": id, "signal": given, "force_after_ms": 2000}),
        );
        assert_eq!(stopped["stopped"], true, "{given}: {stopped}");
        assert_eq!(stopped["signal"], normalised, "{given}: {stopped}");
        assert_eq!(stopped["status"], "stopped", "{given}: {stopped}");
        assert!(pgid_gone(pid_of(&result)), "{given}");
    }
}

/// A signal number is accepted, as a JSON integer or a numeric string.
#[test]
fn stop_accepts_a_signal_number() {
    let server = Server::ready();
    for given in [json!(9), json!("9"), json!(15)] {
        let result = server.exec(json!({"command": "sleep 100", "yield_ms": 0}));
        let id = process_id(&result);
        let stopped = server.call_ok(
            "stop",
            json!({"process_id": id, "signal": given, "force_after_ms": 1000}),
        );
        let expected = if given == json!(15) {
            "SIGTERM"
        } else {
            "SIGKILL"
        };
        assert_eq!(stopped["signal"], expected, "{given}: {stopped}");
        assert_eq!(stopped["stopped"], true, "{given}: {stopped}");
    }
    let failed = server.call_err(
        "stop",
        json!({"process_id": "proc_000000000000", "signal": 1.5}),
    );
    assert!(tool_text(&failed).contains("signal"), "{failed}");
}

#[test]
fn stop_of_a_finished_process_reports_not_stopped() {
    let server = Server::ready();
    let id = process_id(&server.sh("exit 5"));
    let result = server.call("stop", json!({"process_id": id}));
    let object = server.result_object(&result);
    assert_eq!(object["stopped"], false, "{object}");
    assert_eq!(object["status"], "completed", "{object}");
    assert_eq!(object["exit_code"], 5, "{object}");
}

// ---- descriptors ----

#[test]
fn child_sees_only_stdio_descriptors() {
    let server = Server::ready();
    let result = server.sh("ls -1 /proc/$$/fd; true");
    assert_eq!(result["stdout"], "0\n1\n2\n", "{result}");
    let result = server.exec(json!({
        "command": "ls -1 /proc/$$/fd; true", "close_stdin": false, "yield_ms": 5000}));
    assert_eq!(
        result["stdout"], "0\n1\n2\n",
        "with stdin kept open: {result}"
    );
}

#[test]
fn child_stdio_is_not_the_protocol_pipes() {
    let server = Server::ready();
    let server_fds: Vec<String> = (0..3)
        .map(|fd| {
            let link = std::fs::read_link(format!("/proc/{}/fd/{fd}", server.pid()));
            link.expect("server fd").to_string_lossy().into_owned()
        })
        .collect();
    for close_stdin in [true, false] {
        let result = server.exec(json!({
            "command": "readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2; true",
            "close_stdin": close_stdin, "yield_ms": 5000}));
        let stdout = result["stdout"].as_str().unwrap_or_default().to_owned();
        assert_eq!(stdout.lines().count(), 3, "{result}");
        for line in stdout.lines() {
            assert!(
                !server_fds.iter().any(|fd| fd == line),
                "a child descriptor is one of the server's stdio {server_fds:?}: {stdout}"
            );
        }
    }
}

#[test]
fn server_descriptors_return_to_baseline() {
    let server = Server::ready();
    server.sh("true");
    let baseline = crate::support::fd_count(server.pid());
    for _ in 0..5 {
        server.sh("echo out; echo err >&2");
    }
    let id = server.spawn_bg("sleep 100 & sleep 100");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    let id = server.exec(json!({"command": "cat", "close_stdin": false, "yield_ms": 0}));
    let id = process_id(&id);
    server.call_ok(
        "write",
        json!({"process_id": id, "input": "x", "close_stdin": true}),
    );
    server.wait_exit_of(&id);
    let settled = wait_until(Duration::from_secs(20), || {
        crate::support::fd_count(server.pid()) == baseline
    });
    assert!(
        settled,
        "server fds: baseline {baseline}, now {}",
        crate::support::fd_count(server.pid())
    );
}

/// The `SigIgn` or `SigBlk` bit set of `/proc/<pid>/status` text.
fn signal_set(status: &str, field: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:\t")))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or_else(|| panic!("{field} in {status:?}"))
}

#[test]
fn child_gets_an_empty_signal_mask_and_no_ignored_signal_from_the_server() {
    let server = Server::ready();
    // `exec`: the shell's own process reads its status (a child of dash would race with
    // dash's vfork, which blocks every signal in the shell until the child has exec'd).
    let result = server.sh("exec grep -E '^Sig(Blk|Ign)' /proc/self/status");
    let child = result["stdout"].as_str().unwrap_or_default().to_owned();
    // What the server inherited from this test process it may pass on; it must add nothing,
    // and SIGPIPE (ignored by the Rust runtime) must be back to its default.
    let own = std::fs::read_to_string("/proc/self/status").expect("own status");
    let inherited = signal_set(&own, "SigIgn");
    let sigpipe = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(
        signal_set(&child, "SigBlk"),
        0,
        "no blocked signal: {child}"
    );
    let ignored = signal_set(&child, "SigIgn");
    assert_eq!(ignored & sigpipe, 0, "SIGPIPE is not ignored: {child}");
    assert_eq!(
        ignored & !inherited,
        0,
        "the server adds no ignored signal ({ignored:x} vs ours {inherited:x})"
    );
}

#[test]
fn child_leads_its_own_session_and_group() {
    let server = Server::ready();
    let result = server.sh("cut -d' ' -f5,6 /proc/$$/stat; echo $$; true");
    let stdout = result["stdout"].as_str().unwrap_or_default().to_owned();
    let mut lines = stdout.lines();
    let ids = lines.next().unwrap_or_default().to_owned();
    let pid = lines.next().unwrap_or_default();
    assert_eq!(
        ids,
        format!("{pid} {pid}"),
        "pgid and sid are the pid: {stdout}"
    );
    assert_eq!(pid, pid_of(&result).to_string(), "{result}");
}

#[test]
fn a_large_stdin_does_not_block_the_call() {
    let server = Server::ready();
    let dir = crate::support::TempDir::new("stdin");
    let gate = dir.path().join("go");
    let gate = gate.to_str().expect("utf-8 path");
    let input = "x".repeat(1_000_000);
    // The command reads nothing until the test opens the gate, after exec answered: a call
    // that waited for its stdin to be written would never answer.
    let result = server.exec(json!({
        "command": format!("while [ ! -e '{gate}' ]; do sleep 0.05; done; wc -c"),
        "stdin": input, "yield_ms": 300}));
    assert_eq!(result["status"], "backgrounded", "{result}");
    std::fs::write(gate, b"").expect("open the gate");
    let id = process_id(&result);
    let waited = server.wait_exit_of(&id);
    assert_eq!(waited["stdout"], "1000000\n", "{waited}");
    assert!(waited["stdin_error"].is_null(), "{waited}");
}

#[test]
fn stdin_error_is_reported_when_the_child_refuses_input() {
    let server = Server::ready();
    let input = "x".repeat(1_000_000);
    let result = server.exec(json!({
        "command": "exec 0<&-; sleep 0.3; echo closed", "stdin": input, "yield_ms": 10000}));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "closed\n", "{result}");
    let id = process_id(&result);
    let read = server.call_ok("read", json!({"process_id": id}));
    assert!(
        read["stdin_error"].as_str().is_some_and(|e| !e.is_empty()),
        "read reports stdin_error: {read}"
    );
    let entry = server.ps_entry(&id).expect("listed");
    assert!(
        entry["stdin_error"].as_str().is_some_and(|e| !e.is_empty()),
        "ps reports stdin_error: {entry}"
    );
}

#[test]
fn concurrent_execs_run_in_parallel() {
    let server = Server::ready();
    let dir = crate::support::TempDir::new("together");
    let dir = dir.path().to_str().expect("utf-8 path").to_owned();
    // Each command ends only once all four have started: run one after another, the first
    // would still be waiting at its yield (backgrounded, not completed).
    let ids: Vec<Value> = (0..4)
        .map(|i| {
            server.send_request(
                "tools/call",
                json!({"name": "exec", "arguments": {
                    "command": format!("touch '{dir}/{i}'; \
                        while [ \"$(ls '{dir}' | wc -l)\" -lt 4 ]; do sleep 0.05; done; echo {i}"),
                    "side_effects": ["NONE"], "yield_ms": 40000}}),
            )
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let response = server.response(id, Duration::from_secs(60));
        let object = server.result_object(&response["result"]);
        assert_eq!(object["stdout"], format!("{i}\n"), "{response}");
        assert_eq!(
            object["status"], "completed",
            "not run concurrently: {response}"
        );
    }
}

#[test]
fn a_flood_of_output_is_drained_while_the_child_runs() {
    let server = Server::ready();
    // 2 MB through each pipe: a server that does not drain both would block the child.
    let result = server.exec(json!({
        "command": "head -c 2000000 /dev/zero | tr '\\0' a; echo; \
                    head -c 2000000 /dev/zero | tr '\\0' b >&2; echo >&2; echo end",
        "yield_ms": 20000}));
    assert_eq!(result["status"], "completed", "{}", result["status"]);
    assert_eq!(result["exit_code"], 0, "{}", result["exit_code"]);
    assert_eq!(
        result["truncated"], true,
        "more than the ring buffer was written"
    );
    assert!(result["omitted"]["stdout"].is_object(), "{result}");
    assert!(result["omitted"]["stderr"].is_object(), "{result}");
    let id = process_id(&result);
    let entry = server.ps_entry(&id).expect("listed");
    assert_eq!(entry["stdout_bytes"], 2_000_005, "{entry}");
    assert_eq!(entry["stderr_bytes"], 2_000_001, "{entry}");
    assert_eq!(entry["latest_seq"], 4_000_006, "{entry}");
    let tail = server.call_ok(
        "read",
        json!({"process_id": id, "tail_lines": 1, "streams": "stdout"}),
    );
    assert_eq!(tail["stdout"], "end\n", "{tail}");
}

#[test]
fn parked_writes_do_not_interleave_and_hold_no_thread() {
    let _load = crate::support::heavy_load();
    let server = Server::ready();
    let dir = crate::support::TempDir::new("writes");
    let out = dir.path().join("out");
    let out_str = out.to_str().expect("utf-8 path").to_string();
    // The reader starts late, so both writes (each larger than a pipe) wait for it.
    let id = server.spawn_bg_with(json!({
        "command": format!("read go; cat > '{out_str}'"),
        "side_effects": ["NONE"],
        "close_stdin": false,
    }));
    let size = 300_000;
    let a = "a".repeat(size);
    let b = "b".repeat(size);
    let first = server.send_request(
        "tools/call",
        json!({"name": "write", "arguments": {"process_id": id, "input": "go\n"}}),
    );
    let r = server.response(&first, Duration::from_secs(20));
    assert_eq!(server.result_object(&r["result"])["ok"], true, "{r}");
    let writes: Vec<Value> = [&a, &b]
        .iter()
        .map(|text| {
            server.send_request(
                "tools/call",
                json!({"name": "write", "arguments": {"process_id": id, "input": text}}),
            )
        })
        .collect();
    // While the writes wait for the pipe, other calls answer at once.
    let start = Instant::now();
    server.call_ok("ps", json!({}));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "ps behind two writes"
    );
    for w in &writes {
        let r = server.response(w, Duration::from_secs(30));
        // `ok` is left out at its default, true.
        assert_eq!(r["result"]["isError"], false, "{r}");
        assert_ne!(r["result"]["structuredContent"]["ok"], false, "{r}");
    }
    server.call_ok(
        "write",
        json!({"process_id": id, "input": "", "close_stdin": true}),
    );
    server.wait_exit_of(&id);
    let written = std::fs::read_to_string(&out).expect("the output file");
    assert_eq!(written.len(), 2 * size);
    let ab = format!("{a}{b}");
    let ba = format!("{b}{a}");
    assert!(written == ab || written == ba, "the two writes interleaved");
}
