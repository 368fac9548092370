//! Approvals (`YIELDSHELL_APPROVALS=ask`): a refusal by a rule the person may waive is put to
//! them through the client, in both protocol eras: `elicitation/create` answered by id
//! (legacy), `input_required` with a signed `requestState` (2026-07-28).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::*;

const MODERN: &str = "2026-07-28";
const ASK: (&str, &str) = ("YIELDSHELL_APPROVALS", "ask");
const BLOCK_INLINE: (&str, &str) = ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "RUNS_INLINE_CODE");

/// A shell-mode server with approvals on whose client declared form elicitation.
fn asking(extra: &[(&str, &str)]) -> Server {
    let mut env = vec![ASK, BLOCK_INLINE];
    env.extend_from_slice(extra);
    let server = Server::with_env(&env);
    server.initialize_with(LATEST, json!({"elicitation": {"form": {}}}));
    server
}

/// An `exec` the blocked side effect refuses.
fn inline(command: &str) -> Value {
    json!({"command": command, "side_effects": ["RUNS_INLINE_CODE"]})
}

/// Sends a `tools/call`; returns its id.
fn send_call(server: &Server, tool: &str, args: Value) -> Value {
    server.send_request("tools/call", json!({"name": tool, "arguments": args}))
}

/// Waits for the question the server puts to the person.
fn question(server: &Server) -> Value {
    server
        .next_server_request(DEFAULT_DEADLINE)
        .unwrap_or_else(|| server.fail("no elicitation/create came"))
}

/// Answers question `q` with `result`.
fn answer(server: &Server, q: &Value, result: Value) {
    server.send(&json!({"jsonrpc": "2.0", "id": q["id"], "result": result}));
}

fn call_result(server: &Server, id: &Value) -> Value {
    let response = server.response(id, DEFAULT_DEADLINE);
    response
        .get("result")
        .cloned()
        .unwrap_or_else(|| server.fail(&format!("no result: {response}")))
}

fn elicitations(server: &Server) -> usize {
    server
        .server_requests()
        .iter()
        .filter(|r| r["method"] == "elicitation/create")
        .count()
}

