//! The built-in client: `yieldshell call`, `yieldshell tools` and
//! `yieldshell check`, run as a user on a host with nothing else installed would run them.

use serde_json::Value;

use crate::support::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}): {}\nstderr: {}",
            text(&output.stdout),
            text(&output.stderr)
        )
    })
}

#[test]
fn call_exec_prints_the_result_object() {
    let out = run_binary(
        &[
            "call",
            "exec",
            r#"{"command":"echo hi; echo oops >&2","side_effects":["NONE"]}"#,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = json_stdout(&out);
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["stdout"], "hi\n", "{result}");
    assert_eq!(result["stderr"], "oops\n", "{result}");
    assert_eq!(result["exit_code"], 0, "{result}");
}

#[test]
fn call_exec_fills_in_side_effects_only_when_left_out_and_says_so() {
    let out = run_binary(&["call", "exec", r#"{"command":"echo filled"}"#], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json_stdout(&out)["stdout"], "filled\n");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("side_effects") && stderr.contains("UNKNOWN"),
        "{stderr}"
    );
    // Given by the user: kept as it is, and nothing said.
    let out = run_binary(
        &[
            "call",
            "exec",
            r#"{"command":"echo kept","side_effects":["RUNS_INLINE_CODE"]}"#,
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "blocked category: {}",
        text(&out.stdout)
    );
    assert_eq!(json_stdout(&out)["status"], "failed_to_start");
    assert!(
        !text(&out.stderr).contains("UNKNOWN"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn call_exits_1_when_the_result_is_an_error() {
    let out = run_binary(
        &["call", "read", r#"{"process_id":"proc_000000000000"}"#],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let result = json_stdout(&out);
    assert_eq!(
        result["error"], "Unknown process_id: proc_000000000000",
        "{result}"
    );
}

#[test]
fn call_without_arguments_object_uses_an_empty_one() {
    let out = run_binary(&["call", "ps"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(json_stdout(&out)["processes"].is_array());
}

#[test]
fn call_shell_execute_in_trusted_mode() {
    let env = [("ALLOW_COMMANDS", "echo,wc")];
    let out = run_binary(
        &[
            "call",
            "shell_execute",
            r#"{"command":["echo","a b","|","wc","-w"]}"#,
        ],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = json_stdout(&out);
    assert_eq!(
        result["stdout"].as_str().map(str::trim),
        Some("2"),
        "{result}"
    );
    let out = run_binary(
        &["call", "shell_execute", r#"{"command":["rm","-rf","x"]}"#],
        &env,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn bad_usage_exits_2_and_says_what_is_accepted() {
    for args in [
        &["call"][..],
        &["call", "exec", "not json"],
        &["call", "exec", "[1,2]"],
        &["call", "no_such_tool", "{}"],
        &["call", "exec", "{}", "extra"],
        &["frobnicate"],
    ] {
        let out = run_binary(args, &[]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
    let out = run_binary(&["call", "no_such_tool", "{}"], &[]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("exec") && stderr.contains("cleanup"),
        "{stderr}"
    );
}

#[test]
fn tools_lists_one_line_per_tool_of_the_configuration() {
    let out = run_binary(&["tools"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let names: Vec<&str> = stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(names, SHELL_TOOLS, "{stdout}");
    let out = run_binary(
        &["tools"],
        &[
            ("ALLOW_COMMANDS", "ls"),
            ("YIELDSHELL_TOOLS", "shell_execute"),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("shell_execute"), "{stdout}");
}

#[test]
fn tools_json_prints_the_whole_tools_list_result() {
    let out = run_binary(&["tools", "--json"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let list = json_stdout(&out);
    let tools = list["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), SHELL_TOOLS.len(), "{list}");
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "{list}"
    );
    assert!(tools[0]["outputSchema"].is_object(), "{list}");
}

#[test]
fn check_allows_an_allowlisted_command_and_names_its_file() {
    let env = [("ALLOW_COMMANDS", "ls,wc")];
    let out = run_binary(&["check", "ls", "-l"], &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("allowed"), "{stdout}");
    let ls = std::fs::canonicalize("/usr/bin/ls")
        .or_else(|_| std::fs::canonicalize("/bin/ls"))
        .expect("ls");
    assert!(stdout.contains(&*ls.to_string_lossy()), "{stdout}");
    assert!(stdout.contains("sandbox"), "{stdout}");
    // One string is parsed like an exec command string.
    let out = run_binary(&["check", "ls -l | wc -l"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn check_refuses_with_the_same_text_a_call_would_get() {
    let env = [("ALLOW_COMMANDS", "ls,find")];
    let out = run_binary(&["check", "ls | wc -l"], &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let call = run_binary(
        &[
            "call",
            "shell_execute",
            r#"{"command":["ls","|","wc","-l"]}"#,
        ],
        &env,
    );
    let result = json_stdout(&call);
    let reason = result["content"][0]["text"]
        .as_str()
        .or(result["error"].as_str())
        .unwrap_or_default()
        .trim_start_matches("Error executing command: ")
        .to_owned();
    assert!(!reason.is_empty(), "{result}");
    assert!(
        stdout.contains(&reason),
        "check says {stdout:?}, a call says {reason:?}"
    );
    let out = run_binary(&["check", "find", ".", "-exec", "rm", "{}", "+"], &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("Command rejected by default security policy"),
        "{stdout}"
    );
}

#[test]
fn check_in_shell_mode_applies_the_command_regexes() {
    let env = [("YIELDSHELL_DENY_COMMAND_REGEX", r"rm\s+-rf")];
    let out = run_binary(&["check", "rm -rf /tmp/x"], &env);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("Command denied by policy"));
    let out = run_binary(&["check", "echo fine"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("shell"), "{}", text(&out.stdout));
}

#[test]
fn check_in_trusted_mode_applies_the_command_regexes_as_a_call_does() {
    let env = [
        ("ALLOW_COMMANDS", "ls,cat"),
        ("YIELDSHELL_DENY_COMMAND_REGEX", "secret"),
    ];
    for words in [&["cat", "secret.txt"][..], &["cat secret.txt"][..]] {
        let mut args = vec!["check"];
        args.extend_from_slice(words);
        let out = run_binary(&args, &env);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        assert!(
            text(&out.stdout).contains("matches YIELDSHELL_DENY_COMMAND_REGEX"),
            "{}",
            text(&out.stdout)
        );
    }
    let call = run_binary(
        &[
            "call",
            "shell_execute",
            r#"{"command":["cat","secret.txt"]}"#,
        ],
        &env,
    );
    let result = text(&call.stdout);
    assert!(
        result.contains("matches YIELDSHELL_DENY_COMMAND_REGEX"),
        "{result}"
    );
    let out = run_binary(&["check", "ls", "-l"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn help_shows_the_subcommands_with_examples() {
    let out = run_binary(&["--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for needle in [
        "yieldshell call",
        "yieldshell tools",
        "yieldshell check",
        "side_effects",
    ] {
        assert!(
            help.contains(needle),
            "{needle} missing from --help:\n{help}"
        );
    }
}

/// `check` makes the checks a call makes just before it starts, too: a repository whose
/// configuration would run a program is refused by `check` as it is by a call.
#[test]
fn check_looks_at_the_git_directory_a_call_would_use() {
    let dir = TempDir::new("cli-git");
    let work = dir.mkdir("repo");
    let git = work.join(".git");
    std::fs::create_dir_all(git.join("objects")).expect("objects");
    std::fs::create_dir_all(git.join("refs")).expect("refs");
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(git.join("config"), "[diff]\n\texternal = /bin/true\n").expect("config");
    let env = [
        ("ALLOW_COMMANDS", "git"),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&work)),
    ];
    let out = run_binary(&["check", "git", "diff"], &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("diff.external"), "{stdout}");
    std::fs::write(git.join("config"), "[core]\n\tbare = false\n").expect("config");
    let out = run_binary(&["check", "git", "diff"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
