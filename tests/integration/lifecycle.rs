//! Lifecycle tests: cancellation, progress notifications, shutdown on
//! stdin EOF and on signals, and that no process or zombie of a test survives.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{
    marked_processes, pgid_gone, pid_gone, pid_of, unique_marker, wait_until, zombie_children,
    Server,
};

/// Finds the record whose `name` is `name` in `ps`.
fn record_named(server: &Server, name: &str) -> Option<Value> {
    let ps = server.call_ok("ps", json!({}));
    ps["processes"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
        .cloned()
}

#[test]
fn cancelled_exec_stops_the_group_and_sends_no_response() {
    let server = Server::ready();
    let marker = unique_marker("cancel");
    let id = server.send_request(
        "tools/call",
        json!({"name": "exec", "arguments": {
            "command": "echo ready; sleep 100", "side_effects": ["NONE"], "yield_ms": 30000,
            "name": marker, "env": {"YS_MARKER": marker}}}),
    );
    let mut record = None;
    assert!(
        wait_until(Duration::from_secs(10), || {
            record = record_named(&server, &marker);
            record.is_some()
        }),
        "the exec never started"
    );
    let record = record.expect("record");
    let process = record["process_id"]
        .as_str()
        .expect("process_id")
        .to_owned();
    server.wait_for_output(&process, "ready");
    let pgid = pid_of(&record);
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    assert!(
        wait_until(Duration::from_secs(20), || pgid_gone(pgid)),
        "the group survived cancellation"
    );
    assert!(marked_processes(&marker).is_empty(), "a process survived");
    let entry = server.ps_entry(&process).expect("the record stays");
    assert_eq!(entry["status"], "stopped", "{entry}");
    // An observation window for the absence of a response, not synchronisation.
    assert_eq!(
        server.try_response(&id, Duration::from_millis(500)),
        None,
        "a cancelled request gets no response"
    );
    server.assert_alive();
}

#[test]
fn cancelled_wait_sends_no_response_and_keeps_the_process() {
    let server = Server::ready();
    let process = server.spawn_bg("sleep 100");
    let pid = pid_of(&server.ps_entry(&process).expect("listed"));
    let id = server.send_request(
        "tools/call",
        json!({"name": "wait", "arguments": {"process_id": process, "timeout_ms": 1000}}),
    );
    // The wait is in flight once a later request has been answered.
    server.assert_alive();
    server.notify("notifications/cancelled", json!({"requestId": id}));
    // The observation window outlasts the wait's own 1 s deadline: an uncancelled wait
    // would answer within it.
    assert_eq!(
        server.try_response(&id, Duration::from_millis(2000)),
        None,
        "a cancelled wait gets no response"
    );
    assert!(
        !pid_gone(pid),
        "cancelling a wait must not stop the process"
    );
    assert_eq!(
        server.ps_entry(&process).expect("listed")["status"],
        "running"
    );
    server.call_ok(
        "stop",
        json!({"process_id": process, "force_after_ms": 1000}),
    );
}

#[test]
fn cancelling_an_unknown_or_finished_request_is_ignored() {
    let server = Server::ready();
    let id = server.send_request("ping", json!({}));
    server.response(&id, Duration::from_secs(10));
    server.skip_received();
    server.notify("notifications/cancelled", json!({"requestId": id}));
    server.notify(
        "notifications/cancelled",
        json!({"requestId": "never-sent"}),
    );
    server.notify("notifications/cancelled", json!({}));
    server.assert_ping_is_next();
}

/// A file whose creation lets a command go on: tests hold a command with it instead of
/// guessing how long it must run.
struct Gate {
    dir: crate::support::TempDir,
}

impl Gate {
    fn new(label: &str) -> Gate {
        Gate {
            dir: crate::support::TempDir::new(label),
        }
    }

    fn path(&self) -> String {
        crate::support::path_str(&self.dir.path().join("open")).to_owned()
    }

    /// Shell text that waits until the gate is open.
    fn wait_command(&self) -> String {
        format!("while [ ! -e '{}' ]; do sleep 0.05; done", self.path())
    }

    /// Opens the gate once two progress notifications for `token` arrived.
    fn open_after_progress(&self, server: &Server, token: &Value) {
        assert!(
            wait_until(Duration::from_secs(30), || progress_for(server, token)
                .len()
                >= 2),
            "fewer than two progress notifications for {token} in 30 s"
        );
        std::fs::write(self.path(), b"").expect("open the gate");
    }
}

fn progress_for(server: &Server, token: &Value) -> Vec<(usize, Value)> {
    server
        .notifications()
        .into_iter()
        .filter(|(_, n)| {
            n["method"] == "notifications/progress" && &n["params"]["progressToken"] == token
        })
        .collect()
}

fn assert_progress(server: &Server, token: &Value, response_id: &Value) {
    let progress = progress_for(server, token);
    assert!(
        progress.len() >= 2,
        "at least two progress notifications for {token}: {progress:?}"
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|(_, n)| n["params"]["progress"].as_f64().expect("numeric progress"))
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {values:?}"
    );
    for (_, n) in &progress {
        assert!(
            n["params"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "message under {}: {n}",
            crate::support::LATEST
        );
    }
    let answered = server.response_position(response_id).expect("answered");
    assert!(
        progress.iter().all(|(i, _)| *i < answered),
        "progress only while the request is in flight"
    );
}

#[test]
fn exec_with_progress_token_sends_progress() {
    let server = Server::ready();
    let token = json!("t1");
    let gate = Gate::new("progress");
    let id = server.send_request(
        "tools/call",
        json!({"name": "exec", "_meta": {"progressToken": token},
               "arguments": {"command": format!("{}; echo done", gate.wait_command()),
                             "side_effects": ["NONE"], "yield_ms": 50000}}),
    );
    // The command runs until two notifications came, however slow the machine.
    gate.open_after_progress(&server, &token);
    let response = server.response(&id, Duration::from_secs(40));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("completed"), "{response}");
    assert_progress(&server, &token, &id);
}

