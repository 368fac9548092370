//! What agents trip over: terminals (`tty`), commands waiting for input
//! (`awaiting_input`, `until_input`), `wait` on several processes, the head of the output
//! kept beside the ring, non-interactive defaults, and per-command limits (a fork bomb
//! contained by its pids cgroup, run only inside a cap made by the test).

// Outside Linux the tests that read /proc are left out, and with them some helpers.
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{is_error, pid_of, proc_ppid, process_id, tool_text, wait_until, Server};

fn out(r: &Value) -> String {
    r["stdout"].as_str().unwrap_or_default().to_string()
}

/// Starts `command` on a terminal in the background; returns its id.
fn tty_bg(server: &Server, command: &str) -> String {
    server.spawn_bg_with(json!({"command": command, "tty": true}))
}

/// Reads from `since` until `needle` shows up in the (stripped) output; returns the text
/// read and the next cursor.
fn read_until(server: &Server, id: &str, since: u64, needle: &str) -> (String, u64) {
    let w = server.call_ok(
        "wait",
        json!({"process_id": id, "since_seq": since, "until": regex_lite::escape(needle), "timeout_ms": 15000}),
    );
    assert_eq!(w["wait_result"], "matched", "waiting for {needle:?}: {w}");
    let r = server.call_ok("read", json!({"process_id": id, "since_seq": since}));
    (out(&r), r["next_seq"].as_u64().unwrap())
}

// ---- tty ----

#[cfg(target_os = "linux")] // awaiting_input is read from /proc
#[test]
fn an_interactive_shell_on_a_tty_answers_a_write() {
    let server = Server::ready();
    let id = tty_bg(&server, "PS1='$ ' exec sh -i");
    let (_, since) = read_until(&server, &id, 1, "$ ");
    let w = server.call_ok(
        "write",
        json!({"process_id": id, "input": "echo $((6*7))\n"}),
    );
    assert_eq!(w["ok"], true, "{w}");
    let (text, _) = read_until(&server, &id, since, "42");
    assert!(text.contains("42"), "{text:?}");
    // Ctrl-D at an empty prompt ends the shell.
    let w = server.call_ok(
        "wait",
        json!({"process_id": id, "until_input": true, "timeout_ms": 15000}),
    );
    assert_eq!(w["wait_result"], "awaiting_input", "{w}");
    server.call_ok("write", json!({"process_id": id, "input": "\u{4}"}));
    let done = server.wait_exit_of(&id);
    assert_eq!(done["exit_code"], 0, "{done}");
}

#[cfg(target_os = "linux")] // awaiting_input is read from /proc
#[test]
fn a_python_repl_on_a_tty_answers_a_write() {
    let probe = server_probe("command -v python3 >/dev/null && python3 -c 'print(1)'");
    if !probe {
        eprintln!("skipped: python3 is not runnable here");
        return;
    }
    let server = Server::ready();
    let id = tty_bg(&server, "exec python3 -i -q");
    let (_, since) = read_until(&server, &id, 1, ">>> ");
    server.call_ok("write", json!({"process_id": id, "input": "print(6*7)\n"}));
    let (text, _) = read_until(&server, &id, since, "42");
    assert!(text.contains("42"), "{text:?}");
    // Ctrl-D once the REPL reads again (typed earlier, a line editor switching the
    // terminal mode would drop it).
    let w = server.call_ok(
        "wait",
        json!({"process_id": id, "until_input": true, "timeout_ms": 15000}),
    );
    assert_eq!(w["wait_result"], "awaiting_input", "{w}");
    assert_eq!(w["prompt"], ">>> ", "{w}");
    server.call_ok("write", json!({"process_id": id, "input": "\u{4}"}));
    server.wait_exit_of(&id);
}

/// Whether `pid` is `sleep` or has a child that is.
#[cfg(target_os = "linux")]
fn sleep_under(pid: u32) -> bool {
    let comm = |p: &str| std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
    if comm(&pid.to_string()).trim() == "sleep" {
        return true;
    }
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            proc_ppid(name.parse().unwrap_or(0)) == Some(pid) && comm(&name).trim() == "sleep"
        })
}

