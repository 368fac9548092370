//! Argument hardening and redirection rules through the real binary: every
//! known escape is refused in both `shell_execute` (argv) and trusted-mode `exec`
//! (command string), nothing runs (a marker file stays absent), the refusal names its reason,
//! and forms that only look dangerous are accepted.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{finish, is_error, path_str, start_waiting, tool_text, Server, TempDir};

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
/// The refusal of a git directory that lies in another repository's work tree.
const IN_WORK_TREE: &str = "lies in the work tree of";

fn refused_argv(server: &Server, argv: &[&str], stdin: &str, reason: &str) {
    let result = server.call("shell_execute", json!({ "command": argv, "stdin": stdin }));
    let text = tool_text(&result);
    assert!(is_error(&result), "{argv:?} must be refused: {result}");
    assert!(text.contains(reason), "{argv:?}: {text:?} lacks {reason:?}");
}

/// Runs `command` through trusted-mode `exec` and asserts a refusal containing `reason`
/// (an empty `stdin` sends none: `stdin` beside `<` is refused before the target is judged).
fn refused_exec(server: &Server, command: &str, stdin: &str, reason: &str) {
    let mut args = json!({ "command": command, "side_effects": ["NONE"] });
    if !stdin.is_empty() {
        args["stdin"] = json!(stdin);
    }
    let result = server.call("exec", args);
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
    // The working directory itself inside a git directory (with the sandbox on, the
    // protected paths refuse it first: the git directory is the call's own).
    let result = server.call(
        "shell_execute",
        json!({ "command": ["echo", "x", ">", "description"], "directory": "deep/store.git" }),
    );
    let text = tool_text(&result);
    assert!(
        is_error(&result)
            && (text.contains("inside a git directory") || text.contains("is protected")),
        "{result}"
    );
    // Ordinary targets still work, new and existing.
    run_ok(&server, &["echo", "one", ">", "out.txt"]);
    run_ok(&server, &["echo", "two", ">>", "out.txt"]);
    run_ok(&server, &["echo", "x", ">", "sub/config"]);
    let out = std::fs::read_to_string(dir.path().join("out.txt")).expect("read");
    assert_eq!(out, "one\ntwo\n");
}

/// Programs that write files, for the git-configuration tests.
const WRITERS: &str = "git,cat,cp,mv,tee,install,ln,dd,touch,sed,tar,mkdir,split,patch,ls";