#[test]
fn legacy_accept_runs_the_call_with_the_question_naming_command_directory_and_rule() {
    let dir = TempDir::new("approve-accept");
    let cwd = path_str(dir.path()).to_string();
    let server = asking(&[]);
    let id = send_call(
        &server,
        "exec",
        json!({"command": "echo approved-$((40+2))", "side_effects": ["RUNS_INLINE_CODE"], "cwd": cwd}),
    );
    let q = question(&server);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    let params = &q["params"];
    assert_eq!(params["mode"], "form", "{q}");
    let message = params["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("echo approved-$((40+2))")
            && message.contains(&cwd)
            && message.contains("RUNS_INLINE_CODE"),
        "{message}"
    );
    let schema = &params["requestedSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert!(
        schema.get("required").is_none(),
        "no required field: {schema}"
    );
    assert_eq!(
        schema["properties"]["remember"]["type"], "boolean",
        "{schema}"
    );
    answer(&server, &q, json!({"action": "accept", "content": {}}));
    let result = call_result(&server, &id);
    assert!(!is_error(&result), "{result}");
    let object = server.result_object(&result);
    assert_eq!(object["status"], "completed", "{object}");
    assert!(
        object["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("approved-42"),
        "{object}"
    );
    // Audit: the question, the answer, the refused attempt and the approved run.
    let ok = wait_until(Duration::from_secs(5), || {
        let log = server.stderr_text();
        log.contains("\"event\":\"approval\"")
            && log.contains("\"step\":\"asked\"")
            && log.contains("\"answer\":\"accept\"")
            && log.contains("\"approval\":\"approved\"")
    });
    assert!(ok, "{}", server.stderr_text());
    server.check_violations();
}

#[test]
fn legacy_decline_and_cancel_refuse_saying_who_and_which_rule() {
    let dir = TempDir::new("approve-decline");
    let server = asking(&[]);
    for (action, words) in [
        ("decline", "Declined by the person"),
        ("cancel", "Cancelled by the person"),
    ] {
        let id = send_call(
            &server,
            "exec",
            json!({"command": "touch ran", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(dir.path())}),
        );
        let q = question(&server);
        answer(&server, &q, json!({"action": action}));
        let result = call_result(&server, &id);
        assert!(is_error(&result), "{result}");
        let text = tool_text(&result);
        assert!(
            text.contains(words) && text.contains("RUNS_INLINE_CODE"),
            "{text}"
        );
        assert!(
            !dir.path().join("ran").exists(),
            "{action}: nothing may run"
        );
    }
}

#[test]
fn legacy_remember_lets_the_same_command_in_the_same_directory_run_without_asking() {
    let dir = TempDir::new("approve-remember");
    let other = dir.mkdir("other");
    let cwd = path_str(dir.path()).to_string();
    let server = asking(&[]);
    let args = json!({"command": "echo again", "side_effects": ["RUNS_INLINE_CODE"], "cwd": cwd});
    let id = send_call(&server, "exec", args.clone());
    let q = question(&server);
    answer(
        &server,
        &q,
        json!({"action": "accept", "content": {"remember": true}}),
    );
    assert!(!is_error(&call_result(&server, &id)));
    // The same call: no question.
    let again = server.call("exec", args);
    assert!(!is_error(&again), "{again}");
    assert_eq!(elicitations(&server), 1);
    // Another directory: asked again.
    let id = send_call(
        &server,
        "exec",
        json!({"command": "echo again", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(&other)}),
    );
    let q = question(&server);
    answer(&server, &q, json!({"action": "decline"}));
    assert!(is_error(&call_result(&server, &id)));
    assert_eq!(elicitations(&server), 2);
}

/// The question names the shell, the environment overlay (secrets hidden) and stdin, and a
/// remembered approval covers no call that differs in any of them.
#[test]
fn the_question_and_remember_cover_shell_env_and_stdin() {
    let dir = TempDir::new("approve-with");
    let cwd = path_str(dir.path()).to_string();
    let evil = dir.path().join("evil.sh");
    let pwned = dir.path().join("pwned");
    std::fs::write(&evil, format!("touch {}\n", path_str(&pwned))).expect("write");
    let server = asking(&[]);
    let base = json!({"command": "echo hello", "side_effects": ["RUNS_INLINE_CODE"], "cwd": cwd});
    let id = send_call(&server, "exec", base.clone());
    let q = question(&server);
    answer(
        &server,
        &q,
        json!({"action": "accept", "content": {"remember": true}}),
    );
    assert!(!is_error(&call_result(&server, &id)));
    let with = |extra: Value| {
        let mut args = base.clone();
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            args[k] = v;
        }
        args
    };
    let variants = [
        (
            with(json!({"shell": "/bin/bash", "env": {"BASH_ENV": path_str(&evil)}})),
            vec![
                "with shell /bin/bash".to_string(),
                format!("env BASH_ENV={}", path_str(&evil)),
            ],
        ),
        (
            with(json!({"env": {"API_TOKEN": "hunter2hunter2", "LANG": "C"}})),
            vec!["env API_TOKEN=[REDACTED] LANG=C".to_string()],
        ),
        (
            with(json!({"stdin": "yes\n", "close_stdin": true})),
            vec!["with stdin of 4 bytes \"yes\\n\"".to_string()],
        ),
    ];
    for (n, (args, words)) in variants.into_iter().enumerate() {
        let id = send_call(&server, "exec", args);
        let q = question(&server);
        let message = q["params"]["message"].as_str().unwrap_or_default();
        for w in &words {
            assert!(message.contains(w.as_str()), "{w} not in {message}");
        }
        assert!(!message.contains("hunter2"), "{message}");
        answer(&server, &q, json!({"action": "decline"}));
        assert!(is_error(&call_result(&server, &id)));
        assert_eq!(elicitations(&server), n + 2, "asked again");
    }
    assert!(!pwned.exists(), "the shell's BASH_ENV ran");
    // The remembered call itself still runs without a question.
    assert!(!is_error(&server.call("exec", base)));
    assert_eq!(elicitations(&server), 4);
}

