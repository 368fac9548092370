//! Argument hardening and redirection rules through the real binary (SPEC section 11): every
//! escape of issue 8 is refused in both `shell_execute` (argv) and trusted-mode `exec`
//! (command string), nothing runs (a marker file stays absent), the refusal names its reason,
//! and the false refusals of the first edition are accepted.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{is_error, tool_text, Server, TempDir};

const PREFIX: &str = "Command rejected by default security policy: ";

const ALLOWED: &str = "tar,awk,mawk,printf,git,cat,echo,editor,vim.basic,\
                       perl5.36-x86_64-linux-gnu,x86_64,logsave,ssh-agent,dbus-run-session,\
                       touch,ls,myed,runner";

/// A trusted-mode server working in `dir`, with extra environment.
fn trusted(dir: &TempDir, extra: &[(&str, &str)]) -> Server {
    let cwd = dir.path().to_str().expect("utf-8 path").to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("ALLOW_COMMANDS", ALLOWED),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
    ];
    env.extend_from_slice(extra);
    Server::ready_with_env(&env)
}

/// Runs `argv` through `shell_execute` and asserts a refusal containing `reason`.
fn refused_argv(server: &Server, argv: &[&str], stdin: &str, reason: &str) {
    let result = server.call("shell_execute", json!({ "command": argv, "stdin": stdin }));
    let text = tool_text(&result);
    assert!(is_error(&result), "{argv:?} must be refused: {result}");
    assert!(text.contains(reason), "{argv:?}: {text:?} lacks {reason:?}");
}

/// Runs `command` through trusted-mode `exec` and asserts a refusal containing `reason`.
fn refused_exec(server: &Server, command: &str, stdin: &str, reason: &str) {
    let result = server.call(
        "exec",
        json!({ "command": command, "side_effects": ["NONE"], "stdin": stdin }),
    );
    let object = server.result_object(&result);
    assert_eq!(object["status"], "failed_to_start", "{command}: {object}");
    let error = object["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(reason),
        "{command}: {error:?} lacks {reason:?}"
    );
}

fn assert_absent(dir: &TempDir, marker: &str) {
    assert!(
        !dir.path().join(marker).exists(),
        "{marker} exists: something ran"
    );
}

fn run_ok(server: &Server, argv: &[&str]) -> Value {
    let result = server.call("shell_execute", json!({ "command": argv }));
    assert!(!is_error(&result), "{argv:?} must run: {result}");
    result
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?} failed");
}

/// The issue's escapes, each as argv and as a command string, with the stdin that would
/// drive it and the reason of the refusal.
const ESCAPES: &[(&[&str], &str, &str, &str)] = &[
    (
        &["tar", "-c", "-M", "-L", "10", "-f", "v.tar", "big"],
        "tar -c -M -L 10 -f v.tar big",
        "!touch MARK\n",
        "tar multi-volume mode",
    ),
    (
        &["tar", "cMf", "v.tar", "big"],
        "tar cMf v.tar big",
        "!touch MARK\n",
        "tar multi-volume mode",
    ),
    (
        &["awk", "-W", "interactive,exec", "p.awk"],
        "awk -W interactive,exec p.awk",
        "",
        "awk external access",
    ),
    (
        &["mawk", "-Winteractive,e", "p.awk"],
        "mawk -Winteractive,e p.awk",
        "",
        "awk external access",
    ),
    (
        &["git", "init", "--bare", "evil2"],
        "git init --bare evil2",
        "",
        "git init of a bare or separate repository",
    ),
    (
        &["git", "--git-dir=evil", "x"],
        "git --git-dir=evil x",
        "",
        "git alias or external subcommand x",
    ),
    (
        &["git", "-C", "evil", "x"],
        "git -C evil x",
        "",
        "git alias or external subcommand x",
    ),
    (
        &["git", "submodule--helper", "foreach", "touch MARK"],
        "git submodule--helper foreach 'touch MARK'",
        "",
        "git external program",
    ),
    (
        &[
            "tar",
            "-c",
            "-f",
            "--",
            "--use-compress-program=touch MARK",
            "big",
        ],
        "tar -c -f -- '--use-compress-program=touch MARK' big",
        "",
        "tar command execution option",
    ),
    (
        &[
            "tar",
            "--checkpoint-a=exec=touch MARK",
            "-cf",
            "a.tar",
            "big",
        ],
        "tar '--checkpoint-a=exec=touch MARK' -cf a.tar big",
        "",
        "tar command execution option",
    ),
    (
        &["git", "ls-remote", "--exe=touch MARK", "."],
        "git ls-remote '--exe=touch MARK' .",
        "",
        "git external program",
    ),
    (
        &["git", "grep", "-e", "--", "-Otouch MARK"],
        "git grep -e -- '-Otouch MARK'",
        "",
        "git external program",
    ),
    (
        &["editor", "-es", "-c", "!touch MARK", "-c", "q"],
        "editor -es -c '!touch MARK' -c q",
        "",
        "editor",
    ),
    (
        &["vim.basic", "-es", "-c", "!touch MARK", "-c", "q"],
        "vim.basic -es -c '!touch MARK' -c q",
        "",
        "vim",
    ),
    (
        &["perl5.36-x86_64-linux-gnu", "-e", "open F, '>MARK'"],
        "perl5.36-x86_64-linux-gnu -e \"open F, '>MARK'\"",
        "",
        "perl",
    ),
    (
        &["x86_64", "touch", "MARK"],
        "x86_64 touch MARK",
        "",
        "x86_64",
    ),
    (
        &["logsave", "log.txt", "touch", "MARK"],
        "logsave log.txt touch MARK",
        "",
        "logsave",
    ),
    (
        &["ssh-agent", "touch", "MARK"],
        "ssh-agent touch MARK",
        "",
        "ssh-agent",
    ),
    (
        &["dbus-run-session", "--", "touch", "MARK"],
        "dbus-run-session -- touch MARK",
        "",
        "dbus-run-session",
    ),
];