/// Writes `text` to `rel` under `dir` from the test itself: what a writer the rules do not
/// know (an archive's member, a program not listed) could have left there.
fn plant(dir: &TempDir, rel: &str, text: &str) {
    let path = dir.path().join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn plant_executable(dir: &TempDir, rel: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    plant(dir, rel, text);
    let path = dir.path().join(rel);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A repository with one commit, made by the test.
fn repository(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("f.txt"), "one\n").expect("write");
    git(dir, &["add", "f.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

const GIT_WRITE: &str = "write into a git directory";
const GIT_REPO_CONFIG: &str = "git repository configuration runs a program";

#[test]
fn finding_1_git_config_written_by_any_writer_is_refused_and_ld_so_never_runs() {
    let dir = TempDir::new("git-finding1");
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    let marker = dir.path().join("MARK");
    let ld_cfg = "[diff]\n\texternal = /lib64/ld-linux-x86-64.so.2\n";
    run_ok(&server, &["git", "init", "-q"]);
    run_ok(&server, &["cat", ">", "cfg"]);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["cat", ">", "cfg"], "stdin": ld_cfg }),
    );
    assert!(!is_error(&result), "{result}");
    run_ok(&server, &["cp", "/usr/bin/touch", "payload"]);
    run_ok(&server, &["mkdir", "-p", "sub", "store"]);
    // Every way of writing the configuration, as argv and as a command string.
    for (argv, stdin) in [
        (&["tee", ".git/config"][..], ld_cfg),
        (&["cp", "cfg", ".git/config"], ""),
        (&["cp", "-t", ".git", "cfg"], ""),
        (&["cp", "-t.git", "cfg"], ""),
        (&["cp", "--target-directory=.git", "cfg"], ""),
        (&["mv", "cfg", ".git/config"], ""),
        (&["install", "cfg", ".git/config"], ""),
        (&["dd", "if=cfg", "of=.git/config"], ""),
        (&["ln", "-sf", "../cfg", ".git/config"], ""),
        (&["ln", "-s", ".git", "g"], ""),
        (&["sed", "-n", "w .git/config", "cfg"], ""),
        (&["touch", ".git/hooks/pre-commit"], ""),
        (&["tar", "-xf", "a.tar", "-C", ".git"], ""),
        (&["split", "-l1", "cfg", ".git/x"], ""),
        (&["mkdir", "-p", "evil.git/objects"], ""),
        (&["cp", "-r", "store", "copy.git"], ""),
        (&["cat", "cfg", "|", "tee", "sub/.git/config"], ""),
    ] {
        refused_argv(&server, argv, stdin, GIT_WRITE);
        refused_exec(&server, &argv.join(" "), stdin, GIT_WRITE);
    }
    let config = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    assert!(!config.contains("ld-linux"), "{config}");
    // Written anyway (by a writer the rules do not know): the git command is refused.
    plant(&dir, ".git/config", ld_cfg);
    run_ok(&server, &["cp", "cfg", "b"]);
    let argv = [
        "git",
        "diff",
        "--no-index",
        "--ext-diff",
        "./payload",
        "./b",
    ];
    refused_argv(&server, &argv, "", GIT_REPO_CONFIG);
    refused_exec(
        &server,
        "git diff --no-index --ext-diff ./payload ./b",
        "",
        "sets diff.external",
    );
    // Through ld.so, the payload (touch) would have created files named by the external
    // diff's arguments: the modes of the two files.
    for name in ["100755", "100644"] {
        assert_absent(&dir, name);
    }
    assert!(!marker.exists(), "the payload ran");
}

#[test]
fn finding_2_repository_programs_never_run_with_the_sandbox_off() {
    let dir = TempDir::new("git-finding2");
    repository(dir.path());
    let marker = dir.path().join("MARK");
    let mark = marker.display().to_string();
    let server = trusted(
        &dir,
        &[("ALLOW_COMMANDS", WRITERS), ("YIELDSHELL_SANDBOX", "off")],
    );
    let fsmonitor = format!("[core]\n\tfsmonitor = \"touch {mark}; true\"\n");
    let result = server.call(
        "shell_execute",
        json!({ "command": ["cat", ">", "cfg"], "stdin": fsmonitor }),
    );
    assert!(!is_error(&result), "{result}");
    refused_argv(&server, &["cp", "cfg", ".git/config"], "", GIT_WRITE);
    refused_argv(
        &server,
        &["cp", "cfg", ".git/hooks/pre-commit"],
        "",
        GIT_WRITE,
    );
    // Keys the forced environment overrides: git runs, the program does not.
    let hook = format!("#!/bin/sh\ntouch {mark}\n");
    plant_executable(&dir, ".git/hooks/pre-commit", &hook);
    plant_executable(&dir, ".git/hooks/post-commit", &hook);
    plant_executable(&dir, ".git/hooks/post-checkout", &hook);
    plant_executable(&dir, "hooks2/pre-commit", &hook);
    let config = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    let evil = format!(
        "{config}[core]\n\tfsmonitor = \"touch {mark}; true\"\n\thooksPath = hooks2\n\
         \tpager = \"touch {mark}; cat\"\n\teditor = \"touch {mark}; true\"\n\
         \tsshCommand = \"touch {mark}; ssh\"\n[credential]\n\thelper = \"!touch {mark}\"\n\
         [gpg]\n\tprogram = \"touch {mark}\"\n[protocol \"ext\"]\n\tallow = always\n\
         [sequence]\n\teditor = \"touch {mark}\"\n"
    );
    plant(&dir, ".git/config", &evil);
    std::fs::write(dir.path().join("f.txt"), "two\n").expect("write");
    let status = run_ok(&server, &["git", "status", "--short"]);
    assert!(tool_text(&status).contains("M f.txt"), "{status}");
    let diff = run_ok(&server, &["git", "-p", "diff"]);
    assert!(tool_text(&diff).contains("+two"), "{diff}");
    run_ok(&server, &["git", "commit", "-q", "-a", "-m", "second"]);
    run_ok(&server, &["git", "checkout", "-q", "-b", "other"]);
    run_ok(&server, &["git", "log", "-n", "1"]);
    // Asked for by the command, a signature check starts gpg, which is not allowed here.
    refused_argv(
        &server,
        &["git", "log", "--show-signature", "-n", "1"],
        "",
        "runs gpg",
    );
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "fetch", "ext::touch MARK"] }),
    );
    assert!(is_error(&result), "{result}");
    assert!(!marker.exists(), "a program named by the repository ran");
    assert_absent(&dir, "MARK");
}