fn server_probe(command: &str) -> bool {
    std::process::Command::new("/bin/sh")
        .args(["-c", command])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_tty_is_a_terminal_and_pipes_are_not() {
    let server = Server::ready();
    let script = "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo is-a-tty || echo not-a-tty; stty size";
    let r = server.exec(json!({"command": script, "tty": true}));
    assert_eq!(r["status"], "completed", "{r}");
    assert!(out(&r).contains("is-a-tty"), "{r}");
    assert!(out(&r).contains("40 200"), "default size: {r}");
    // Output of a terminal has no \r before \n once cleaned.
    assert!(!out(&r).contains('\r'), "{r}");
    let r = server.exec(json!({"command": "stty size", "tty": true, "rows": 24, "cols": 80}));
    assert!(out(&r).contains("24 80"), "{r}");
    let r = server.sh(script);
    assert!(out(&r).contains("not-a-tty"), "{r}");
    // stderr joins stdout on a terminal.
    let r = server.exec(json!({"command": "echo to-stderr >&2", "tty": true}));
    assert!(out(&r).contains("to-stderr"), "{r}");
    assert_eq!(r["stderr"], "", "{r}");
}

#[cfg(target_os = "linux")] // finds the sleep through /proc
#[test]
fn ctrl_c_through_write_interrupts_sleep() {
    let server = Server::ready();
    let r = server.exec(json!({"command": "sleep 100", "tty": true, "yield_ms": 0}));
    let id = process_id(&r);
    let shell = pid_of(&r);
    // The shell runs `sleep` in a child (a ^C before that fork would reach the shell only,
    // which dash then defers): wait until the sleep runs in the foreground group.
    assert!(
        wait_until(Duration::from_secs(10), || sleep_under(shell)),
        "no sleep started under {shell}"
    );
    let started = Instant::now();
    let w = server.call_ok("write", json!({"process_id": id, "input": "\u{3}"}));
    assert_eq!(w["ok"], true, "{w}");
    let done = server.wait_exit_of(&id);
    assert!(started.elapsed() < Duration::from_secs(10), "{done}");
    // The foreground group got SIGINT: the shell reports it (130) or died of it.
    assert!(
        done["exit_code"] == 130 || done["signal"] == "SIGINT",
        "{done}"
    );
}

// Removing escapes must not join a secret back together.
#[test]
fn a_secret_split_by_escapes_stays_redacted_on_a_tty() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("MY_SECRET", "hunter2hunter2"),
    ]);
    for cmd in [
        r"printf 'hunter2\033[0mhunter2\n'",
        r"printf 'hunter2\033]0;title\007hunter2\n'",
        "echo \"$MY_SECRET\" | grep --color=always hunter",
    ] {
        let r = server.exec(json!({"command": cmd, "tty": true}));
        let text = out(&r);
        assert!(!text.contains("hunter2hunter2"), "{cmd}: {r}");
        assert!(text.contains("[REDACTED:MY_SECRET]"), "{cmd}: {r}");
        let read = server.call_ok("read", json!({"process_id": process_id(&r)}));
        assert!(!out(&read).contains("hunter2hunter2"), "{cmd}: {read}");
    }
}

#[test]
fn colour_comes_back_clean_and_raw_keeps_escapes() {
    let server = Server::ready();
    let cmd = r"printf '\033[1;31mred\033[0m plain \033]0;title\007end\n'";
    let r = server.exec(json!({"command": cmd, "tty": true}));
    assert_eq!(out(&r), "red plain end\n", "{r}");
    let id = process_id(&r);
    let raw = server.call_ok(
        "read",
        json!({"process_id": id, "raw": true, "since_seq": 1}),
    );
    assert!(out(&raw).contains("\u{1b}[1;31mred"), "{raw}");
    // Positions count raw bytes: the cleaned read ends where the raw one does.
    let clean = server.call_ok("read", json!({"process_id": id, "since_seq": 1}));
    assert_eq!(clean["next_seq"], raw["next_seq"], "{clean} {raw}");
    assert_eq!(
        raw["next_seq"].as_u64().unwrap(),
        out(&raw).len() as u64 + 1,
        "{raw}"
    );
    // exec's raw flag too.
    let r = server.exec(json!({"command": cmd, "tty": true, "raw": true}));
    assert!(out(&r).contains("\u{1b}["), "{r}");
}

#[test]
fn tty_is_refused_in_trusted_mode_and_sizes_are_checked() {
    let server = Server::ready_with_env(&[("ALLOW_COMMANDS", "echo")]);
    let r = server.call_err(
        "exec",
        json!({"command": "echo hi", "side_effects": ["NONE"], "tty": true}),
    );
    assert!(tool_text(&r).contains("trusted mode"), "{r}");
    let server = Server::ready();
    let r = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "tty": true, "rows": 0}),
    );
    assert!(tool_text(&r).contains("rows"), "{r}");
    let r = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "cols": 80}),
    );
    assert!(tool_text(&r).contains("tty"), "{r}");
}

// ---- input wait ----