#[test]
fn a_client_without_elicitation_or_approvals_off_gets_the_plain_refusal_and_no_request() {
    // No capability declared.
    let server = Server::with_env(&[ASK, BLOCK_INLINE]);
    server.initialize(LATEST);
    let result = server.call("exec", inline("echo no"));
    assert!(is_error(&result), "{result}");
    assert!(tool_text(&result).contains("Blocked by policy"), "{result}");
    // Only URL mode declared: no form may be sent.
    let url_only = Server::with_env(&[ASK, BLOCK_INLINE]);
    url_only.initialize_with(LATEST, json!({"elicitation": {"url": {}}}));
    assert!(is_error(&url_only.call("exec", inline("echo no"))));
    // A version without elicitation (2025-03-26), whatever the client declares.
    let old = Server::with_env(&[ASK, BLOCK_INLINE]);
    old.initialize_with("2025-03-26", json!({"elicitation": {}}));
    assert!(is_error(&old.call("exec", inline("echo no"))));
    assert_eq!(elicitations(&old), 0);
    // Approvals off (the default), although the client could ask.
    let off = Server::with_env(&[BLOCK_INLINE]);
    off.initialize_with(LATEST, json!({"elicitation": {}}));
    let result = off.call("exec", inline("echo no"));
    assert!(tool_text(&result).contains("Blocked by policy"), "{result}");
    for s in [&server, &url_only, &off] {
        assert_eq!(elicitations(s), 0);
        s.check_violations();
    }
}