#[test]
fn wait_with_integer_progress_token_sends_progress() {
    let server = Server::ready();
    let gate = Gate::new("progress");
    let process = server.spawn_bg(&gate.wait_command());
    let token = json!(77);
    let id = server.send_request(
        "tools/call",
        json!({"name": "wait", "_meta": {"progressToken": token},
               "arguments": {"process_id": process, "timeout_ms": 50000}}),
    );
    gate.open_after_progress(&server, &token);
    server.response(&id, Duration::from_secs(40));
    assert_progress(&server, &token, &id);
    assert!(
        progress_for(&server, &json!("77")).is_empty(),
        "the token keeps its type"
    );
}

#[test]
fn no_progress_without_a_token() {
    let server = Server::ready();
    server.exec(json!({"command": "sleep 1.5", "yield_ms": 20000}));
    let notifications = server.notifications();
    assert!(notifications.is_empty(), "{notifications:?}");
}

// ---- shutdown ----

/// Starts the processes a shutdown must reach and returns the pids to check afterwards.
fn start_stubborn_children(server: &Server, marker: &str) -> Vec<u32> {
    let env = json!({"YS_MARKER": marker});
    let stubborn = server.spawn_bg_with(json!({
        "command": "trap '' TERM; echo ready; sleep 100", "env": env}));
    server.wait_for_output(&stubborn, "ready");
    let plain = server.spawn_bg_with(json!({"command": "sleep 100 & sleep 100", "env": env}));
    let mut pids = Vec::new();
    for id in [&stubborn, &plain] {
        pids.push(pid_of(&server.ps_entry(id).expect("listed")));
    }
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(marker).len()
            >= 5),
        "expected sh, sleep, sh and two sleeps: {:?}",
        marked_processes(marker)
    );
    pids.extend(marked_processes(marker));
    pids
}

fn assert_shutdown(server: &Server, marker: &str, pids: &[u32], started: Instant) {
    let status = server
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| server.fail("the server did not exit"));
    let elapsed = started.elapsed();
    assert_eq!(status.code(), Some(0), "exit status {status:?}");
    assert!(
        elapsed < crate::support::loaded(Duration::from_secs(2)),
        "shutdown took {elapsed:?}, more than 2 s"
    );
    let left = marked_processes(marker);
    assert!(left.is_empty(), "processes survived the server: {left:?}");
    for &pid in pids {
        assert_eq!(
            crate::support::proc_state(pid),
            None,
            "pid {pid} is still in /proc (zombie or alive)"
        );
    }
}