#[test]
fn attribute_selected_drivers_and_includes_are_refused() {
    let dir = TempDir::new("git-drivers");
    repository(dir.path());
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    let mark = dir.path().join("MARK").display().to_string();
    let base = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    // An attributes file anywhere in the tree is an ordinary write.
    let result = server.call(
        "shell_execute",
        json!({ "command": ["cat", ">", ".gitattributes"], "stdin": "* diff=x filter=y merge=z\n" }),
    );
    assert!(!is_error(&result), "{result}");
    std::fs::write(dir.path().join("f.txt"), "two\n").expect("write");
    for (extra, key, argv) in [
        (
            format!("[diff \"x\"]\n\ttextconv = \"touch {mark}; cat\"\n"),
            "diff.x.textconv",
            &["git", "diff"][..],
        ),
        (
            format!("[diff \"x\"]\n\tcommand = \"touch {mark}\"\n"),
            "diff.x.command",
            &["git", "log", "-p"],
        ),
        (
            format!("[filter \"y\"]\n\tclean = \"touch {mark}; cat\"\n"),
            "filter.y.clean",
            &["git", "add", "f.txt"],
        ),
        (
            format!("[filter \"y\"]\n\tprocess = \"touch {mark}\"\n"),
            "filter.y.process",
            &["git", "status"],
        ),
        (
            format!("[merge \"z\"]\n\tdriver = \"touch {mark}\"\n"),
            "merge.z.driver",
            &["git", "merge", "other"],
        ),
        (
            format!("[remote \"o\"]\n\turl = .\n\tuploadpack = \"touch {mark}\"\n"),
            "remote.o.uploadpack",
            &["git", "fetch", "o"],
        ),
        (
            format!("[man]\n\tviewer = v\n[man \"v\"]\n\tcmd = \"touch {mark}\"\n"),
            "man.viewer",
            &["git", "status"],
        ),
        (
            "[include]\n\tpath = ../inc.cfg\n".to_string(),
            "diff.external",
            &["git", "diff"],
        ),
        (
            "[includeIf \"gitdir:/\"]\n\tpath = ../inc.cfg\n".to_string(),
            "diff.external",
            &["git", "-C", "sub", "status"],
        ),
    ] {
        // The included file is outside .git, written by an allowed program.
        let result = server.call(
            "shell_execute",
            json!({ "command": ["cat", ">", "inc.cfg"],
                    "stdin": format!("[diff]\n\texternal = \"touch {mark}\"\n") }),
        );
        assert!(!is_error(&result), "{result}");
        std::fs::create_dir_all(dir.path().join("sub")).expect("mkdir");
        plant(&dir, ".git/config", &format!("{base}{extra}"));
        // An include in the work tree is refused as such, before its keys.
        let result = server.call("shell_execute", json!({ "command": argv, "stdin": "" }));
        let text = tool_text(&result);
        assert!(is_error(&result), "{argv:?}: {result}");
        assert!(
            text.contains(key) || text.contains(IN_WORK_TREE),
            "{argv:?}: {text}"
        );
    }
    assert_absent(&dir, "MARK");
    // The same attributes with no driver configured are harmless.
    plant(&dir, ".git/config", &base);
    let diff = run_ok(&server, &["git", "diff"]);
    assert!(tool_text(&diff).contains("+two"), "{diff}");
    assert_absent(&dir, "MARK");
}

#[test]
fn other_repositories_bare_ones_and_archives_are_checked_too() {
    let dir = TempDir::new("git-other");
    let mark = dir.path().join("MARK").display().to_string();
    let evil = format!("[diff \"x\"]\n\ttextconv = \"touch {mark}; cat\"\n");
    // A bare repository with a driver, packed into an archive by the test.
    let src = dir.mkdir("src");
    git(&src, &["init", "-q", "--bare", "evil"]);
    let config = std::fs::read_to_string(src.join("evil/config")).expect("read");
    std::fs::write(src.join("evil/config"), format!("{config}{evil}")).expect("write");
    let status = Command::new("tar")
        .args(["-cf", "../evil.tar", "evil"])
        .current_dir(&src)
        .status()
        .expect("tar");
    assert!(status.success());
    let other = dir.mkdir("other");
    repository(&other);
    let config = std::fs::read_to_string(other.join(".git/config")).expect("read");
    std::fs::write(other.join(".git/config"), format!("{config}{evil}")).expect("write");
    let work = dir.mkdir("work");
    repository(&work);
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    // tar may extract the archive, but no git command may use what it made.
    run_ok(&server, &["tar", "-xf", "evil.tar"]);
    refused_argv(
        &server,
        &["git", "-C", "evil", "log", "-p"],
        "",
        GIT_REPO_CONFIG,
    );
    refused_argv(
        &server,
        &["git", "--git-dir=evil", "log", "-p"],
        "",
        GIT_REPO_CONFIG,
    );
    refused_argv(
        &server,
        &["git", "--git-dir", "evil", "show"],
        "",
        GIT_REPO_CONFIG,
    );
    refused_argv(
        &server,
        &["git", "-C", "other", "diff"],
        "",
        GIT_REPO_CONFIG,
    );
    refused_argv(
        &server,
        &["git", "--work-tree=other", "diff"],
        "",
        GIT_REPO_CONFIG,
    );
    refused_exec(
        &server,
        "git -C other/.. -C other log -p",
        "",
        GIT_REPO_CONFIG,
    );
    // A copy of a bare repository, and writes into one, are refused.
    refused_argv(&server, &["cp", "-r", "src/evil", "copy"], "", GIT_WRITE);
    refused_argv(&server, &["cp", "f", "src/evil/"], "", GIT_WRITE);
    refused_argv(&server, &["mv", "f", "src/evil/description"], "", GIT_WRITE);
    // The working directory's own repository is clean: git works there.
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "log", "--oneline"], "directory": "work" }),
    );
    assert!(
        !is_error(&result) && tool_text(&result).contains("first"),
        "{result}"
    );
    assert_absent(&dir, "MARK");
}