#[test]
fn legacy_clocks_stand_still_while_the_person_decides() {
    let server = asking(&[]);
    // A 1 s timeout and a 1 s yield; the person answers after 3 s.
    let id = send_call(
        &server,
        "exec",
        json!({"command": "sleep 0.3; echo in-time", "side_effects": ["RUNS_INLINE_CODE"],
               "timeout_ms": 1000, "yield_ms": 1000}),
    );
    let q = question(&server);
    // The person's reading time is the scenario itself, not a synchronisation.
    std::thread::sleep(Duration::from_secs(3));
    answer(&server, &q, json!({"action": "accept"}));
    let result = call_result(&server, &id);
    let object = server.result_object(&result);
    assert_eq!(object["status"], "completed", "{object}");
    assert_eq!(object["exit_code"], 0, "{object}");
    assert!(
        object["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("in-time"),
        "{object}"
    );
}

#[test]
fn ping_and_other_calls_are_answered_while_a_question_is_open() {
    let server = asking(&[]);
    let id = send_call(&server, "exec", inline("echo later"));
    let q = question(&server);
    server.assert_alive();
    let other = server.call(
        "exec",
        json!({"command": "echo meanwhile", "side_effects": ["NONE"]}),
    );
    assert!(tool_text(&other).contains("meanwhile"), "{other}");
    assert!(
        server.try_response(&id, Duration::ZERO).is_none(),
        "the call still waits"
    );
    answer(&server, &q, json!({"action": "accept"}));
    assert!(!is_error(&call_result(&server, &id)));
}

#[test]
fn cancelling_a_call_ends_its_question_with_nothing_run() {
    let dir = TempDir::new("approve-cancel");
    let server = asking(&[]);
    let id = send_call(
        &server,
        "exec",
        json!({"command": "touch ran", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(dir.path())}),
    );
    let q = question(&server);
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    // The server tells the client it may close the question.
    let closed = wait_until(DEFAULT_DEADLINE, || {
        server.notifications().iter().any(|(_, n)| {
            n["method"] == "notifications/cancelled" && n["params"]["requestId"] == q["id"]
        })
    });
    assert!(closed, "no notifications/cancelled for {}", q["id"]);
    // A late accept is ignored.
    answer(&server, &q, json!({"action": "accept"}));
    server.assert_alive();
    assert!(
        server.try_response(&id, Duration::ZERO).is_none(),
        "a cancelled call answers nothing"
    );
    assert!(!dir.path().join("ran").exists());
    let logged = wait_until(Duration::from_secs(5), || {
        server
            .stderr_text()
            .contains("answers no question this server has open")
    });
    assert!(logged, "{}", server.stderr_text());
}

#[test]
fn no_answer_within_the_approval_timeout_refuses_the_call() {
    let server = asking(&[("YIELDSHELL_APPROVAL_TIMEOUT_MS", "800")]);
    let id = send_call(&server, "exec", inline("echo never"));
    let q = question(&server);
    let result = call_result(&server, &id);
    assert!(is_error(&result), "{result}");
    let text = tool_text(&result);
    assert!(
        text.contains("No answer from the person within 800 ms"),
        "{text}"
    );
    let closed = server.notifications().iter().any(|(_, n)| {
        n["method"] == "notifications/cancelled" && n["params"]["requestId"] == q["id"]
    });
    assert!(closed, "the question is closed");
}

#[test]
fn a_waiting_question_sends_progress_every_10_s_and_progress_only_grows() {
    let server = asking(&[]);
    let id = server.send_request(
        "tools/call",
        json!({"name": "exec", "arguments": inline("echo progressed"),
               "_meta": {"progressToken": "p1"}}),
    );
    let q = question(&server);
    let waiting = wait_until(Duration::from_secs(15), || {
        server.notifications().iter().any(|(_, n)| {
            n["method"] == "notifications/progress"
                && n["params"]["message"] == "waiting for approval"
        })
    });
    assert!(waiting, "no progress while waiting");
    answer(&server, &q, json!({"action": "accept"}));
    assert!(!is_error(&call_result(&server, &id)));
    let values: Vec<f64> = server
        .notifications()
        .iter()
        .filter(|(_, n)| n["params"]["progressToken"] == "p1")
        .filter_map(|(_, n)| n["params"]["progress"].as_f64())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(
        values[0] >= 9_000.0,
        "the first comes after about 10 s: {values:?}"
    );
}

#[test]
fn never_approvable_rules_are_never_asked_about() {
    let dir = TempDir::new("approve-never");
    let allowed = path_str(dir.path()).to_string();
    let server = asking(&[
        ("YIELDSHELL_DENY_COMMAND_REGEX", "forbidden"),
        ("YIELDSHELL_ALLOWED_CWDS", &allowed),
        ("YIELDSHELL_DEFAULT_CWD", &allowed),
    ]);
    // The deny regex, although the side effect (approvable) refuses it too.
    let denied = server.call("exec", inline("echo forbidden"));
    assert!(
        tool_text(&denied).contains("YIELDSHELL_DENY_COMMAND_REGEX"),
        "{denied}"
    );
    // A directory outside the allowed roots.
    let outside = server.call(
        "exec",
        json!({"command": "echo x", "side_effects": ["RUNS_INLINE_CODE"], "cwd": "/"}),
    );
    assert!(
        tool_text(&outside).contains("outside the allowed directories"),
        "{outside}"
    );
    // Malformed arguments.
    let bad = server.call("exec", json!({"command": "echo x", "side_effects": []}));
    assert!(is_error(&bad), "{bad}");
    assert_eq!(elicitations(&server), 0);

    // Trusted mode: a program off the allowlist, although an argument rule refuses it too.
    let trusted = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "find"),
        ("YIELDSHELL_DEFAULT_CWD", &allowed),
    ]);
    trusted.initialize_with(LATEST, json!({"elicitation": {}}));
    let sh = trusted.call("shell_execute", json!({"command": ["sh", "-c", "id"]}));
    assert!(is_error(&sh), "{sh}");
    let rm = trusted.call(
        "shell_execute",
        json!({"command": ["find", ".", "-fprint", "x", "|", "rm", "x"]}),
    );
    assert!(tool_text(&rm).contains("Command not allowed: rm"), "{rm}");
    assert_eq!(elicitations(&trusted), 0);
}

/// `shell_execute` reads the command regexes on its argv joined with spaces, before any
/// rule a person may waive: a match is refused plainly, never asked about.
#[test]
fn the_command_regexes_refuse_shell_execute_before_anything_is_asked() {
    let dir = TempDir::new("approve-regex");
    let cwd = path_str(dir.path()).to_string();
    std::fs::write(dir.path().join("secret.txt"), "s3cret\n").expect("write");
    let server = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "find,ls,cat"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
        ("YIELDSHELL_DENY_COMMAND_REGEX", "secret|-fprint out"),
        ("YIELDSHELL_ALLOW_COMMAND_REGEX", "^(ls|find) "),
    ]);
    server.initialize_with(LATEST, json!({"elicitation": {}}));
    // An argument rule (approvable) refuses it too: the deny regex comes first.
    let denied = server.call(
        "shell_execute",
        json!({"command": ["find", ".", "-maxdepth", "0", "-fprint", "out.txt"]}),
    );
    assert!(is_error(&denied), "{denied}");
    assert!(
        tool_text(&denied).contains("matches YIELDSHELL_DENY_COMMAND_REGEX"),
        "{denied}"
    );
    let secret = server.call("shell_execute", json!({"command": ["ls", "secret.txt"]}));
    assert!(
        tool_text(&secret).contains("matches YIELDSHELL_DENY_COMMAND_REGEX"),
        "{secret}"
    );
    let cat = server.call("shell_execute", json!({"command": ["cat", "other.txt"]}));
    assert!(
        tool_text(&cat).contains("does not match YIELDSHELL_ALLOW_COMMAND_REGEX"),
        "{cat}"
    );
    // What both regexes let through runs.
    let ls = server.call("shell_execute", json!({"command": ["ls", "-a", "."]}));
    assert!(!is_error(&ls), "{ls}");
    assert!(tool_text(&ls).contains("secret.txt"), "{ls}");
    assert_eq!(elicitations(&server), 0);
    assert!(!dir.path().join("out.txt").exists());
}