#[cfg(target_os = "linux")] // awaiting_input is read from /proc
#[test]
fn a_prompt_on_a_pipe_is_reported_and_answered() {
    let server = Server::ready();
    // `read -p` prompts only on a terminal: print the prompt, then read the pipe.
    let started = Instant::now();
    let r = server.exec(json!({
        "command": "printf 'Name? '; read x; echo \"hello $x\"",
        "close_stdin": false,
        "yield_ms": 20000
    }));
    // exec returns as soon as the command waits for input, not at yield_ms.
    assert!(started.elapsed() < Duration::from_secs(10), "{r}");
    assert_eq!(r["status"], "backgrounded", "{r}");
    assert_eq!(r["awaiting_input"], true, "{r}");
    assert_eq!(r["prompt"], "Name? ", "{r}");
    let id = process_id(&r);
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["awaiting_input"], true, "{read}");
    let ps = server.ps_entry(&id).expect("ps entry");
    assert_eq!(ps["awaiting_input"], true, "{ps}");
    assert_eq!(ps["prompt"], "Name? ", "{ps}");
    server.call_ok(
        "write",
        json!({"process_id": id, "input": "Ada", "newline": true}),
    );
    let done = server.wait_exit_of(&id);
    assert!(out(&done).contains("hello Ada"), "{done}");
    assert_eq!(done["awaiting_input"], false, "{done}");
}

#[cfg(target_os = "linux")] // awaiting_input is read from /proc
#[test]
fn read_p_on_a_tty_is_reported_with_its_prompt() {
    let server = Server::ready();
    let r = server.exec(json!({
        "command": "read -p 'Name? ' x; echo \"hello $x\"",
        "tty": true,
        "close_stdin": false,
        "yield_ms": 20000
    }));
    assert_eq!(r["status"], "backgrounded", "{r}");
    assert_eq!(r["awaiting_input"], true, "{r}");
    assert_eq!(r["prompt"], "Name? ", "{r}");
    let id = process_id(&r);
    server.call_ok("write", json!({"process_id": id, "input": "Ada\n"}));
    let done = server.wait_exit_of(&id);
    assert!(out(&done).contains("hello Ada"), "{done}");
}

#[test]
fn a_sleep_is_never_reported_as_waiting() {
    let server = Server::ready();
    let r = server
        .exec(json!({"command": "echo ready; sleep 5", "close_stdin": false, "yield_ms": 1000}));
    assert_eq!(r["status"], "backgrounded", "{r}");
    assert_eq!(r["awaiting_input"], false, "{r}");
    let id = process_id(&r);
    // Well past the 300 ms of quiet, several looks.
    for _ in 0..3 {
        let read = server.call_ok("read", json!({"process_id": id}));
        assert_eq!(read["awaiting_input"], false, "{read}");
        assert!(read.get("prompt").is_none(), "{read}");
        let ps = server.ps_entry(&id).expect("ps entry");
        assert_eq!(ps["awaiting_input"], false, "{ps}");
    }
    let w = server.call_ok(
        "wait",
        json!({"process_id": id, "until_input": true, "timeout_ms": 1500}),
    );
    assert_eq!(w["wait_result"], "deadline_reached", "{w}");
    server.call_ok("stop", json!({"process_id": id}));
}

#[cfg(target_os = "linux")] // awaiting_input is read from /proc
#[test]
fn wait_until_input_returns_when_the_command_asks() {
    let server = Server::ready();
    let id = server.spawn_bg_with(json!({
        "command": "echo working; sleep 1; printf 'Continue? [y/N] '; read a; echo \"answer $a\"",
        "close_stdin": false
    }));
    let started = Instant::now();
    let w = server.call_ok(
        "wait",
        json!({"process_id": id, "until_input": true, "timeout_ms": 20000}),
    );
    assert_eq!(w["wait_result"], "awaiting_input", "{w}");
    assert_eq!(w["awaiting_input"], true, "{w}");
    assert_eq!(w["prompt"], "Continue? [y/N] ", "{w}");
    assert!(started.elapsed() < Duration::from_secs(10), "{w}");
    server.call_ok("write", json!({"process_id": id, "input": "y\n"}));
    let done = server.wait_exit_of(&id);
    assert!(out(&done).contains("answer y"), "{done}");
}

// ---- wait on many ----