#[test]
fn the_issue_escapes_are_refused_in_both_tools_and_nothing_runs() {
    let dir = TempDir::new("harden-escapes");
    std::fs::write(dir.path().join("big"), vec![b'x'; 64 * 1024]).expect("write");
    std::fs::write(
        dir.path().join("p.awk"),
        "BEGIN { system(\"touch MARK\") }\n",
    )
    .expect("write");
    git(dir.path(), &["init", "-q", "--bare", "evil"]);
    let server = trusted(&dir, &[]);
    for (argv, command, stdin, reason) in ESCAPES {
        let reason = format!("{PREFIX}{reason}");
        refused_argv(&server, argv, stdin, &reason);
        refused_exec(&server, command, stdin, &reason);
        assert_absent(&dir, "MARK");
    }
    assert!(!dir.path().join("evil2").exists(), "git init --bare ran");
    // The bare repository's config cannot be written, in either tool, appending or not.
    let alias = "[alias]\\n\\tx = !touch MARK\\n";
    for op in [">>", ">"] {
        refused_argv(
            &server,
            &["printf", alias, op, "evil/config"],
            "",
            "may not be inside a git directory",
        );
        refused_exec(
            &server,
            &format!("printf '[alias]' {op} evil/config"),
            "",
            "may not be inside a git directory",
        );
        refused_exec(
            &server,
            &format!("echo x {op} evil/hooks/pre-commit"),
            "",
            "may not be inside a git directory",
        );
    }
    let config = std::fs::read_to_string(dir.path().join("evil/config")).expect("read");
    assert!(!config.contains("alias"), "{config}");
    // Git's own commands on that repository still work.
    let result = run_ok(
        &server,
        &["git", "--git-dir=evil", "rev-parse", "--is-bare-repository"],
    );
    assert!(tool_text(&result).contains("true"), "{result}");
    assert_absent(&dir, "MARK");
}

#[test]
fn values_that_look_like_options_are_accepted() {
    let dir = TempDir::new("harden-false");
    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    std::fs::write(dir.path().join("d/f.txt"), "has -O in it\n").expect("write");
    git(dir.path(), &["init", "-q", "repo"]);
    std::fs::write(dir.path().join("repo/a.txt"), "x -O y\n").expect("write");
    git(&dir.path().join("repo"), &["add", "a.txt"]);
    let server = trusted(&dir, &[]);
    // --exclude takes `--to-command=x` as its pattern.
    run_ok(
        &server,
        &["tar", "--exclude", "--to-command=x", "-cf", "a.tar", "d"],
    );
    assert!(dir.path().join("a.tar").is_file());
    // -e takes `-O` as the pattern; -A takes it as its (bad) number: git complains, nothing
    // is refused.
    let result = run_ok(&server, &["git", "-C", "repo", "grep", "-e", "-O"]);
    assert!(tool_text(&result).contains("a.txt"), "{result}");
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "-C", "repo", "grep", "-A", "-O", "x"] }),
    );
    assert!(!tool_text(&result).contains(PREFIX), "{result}");
    let object = server.exec(json!({ "command": "git -C repo grep -e -O" }));
    assert_eq!(object["status"], "completed", "{object}");
    let object = server.exec(json!({ "command": "awk -F -f '{print $1}' d/f.txt" }));
    assert_eq!(object["status"], "completed", "{object}");
}

