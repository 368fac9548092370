//! What a model reads: the text written for it (a `key=value` header, the output as plain
//! text), `structuredContent` without the fields at their defaults, and which of the two a
//! client gets (`YIELDSHELL_STRUCTURED`, by `clientInfo.name`).

use serde_json::{json, Value};

use crate::support::{process_id, run_binary, tool_text, Server, LATEST};

fn exec_args(command: &str) -> Value {
    json!({"command": command, "side_effects": ["NONE"]})
}

#[test]
fn a_small_answer_is_a_header_and_the_output_in_both_views() {
    let server = Server::ready();
    let result = server.call("exec", exec_args("echo hi"));
    let text = tool_text(&result);
    let structured = &result["structuredContent"];
    let id = structured["process_id"].as_str().expect("process_id");
    let ms = &structured["duration_ms"];
    assert_eq!(
        text,
        format!("status=completed exit_code=0 process_id={id} duration_ms={ms}\nhi\n"),
        "{result}"
    );
    // Only fields that are set: no false, null, empty string or redundant cursor.
    let mut keys: Vec<&str> = structured
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "duration_ms",
            "exit_code",
            "next_seq",
            "pid",
            "process_id",
            "status",
            "stdout"
        ],
        "{result}"
    );
    assert!(text.len() < 100, "{} characters: {text:?}", text.len());
    assert!(structured.to_string().len() < 150, "{structured}");
    // A machine gets every left-out field back from the defaults of outputSchema.
    let object = server.result_object(&result);
    assert_eq!(object["truncated"], false, "{object}");
    assert_eq!(object["signal"], Value::Null, "{object}");
    assert_eq!(object["latest_seq"], 3, "{object}");
}

#[test]
fn stderr_is_labelled_and_a_running_command_names_its_cursor_in_one_line() {
    let server = Server::ready();
    let result = server.call("exec", exec_args("echo out; echo err >&2; exit 3"));
    let text = tool_text(&result);
    assert!(
        text.starts_with("status=completed exit_code=3 ")
            && text.ends_with("\nout\n[stderr]\nerr\n"),
        "{text:?}"
    );
    let result = server.call(
        "exec",
        json!({"command": "echo started; exec sleep 30", "side_effects": ["NONE"], "yield_ms": 2000}),
    );
    let text = tool_text(&result);
    let id = process_id(&server.result_object(&result));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!("status=backgrounded process_id={id} "))
            && lines[0].contains(" next_seq="),
        "{text:?}"
    );
    // How to go on is said in the instructions, not in every answer.
    assert_eq!(lines[1..], ["started"], "{text:?}");
    server.call_ok("stop", json!({"process_id": id, "force_after_ms": 100}));
}

#[test]
fn an_error_reads_as_its_sentence() {
    let server = Server::ready();
    let result = server.call_err("read", json!({"process_id": "proc_000000000000"}));
    let text = tool_text(&result);
    assert_eq!(
        text, "process_id=proc_000000000000\nerror: Unknown process_id: proc_000000000000",
        "{result}"
    );
}

/// Whether the results and the tool list of a server started with `env`, to a client
/// named `client`, carry structuredContent and outputSchema.
fn structured_to(client: &str, env: &[(&str, &str)]) -> (bool, bool) {
    let server = Server::with_env(env);
    server.initialize_as(LATEST, client);
    let list = server.result("tools/list", json!({}));
    let schemas = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .all(|t| t.get("outputSchema").is_some());
    let none = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .all(|t| t.get("outputSchema").is_none());
    assert!(schemas || none, "every tool or none: {list}");
    let result = server.call("exec", exec_args("echo hi"));
    let text = tool_text(&result);
    assert!(
        text.ends_with("\nhi\n"),
        "the text is the same in every view: {text:?}"
    );
    (result.get("structuredContent").is_some(), schemas)
}

#[test]
fn structured_content_goes_to_the_clients_that_show_the_text() {
    // auto: not to the clients that show the model structuredContent in place of the text.
    assert_eq!(structured_to("claude-code", &[]), (false, false));
    assert_eq!(structured_to("codex-mcp-client", &[]), (false, false));
    assert_eq!(structured_to("gemini-cli-mcp-client", &[]), (true, true));
    let on = [("YIELDSHELL_STRUCTURED", "on")];
    assert_eq!(structured_to("claude-code", &on), (true, true));
    let off = [("YIELDSHELL_STRUCTURED", "off")];
    assert_eq!(structured_to("gemini-cli-mcp-client", &off), (false, false));
}

