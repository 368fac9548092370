//! Trusted mode through the real binary: escape attempts, pipelines, the minimal
//! environment, `exec` with the own parser, and the audit log.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_error, Server, TempDir};

const ALLOWED: &str =
    "echo,ls,cat,grep,wc,seq,yes,head,tail,printenv,sleep,od,printf,find,git,sort,env,xargs,sh";

/// A trusted-mode server working in `dir`, auditing to `dir/audit.log`.
fn trusted(dir: &TempDir, extra: &[(&str, &str)]) -> Server {
    let audit = dir.path().join("audit.log");
    let cwd = dir.path().to_str().expect("utf-8 path").to_string();
    let audit = audit.to_str().expect("utf-8 path").to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("ALLOW_COMMANDS", ALLOWED),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
        ("YIELDSHELL_AUDIT_LOG", &audit),
    ];
    env.extend_from_slice(extra);
    Server::ready_with_env(&env)
}

fn audit_lines(dir: &TempDir) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.path().join("audit.log")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line {l:?}: {e}")))
        .collect()
}

/// All text blocks of a `shell_execute` result, joined (stdout, then stderr, or the error
/// followed by the captured output).
fn tool_text(result: &Value) -> String {
    let blocks = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"));
    blocks
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

fn run(server: &Server, command: &[&str], extra: Value) -> Value {
    let mut args = json!({ "command": command });
    if let (Value::Object(a), Value::Object(e)) = (&mut args, extra) {
        a.extend(e);
    }
    server.call("shell_execute", args)
}

#[test]
fn escape_attempts_are_rejected_before_any_process_starts() {
    let dir = TempDir::new("trusted-escape");
    std::os::unix::fs::symlink("/etc", dir.path().join("outside")).expect("symlink");
    std::fs::write(dir.path().join("data.txt"), "b\na\n").expect("write");
    let server = trusted(&dir, &[]);
    let cases: &[(&[&str], &str)] = &[
        (&["echo", "x", ">", "/tmp/yieldshell-abs"], "absolute"),
        (&["echo", "x", ">", "../up.txt"], "'..'"),
        (&["echo", "x", ">", "outside/x"], "symlink"),
        (&["cat", "<", "outside/passwd"], "symlink"),
        // Not on the allowlist (only the name `sh` is): a final refusal, in the argument
        // rule's words (which no person may then approve).
        (
            &["/bin/sh", "-c", "id"],
            "Command rejected by default security policy: sh",
        ),
        (
            &["sh", "-c", "id"],
            "Command rejected by default security policy: sh",
        ),
        (
            &["env", "sh"],
            "Command rejected by default security policy: env",
        ),
        (
            &["xargs", "sh"],
            "Command rejected by default security policy: xargs",
        ),
        (&["find", ".", "-exec", "sh", "-c", "id", "+"], "find -exec"),
        (
            &["git", "-c", "core.pager=sh", "log"],
            "git command-scoped config",
        ),
        (
            &["sort", "--compress-program=sh", "data.txt"],
            "sort external program or path option",
        ),
        (
            &["sort", "-ro", "/tmp/x", "data.txt"],
            "sort external program or path option",
        ),
        (&["ls", "a\nb"], "Unexpected shell operator: a\nb"),
        (&["ls", ";", "id"], "Unexpected shell operator"),
        (&["/usr/bin/ls"], "Command not allowed: /usr/bin/ls"),
        (&["rm", "-rf", "."], "Command not allowed: rm"),
        (&["echo", "x", ">", ".git/config"], ".git"),
    ];
    for (argv, expected) in cases {
        let result = run(&server, argv, json!({}));
        let text = tool_text(&result);
        assert!(is_error(&result), "{argv:?} must be rejected: {result}");
        assert!(
            text.starts_with("Error executing command: "),
            "{argv:?}: {text}"
        );
        assert!(
            text.contains(expected),
            "{argv:?}: expected {expected:?} in {text:?}"
        );
    }
    assert!(!std::path::Path::new("/tmp/yieldshell-abs").exists());
    // The own parser of exec rejects what a shell would interpret.
    for (command, token) in [
        ("ls $(id)", "$("),
        ("ls `id`", "`"),
        ("ls; id", ";"),
        ("ls && id", "&&"),
        ("ls\nid", "newline"),
    ] {
        let result = server.call(
            "exec",
            json!({"command": command, "side_effects": ["NONE"]}),
        );
        let object = server.result_object(&result);
        assert_eq!(object["status"], "failed_to_start", "{command:?}: {result}");
        let error = object["error"].as_str().unwrap_or_default().to_lowercase();
        assert!(error.contains(token), "{command:?}: {error}");
    }
    // No process was started by any of them.
    let ps = server.call_ok("ps", json!({}));
    assert_eq!(ps_len(&ps), 0, "{ps}");
    // Every attempt is in the audit log, as a rejection with its reason.
    let lines = audit_lines(&dir);
    assert_eq!(lines.len(), cases.len() + 5, "{lines:?}");
    for line in &lines {
        assert_eq!(line["result_type"], "rejected", "{line}");
        assert!(
            line["rejection_reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{line}"
        );
    }
}

fn ps_len(ps: &Value) -> usize {
    ps["processes"].as_array().map_or(usize::MAX, Vec::len)
}

#[test]
fn pipelines_stream_and_report_every_stage() {
    let dir = TempDir::new("trusted-pipes");
    let server = trusted(&dir, &[]);
    let result = run(
        &server,
        &["seq", "1", "100000", "|", "grep", "7", "|", "wc", "-l"],
        json!({}),
    );
    assert!(!is_error(&result), "{result}");
    assert_eq!(tool_text(&result).trim(), "40951");
    let object = &result["structuredContent"];
    assert_eq!(object["stage_status"], json!([0, 0, 0]), "{result}");
    // A later stage that exits early ends the pipeline (yes gets SIGPIPE).
    let result = server.call_with_deadline(
        "shell_execute",
        json!({"command": ["yes", "|", "head", "-n", "3"]}),
        Duration::from_secs(10),
    );
    assert_eq!(tool_text(&result), "y\ny\ny\n");
    // Binary bytes pass between stages unchanged.
    let result = run(
        &server,
        &["printf", "\\000\\377\\001", "|", "od", "-An", "-tx1"],
        json!({}),
    );
    assert_eq!(tool_text(&result).trim(), "00 ff 01", "{result}");
    // stdin feeds the first stage.
    let result = run(
        &server,
        &["cat", "|", "wc", "-c"],
        json!({"stdin": "hello"}),
    );
    assert_eq!(tool_text(&result).trim(), "5", "{result}");
    // Redirection inside the working directory works.
    let result = run(&server, &["seq", "3", ">", "out.txt"], json!({}));
    assert!(!is_error(&result), "{result}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).expect("out.txt"),
        "1\n2\n3\n"
    );
    let result = run(
        &server,
        &["cat", "<", "out.txt", "|", "wc", "-l"],
        json!({}),
    );
    assert_eq!(tool_text(&result).trim(), "3");
}

#[test]
fn a_failed_stage_fails_the_pipeline_and_is_named() {
    let dir = TempDir::new("trusted-stage-fails");
    let server = trusted(&dir, &[]);
    let one_block = |result: &Value| {
        let blocks = result["content"].as_array().map_or(0, Vec::len);
        assert_eq!(
            blocks, 1,
            "one text block, as MCP Shell Server sends: {result}"
        );
    };
    // The first stage fails and the last succeeds: still an error, in MCP Shell Server's
    // words (the failed stage's stderr), then which stage failed and how.
    let result = run(&server, &["ls", "missing", "|", "sort"], json!({}));
    assert!(is_error(&result), "{result}");
    one_block(&result);
    let text = tool_text(&result);
    assert!(
        text.starts_with("Error executing command: ls: cannot access 'missing'"),
        "{text}"
    );
    assert!(
        text.contains("\nstage 1 of 2 (ls) failed with exit status 2"),
        "{text}"
    );
    assert_eq!(
        result["structuredContent"]["stage_status"],
        json!([2, 0]),
        "{result}"
    );
    // A stage that fails without a word: the original's sentence.
    let result = run(&server, &["echo", "x", "|", "grep", "zzz"], json!({}));
    assert!(is_error(&result), "{result}");
    assert!(
        tool_text(&result).starts_with(
            "Error executing command: Command failed with exit code 1\nstage 2 of 2 (grep) failed with exit status 1"
        ),
        "{result}"
    );
    // A stage that ends early makes an earlier one die of SIGPIPE: no failure.
    let result = run(
        &server,
        &["seq", "1", "1000000", "|", "head", "-n", "1"],
        json!({}),
    );
    assert!(!is_error(&result), "{result}");
    // A single command's failure: the reason, then the captured output, in one block.
    let result = run(&server, &["ls", "missing"], json!({}));
    one_block(&result);
    assert_eq!(
        tool_text(&result),
        "Error executing command: Command failed with exit status 2\nstderr:\nls: cannot access 'missing': No such file or directory\n"
    );
    // An element that contains an operator is refused, as the original refused it.
    for element in ["a;b", "x&&y", "a||b", "`id`"] {
        let result = run(&server, &["echo", element], json!({}));
        assert!(is_error(&result), "{result}");
        let want = format!("Error executing command: Unexpected shell operator: {element} (");
        assert!(tool_text(&result).starts_with(&want), "{result}");
    }
    // exec in trusted mode: the exit code is the failed stage's, and the result says which.
    let object = server.exec(json!({"command": "sort -S 1M nothere.txt | wc -l"}));
    assert_eq!(object["status"], "completed", "{object}");
    assert_eq!(object["exit_code"], 2, "{object}");
    assert_eq!(
        object["failed_stage"], "stage 1 of 2 (sort) failed with exit status 2",
        "{object}"
    );
    let object = server.exec(json!({"command": "seq 1 1000000 | head -n 1"}));
    assert_eq!(object["exit_code"], 0, "{object}");
    assert!(object.get("failed_stage").is_none(), "{object}");
}

#[test]
fn a_pipeline_timeout_is_an_error_that_keeps_the_output() {
    let dir = TempDir::new("trusted-timeout");
    std::fs::write(dir.path().join("log.txt"), "first line\n").expect("write");
    let server = trusted(&dir, &[]);
    let result = run(
        &server,
        &["tail", "-f", "log.txt", "|", "cat"],
        json!({"timeout": 1}),
    );
    assert!(is_error(&result), "{result}");
    let text = tool_text(&result);
    assert!(text.contains("Command timed out after 1 seconds"), "{text}");
    assert!(
        text.contains("first line"),
        "the output so far is returned: {text}"
    );
    let lines = audit_lines(&dir);
    assert_eq!(
        lines.last().map(|l| l["result_type"].clone()),
        Some(json!("timeout"))
    );
}

#[test]
fn the_child_environment_is_minimal() {
    let dir = TempDir::new("trusted-env");
    let server = trusted(
        &dir,
        &[
            ("SECRET_TOKEN", "do-not-leak-123"),
            ("LANG", "C.UTF-8"),
            ("MCP_SHELL_CHILD_ENV_ALLOWLIST", "LANG"),
        ],
    );
    let result = run(&server, &["printenv"], json!({}));
    let text = tool_text(&result);
    assert!(
        !text.contains("SECRET_TOKEN") && !text.contains("do-not-leak"),
        "{text}"
    );
    assert!(text.contains("LANG=C.UTF-8"), "{text}");
    assert!(
        text.contains("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"),
        "{text}"
    );
    // exec may set only allowlisted names.
    let result = server.call(
        "exec",
        json!({"command": "printenv", "side_effects": ["NONE"], "env": {"LD_PRELOAD": "/x.so"}}),
    );
    let object = server.result_object(&result);
    assert_eq!(object["status"], "failed_to_start");
    assert!(
        object["error"]
            .as_str()
            .unwrap_or_default()
            .contains("LD_PRELOAD"),
        "{object}"
    );
}

#[test]
fn exec_in_trusted_mode_yields_reads_and_stops() {
    let dir = TempDir::new("trusted-exec");
    let server = trusted(&dir, &[]);
    let object = server.exec(json!({"command": "seq 1 3 | wc -l"}));
    assert_eq!(
        (object["status"].as_str(), object["stdout"].as_str()),
        (Some("completed"), Some("3\n")),
        "{object}"
    );
    let result = server.call(
        "exec",
        json!({"command": "sh -c 'sleep 1'", "side_effects": ["NONE"]}),
    );
    assert_eq!(server.result_object(&result)["status"], "failed_to_start");
    std::fs::write(dir.path().join("log.txt"), "line\n").expect("write");
    let object = server.exec(json!({"command": "tail -f log.txt | cat", "yield_ms": 300}));
    assert_eq!(object["status"], "backgrounded", "{object}");
    let id = object["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let read = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(read["status"], "running");
    let stop = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(
        (stop["stopped"].as_bool(), stop["status"].as_str()),
        (Some(true), Some("stopped")),
        "{stop}"
    );
    let lines = audit_lines(&dir);
    let types: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["result_type"].as_str())
        .collect();
    assert_eq!(types, ["success", "rejected", "backgrounded"], "{lines:?}");
}

#[test]
fn every_pipeline_stage_leads_its_own_session_and_stop_reaches_all() {
    let dir = TempDir::new("trusted-sessions");
    std::fs::write(dir.path().join("log.txt"), "line\n").expect("write");
    let server = trusted(&dir, &[]);
    // The second stage reports its own pid, process group and session.
    let result = run(
        &server,
        &["echo", "x", "|", "cat", "/proc/self/stat"],
        json!({}),
    );
    let text = tool_text(&result);
    let after_comm = text.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    let pid = text.split_whitespace().next().unwrap_or_default();
    assert_eq!(
        (fields.get(2), fields.get(3)),
        (Some(&pid), Some(&pid)),
        "pgrp and session of {text}"
    );
    // A backgrounded pipeline stops as a whole.
    let object = server.exec(json!({"command": "tail -f log.txt | cat", "yield_ms": 200}));
    let id = object["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let first: u32 = object["pid"].as_u64().expect("pid") as u32;
    let stop = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
    assert_eq!(stop["stopped"], true, "{stop}");
    assert!(crate::support::pid_gone(first));
    let ps = server.call_ok("ps", json!({"include_completed": false}));
    assert_eq!(ps["processes"].as_array().map(Vec::len), Some(0), "{ps}");
}

#[test]
fn the_output_cap_stops_the_command_and_keeps_what_came_before() {
    let dir = TempDir::new("trusted-cap");
    let server = trusted(&dir, &[("MCP_SHELL_OUTPUT_LIMIT_BYTES", "1000")]);
    let result = server.call_with_deadline(
        "shell_execute",
        json!({"command": ["yes"]}),
        Duration::from_secs(20),
    );
    assert!(is_error(&result), "{result}");
    let text = tool_text(&result);
    assert!(
        text.starts_with("Error executing command: stdout exceeded output limit of 1000 bytes"),
        "{text}"
    );
    let stdout = result["structuredContent"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // What was captured up to the kill, within the answer's budget.
    assert!(
        stdout.len() >= 1000 && stdout.len() <= 20_200,
        "{}",
        stdout.len()
    );
    assert_eq!(
        result["structuredContent"]["killed_for"]["limit"], 1000,
        "{result}"
    );
    assert!(stdout
        .lines()
        .all(|l| l == "y" || l.is_empty() || l.starts_with("[… ")));
    let lines = audit_lines(&dir);
    assert_eq!(
        lines.last().map(|l| l["result_type"].clone()),
        Some(json!("output_cap"))
    );
    // Below the limit nothing is cut.
    let result = run(&server, &["seq", "100"], json!({}));
    assert!(!is_error(&result), "{result}");
}

/// A 300-stage pipeline must not run under a limit of 1: the limit
/// counts processes, one per pipeline stage.
#[test]
fn the_process_limit_counts_every_pipeline_stage() {
    let server = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "sleep,cat"),
        ("YIELDSHELL_MAX_PROCESSES", "3"),
    ]);
    let long = ["sleep", "0", "|", "cat", "|", "cat", "|", "cat"];
    let refused = server.call_err("shell_execute", json!({"command": long}));
    let text = tool_text(&refused);
    assert!(text.contains("Maximum process limit (3)"), "{text}");
    assert!(text.contains("4 processes"), "{text}");
    let fits = server.call(
        "shell_execute",
        json!({"command": ["sleep", "0", "|", "cat", "|", "cat"]}),
    );
    assert!(!is_error(&fits), "{fits}");
    // Two places taken by a running pipeline leave one.
    let running = server.exec(json!({"command": "sleep 30 | cat", "yield_ms": 0}));
    let id = crate::support::process_id(&running);
    let refused = server.call_err(
        "exec",
        json!({"command": "sleep 1 | cat", "side_effects": ["NONE"]}),
    );
    assert!(
        tool_text(&refused).contains("Maximum process limit (3)"),
        "{refused}"
    );
    let one = server.call_ok(
        "exec",
        json!({"command": "cat", "side_effects": ["NONE"], "stdin": "x"}),
    );
    assert_eq!(one["stdout"], "x", "{one}");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
}

/// A working directory in /etc or /lib64 would let a call replace what every allowed program
/// loads.
#[test]
fn trusted_mode_refuses_system_directories_as_working_directories() {
    let server = Server::ready_with_env(&[("ALLOW_COMMANDS", "ls,tee")]);
    // git's template directories (for example a hook or config planted there is
    // copied into every repository a later git init or clone makes).
    for dir in [
        "/etc",
        "/lib64",
        "/usr/lib",
        "/usr/local/lib",
        "/",
        "/usr",
        "/usr/share/git-core/templates",
        "/usr/local/share/git-core/templates",
        "/var/lib",
        "/usr/include",
        "/var/backups",
    ]
    .into_iter()
    .map(String::from)
    // The server's home and its settings (ssh's config, p11-kit's modules).
    .chain(
        std::env::var("HOME")
            .ok()
            .filter(|h| h.len() > 1)
            .into_iter()
            .flat_map(|h| [h.clone(), format!("{h}/.config")]),
    ) {
        let dir = dir.as_str();
        if !std::path::Path::new(dir).exists() {
            continue;
        }
        let refused = server.call_err(
            "shell_execute",
            json!({"command": ["tee", "ld.so.preload"], "directory": dir, "stdin": "x"}),
        );
        let text = tool_text(&refused);
        assert!(
            text.contains("system directory")
                || text.contains("safe PATH")
                || text.contains("home directory"),
            "{dir}: {text}"
        );
        let refused = server.call_err(
            "exec",
            json!({"command": "ls", "cwd": dir, "side_effects": ["NONE"]}),
        );
        assert!(tool_text(&refused).contains(dir), "{dir}: {refused}");
    }
    assert!(
        !std::path::Path::new("/etc/ld.so.preload").exists() || {
            // A machine may have one of its own; it must not be ours.
            std::fs::read_to_string("/etc/ld.so.preload").unwrap_or_default() != "x"
        }
    );
}