#[test]
fn wait_for_all_returns_once_every_process_ended_with_each_exit_code() {
    let server = Server::ready();
    let jobs: Vec<String> = [("0.1", 0), ("0.6", 3), ("0.3", 0), ("1.0", 5), ("0.2", 0)]
        .iter()
        .map(|(secs, code)| server.spawn_bg(&format!("sleep {secs}; echo job; exit {code}")))
        .collect();
    let w = server.call_ok(
        "wait",
        json!({"process_ids": jobs, "all": true, "timeout_ms": 20000}),
    );
    assert_eq!(w["wait_result"], "exited", "{w}");
    for (id, code) in jobs.iter().zip([0, 3, 0, 5, 0]) {
        let s = &w["statuses"][id];
        assert_eq!(s["status"], "completed", "{id}: {w}");
        assert_eq!(s["exit_code"], code, "{id}: {w}");
        assert!(s["ended_at"].is_string(), "{id}: {w}");
    }
    // The text shows each one's state on a line of its own.
    let result = server.call(
        "wait",
        json!({"process_ids": jobs, "all": true, "timeout_ms": 1000}),
    );
    let text = crate::support::tool_text(&result);
    assert!(
        text.contains(&format!("{}: exit_code=5 ended_at=", jobs[3])),
        "{text}"
    );
    // Without all, a deadline with one still running reports it as running.
    let slow = server.spawn_bg("sleep 30");
    let w = server.call_ok(
        "wait",
        json!({"process_ids": [jobs[0], slow], "all": true, "timeout_ms": 300}),
    );
    assert_eq!(w["wait_result"], "deadline_reached", "{w}");
    assert_eq!(w["statuses"][&slow]["status"], "running", "{w}");
    assert_eq!(w["statuses"][&slow]["ended_at"], Value::Null, "{w}");
}

#[test]
fn wait_on_many_returns_the_first_to_exit_and_names_it() {
    let server = Server::ready();
    let slow1 = server.spawn_bg("sleep 30");
    let fast = server.spawn_bg("sleep 0.3; echo fast");
    let slow2 = server.spawn_bg("sleep 30");
    let w = server.call_ok(
        "wait",
        json!({"process_ids": [slow1, fast, slow2], "timeout_ms": 20000}),
    );
    assert_eq!(w["wait_result"], "exited", "{w}");
    assert_eq!(w["process_id"], fast.as_str(), "{w}");
    assert!(out(&w).contains("fast"), "{w}");
    assert_eq!(w["statuses"][&slow1]["status"], "running", "{w}");
    assert_eq!(w["statuses"][&slow1]["exit_code"], Value::Null, "{w}");
    assert_eq!(w["statuses"][&fast]["status"], "completed", "{w}");
    assert_eq!(w["statuses"][&fast]["exit_code"], 0, "{w}");
    assert!(w["statuses"][&fast]["ended_at"].is_string(), "{w}");
    // `until` over several: the one whose output matches.
    let ticker = server.spawn_bg("sleep 0.2; echo tick; sleep 30");
    let w = server.call_ok(
        "wait",
        json!({"process_ids": [slow1, ticker], "until": "tick", "timeout_ms": 20000}),
    );
    assert_eq!(w["wait_result"], "matched", "{w}");
    assert_eq!(w["process_id"], ticker.as_str(), "{w}");
    // Errors: both forms, an empty list, an unknown id.
    let r = server.call_err("wait", json!({"process_id": slow1, "process_ids": [slow1]}));
    assert!(tool_text(&r).contains("not both"), "{r}");
    let r = server.call_err("wait", json!({"process_ids": []}));
    assert!(tool_text(&r).contains("process_ids"), "{r}");
    let r = server.call_err("wait", json!({"process_ids": [slow1, "proc_000000000000"]}));
    assert!(tool_text(&r).contains("Unknown process_id"), "{r}");
    for id in [slow1, slow2, ticker] {
        server.call_ok("stop", json!({"process_id": id}));
    }
}

// ---- head and tail ----

#[test]
fn the_first_error_survives_eviction_with_the_gap_named() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_MAX_BUFFER_BYTES", "2000"),
        ("YIELDSHELL_HEAD_BYTES", "64"),
    ]);
    let r = server.sh("echo 'error: the first one'; seq 1 20000; echo last");
    let id = process_id(&r);
    let read = server.call_ok(
        "read",
        json!({"process_id": id, "max_output_bytes": 20000, "since_seq": 1}),
    );
    let text = out(&read);
    assert!(text.starts_with("error: the first one\n"), "{read}");
    // The gap is a marker line in the text.
    let marker = "\n[… 106949 bytes dropped here: evicted from the buffer, no longer readable …]\n";
    let marker = marker.replace("106949", "106,856");
    assert!(text.contains(&marker), "{read}");
    let text = text.replace(&marker, "");
    assert!(text.ends_with("20000\nlast\n"), "{read}");
    assert_eq!(read["truncated"], true, "{read}");
    let (from, to) = (
        read["gap_from"].as_u64().expect("gap_from"),
        read["gap_to"].as_u64().expect("gap_to"),
    );
    assert_eq!(from, 65, "{read}");
    let latest = read["latest_seq"].as_u64().unwrap();
    assert_eq!(to, latest - 2000, "{read}");
    // Exactly the head and the newest ring bytes come back.
    assert_eq!(text.len() as u64, 64 + 2000, "{read}");
    // A read after the gap has no gap fields.
    let later = server.call_ok("read", json!({"process_id": id, "since_seq": to + 1}));
    assert!(later.get("gap_from").is_none(), "{later}");
    assert_eq!(later["truncated"], false, "{later}");
    // The head is kept per stream: stderr's first line too.
    let r = server.sh("echo 'E: first' >&2; seq 1 20000 >&2");
    let read = server.call_ok(
        "read",
        json!({"process_id": process_id(&r), "streams": "stderr", "since_seq": 1}),
    );
    assert!(
        read["stderr"].as_str().unwrap().starts_with("E: first\n"),
        "{read}"
    );
}