/// Controls, bidirectional and invisible format characters in a call reach neither the
/// question nor the audit lines as themselves: the question shows them as `\u{…}`, the
/// audit line as JSON escapes.
#[test]
fn the_question_and_the_audit_show_invisible_characters_as_escapes() {
    let dir = TempDir::new("approve-visible");
    let cwd = path_str(dir.path()).to_string();
    let server = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "find"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
    ]);
    server.initialize_with(LATEST, json!({"elicitation": {}}));
    // (A carriage return is refused first in trusted mode, as is a line feed.)
    let hidden = [
        '\u{1b}',
        '\u{7f}',
        '\u{85}',
        '\u{9b}',
        '\u{2028}',
        '\u{2029}',
        '\u{202e}',
        '\u{2066}',
        '\u{200f}',
        '\u{61c}',
        '\u{200b}',
        '\u{feff}',
        '\u{e0041}',
    ];
    let name: String = hidden.iter().collect();
    let calls = [
        (
            "exec",
            json!({"command": format!("find . -maxdepth 0 -fprint x{name}"), "side_effects": ["NONE"]}),
        ),
        (
            "shell_execute",
            json!({"command": ["find", ".", "-maxdepth", "0", "-fprint", format!("y{name}")]}),
        ),
    ];
    for (tool, args) in calls {
        let id = send_call(&server, tool, args);
        let q = question(&server);
        let message = q["params"]["message"].as_str().unwrap_or_default();
        for c in hidden {
            assert!(
                !message.contains(c),
                "{c:?} reached the question: {message:?}"
            );
        }
        assert!(
            message.contains("\\u{7f}\\u{85}\\u{9b}\\u{2028}\\u{2029}\\u{202e}")
                && message.contains("\\u{e0041}"),
            "{message:?}"
        );
        answer(&server, &q, json!({"action": "decline"}));
        assert!(is_error(&call_result(&server, &id)));
    }
    let ok = wait_until(Duration::from_secs(5), || {
        server
            .stderr_text()
            .matches("\"step\":\"answered\"")
            .count()
            == 2
    });
    let log = server.stderr_text();
    assert!(ok, "{log}");
    for line in log.lines().filter(|l| l.contains("AUDIT")) {
        for c in hidden {
            assert!(!line.contains(c), "{c:?} reached the audit: {line:?}");
        }
    }
    assert!(
        log.contains("\\u202e") && log.contains("\\udb40\\udc41"),
        "{log}"
    );
    assert!(!dir.path().join(format!("x{name}")).exists());
}

#[test]
fn a_trusted_mode_argument_rule_is_asked_about_and_the_approved_call_runs() {
    let dir = TempDir::new("approve-trusted");
    let cwd = path_str(dir.path()).to_string();
    let server = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "find"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
    ]);
    // 2025-06-18: the capability is `{}` and a question has no `mode`.
    server.initialize_with("2025-06-18", json!({"elicitation": {}}));
    let id = send_call(
        &server,
        "shell_execute",
        json!({"command": ["find", ".", "-maxdepth", "0", "-fprint", "out.txt"]}),
    );
    let q = question(&server);
    assert!(q["params"].get("mode").is_none(), "{q}");
    let message = q["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("-fprint") && message.contains("argument rules"),
        "{message}"
    );
    answer(
        &server,
        &q,
        json!({"action": "accept", "content": {"remember": false}}),
    );
    let result = call_result(&server, &id);
    assert!(!is_error(&result), "{result}");
    assert!(dir.path().join("out.txt").exists(), "the approved call ran");
}