#[test]
fn ordinary_git_use_keeps_working() {
    let dir = TempDir::new("git-ordinary");
    repository(dir.path());
    // A repository that keeps its hooks elsewhere (husky) and a hook that would fail.
    let config = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    plant(
        &dir,
        ".git/config",
        &format!("{config}[core]\n\thooksPath = .husky\n[diff]\n\talgorithm = histogram\n"),
    );
    plant_executable(&dir, ".husky/pre-commit", "#!/bin/sh\nexit 1\n");
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["cat", ">", "g.txt"], "stdin": "needle\n" }),
    );
    assert!(!is_error(&result), "{result}");
    run_ok(&server, &["cp", "g.txt", "h.txt"]);
    run_ok(&server, &["cp", "g.txt", ".gitignore"]);
    run_ok(&server, &["git", "add", "g.txt", "h.txt"]);
    let status = run_ok(&server, &["git", "status", "--short"]);
    assert!(tool_text(&status).contains("A  g.txt"), "{status}");
    let diff = run_ok(&server, &["git", "diff", "--cached", "--stat"]);
    assert!(tool_text(&diff).contains("g.txt"), "{diff}");
    run_ok(&server, &["git", "commit", "-q", "-m", "second"]);
    run_ok(&server, &["git", "branch", "feature"]);
    run_ok(&server, &["git", "checkout", "-q", "feature"]);
    let grep = run_ok(&server, &["git", "grep", "-n", "needle"]);
    assert!(tool_text(&grep).contains("g.txt:1:needle"), "{grep}");
    let log = run_ok(&server, &["git", "log", "--oneline"]);
    assert!(tool_text(&log).contains("second"), "{log}");
    let show = run_ok(&server, &["git", "show", "--stat", "HEAD"]);
    assert!(tool_text(&show).contains("h.txt"), "{show}");
    let object = server.exec(json!({ "command": "git log -p -n 1 | cat" }));
    assert!(
        object["stdout"].as_str().unwrap_or("").contains("+needle"),
        "{object}"
    );
    // Reading a git directory's files stays allowed.
    let head = run_ok(&server, &["cat", ".git/HEAD"]);
    assert!(tool_text(&head).contains("refs/heads/feature"), "{head}");
    // git's own configuration variables cannot be set by a call.
    let result = server.call(
        "exec",
        json!({ "command": "git status", "side_effects": ["NONE"],
                "env": { "GIT_CONFIG_COUNT": "0" } }),
    );
    let object = server.result_object(&result);
    assert_eq!(object["status"], "failed_to_start", "{object}");
}

#[test]
fn submodules_and_git_writing_into_git_directories_are_refused() {
    let dir = TempDir::new("git-submodules");
    repository(dir.path());
    let mark = dir.path().join("MARK").display().to_string();
    // A nested repository with a driver, recorded as a submodule (a gitlink in the index).
    let sub = dir.mkdir("sub");
    repository(&sub);
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&sub)
        .output()
        .expect("git rev-parse");
    let oid = String::from_utf8_lossy(&head.stdout).trim().to_string();
    git(
        dir.path(),
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{oid},sub"),
        ],
    );
    let config = std::fs::read_to_string(sub.join(".git/config")).expect("read");
    let evil = format!("{config}[filter \"y\"]\n\tclean = \"touch {mark}; cat\"\n");
    std::fs::write(sub.join(".git/config"), evil).expect("write");
    std::fs::write(sub.join(".gitattributes"), "* filter=y\n").expect("write");
    // Same size as before: git must hash the file, through the filter.
    std::fs::write(sub.join("f.txt"), "two\n").expect("write");
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    refused_argv(&server, &["git", "status"], "", "filter.y.clean");
    refused_argv(&server, &["git", "diff"], "", "filter.y.clean");
    // In index version 4 too.
    git(dir.path(), &["update-index", "--index-version", "4"]);
    refused_exec(&server, "git status --short", "", "filter.y.clean");
    assert_absent(&dir, "MARK");
    // Without the driver, the superproject is usable again (and the argument rules below,
    // which a person may approve, are checked only once the repository's check passed).
    std::fs::write(sub.join(".git/config"), config).expect("write");
    // git itself may not write files into a git directory.
    let patch = "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode \
                 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n";
    std::fs::write(dir.path().join("p"), patch).expect("write");
    refused_argv(
        &server,
        &["git", "apply", "--unsafe-paths", "p"],
        "",
        GIT_WRITE,
    );
    refused_argv(
        &server,
        &["git", "apply", "--directory=.git", "p"],
        "",
        GIT_WRITE,
    );
    refused_argv(
        &server,
        &["git", "checkout-index", "-a", "--prefix=.gi"],
        "",
        GIT_WRITE,
    );
    refused_argv(
        &server,
        &["git", "--work-tree=.git", "checkout", "HEAD", "--", "f.txt"],
        "",
        GIT_WRITE,
    );
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "--work-tree=.", "checkout", "HEAD", "--", "f.txt"],
                "directory": ".git" }),
    );
    assert!(
        is_error(&result) && tool_text(&result).contains(GIT_WRITE),
        "{result}"
    );
    refused_argv(
        &server,
        &["git", "worktree", "add", ".git/wt"],
        "",
        GIT_WRITE,
    );
    assert!(!dir.path().join(".git/hooks/pre-commit").exists());
    assert!(!dir.path().join(".git/f.txt").exists());
    let status = run_ok(&server, &["git", "status", "--short"]);
    assert!(tool_text(&status).contains("sub"), "{status}");
    assert_absent(&dir, "MARK");
}