// ---- non-interactive defaults ----

const SHOW: &str =
    "echo \"[$GIT_TERMINAL_PROMPT|$GIT_PAGER|$PAGER|$GCM_INTERACTIVE|$DEBIAN_FRONTEND]\"";

/// What `SHOW` prints: each name's value from `given`, else from the test's own
/// environment (which the server inherits), else `default` (or empty).
fn expected(given: &[(&str, &str)], defaults: bool) -> String {
    let parts: Vec<String> = [
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_PAGER", "cat"),
        ("PAGER", "cat"),
        ("GCM_INTERACTIVE", "never"),
        ("DEBIAN_FRONTEND", "noninteractive"),
    ]
    .iter()
    .map(|(name, default)| {
        given
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string())
            .or_else(|| std::env::var(name).ok())
            .unwrap_or_else(|| {
                if defaults {
                    default.to_string()
                } else {
                    String::new()
                }
            })
    })
    .collect();
    format!("[{}]\n", parts.join("|"))
}

#[cfg(target_os = "linux")] // readlink /proc/self/fd/0
#[test]
fn non_interactive_defaults_are_set_and_yield_to_the_caller() {
    let server = Server::ready_with_env(&[("PAGER", "more")]);
    let r = server.sh(SHOW);
    assert_eq!(out(&r), expected(&[("PAGER", "more")], true), "{r}");
    assert!(
        out(&r).starts_with("[0|cat|more|never|") || std::env::var("GIT_PAGER").is_ok(),
        "{r}"
    );
    let r = server.exec(json!({"command": SHOW, "env": {"GIT_PAGER": "delta"}}));
    assert_eq!(
        out(&r),
        expected(&[("PAGER", "more"), ("GIT_PAGER", "delta")], true),
        "{r}"
    );
    // Switched off: only what the environment itself has.
    let server = Server::ready_with_env(&[("YIELDSHELL_NONINTERACTIVE", "0")]);
    let r = server.sh(SHOW);
    assert_eq!(out(&r), expected(&[], false), "{r}");
    // stdin is /dev/null when closed: a read gets end of file at once.
    let server = Server::ready();
    let r = server.sh("read x; echo \"rc=$?\"; readlink /proc/self/fd/0");
    assert!(
        out(&r).contains("rc=1") && out(&r).contains("/dev/null"),
        "{r}"
    );
}