#[test]
fn structured_takes_auto_on_or_off() {
    let out = run_binary(&["--structured", "sometimes"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid --structured=\"sometimes\"") && stderr.contains("on or off"),
        "{stderr}"
    );
}

/// The seven shell-mode tools as Claude Code hands them to its model on every turn: name,
/// description and input schema, as compact JSON.
fn definitions_size(list: &Value) -> usize {
    list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]})
                .to_string()
                .len()
        })
        .sum()
}

#[test]
fn the_shell_mode_tool_definitions_take_at_most_5000_characters() {
    let server = Server::start();
    server.initialize_as(LATEST, "claude-code");
    let list = server.result("tools/list", json!({}));
    assert_eq!(list["tools"].as_array().map(Vec::len), Some(7), "{list}");
    let size = definitions_size(&list);
    assert!(size <= 5000, "{size} characters");
}

#[test]
fn a_long_finished_output_spends_at_most_a_fifth_on_its_head() {
    let server = Server::ready();
    let r = server.exec(json!({"command": "seq 1 50000", "max_output_bytes": 10000}));
    let stdout = r["stdout"].as_str().expect("stdout");
    let (head, rest) = stdout.split_once("[… ").expect("a marker line");
    let tail = rest.split_once(" …]\n").expect("the marker's end").1;
    assert!(head.len() <= 2000, "head of {} bytes", head.len());
    assert!(tail.len() >= 7000, "tail of {} bytes", tail.len());
    assert!(tail.ends_with("49999\n50000\n"), "{tail}");
}

#[test]
fn unknown_arguments_are_named_with_ours_and_the_call_still_runs() {
    let server = Server::ready();
    let result = server.call(
        "exec",
        json!({"command": "echo ran", "side_effects": ["NONE"], "timeout": 5, "yield": 100, "colour": "red"}),
    );
    let object = server.result_object(&result);
    assert_eq!(object["stdout"], "ran\n", "{result}");
    let warning = object["warning"].as_str().expect("warning");
    assert!(
        warning.contains("timeout (this tool's is timeout_ms)")
            && warning.contains("yield (this tool's is yield_ms)")
            && warning.contains("colour"),
        "{warning}"
    );
    assert!(
        tool_text(&result).ends_with(&format!("\nwarning: {warning}")),
        "{result}"
    );
    // A call with only known arguments says nothing.
    let result = server.call("exec", exec_args("true"));
    assert!(!tool_text(&result).contains("warning"), "{result}");
}

#[test]
fn shell_execute_names_timeout_ms_as_timeout_and_a_too_long_argv_teaches() {
    let server = Server::ready_with_env(&[("ALLOW_COMMANDS", "echo")]);
    let result = server.call(
        "shell_execute",
        json!({"command": ["echo", "ok"], "timeout_ms": 5000}),
    );
    let texts = result["content"].as_array().expect("content");
    assert_eq!(texts[0]["text"], "ok\n", "{result}");
    assert!(
        texts[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("timeout_ms (this tool's is timeout)")),
        "{result}"
    );
    let long = "a".repeat(300_000);
    let result = server.call_err("shell_execute", json!({"command": ["echo", long]}));
    let text = tool_text(&result);
    assert!(
        text.contains("Argument list too long") && text.contains("through stdin"),
        "{text}"
    );
}

#[test]
fn a_tilde_in_a_path_is_said_not_to_be_expanded() {
    let server = Server::ready();
    let result = server.call_err(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "cwd": "~/no-such-project"}),
    );
    assert!(
        tool_text(&result).contains("~ is not expanded: write the full path"),
        "{result}"
    );
    for (name, value) in [
        ("YIELDSHELL_DEFAULT_CWD", "~/no-such-project"),
        ("YIELDSHELL_ALLOWED_CWDS", "~/no-such-project"),
        ("YIELDSHELL_WRITABLE_PATHS", "~/no-such-project"),
    ] {
        let out = run_binary(&[], &[(name, value)]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("~ is not expanded"), "{name}: {stderr}");
    }
}