#[test]
fn special_files_never_block_the_check_and_gitdir_files_are_followed() {
    let dir = TempDir::new("git-special");
    repository(dir.path());
    let mark = dir.path().join("MARK").display().to_string();
    let evil = format!("[diff]\n\texternal = \"touch {mark}\"\n");
    let config = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    // An include of the call's own stdin, and of a FIFO nobody writes: git would read them;
    // the check refuses them without reading (the call returns).
    plant(
        &dir,
        ".git/config",
        &format!("{config}[include]\n\tpath = /dev/stdin\n"),
    );
    refused_argv(
        &server_for(&dir),
        &["git", "diff"],
        &evil,
        "not a regular file",
    );
    let status = Command::new("mkfifo")
        .arg(dir.path().join("fifo.cfg"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    plant(
        &dir,
        ".git/config",
        &format!("{config}[include]\n\tpath = ../fifo.cfg\n"),
    );
    let server = server_for(&dir);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "status"], "stdin": "" }),
    );
    let text = tool_text(&result);
    assert!(is_error(&result), "{result}");
    assert!(
        text.contains("not a regular file") || text.contains(IN_WORK_TREE),
        "{text}"
    );
    // A `.git` that is a FIFO.
    let sub = dir.mkdir("sub");
    let status = Command::new("mkfifo")
        .arg(sub.join(".git"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    refused_argv(
        &server,
        &["git", "-C", "sub", "log"],
        "",
        "not a regular file",
    );
    // --git-dir naming a `gitdir:` file is followed to the repository it names.
    plant(&dir, ".git/config", &format!("{config}{evil}"));
    plant(
        &dir,
        "other/link",
        &format!("gitdir: {}\n", dir.path().join(".git").display()),
    );
    refused_argv(
        &server,
        &["git", "--git-dir=other/link", "diff"],
        "",
        "diff.external",
    );
    assert_absent(&dir, "MARK");
    // The server still answers.
    plant(&dir, ".git/config", &config);
    let log = run_ok(&server, &["git", "--git-dir=.git", "log", "--oneline"]);
    assert!(tool_text(&log).contains("first"), "{log}");
}

fn server_for(dir: &TempDir) -> Server {
    trusted(dir, &[("ALLOW_COMMANDS", WRITERS)])
}

#[test]
fn git_never_runs_beside_a_file_writing_program_in_the_same_tree() {
    let dir = TempDir::new("git-lock");
    repository(dir.path());
    let other = dir.mkdir("other-tree");
    let sibling = TempDir::new("git-lock-sibling");
    let server = trusted(&dir, &[("ALLOW_COMMANDS", WRITERS)]);
    const LOCK: &str = "git cannot run at the same time as a program that may write files";
    // A writer waiting on its stdin (tar reading an archive from it) keeps git out of the
    // tree it works in, whatever the tool and whatever the directory inside the tree.
    let tar = start_waiting(&server, "tar -x -f -", dir.path().to_str().expect("utf-8"));
    refused_argv(&server, &["git", "status"], "", LOCK);
    refused_exec(&server, "git -C other-tree log", "", LOCK);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "log"], "directory": other.display().to_string() }),
    );
    assert!(
        is_error(&result) && tool_text(&result).contains(LOCK),
        "{result}"
    );
    // Readers and git elsewhere are not concerned.
    run_ok(&server, &["cat", "f.txt"]);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["git", "--version"], "directory": sibling.path().display().to_string() }),
    );
    assert!(!is_error(&result), "{result}");
    finish(&server, &tar);
    run_ok(&server, &["git", "status"]);
    // The other way round: a git waiting on its stdin keeps writers out.
    let git = start_waiting(
        &server,
        "git cat-file --batch",
        dir.path().to_str().expect("utf-8"),
    );
    refused_argv(&server, &["tar", "-xf", "x.tar"], "", LOCK);
    refused_argv(&server, &["cp", "f.txt", "other-tree/g.txt"], "", LOCK);
    let result = server.call(
        "shell_execute",
        json!({ "command": ["cp", "a", "b"], "directory": sibling.path().display().to_string() }),
    );
    assert!(
        !tool_text(&result).contains(LOCK),
        "a writer in another tree is not concerned: {result}"
    );
    finish(&server, &git);
    run_ok(&server, &["cp", "f.txt", "g.txt"]);
    // One pipeline cannot hold both.
    refused_argv(
        &server,
        &["git", "show", "HEAD:f.txt", "|", "tar", "-x"],
        "",
        LOCK,
    );
    // Without the kernel sandbox a writer may write anywhere: it keeps git out of every tree.
    let server = trusted(
        &dir,
        &[("ALLOW_COMMANDS", WRITERS), ("YIELDSHELL_SANDBOX", "off")],
    );
    let tar = start_waiting(
        &server,
        "tar -x -f -",
        sibling.path().to_str().expect("utf-8"),
    );
    refused_argv(&server, &["git", "status"], "", LOCK);
    finish(&server, &tar);
    run_ok(&server, &["git", "status"]);
}

/// Runs `argv` through `shell_execute` in `directory` and returns the result.
fn run_in(server: &Server, argv: &[&str], directory: &Path) -> Value {
    server.call(
        "shell_execute",
        json!({ "command": argv, "directory": directory.display().to_string() }),
    )
}