/// An allowlisted program without argument rules is put to the person, naming the setting
/// that would accept it; the approved call runs, the declined one does not.
#[test]
fn a_program_without_rules_is_asked_about_and_runs_only_when_approved() {
    let dir = TempDir::new("approve-unreviewed");
    let cwd = path_str(dir.path()).to_string();
    std::fs::write(dir.path().join("a"), "x").unwrap();
    let server = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "install"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
    ]);
    server.initialize_with("2025-11-25", json!({"elicitation": {}}));
    for (action, ran) in [("decline", false), ("accept", true)] {
        let id = send_call(
            &server,
            "shell_execute",
            json!({"command": ["install", "-m", "0600", "a", "b"]}),
        );
        let q = question(&server);
        let message = q["params"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("install -m 0600 a b") || message.contains("\"install\""),
            "{message}"
        );
        assert!(
            message.contains("no argument rules")
                && message.contains("YIELDSHELL_UNREVIEWED_COMMANDS"),
            "{message}"
        );
        answer(&server, &q, json!({"action": action, "content": {}}));
        let result = call_result(&server, &id);
        assert_eq!(is_error(&result), !ran, "{action}: {result}");
        assert_eq!(dir.path().join("b").exists(), ran, "{action}");
    }
}

#[test]
fn a_client_error_for_the_question_gives_the_plain_refusal() {
    let server = asking(&[]);
    let id = send_call(&server, "exec", inline("echo no"));
    let q = question(&server);
    server.send(
        &json!({"jsonrpc": "2.0", "id": q["id"], "error": {"code": -32601, "message": "no"}}),
    );
    let result = call_result(&server, &id);
    assert!(is_error(&result), "{result}");
    assert!(
        tool_text(&result).contains("could not be asked"),
        "{result}"
    );
    // An answer for an id the server never used is logged and ignored.
    server.send(&json!({"jsonrpc": "2.0", "id": "ys-ask-999", "result": {"action": "accept"}}));
    server.assert_alive();
}

// ---- 2026-07-28 ----

fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 `tools/call` of `exec` with `extra` members in `params`; the result.
fn modern_exec(server: &Server, arguments: &Value, extra: Value) -> Value {
    let mut params = json!({"name": "exec", "arguments": arguments, "_meta": modern_meta(json!({"elicitation": {}}))});
    if let Value::Object(more) = extra {
        for (k, v) in more {
            params[k] = v;
        }
    }
    server.result("tools/call", params)
}

fn modern_server(extra: &[(&str, &str)]) -> Server {
    let mut env = vec![ASK, BLOCK_INLINE];
    env.extend_from_slice(extra);
    Server::with_env(&env)
}

/// The first call: `input_required`; returns the state.
fn input_required(server: &Server, arguments: &Value) -> String {
    let first = modern_exec(server, arguments, json!({}));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let request = &first["inputRequests"]["approve"];
    assert_eq!(request["method"], "elicitation/create", "{first}");
    let message = request["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("RUNS_INLINE_CODE"), "{message}");
    assert!(request["params"]["requestedSchema"]
        .get("required")
        .is_none());
    first["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {first}"))
        .to_string()
}

fn accept(state: &str) -> Value {
    json!({"inputResponses": {"approve": {"action": "accept", "content": {}}}, "requestState": state})
}

#[test]
fn modern_accept_runs_and_the_same_state_is_refused_the_second_time() {
    let dir = TempDir::new("approve-modern");
    let arguments = json!({"command": "echo modern-$((6*7)) >> log; cat log", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(dir.path())});
    let server = modern_server(&[]);
    let state = input_required(&server, &arguments);
    let done = modern_exec(&server, &arguments, accept(&state));
    assert_eq!(done["resultType"], "complete", "{done}");
    assert!(!is_error(&done), "{done}");
    assert!(tool_text(&done).contains("modern-42"), "{done}");
    // Replayed: refused, nothing runs.
    let replay = modern_exec(&server, &arguments, accept(&state));
    assert!(is_error(&replay), "{replay}");
    assert!(tool_text(&replay).contains("used already"), "{replay}");
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
    assert_eq!(log.matches("modern-42").count(), 1, "{log}");
    assert_eq!(elicitations(&server), 0, "no server request in this era");
    server.check_violations();
}