#[test]
fn trusted_mode_adds_the_defaults_to_its_minimal_environment() {
    let server = Server::ready_with_env(&[("ALLOW_COMMANDS", "printenv")]);
    let r = server.call("shell_execute", json!({"command": ["printenv"]}));
    assert!(!is_error(&r), "{r}");
    let text = r["structuredContent"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for kv in [
        "GIT_TERMINAL_PROMPT=0",
        "GIT_PAGER=cat",
        "PAGER=cat",
        "GCM_INTERACTIVE=never",
        "DEBIAN_FRONTEND=noninteractive",
    ] {
        assert!(text.lines().any(|l| l == kv), "{kv} missing: {text}");
    }
}

// ---- limits ----

#[test]
fn rlimits_apply_to_each_command() {
    let server = Server::ready_with_env(&[("YIELDSHELL_LIMITS", "cpu=100,nofile=64,fsize=1M")]);
    let r = server.sh("ulimit -t; ulimit -n; ulimit -f");
    // `ulimit -f` counts 512-byte blocks in sh.
    assert_eq!(out(&r), "100\n64\n2048\n", "{r}");
    // A limit on descriptors below the server's own numbers still lets a terminal open:
    // the child sets the limits last, just before the exec.
    let server = Server::ready_with_env(&[("YIELDSHELL_LIMITS", "nofile=5")]);
    let r = server.exec(json!({"command": "ulimit -n", "tty": true}));
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(out(&r).trim(), "5", "{r}");
    let bad = crate::support::run_binary(&[], &[("YIELDSHELL_LIMITS", "pids=lots")]);
    assert_eq!(bad.status.code(), Some(2));
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(
        text.contains("YIELDSHELL_LIMITS") && text.contains("pids=N"),
        "{text}"
    );
}

#[test]
fn a_capped_shell_execute_says_it_was_killed_for_its_output() {
    // Which limit, in a field and in the text, and how much it printed.
    let server = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "seq"),
        ("MCP_SHELL_OUTPUT_LIMIT_BYTES", "1000"),
    ]);
    let r = server.call_with_deadline(
        "shell_execute",
        json!({"command": ["seq", "1", "2000000"]}),
        Duration::from_secs(30),
    );
    assert!(is_error(&r), "{r}");
    let s = &r["structuredContent"];
    assert!(
        s["stdout"]
            .as_str()
            .unwrap_or_default()
            .starts_with("1\n2\n3\n"),
        "{r}"
    );
    assert_eq!(s["capped"], true, "{r}");
    let k = &s["killed_for"];
    assert_eq!(
        (&k["reason"], &k["stream"], &k["limit"]),
        (&json!("output_cap"), &json!("stdout"), &json!(1000)),
        "{r}"
    );
    assert!(k["bytes"].as_u64().unwrap() > 1000, "{r}");
    let texts: Vec<&str> = r["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect();
    // One block, as MCP Shell Server answers a failure: the reason, then what was captured.
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(
        texts[0].contains("\nKilled for its output: stdout went over the output limit of 1,000 bytes (MCP_SHELL_OUTPUT_LIMIT_BYTES) after printing "),
        "{texts:?}"
    );
    assert!(texts[0].contains("\nstdout:\n1\n2\n"), "{texts:?}");
    // A trusted exec killed by the same cap says so too.
    let r = server.exec(json!({"command": "seq 1 2000000", "yield_ms": 20000}));
    assert_eq!(r["status"], "stopped", "{r}");
    assert_eq!(r["killed_for"]["reason"], "output_cap", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Killed for its output"),
        "{r}"
    );
}

// ---- a fork bomb, contained ----

/// A pids cgroup made by the test around the server under test: a second, outer cap, so
/// that a server whose own per-command cap failed still cannot take the machine down.
pub(crate) struct OuterCap {
    dir: std::path::PathBuf,
    home: std::path::PathBuf,
    /// The v1 pids mount: the cgroups from `home` up to it may cap the tasks too.
    mount: std::path::PathBuf,
}

impl OuterCap {
    /// Makes the cap (cgroup v1 pids hierarchy, as root or delegated) with at most `max`
    /// tasks, fewer when the cgroups above leave less than twice that free (a CI job may run
    /// under a pids cap of its own, shared with the other tests); or says why not.
    pub(crate) fn make(max: u64) -> Result<OuterCap, String> {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let mount = mounts
            .lines()
            .filter_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let mut f = left.split(' ');
                let (root, point) = (f.nth(3)?, f.next()?);
                let mut r = right.split(' ');
                let (fstype, _, opts) = (r.next()?, r.next()?, r.next()?);
                (fstype == "cgroup" && root == "/" && opts.split(',').any(|o| o == "pids"))
                    .then(|| std::path::PathBuf::from(point))
            })
            .next()
            .ok_or("no cgroup v1 pids hierarchy is mounted")?;
        let own = std::fs::read_to_string("/proc/thread-self/cgroup").map_err(|e| e.to_string())?;
        let path = own
            .lines()
            .find_map(|l| {
                let mut p = l.splitn(3, ':');
                let (_, c, path) = (p.next()?, p.next()?, p.next()?);
                c.split(',').any(|c| c == "pids").then(|| path.to_string())
            })
            .ok_or("this thread is in no pids cgroup")?;
        let home = mount.join(path.trim_start_matches('/'));
        let max = max.min(free_from(&home, &mount) / 2);
        if max < 100 {
            return Err(format!(
                "the pids cgroups above {} leave fewer than 200 tasks free: {}",
                home.display(),
                levels_from(&home, &mount)
            ));
        }
        let dir = home.join(format!("yieldshell-test-cap-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cap = OuterCap { dir, home, mount };
        std::fs::write(cap.dir.join("pids.max"), max.to_string())
            .map_err(|e| format!("cannot set pids.max: {e}"))?;
        Ok(cap)
    }

    /// `pids.max` of the cap.
    pub(crate) fn max(&self) -> u64 {
        self.read("pids.max").trim().parse().unwrap_or(u64::MAX)
    }

    /// What each pids cgroup from a command's up to the mount holds, for a failure's message.
    fn describe(&self, group: Option<&std::path::Path>) -> String {
        let mut text = String::new();
        if let Some(g) = group {
            let events = std::fs::read_to_string(g.join("pids.events")).unwrap_or_default();
            text.push_str(&format!(
                "command: {}, events {:?}; ",
                level(g),
                events.trim()
            ));
        }
        text.push_str(&format!(
            "cap: {}; above: {}",
            level(&self.dir),
            levels_from(&self.home, &self.mount)
        ));
        text
    }

    /// Starts the server inside the cap: this thread enters it (v1 places threads one by
    /// one), spawns, and leaves.
    pub(crate) fn start_server(&self, env: &[(&str, &str)]) -> Server {
        std::fs::write(self.dir.join("tasks"), "0").expect("enter the cap");
        let server = std::panic::catch_unwind(|| Server::ready_with_env(env));
        std::fs::write(self.home.join("tasks"), "0").expect("leave the cap");
        server.expect("start the server")
    }

    pub(crate) fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join(file)).unwrap_or_default()
    }

    /// Sets `pids.max` of the cap.
    pub(crate) fn set_max(&self, max: u64) {
        std::fs::write(self.dir.join("pids.max"), max.to_string()).expect("set pids.max");
    }

    /// The per-command cgroups the server made inside the cap.
    fn command_groups(&self) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("yieldshell-"))
            .map(|e| e.path())
            .collect()
    }
}