/// Asserts that `result` is the refusal of git and `writer` meeting at the repository
/// `git_dir`.
fn assert_locked_out(result: &Value, writer: &str, git_dir: &Path) {
    let text = tool_text(result);
    assert!(is_error(result), "must be refused: {result}");
    for part in [
        "git cannot run at the same time as a program that may write files",
        // The git stage is named with its subcommand: `(git diff and tar: git diff uses …`.
        &format!(" and {writer}: git"),
        &format!(" uses {}", git_dir.display()),
    ] {
        assert!(text.contains(part), "{text:?} lacks {part:?}");
    }
}

#[test]
fn git_reached_through_a_gitfile_never_runs_beside_a_writer_in_the_repository() {
    // x/.git is a file naming b/.git; a writer working in b could change
    // b/.git/config between the check of a git call in x and git reading it.
    let dir = TempDir::new("git-lock-gitfile");
    let repo = dir.mkdir("b");
    repository(&repo);
    let work = dir.mkdir("x");
    plant(&dir, "x/.git", "gitdir: ../b/.git\n");
    // The same repository reached through a symbolic link.
    std::os::unix::fs::symlink(&repo, dir.path().join("link")).expect("symlink");
    let linked = dir.mkdir("y");
    plant(&dir, "y/.git", "gitdir: ../link/.git\n");
    let unrelated = dir.mkdir("elsewhere");
    let git_dir = repo.join(".git");
    let server = server_for(&dir);
    let diff = ["git", "diff", "--no-index", "a", "b"];
    plant(&dir, "x/a", "1\n");
    plant(&dir, "x/b", "2\n");
    // A writer already running in b (tar reading an archive from its open stdin): git in x
    // and in y is refused, naming both and the repository.
    let tar = start_waiting(&server, "tar -x -f -", path_str(&repo));
    assert_locked_out(&run_in(&server, &diff, &work), "tar", &git_dir);
    assert_locked_out(
        &run_in(&server, &["git", "status"], &linked),
        "tar",
        &git_dir,
    );
    finish(&server, &tar);
    let result = run_in(&server, &diff, &work);
    assert!(
        !tool_text(&result).contains("at the same time"),
        "the writer has ended: {result}"
    );
    // The other order: git running in x (reading objects from its open stdin) keeps writers
    // out of b, whatever their directory in its tree.
    let git = start_waiting(&server, "git cat-file --batch", path_str(&work));
    assert_locked_out(
        &run_in(&server, &["tar", "-xf", "t.tar"], &repo),
        "tar",
        &git_dir,
    );
    assert_locked_out(
        &run_in(&server, &["cp", "f.txt", "g.txt"], &repo),
        "cp",
        &git_dir,
    );
    // A writer in an unrelated directory is not concerned.
    let result = run_in(&server, &["cp", "missing", "copy"], &unrelated);
    assert!(!tool_text(&result).contains("at the same time"), "{result}");
    finish(&server, &git);
    // And git runs beside a writer in an unrelated directory.
    let tar = start_waiting(&server, "tar -x -f -", path_str(&unrelated));
    let result = run_in(&server, &["git", "log", "--oneline"], &work);
    assert!(
        !is_error(&result) && tool_text(&result).contains("first"),
        "{result}"
    );
    finish(&server, &tar);
    run_ok(&server, &["tar", "--version"]);
}

#[test]
fn a_configuration_toggled_by_extraction_never_runs_a_program() {
    let _heavy = crate::support::heavy_load();
    let dir = TempDir::new("git-race");
    repository(dir.path());
    let mark = dir.path().join("MARK").display().to_string();
    let clean = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    let evil = format!("{clean}[diff]\n\texternal = \"touch {mark}\"\n");
    // Two archives holding .git/config, one clean and one with an external diff.
    let stage = TempDir::new("git-race-archives");
    for (name, text) in [("evil.tar", &evil), ("clean.tar", &clean)] {
        std::fs::create_dir_all(stage.path().join(".git")).expect("mkdir");
        std::fs::write(stage.path().join(".git/config"), text).expect("write");
        let status = Command::new("tar")
            .args([
                "-cf",
                &dir.path().join(name).display().to_string(),
                ".git/config",
            ])
            .current_dir(stage.path())
            .status()
            .expect("tar");
        assert!(status.success());
    }
    std::fs::write(dir.path().join("a"), "1\n").expect("write");
    std::fs::write(dir.path().join("b"), "2\n").expect("write");
    let server = trusted(
        &dir,
        &[
            ("ALLOW_COMMANDS", WRITERS),
            ("YIELDSHELL_SANDBOX", "off"),
            ("YIELDSHELL_MAX_PROCESSES", "10000"),
        ],
    );
    // Extractions and git commands sent all at once, so that they run side by side.
    let mut ids = Vec::new();
    for _ in 0..150 {
        for command in [
            &["tar", "-xf", "evil.tar"][..],
            &["git", "diff", "--no-index", "--ext-diff", "a", "b"],
            &["tar", "-xf", "clean.tar"],
            &["git", "diff", "--no-index", "--ext-diff", "a", "b"],
        ] {
            ids.push(server.send_request(
                "tools/call",
                json!({ "name": "shell_execute", "arguments": { "command": command } }),
            ));
        }
    }
    for id in &ids {
        server.response(id, std::time::Duration::from_secs(120));
    }
    assert_absent(&dir, "MARK");
}