#[test]
fn modern_tampered_mismatched_and_expired_states_are_refused_and_nothing_runs() {
    let dir = TempDir::new("approve-states");
    let arguments = json!({"command": "touch ran", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(dir.path())});
    let server = modern_server(&[("YIELDSHELL_APPROVAL_TIMEOUT_MS", "1000")]);
    // Tampered: one character of the signed part changed.
    let state = input_required(&server, &arguments);
    let mut bytes = state.clone().into_bytes();
    bytes[4] = if bytes[4] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(bytes).expect("ascii");
    let result = modern_exec(&server, &arguments, accept(&tampered));
    assert!(tool_text(&result).contains("does not verify"), "{result}");
    // Mismatched: the state of these arguments with other arguments.
    let other = json!({"command": "touch other", "side_effects": ["RUNS_INLINE_CODE"], "cwd": path_str(dir.path())});
    let result = modern_exec(&server, &other, accept(&state));
    assert!(tool_text(&result).contains("another call"), "{result}");
    // Expired: the approval timeout (1 s) passes first.
    let started = Instant::now();
    let state = input_required(&server, &arguments);
    std::thread::sleep(Duration::from_millis(1200).saturating_sub(started.elapsed()));
    let result = modern_exec(&server, &arguments, accept(&state));
    assert!(tool_text(&result).contains("expired"), "{result}");
    assert!(!dir.path().join("ran").exists());
    assert!(!dir.path().join("other").exists());
    // Declined: refused, saying so.
    let state = input_required(&server, &arguments);
    let declined =
        json!({"inputResponses": {"approve": {"action": "decline"}}, "requestState": state});
    let result = modern_exec(&server, &arguments, declined);
    assert!(
        is_error(&result) && tool_text(&result).contains("Declined by the person"),
        "{result}"
    );
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn modern_without_elicitation_is_refused_plainly_and_remember_lasts_for_the_process() {
    let arguments = inline("echo remembered");
    let server = modern_server(&[]);
    let plain = server.result(
        "tools/call",
        json!({"name": "exec", "arguments": arguments, "_meta": modern_meta(json!({}))}),
    );
    assert_eq!(plain["resultType"], "complete", "{plain}");
    assert!(tool_text(&plain).contains("Blocked by policy"), "{plain}");
    let state = input_required(&server, &arguments);
    let remember = json!({"inputResponses": {"approve": {"action": "accept", "content": {"remember": true}}}, "requestState": state});
    assert!(!is_error(&modern_exec(&server, &arguments, remember)));
    // Later: runs without a question, in either era.
    let again = modern_exec(&server, &arguments, json!({}));
    assert_eq!(again["resultType"], "complete", "{again}");
    assert!(tool_text(&again).contains("remembered"), "{again}");
    let malformed = server.rpc_error(
        "tools/call",
        json!({"name": "exec", "arguments": arguments, "_meta": modern_meta(json!({"elicitation": {}})),
               "inputResponses": "yes", "requestState": "x"}),
    );
    assert_eq!(malformed["code"], -32602, "{malformed}");
}

/// The `requestState` a client carries reads as nothing: neither the command, nor the
/// directory, nor a secret the command holds; the state still approves its call.
#[test]
fn modern_states_are_sealed_and_still_approve() {
    let dir = TempDir::new("approve-sealed");
    let cwd = path_str(dir.path()).to_string();
    let server = Server::with_env(&[
        ASK,
        ("ALLOW_COMMANDS", "find"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("MY_SECRET", "hunter2hunter2"),
    ]);
    let arguments = json!({"command": ["find", ".", "-maxdepth", "0", "-fprint", "out.txt", "-name", "hunter2hunter2"]});
    let call = |extra: Value| {
        let mut params = json!({"name": "shell_execute", "arguments": arguments,
                                "_meta": modern_meta(json!({"elicitation": {}}))});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            params[k] = v;
        }
        server.result("tools/call", params)
    };
    let first = call(json!({}));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let message = first["inputRequests"]["approve"]["params"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(!message.contains("hunter2"), "{message}");
    // Every hexadecimal run of the state, decoded, and the state as it is.
    let mut texts = vec![state.clone().into_bytes()];
    for run in state.split(|c: char| !c.is_ascii_hexdigit()) {
        let bytes: Vec<u8> = (0..run.len() / 2)
            .filter_map(|i| u8::from_str_radix(&run[2 * i..2 * i + 2], 16).ok())
            .collect();
        texts.push(bytes);
    }
    for secret in ["hunter2hunter2", "-fprint", "out.txt", cwd.as_str()] {
        for text in &texts {
            let found = text.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{secret} can be read in the state {state}");
        }
    }
    let done = call(accept(&state));
    assert!(!is_error(&done), "{done}");
    assert!(dir.path().join("out.txt").exists(), "the approved call ran");
}

// ---- a real client library ----

/// The interpreter of the virtual environment that holds the official Python MCP SDK:
/// `YIELDSHELL_TEST_SDK_PYTHON`, or `target/python-sdk/venv` as `.ci/run` makes it.
fn sdk_python() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("YIELDSHELL_TEST_SDK_PYTHON") {
        return Some(p.into());
    }
    let default =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/python-sdk/venv/bin/python");
    default.exists().then_some(default)
}

#[test]
fn the_python_sdks_elicitation_callback_approves_and_declines() {
    let Some(python) = sdk_python() else {
        // Outside CI only: .ci/run makes the environment and sets the variable.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide the Python SDK's environment (see .ci/run)"
        );
        eprintln!(
            "SKIPPED: no Python MCP SDK environment: run .ci/run once, or set \
             YIELDSHELL_TEST_SDK_PYTHON to a python with `mcp` installed"
        );
        return;
    };
    let dir = TempDir::new("approve-sdk");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/elicitation_client.py");
    let output = std::process::Command::new(&python)
        .arg(&script)
        .args(["--yieldshell", env!("CARGO_BIN_EXE_yieldshell")])
        .args(["--cwd", path_str(dir.path())])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.trim()).expect("the client's report");
    let questions = report["questions"].as_array().cloned().unwrap_or_default();
    assert_eq!(questions.len(), 2, "{report}");
    let message = questions[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("echo sdk-accepted") && message.contains(path_str(dir.path())),
        "{message}"
    );
    assert_eq!(report["results"][0]["isError"], false, "{report}");
    assert_eq!(report["results"][1]["isError"], true, "{report}");
}