#[test]
fn stdin_eof_stops_every_child_and_exits_zero_within_two_seconds() {
    let _quiet = crate::support::time_bound();
    let server = Server::ready();
    let marker = unique_marker("eof");
    let pids = start_stubborn_children(&server, &marker);
    let started = Instant::now();
    server.close_stdin();
    assert_shutdown(&server, &marker, &pids, started);
}

fn signal_shutdown(signal: i32, label: &str) {
    let _quiet = crate::support::time_bound();
    let server = Server::ready();
    let marker = unique_marker(label);
    let pids = start_stubborn_children(&server, &marker);
    let started = Instant::now();
    server.signal(signal);
    assert_shutdown(&server, &marker, &pids, started);
}

#[test]
fn sigterm_stops_every_child_and_exits_zero_within_two_seconds() {
    signal_shutdown(libc::SIGTERM, "term");
}

#[test]
fn sigint_stops_every_child_and_exits_zero_within_two_seconds() {
    signal_shutdown(libc::SIGINT, "int");
}

#[test]
fn sighup_stops_every_child_and_exits_zero_within_two_seconds() {
    signal_shutdown(libc::SIGHUP, "hup");
}

#[test]
fn eof_during_a_blocked_exec_still_exits_promptly() {
    let _quiet = crate::support::time_bound();
    let server = Server::ready();
    let marker = unique_marker("blocked-eof");
    let id = server.send_request(
        "tools/call",
        json!({"name": "exec", "arguments": {
            "command": "echo ready; sleep 100", "side_effects": ["NONE"], "yield_ms": 30000,
            "name": marker, "env": {"YS_MARKER": marker}}}),
    );
    assert!(
        wait_until(Duration::from_secs(10), || !marked_processes(&marker)
            .is_empty()),
        "the exec never started"
    );
    let started = Instant::now();
    server.close_stdin();
    let status = server
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| server.fail("the server did not exit"));
    let elapsed = started.elapsed();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        elapsed < crate::support::loaded(Duration::from_secs(2)),
        "shutdown took {elapsed:?}"
    );
    assert!(marked_processes(&marker).is_empty());
    let _ = id;
}

#[test]
fn sigkill_of_the_server_leaves_no_child_behind() {
    let server = Server::ready();
    let marker = unique_marker("kill9");
    let id = server.spawn_bg_with(json!({
        "command": "trap '' TERM; echo ready; sleep 100", "env": {"YS_MARKER": marker}}));
    server.wait_for_output(&id, "ready");
    // `ready` comes before the shell forks sleep.
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker).len()
            == 2),
        "sh and sleep: {:?}",
        marked_processes(&marker)
    );
    server.signal(libc::SIGKILL);
    server.wait_exit(Duration::from_secs(5)).expect("killed");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "children survived SIGKILL of the server: {:?}",
        marked_processes(&marker)
    );
}

#[test]
fn stop_reaches_a_descendant_that_left_the_group() {
    let server = Server::ready();
    let marker = unique_marker("setsid");
    let id = server.spawn_bg_with(json!({
        "command": "setsid sleep 100 & echo ready; sleep 100", "env": {"YS_MARKER": marker}}));
    server.wait_for_output(&id, "ready");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker).len()
            == 3),
        "sh, sleep and the setsid sleep: {:?}",
        marked_processes(&marker)
    );
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "left behind: {:?}",
        marked_processes(&marker)
    );
}

#[test]
fn shutdown_reaches_a_descendant_that_left_the_group() {
    let server = Server::ready();
    let marker = unique_marker("setsid-eof");
    let id = server.spawn_bg_with(json!({
        "command": "setsid sh -c 'trap \"\" TERM; sleep 100' & echo ready; sleep 100",
        "env": {"YS_MARKER": marker}}));
    server.wait_for_output(&id, "ready");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker).len()
            == 4),
        "{:?}",
        marked_processes(&marker)
    );
    let started = Instant::now();
    server.close_stdin();
    let status = server.wait_exit(Duration::from_secs(10)).expect("exit");
    assert_eq!(status.code(), Some(0));
    assert!(
        started.elapsed() < crate::support::loaded(Duration::from_secs(2)),
        "{:?}",
        started.elapsed()
    );
    assert!(
        marked_processes(&marker).is_empty(),
        "left behind: {:?}",
        marked_processes(&marker)
    );
}