/// An include whose path git expands itself (`~user/` from the password
/// database, `~/` from HOME, `%(prefix)/` from its build) is refused, never skipped; and every
/// `includeIf` is followed whatever its condition. Sandbox on and off.
#[test]
fn includes_git_expands_itself_are_refused_and_every_include_if_is_followed() {
    for extra in [&[][..], &[("YIELDSHELL_SANDBOX", "off")][..]] {
        let dir = TempDir::new("git-include-expand");
        let root = dir.path().display().to_string();
        let marker = dir.path().join("marker");
        plant(
            &dir,
            "evil.cfg",
            &format!("[diff]\n\texternal = /usr/bin/touch {}\n", marker.display()),
        );
        plant(&dir, "x/placeholder", "");
        plant(&dir, "a", "1\n");
        plant(&dir, "b", "2\n");
        let mut env = vec![("ALLOW_COMMANDS", WRITERS)];
        env.extend_from_slice(extra);
        let server = trusted(&dir, &env);
        let diff = ["git", "--git-dir=x", "diff", "--no-index", "a", "b"];
        for include in [
            format!("~root/..{root}/evil.cfg"),
            format!("~/..{root}/evil.cfg"),
            "~".to_string(),
            "%(prefix)/../evil.cfg".to_string(),
        ] {
            plant(
                &dir,
                "x/config",
                &format!("[include]\n\tpath = {include}\n"),
            );
            refused_argv(&server, &diff, "", "cannot be checked");
            assert!(!marker.exists(), "{include}: the external diff ran");
        }
        for condition in ["onbranch:zz", "gitdir:/nowhere/", "gitdir/i:/NOWHERE/"] {
            plant(
                &dir,
                "x/config",
                &format!("[includeIf \"{condition}\"]\n\tpath = ../evil.cfg\n"),
            );
            refused_argv(&server, &diff, "", "diff.external");
        }
        plant(
            &dir,
            "x/config",
            "[includeIf \"hasconfig:remote.*.url:*\"]\n\tpath = ../evil.cfg\n",
        );
        refused_argv(&server, &diff, "", "diff.external");
        assert!(!marker.exists(), "the external diff ran");
    }
}

/// A stage's output redirection writes its target from before the stage
/// starts to its end, so it is a writer of that tree for every other call: a git of another
/// call is not admitted beside it (it could check the truncated file and then read the
/// filled one). In one call, `git log > out.txt` runs; a redirection into what that git reads
/// is refused. Sandbox on and off.
#[test]
fn an_output_redirection_keeps_git_of_other_calls_out_of_its_tree() {
    const LOCK: &str = "git cannot run at the same time as a program that may write files";
    for extra in [&[][..], &[("YIELDSHELL_SANDBOX", "off")][..]] {
        let dir = TempDir::new("git-redirect-lock");
        repository(dir.path());
        plant(&dir, "x/placeholder", "");
        plant(&dir, "a", "1\n");
        plant(&dir, "b", "2\n");
        let sibling = TempDir::new("git-redirect-lock-sibling");
        let mut env = vec![("ALLOW_COMMANDS", WRITERS)];
        env.extend_from_slice(extra);
        let server = trusted(&dir, &env);
        let diff = ["git", "--git-dir=x", "diff", "--no-index", "a", "b"];
        // A reader (cat) and git itself, each filling x/config from its open stdin.
        for writer in ["cat > x/config", "git cat-file --batch > x/config"] {
            let id = start_waiting(&server, writer, path_str(dir.path()));
            // A git directory tracked in a work tree is refused on its own; the
            // lock holds it off too.
            let result = server.call("shell_execute", json!({ "command": diff, "stdin": "" }));
            let text = tool_text(&result);
            assert!(is_error(&result), "{result}");
            assert!(text.contains(LOCK) || text.contains(IN_WORK_TREE), "{text}");
            refused_argv(&server, &["git", "status"], "", LOCK);
            let result = run_in(&server, &["git", "--version"], sibling.path());
            assert!(!is_error(&result), "git elsewhere runs: {result}");
            finish(&server, &id);
            let result = run_in(&server, &diff, dir.path());
            assert!(
                !tool_text(&result).contains("at the same time"),
                "the writer has ended: {result}"
            );
        }
        // In one call, git's output may go into its own tree...
        run_ok(&server, &["git", "log", "--oneline", ">", "out.txt"]);
        let out = std::fs::read_to_string(dir.path().join("out.txt")).expect("out.txt");
        assert!(out.contains("first"), "{out:?}");
        // ...but not into the files that git reads.
        let mut into_config = diff.to_vec();
        into_config.extend([">", "x/config"]);
        let result = server.call(
            "shell_execute",
            json!({ "command": into_config, "stdin": "" }),
        );
        let text = tool_text(&result);
        assert!(is_error(&result), "{result}");
        assert!(
            text.contains("where git reads its repository") || text.contains(IN_WORK_TREE),
            "{text}"
        );
    }
}