#[test]
fn a_call_two_approvable_rules_refuse_names_both_and_the_approval_waives_both() {
    let dir = TempDir::new("approve-both");
    let cwd = path_str(dir.path()).to_string();
    let server = Server::with_env(&[
        ASK,
        BLOCK_INLINE,
        ("ALLOW_COMMANDS", "find"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
    ]);
    server.initialize_with(LATEST, json!({"elicitation": {}}));
    let id = send_call(
        &server,
        "exec",
        inline("find . -maxdepth 0 -fprint both.txt"),
    );
    let q = question(&server);
    let message = q["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("RUNS_INLINE_CODE") && message.contains("argument rules"),
        "{message}"
    );
    answer(&server, &q, json!({"action": "accept"}));
    let result = call_result(&server, &id);
    assert!(!is_error(&result), "{result}");
    assert!(
        dir.path().join("both.txt").exists(),
        "the approved call ran"
    );
    assert_eq!(elicitations(&server), 1, "one question for both rules");
}

#[test]
fn the_options_are_read_and_a_bad_value_stops_the_server() {
    let bad = run_binary(&[], &[("YIELDSHELL_APPROVALS", "always")]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(
        text.contains("YIELDSHELL_APPROVALS") && text.contains("ask"),
        "{text}"
    );
    let bad = run_binary(&["--approval-timeout-ms", "0"], &[]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    // The flag turns it on as the variable does.
    let server = Server::spawn(&[BLOCK_INLINE], &["--approvals", "ask"]);
    server.initialize_with(LATEST, json!({"elicitation": {}}));
    let id = send_call(&server, "exec", inline("echo flag"));
    let q = question(&server);
    answer(&server, &q, json!({"action": "decline"}));
    assert!(is_error(&call_result(&server, &id)));
    let help = run_binary(&["--help"], &[]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("YIELDSHELL_APPROVALS") && help.contains("YIELDSHELL_APPROVAL_TIMEOUT_MS")
    );
}