/// `current/max` of one pids cgroup.
fn level(dir: &std::path::Path) -> String {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|_| "?".into());
    format!(
        "{} {}/{}",
        dir.display(),
        read("pids.current").trim(),
        read("pids.max").trim()
    )
}

/// The pids cgroups from `dir` up to `mount`, each as `current/max`.
fn levels_from(dir: &std::path::Path, mount: &std::path::Path) -> String {
    dir.ancestors()
        .take_while(|d| d.starts_with(mount))
        .map(level)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many more tasks the pids cgroups from `dir` up to `mount` allow (the least of
/// `max - current` over those with a limit).
fn free_from(dir: &std::path::Path, mount: &std::path::Path) -> u64 {
    dir.ancestors()
        .take_while(|d| d.starts_with(mount))
        .filter_map(|d| {
            let max = std::fs::read_to_string(d.join("pids.max")).ok()?;
            let max: u64 = max.trim().parse().ok()?;
            let current = std::fs::read_to_string(d.join("pids.current")).ok()?;
            Some(max.saturating_sub(current.trim().parse().ok()?))
        })
        .min()
        .unwrap_or(u64::MAX)
}

impl Drop for OuterCap {
    fn drop(&mut self) {
        // Anything left inside is ours: kill it, then remove the cap.
        for _ in 0..100 {
            for sub in self.command_groups() {
                let _ = std::fs::remove_dir(sub);
            }
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            let mut procs = self.read("cgroup.procs");
            for sub in self.command_groups() {
                procs.push_str(
                    &std::fs::read_to_string(sub.join("cgroup.procs")).unwrap_or_default(),
                );
            }
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                crate::support::send_signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn a_fork_bomb_stays_under_its_pids_cap_and_stop_ends_it() {
    let _load = crate::support::heavy_load();
    let cap = match OuterCap::make(400) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: no outer pids cgroup can be made to hold the test ({why})");
            return;
        }
    };
    // The command's cap: half the outer one (200 unless the cgroups above leave less).
    let limit = cap.max() / 2;
    let server = cap.start_server(&[("YIELDSHELL_LIMITS", &format!("pids={limit}"))]);
    // What the cap counts, and its live tasks (a zombie is counted until it is reaped).
    let counted = || {
        cap.read("pids.current")
            .trim()
            .parse::<u64>()
            .unwrap_or(u64::MAX)
    };
    let live = || cap.read("tasks").lines().count() as u64;

    // Harmless first: a loop that starts 500 sleeps stops at the cap.
    let r = server.exec(json!({
        "command": "i=0; while [ $i -lt 500 ]; do sleep 60 & i=$((i+1)); done; wait",
        "yield_ms": 0
    }));
    let id = process_id(&r);
    assert!(
        wait_until(Duration::from_secs(20), || {
            let r = server.call_ok("read", json!({"process_id": id}));
            r["stderr"].as_str().unwrap_or_default().contains("fork")
        }),
        "the loop did not hit the cap: {}",
        cap.describe(cap.command_groups().first().map(|g| g.as_path()))
    );
    let groups = cap.command_groups();
    assert_eq!(groups.len(), 1, "one cgroup per command: {groups:?}");
    let peak: u64 = std::fs::read_to_string(groups[0].join("pids.peak"))
        .or_else(|_| std::fs::read_to_string(groups[0].join("pids.current")))
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    assert!(
        peak <= limit,
        "harmless loop: {peak} processes (cap {limit})"
    );
    let s = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(s["stopped"], true, "{s}");
    // The record ended: its cgroup is gone.
    assert!(
        wait_until(Duration::from_secs(10), || cap.command_groups().is_empty()),
        "the loop's cgroup is left: {:?}",
        cap.command_groups()
    );
    // Every process of the loop was reaped: the cap counts only live tasks.
    assert!(
        wait_until(Duration::from_secs(10), || counted() <= live()),
        "the loop left zombies behind: the cap counts {} tasks, {} of them live",
        counted(),
        live()
    );

    // The bomb: every shell starts a sleep, then six more shells, four levels deep (3,108
    // processes if nothing held it). A shell that cannot fork gives up, but its sleep stays,
    // so the bomb cannot collapse before it is seen (with leaves only at the bottom, shells
    // filled the cap, all failed and the whole bomb was gone within milliseconds).
    let bomb = "b() { sleep 60 & if [ $1 -gt 0 ]; then for i in 1 2 3 4 5 6; do b $(($1-1)) & done; fi; wait; }; b 4";
    let r = server.exec(
        json!({"command": bomb, "yield_ms": 0, "side_effects": ["CONSUMES_SIGNIFICANT_RESOURCES"]}),
    );
    let id = process_id(&r);
    let group = || cap.command_groups().into_iter().next();
    let number = |g: &std::path::Path, file: &str| {
        std::fs::read_to_string(g.join(file))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    // It reached its cap (`pids.peak` where the kernel keeps one), and forks failed there.
    // Generous: on a loaded machine the shells fork slowly.
    assert!(
        wait_until(Duration::from_secs(120), || group().is_some_and(|g| {
            let reached = match number(&g, "pids.peak") {
                Some(peak) => peak >= limit,
                None => number(&g, "pids.current").is_some_and(|n| n >= limit / 2),
            };
            reached
                && server.call_ok("read", json!({"process_id": id, "tail_lines": 5}))["stderr"]
                    .as_str()
                    .is_some_and(|e| e.contains("fork"))
        })),
        "the bomb did not reach its cap of {limit} tasks: {}; its stderr ends {:?}",
        cap.describe(group().as_deref()),
        server.call_ok("read", json!({"process_id": id, "tail_lines": 5}))["stderr"]
    );
    // The server answers while the bomb pushes against its cap.
    let mut pings = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        server.result("ping", json!({}));
        pings.push(t.elapsed());
    }
    pings.sort();
    let median = pings[pings.len() / 2];
    eprintln!(
        "ping during the bomb: median {median:?}, max {:?}",
        pings[pings.len() - 1]
    );
    assert!(
        median <= crate::support::loaded(Duration::from_millis(5)),
        "ping median {median:?}"
    );
    let g = group().expect("the bomb's cgroup");
    let peak: u64 = std::fs::read_to_string(g.join("pids.peak"))
        .or_else(|_| std::fs::read_to_string(g.join("pids.current")))
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    eprintln!("the bomb's cgroup peaked at {peak} tasks (cap {limit})");
    assert!(
        peak <= limit,
        "the bomb reached {peak} processes (cap {limit})"
    );
    let ps = server.call_ok("ps", json!({}));
    assert!(ps["processes"].as_array().is_some_and(|p| !p.is_empty()));

    // stop ends all of it; the command's cgroup goes with it; only the server is left.
    let s = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(s["stopped"], true, "{s}");
    assert!(
        wait_until(Duration::from_secs(10), || cap.command_groups().is_empty()),
        "a command cgroup is left: {:?}",
        cap.command_groups()
    );
    // Left in the cap: the server (its threads) and its guardian, nothing else.
    let others = || -> Vec<String> {
        cap.read("cgroup.procs")
            .lines()
            // The server, and this test's threads that read the server's pipes (started
            // inside the cap with it).
            .filter(|p| {
                p.trim() != server.pid().to_string() && p.trim() != std::process::id().to_string()
            })
            .map(|p| {
                // argv[0]: the guardian is `yieldshell-guardian` (or a fork of the server).
                let cmdline =
                    std::fs::read(format!("/proc/{}/cmdline", p.trim())).unwrap_or_default();
                let arg0 = cmdline
                    .split(|&b| b == 0)
                    .next()
                    .unwrap_or_default()
                    .to_vec();
                format!("{} {}", p.trim(), String::from_utf8_lossy(&arg0))
            })
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(10), || {
            let o = others();
            o.len() <= 1 && o.iter().all(|p| p.contains("yieldshell"))
        }),
        "left in the cap besides the server and its guardian: {:?}",
        others()
    );
    server.assert_alive();
}