#[test]
fn a_raw_tty_read_does_not_join_a_secret_split_by_escapes() {
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "SECRET"),
        ("MY_SECRET", "hunter2hunter2"),
    ]);
    let cmd = r"printf 'hunter2\033[0mhunter2\n'";
    let r = server.exec(json!({"command": cmd, "tty": true, "raw": true}));
    let id = process_id(&r);
    let read = server.call_ok(
        "read",
        json!({"process_id": id, "raw": true, "since_seq": 1}),
    );
    for answer in [&r, &read] {
        let text = answer["stdout"].as_str().expect("stdout");
        let joined = text.replace("\u{1b}[0m", "");
        assert!(!joined.contains("hunter2hunter2"), "{answer}");
        assert!(text.contains("[REDACTED:MY_SECRET]"), "{answer}");
    }
}

#[test]
fn api_1_1_write_to_an_unknown_id_answers_ok_false_in_its_json_text() {
    let server = Server::ready_with_env(&[("YIELDSHELL_API", "1.1")]);
    let result = server.call(
        "write",
        json!({"execution_id": "0123456789ab", "input": "x"}),
    );
    let text: Value = serde_json::from_str(&tool_text(&result)).expect("1.1.2's JSON text");
    assert_eq!(text["ok"], false, "{result}");
    assert_eq!(
        text["error"], "Unknown execution_id: 0123456789ab",
        "{result}"
    );
    assert_eq!(result["isError"], false, "{result}");
}

/// A build that prints its error and then 2 MB more: the error is evicted from the ring
/// before the answer, which names it anyway.
const ERROR_IN_THE_MIDDLE: &str =
    "i=0; while [ $i -lt 2000 ]; do echo \"[ 10%] compiling unit $i\"; \
    i=$((i+1)); done; echo 'src/parser.c:42:7: error: expected ; before }'; \
    head -c 2000000 /dev/zero | tr '\\0' 'y' | fold -w 79";

#[test]
fn an_error_evicted_before_the_answer_is_named_with_its_position() {
    let server = Server::ready();
    let result = server.call("exec", exec_args(ERROR_IN_THE_MIDDLE));
    let object = server.result_object(&result);
    let highlights = object["highlights"].as_array().expect("highlights");
    assert_eq!(highlights.len(), 1, "{object}");
    let h = &highlights[0];
    assert_eq!(
        h["line"], "src/parser.c:42:7: error: expected ; before }",
        "{h}"
    );
    assert_eq!(h["stream"], "stdout", "{h}");
    let seq = h["seq"].as_u64().expect("seq");
    assert!(seq > 2000 * 20, "{h}");
    let text = tool_text(&result);
    assert!(
        text.contains(&format!(
            "since_seq={seq}: src/parser.c:42:7: error: expected ; before }}"
        )),
        "{text}"
    );
    // Shown in the answer already: not repeated.
    let result = server.call("exec", exec_args("echo 'fatal: x'; exit 1"));
    assert!(
        server.result_object(&result).get("highlights").is_none(),
        "{result}"
    );
}

#[test]
fn the_highlight_pattern_can_be_replaced_or_turned_off() {
    let server = Server::ready_with_env(&[("YIELDSHELL_HIGHLIGHT_REGEX", "^WARN ")]);
    let command = "seq 1 3000; echo 'WARN disk low'; echo 'error: not this'; head -c 600000 /dev/zero | tr '\\0' 'y' | fold -w 79";
    let object = server.exec(json!({"command": command}));
    let lines: Vec<&str> = object["highlights"]
        .as_array()
        .expect("highlights")
        .iter()
        .filter_map(|h| h["line"].as_str())
        .collect();
    assert_eq!(lines, ["WARN disk low"], "{object}");
    let server = Server::ready_with_env(&[("YIELDSHELL_HIGHLIGHT_REGEX", "")]);
    let object = server.exec(json!({"command": ERROR_IN_THE_MIDDLE}));
    assert!(object.get("highlights").is_none(), "{object}");
}

/// An empty list says so in words (an empty text reads as a failed call), and an unknown
/// argument is named without claiming the call ran.
#[test]
fn an_empty_ps_says_so_and_an_ignored_argument_is_only_named() {
    let server = Server::ready();
    let result = server.call("ps", json!({}));
    assert_eq!(tool_text(&result), "no processes", "{result}");
    let result = server.call("exec", json!({"command": "echo hi", "timeout": 5}));
    let text = tool_text(&result);
    assert!(
        text.contains("ignored unknown argument: timeout (this tool's is timeout_ms)")
            && !text.contains("ran without"),
        "{text}"
    );
}