/// git starts programs of its own for some commands (its
/// scripts, run by sh or perl; man for help pages; gpg for signatures). With the kernel
/// sandbox off nothing else would stop them, so they are refused unless that program is
/// allowed, naming the program and what to do instead. Sandbox on and off.
#[test]
fn programs_git_starts_itself_must_be_on_the_allowlist() {
    for extra in [&[][..], &[("YIELDSHELL_SANDBOX", "off")][..]] {
        let dir = TempDir::new("git-started");
        repository(dir.path());
        git(dir.path(), &["branch", "other"]);
        git(dir.path(), &["tag", "-a", "-m", "t", "t1"]);
        let mut env = vec![("ALLOW_COMMANDS", "git,cat")];
        env.extend_from_slice(extra);
        let server = trusted(&dir, &env);
        let refused: &[(&[&str], &str)] = &[
            (&["git", "submodule", "status"], "runs sh"),
            (&["git", "request-pull", "HEAD", "."], "runs sh"),
            (
                &["git", "clone", "--recurse-submodules", ".", "c"],
                "runs sh",
            ),
            (&["git", "clone", "--recurse", ".", "c"], "runs sh"),
            (&["git", "pull", "--recurse-submodules", "."], "runs sh"),
            (&["git", "merge", "-s", "octopus", "other"], "runs sh"),
            (&["git", "merge", "--strategy=resolve", "other"], "runs sh"),
            (&["git", "rebase", "-sresolve", "other"], "runs sh"),
            (&["git", "merge", "-m", "m", "other", "t1"], "octopus"),
            (&["git", "help", "log"], "runs man"),
            (&["git", "log", "--help"], "runs man"),
            (&["git", "--help", "log"], "runs man"),
            (
                &["git", "commit", "-S", "--allow-empty", "-m", "x"],
                "runs gpg",
            ),
            (
                &["git", "commit", "--gpg-sign=k", "--allow-empty", "-m", "x"],
                "runs gpg",
            ),
            (&["git", "tag", "-s", "-m", "m", "t2"], "runs gpg"),
            (&["git", "tag", "-u", "k", "-m", "m", "t2"], "runs gpg"),
            (&["git", "tag", "-v", "t1"], "runs gpg"),
            (&["git", "verify-commit", "HEAD"], "runs gpg"),
            (&["git", "verify-tag", "t1"], "runs gpg"),
            (&["git", "log", "--show-signature", "-1"], "runs gpg"),
            (&["git", "log", "--format=%G?", "-1"], "runs gpg"),
            (
                &["git", "merge", "--verify-signatures", "other"],
                "runs gpg",
            ),
        ];
        for (argv, what) in refused {
            refused_argv(
                &server,
                argv,
                "",
                "git starts a program that is not on the allowlist",
            );
            refused_argv(&server, argv, "", what);
        }
        // What does not start them runs.
        for argv in [
            &["git", "--help"][..],
            &["git", "help", "-a"],
            &["git", "log", "-S", "one", "-1"],
            &["git", "log", "--format=%H %s", "-1"],
            &["git", "commit", "--no-gpg-sign", "--allow-empty", "-m", "x"],
            &["git", "merge", "-m", "m", "other"],
        ] {
            run_ok(&server, argv);
        }
        // Allowed, the program may be started (gpg itself then decides).
        let mut env = vec![("ALLOW_COMMANDS", "git,gpg,man")];
        env.extend_from_slice(extra);
        let server = trusted(&dir, &env);
        for argv in [
            &["git", "verify-commit", "HEAD"][..],
            &["git", "help", "log"],
        ] {
            let result = server.call("shell_execute", json!({ "command": argv }));
            assert!(
                !tool_text(&result).contains("not on the allowlist"),
                "{argv:?}: {result}"
            );
        }
    }
}

/// git subcommands that write output where they are told may
/// not write it into a git directory (named `.git` or not). Sandbox on and off.
#[test]
fn git_output_into_a_git_directory_is_refused() {
    for extra in [&[][..], &[("YIELDSHELL_SANDBOX", "off")][..]] {
        let dir = TempDir::new("git-output");
        repository(dir.path());
        git(dir.path(), &["init", "-q", "--bare", "bare"]);
        let server = trusted(&dir, &{
            let mut env = vec![("ALLOW_COMMANDS", "git")];
            env.extend_from_slice(extra);
            env
        });
        for argv in [
            &["git", "bundle", "create", ".git/config", "HEAD"][..],
            &["git", "bundle", "create", "bare/config", "HEAD"],
            &["git", "bundle", "create", "-q", "./.GIT/x", "HEAD"],
            &["git", "format-patch", "-o", ".git", "-1"],
            &["git", "format-patch", "-obare/hooks", "-1"],
            &["git", "format-patch", "--output-dir=.git/hooks", "-1"],
            &["git", "bugreport", "-o", ".git"],
            &["git", "diagnose", "--output-directory", "bare"],
        ] {
            refused_argv(&server, argv, "", "write into a git directory");
        }
        refused_argv(
            &server,
            &["git", "archive", "-o", ".git/x.tar", "HEAD"],
            "",
            "git file output",
        );
        let config = std::fs::read_to_string(dir.path().join(".git/config")).expect("config");
        assert!(config.contains("[core]"), "{config}");
        // Elsewhere they run.
        run_ok(&server, &["git", "bundle", "create", "out.bundle", "HEAD"]);
        run_ok(&server, &["git", "format-patch", "-o", "patches", "--root"]);
        assert!(dir.path().join("out.bundle").exists());
        assert!(dir.path().join("patches").is_dir());
    }
}