#[test]
fn no_zombies_after_commands_finish() {
    let server = Server::ready();
    for command in ["true", "exit 3", "kill -9 $$", "sleep 0.1 & exit 0"] {
        server.sh(command);
    }
    let id = server.spawn_bg("(sleep 0.2; exit 1) & (sleep 0.2; exit 2) & wait");
    server.wait_exit_of(&id);
    assert!(
        wait_until(Duration::from_secs(20), || zombie_children(server.pid())
            .is_empty()),
        "zombies of the server: {:?}",
        zombie_children(server.pid())
    );
    let entry = server.ps_entry(&id).expect("listed");
    assert_eq!(entry["status"], "completed", "{entry}");
}

#[test]
fn cancelling_an_exec_after_it_backgrounded_is_ignored() {
    let server = Server::ready();
    let id = server.send_request(
        "tools/call",
        json!({"name": "exec", "arguments": {
            "command": "sleep 30", "side_effects": ["NONE"], "yield_ms": 0}}),
    );
    let response = server.response(&id, Duration::from_secs(10));
    let object = server.result_object(&response["result"]);
    assert_eq!(object["status"], "backgrounded", "{object}");
    let process = object["process_id"]
        .as_str()
        .expect("process_id")
        .to_owned();
    server.notify("notifications/cancelled", json!({"requestId": id}));
    server.assert_alive();
    let waited = server.call_ok("wait", json!({"process_id": process, "timeout_ms": 300}));
    assert_eq!(
        waited["status"], "running",
        "a finished request is not cancelled: {waited}"
    );
    server.call_ok(
        "stop",
        json!({"process_id": process, "force_after_ms": 1000}),
    );
}

#[test]
fn a_timeout_reaches_a_descendant_that_left_the_group() {
    let server = Server::ready();
    let marker = unique_marker("setsid-timeout");
    let result = server.exec(json!({
        "command": "setsid sleep 100 & echo ready; sleep 100",
        "env": {"YS_MARKER": marker}, "timeout_ms": 700, "yield_ms": 20000}));
    assert_eq!(result["status"], "timed_out", "{result}");
    assert!(
        wait_until(Duration::from_secs(20), || marked_processes(&marker)
            .is_empty()),
        "left behind: {:?}",
        marked_processes(&marker)
    );
}

#[test]
fn a_timeout_escalates_to_sigkill_for_a_term_ignoring_group() {
    let server = Server::ready_with_env(&[("YIELDSHELL_TIMEOUT_GRACE_MS", "300")]);
    let started = Instant::now();
    let result = server.exec(json!({
        "command": "trap '' TERM; echo ready; sleep 100", "timeout_ms": 300, "yield_ms": 20000}));
    let elapsed = started.elapsed();
    assert_eq!(result["status"], "timed_out", "{result}");
    assert_eq!(result["signal"], "SIGKILL", "{result}");
    assert_eq!(result["exit_code"], Value::Null, "{result}");
    assert_eq!(result["stdout"], "ready\n", "{result}");
    assert!(
        elapsed < crate::support::loaded(Duration::from_secs(3)),
        "{elapsed:?}"
    );
    assert!(pgid_gone(pid_of(&result)));
}

/// Runs the binary once with `input` on stdin (then end of file) and returns the ids of
/// the responses on its stdout.
fn answers_after_eof(input: &str) -> (Vec<Value>, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_yieldshell"))
        .env_remove("YIELDSHELL_MAX_PROCESSES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the yieldshell binary");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(input.as_bytes())
        .expect("write the requests");
    drop(stdin);
    let out = child.wait_with_output().expect("wait for the server");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = format!(
        "{stdout}--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "exit status {:?}: {text}", out.status);
    let ids = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter_map(|m| m.get("id").cloned())
        .collect();
    (ids, text)
}

#[test]
fn a_request_followed_at_once_by_eof_is_always_answered() {
    let _load = crate::support::heavy_load();
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"echo hi","side_effects":["NONE"]}}}"#,
        "\n",
    );
    let runs = 200;
    let lost = std::sync::atomic::AtomicUsize::new(0);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let seen = parking_lot::Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                while next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < runs {
                    let (ids, text) = answers_after_eof(input);
                    if ids != vec![json!(1), json!(2)] {
                        lost.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        seen.lock().get_or_insert(text);
                    }
                }
            });
        }
    });
    let lost = lost.into_inner();
    assert_eq!(
        lost,
        0,
        "{lost} of {runs} runs lost an answer at end of input; the first such stdout:\n{}",
        seen.into_inner().unwrap_or_default()
    );
}