#[test]
fn resolved_files_and_hard_links_are_judged_by_what_they_are() {
    let dir = TempDir::new("harden-identity");
    // The safe PATH directory lies outside the working directory (trusted mode refuses a
    // working directory that is an ancestor of one).
    let bins = TempDir::new("harden-identity-bin");
    let bin = bins.mkdir("bin");
    std::os::unix::fs::symlink("/usr/bin/env", bin.join("myed")).expect("symlink");
    std::fs::copy("/usr/bin/env", bin.join("env")).expect("copy env");
    std::fs::hard_link(bin.join("env"), bin.join("runner")).expect("hard link");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let server = trusted(&dir, &[("MCP_SHELL_SAFE_PATH", &path)]);
    refused_argv(
        &server,
        &["myed", "touch", "MARK"],
        "",
        "policy: env (myed is",
    );
    refused_exec(
        &server,
        "myed touch MARK",
        "",
        "policy: env (myed is /usr/bin/env)",
    );
    refused_argv(
        &server,
        &["runner", "touch", "MARK"],
        "",
        "policy: env (runner is",
    );
    refused_exec(&server, "runner touch MARK", "", "policy: env (runner is");
    assert_absent(&dir, "MARK");
}

#[test]
fn redirection_refuses_fifos_directories_hard_links_and_git_directories() {
    let dir = TempDir::new("harden-redirect");
    let status = Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    dir.mkdir("sub");
    std::fs::write(dir.path().join("a"), "original\n").expect("write");
    std::fs::hard_link(dir.path().join("a"), dir.path().join("b")).expect("hard link");
    git(dir.path(), &["init", "-q", "--bare", "deep/store.git"]);
    dir.mkdir("half");
    std::fs::write(dir.path().join("half/HEAD"), "ref: refs/heads/main\n").expect("write");
    let server = trusted(&dir, &[]);
    // A FIFO is refused without being opened: the call returns although nobody reads it.
    refused_argv(&server, &["echo", "x", ">", "pipe"], "", "pipe is a FIFO");
    refused_exec(&server, "echo x >> pipe", "", "pipe is a FIFO");
    refused_exec(&server, "cat < pipe", "", "pipe is a FIFO");
    refused_argv(
        &server,
        &["echo", "x", ">", "sub"],
        "",
        "sub is a directory",
    );
    refused_exec(&server, "echo x > /dev/null", "", "absolute");
    refused_argv(
        &server,
        &["echo", "x", ">", "b"],
        "",
        "more than one hard link",
    );
    refused_exec(&server, "echo x >> a", "", "more than one hard link");
    let content = std::fs::read_to_string(dir.path().join("a")).expect("read");
    assert_eq!(content, "original\n");
    // Reading a hard-linked file is harmless and stays allowed.
    let object = server.exec(json!({ "command": "cat < b" }));
    assert_eq!(object["stdout"], "original\n", "{object}");
    for target in [
        "deep/store.git/config",
        "deep/store.git/hooks/post-update",
        ".git/config",
    ] {
        refused_exec(&server, &format!("echo x >> {target}"), "", "git");
    }
    // A file that would complete a git directory.
    refused_exec(&server, "echo x > half/config", "", "git directory's file");
    // The working directory itself inside a git directory.
    let result = server.call(
        "shell_execute",
        json!({ "command": ["echo", "x", ">", "description"], "directory": "deep/store.git" }),
    );
    assert!(
        is_error(&result) && tool_text(&result).contains("inside a git directory"),
        "{result}"
    );
    // Ordinary targets still work, new and existing.
    run_ok(&server, &["echo", "one", ">", "out.txt"]);
    run_ok(&server, &["echo", "two", ">>", "out.txt"]);
    run_ok(&server, &["echo", "x", ">", "sub/config"]);
    let out = std::fs::read_to_string(dir.path().join("out.txt")).expect("read");
    assert_eq!(out, "one\ntwo\n");
}
