//! Git escapes found by attacking the server, each through the real binary with the kernel
//! sandbox on and off: every one is refused before git runs, and the program it would have started
//! leaves no marker.
//!
//! - `git bisect visualize <prog>` runs `<prog>` when it starts with `git` (a path such as
//!   `git-x/evil`, from the working directory).
//! - `git rebase --skip` resumes a rebase whose todo (`exec` lines) and strategy come from
//!   state files that any allowed writer could have planted in the git directory.
//! - A `.git` file `gitdir: gd ` names the directory `gd ` (with the space): the check must
//!   read that one, not a clean `gd` beside it.
//! - A repository's `pull.twohead = x/evil` makes a cherry-pick run `./git-merge-x/evil`
//!   (the sequencer keeps the first value it reads, so the forced `ort` does not win), and
//!   `branch.<b>.mergeOptions = -s resolve` hands `git merge` a strategy the argument rules
//!   never saw.
//! - A submodule recorded only in commits (not in the index) has a configuration nothing
//!   checked: `git log -p --submodule=diff` ran `git diff` inside it, and its
//!   `diff.external`; a split index hid a submodule of the index from the check.
//! - An untracked repository nested in the work tree becomes a submodule when a checkout
//!   adds its gitlink, and git then runs `git status` inside it, under its clean filter;
//!   `status.submoduleSummary` makes `git status` run git's shell script.
//! - A bare repository tracked as files in another repository's work tree, used with
//!   `--git-dir`: a concurrent rebase of the outer repository rewrote its configuration
//!   between the check and git reading it. Such a git directory is refused.
//! - git writes any content where it is told: `git mailinfo r/.git/config m`
//!   (stdin's body), `git merge-file`, `git apply` of a patch that builds a bare repository,
//!   a checkout into `--work-tree`. Beside a `git diff` of another call, repeated, one diff
//!   was checked against the clean configuration and then read the one naming the loader.
//!   Outputs into a git directory are refused, and git that may write files is a writer for
//!   the tree lock: no git runs beside it in its tree.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{finish, git, is_error, path_str, start_waiting, tool_text, Server, TempDir};

fn server(dir: &Path, extra: &[(&str, &str)]) -> Server {
    let cwd = path_str(dir).to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("ALLOW_COMMANDS", "git,cat"),
        ("YIELDSHELL_DEFAULT_CWD", &cwd),
        (
            "MCP_SHELL_CHILD_ENV_ALLOWLIST",
            "GIT_COMMITTER_NAME,GIT_COMMITTER_EMAIL",
        ),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.com"),
    ];
    env.extend_from_slice(extra);
    Server::ready_with_env(&env)
}

fn run(server: &Server, argv: &[&str]) -> Value {
    server.call("shell_execute", json!({ "command": argv }))
}

/// A repository with two commits at `dir`.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q", "-b", "main"]);
    for (i, text) in ["one\n", "two\n"].iter().enumerate() {
        std::fs::write(dir.join("f.txt"), text).expect("write");
        git(dir, &["add", "f.txt"]);
        git(dir, &["commit", "-q", "-m", &format!("c{i}")]);
    }
}

/// An executable script at `path` that creates `marker`.
fn armed_script(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", path_str(marker))).expect("write");
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
}

fn refused(result: &Value, reason: &str) {
    assert!(is_error(result), "must be refused: {result}");
    assert!(tool_text(result).contains(reason), "{reason}: {result}");
}

fn bisect_visualize(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r3-bisect");
    repository(dir.path());
    let marker = dir.path().join("MARK");
    armed_script(&dir.path().join("git-x/evil"), &marker);
    let server = server(dir.path(), extra);
    let r = run(&server, &["git", "bisect", "start", "HEAD", "HEAD~1"]);
    assert!(!is_error(&r), "{r}");
    for argv in [
        &["git", "bisect", "visualize", "git-x/evil"][..],
        &["git", "bisect", "view", "git-x/evil", "x"],
        &["git", "bisect", "view"],
    ] {
        refused(&run(&server, argv), "git external program");
    }
    assert!(!marker.exists(), "git bisect visualize ran its argument");
    assert!(!is_error(&run(&server, &["git", "bisect", "reset"])));
}

#[test]
fn bisect_visualize_runs_nothing_with_the_sandbox_on() {
    bisect_visualize(&[]);
}

#[test]
fn bisect_visualize_runs_nothing_with_the_sandbox_off() {
    bisect_visualize(&[("YIELDSHELL_SANDBOX", "off")]);
}

fn planted_rebase(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r3-rebase");
    repository(dir.path());
    let marker = dir.path().join("MARK");
    let state = dir.path().join(".git/rebase-merge");
    std::fs::create_dir_all(&state).expect("mkdir");
    let head = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(dir.path())
            .output()
            .expect("rev-parse")
            .stdout,
    )
    .expect("utf-8");
    for (name, text) in [
        (
            "git-rebase-todo",
            format!("exec touch '{}'\n", path_str(&marker)),
        ),
        ("head-name", "refs/heads/main\n".to_string()),
        ("onto", head.clone()),
        ("orig-head", head),
        ("interactive", String::new()),
        ("strategy", "a/evil\n".to_string()),
    ] {
        std::fs::write(state.join(name), text).expect("write");
    }
    armed_script(&dir.path().join("git-merge-a/evil"), &marker);
    let server = server(dir.path(), extra);
    for argv in [
        &["git", "rebase", "--skip"][..],
        &["git", "rebase", "--sk"],
        &["git", "cherry-pick", "--skip"],
    ] {
        refused(&run(&server, argv), "git resumption of a sequence");
    }
    assert!(!marker.exists(), "a planted rebase step ran");
    // The way out still works.
    let r = run(&server, &["git", "rebase", "--abort"]);
    assert!(!is_error(&r), "{r}");
}

#[test]
fn a_planted_rebase_is_not_resumed_with_the_sandbox_on() {
    planted_rebase(&[]);
}

#[test]
fn a_planted_rebase_is_not_resumed_with_the_sandbox_off() {
    planted_rebase(&[("YIELDSHELL_SANDBOX", "off")]);
}

fn gitfile_with_a_space(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r3-gitfile");
    let marker = dir.path().join("MARK");
    armed_script(&dir.path().join("ev"), &marker);
    // `gd ` is armed, `gd` beside it is a clean decoy; `w/.git` names `gd ` as git reads it.
    for (name, config) in [
        (
            "gd ",
            format!(
                "[diff]\n\texternal = {}\n",
                path_str(&dir.path().join("ev"))
            ),
        ),
        ("gd", String::new()),
    ] {
        let d = dir.path().join(name);
        std::fs::create_dir_all(d.join("objects")).expect("mkdir");
        std::fs::create_dir_all(d.join("refs/heads")).expect("mkdir");
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(
            d.join("config"),
            format!("[core]\n\trepositoryformatversion = 0\n\tbare = false\n{config}"),
        )
        .expect("write");
    }
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join(".git"), "gitdir: ../gd \n").expect("write");
    let server = server(dir.path(), extra);
    let r = run(
        &server,
        &["git", "-C", "w", "diff", "--no-index", "/dev/null", ".git"],
    );
    refused(&r, "diff.external");
    assert!(!marker.exists(), "the external diff of `gd ` ran");
}

#[test]
fn a_gitfile_with_a_space_is_read_as_git_reads_it_with_the_sandbox_on() {
    gitfile_with_a_space(&[]);
}

#[test]
fn a_gitfile_with_a_space_is_read_as_git_reads_it_with_the_sandbox_off() {
    gitfile_with_a_space(&[("YIELDSHELL_SANDBOX", "off")]);
}

/// A repository with branches `main` and `other` that diverge, whose configuration adds
/// `config`.
fn diverged(dir: &Path, config: &str) {
    repository(dir);
    git(dir, &["checkout", "-q", "-b", "other"]);
    std::fs::write(dir.join("g.txt"), "other\n").expect("write");
    git(dir, &["add", "g.txt"]);
    git(dir, &["commit", "-q", "-m", "other"]);
    git(dir, &["checkout", "-q", "main"]);
    std::fs::write(dir.join("h.txt"), "main\n").expect("write");
    git(dir, &["add", "h.txt"]);
    git(dir, &["commit", "-q", "-m", "main"]);
    let path = dir.join(".git/config");
    let mut text = std::fs::read_to_string(&path).expect("read config");
    text.push_str(config);
    std::fs::write(&path, text).expect("write config");
}

fn strategies_from_config(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r4-strategy");
    let marker = dir.path().join("MARK");
    diverged(&dir.path().join("a"), "[pull]\n\ttwohead = x/evil\n");
    armed_script(&dir.path().join("a/git-merge-x/evil"), &marker);
    diverged(
        &dir.path().join("b"),
        "[branch \"main\"]\n\tmergeOptions = -s resolve\n",
    );
    let server = server(dir.path(), extra);
    for (repo, argv) in [
        ("a", &["git", "cherry-pick", "other"][..]),
        ("a", &["git", "rebase", "other"]),
        ("a", &["git", "merge", "--no-edit", "other"]),
        ("b", &["git", "merge", "--no-edit", "other"]),
    ] {
        let r = server.call(
            "shell_execute",
            json!({ "command": argv, "directory": path_str(&dir.path().join(repo)) }),
        );
        refused(&r, "git repository configuration runs a program");
    }
    assert!(!marker.exists(), "a strategy named by the repository ran");
}

#[test]
fn strategies_named_by_the_repository_run_nothing_with_the_sandbox_on() {
    strategies_from_config(&[]);
}

#[test]
fn strategies_named_by_the_repository_run_nothing_with_the_sandbox_off() {
    strategies_from_config(&[("YIELDSHELL_SANDBOX", "off")]);
}

/// A superproject `r` whose submodule `s` (a repository of its own in the work tree, with
/// an external diff that creates `marker`) is in its commits; `in_index` keeps it in the
/// index too, else a last commit removes it from the index (it stays in the work tree).
fn superproject(root: &Path, marker: &Path, in_index: bool) -> std::path::PathBuf {
    let r = root.join("r");
    repository(&r);
    let sub = r.join("s");
    repository(&sub);
    git(&r, &["-c", "advice.addEmbeddedRepo=false", "add", "s"]);
    git(&r, &["commit", "-q", "-m", "with s"]);
    std::fs::write(sub.join("f.txt"), "three\n").expect("write");
    git(&sub, &["commit", "-q", "-am", "s moves"]);
    git(&r, &["-c", "advice.addEmbeddedRepo=false", "add", "s"]);
    git(&r, &["commit", "-q", "-m", "s moved"]);
    if !in_index {
        git(&r, &["rm", "-q", "--cached", "s"]);
        git(&r, &["commit", "-q", "-m", "without s"]);
    }
    let script = root.join("ev");
    armed_script(&script, marker);
    let config = sub.join(".git/config");
    let mut text = std::fs::read_to_string(&config).expect("read");
    text.push_str(&format!("[diff]\n\texternal = {}\n", path_str(&script)));
    std::fs::write(&config, text).expect("write");
    r
}

fn submodules_in_commits(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r5-submodule");
    let marker = dir.path().join("MARK");
    let r = superproject(dir.path(), &marker, false);
    let server = server(dir.path(), extra);
    let call = |argv: &[&str]| {
        server.call(
            "shell_execute",
            json!({ "command": argv, "directory": path_str(&r) }),
        )
    };
    // The argument rule refuses these; where the repository's check (a rule no person may
    // waive, so it is checked first) walks the nested repositories, it finds the driver
    // before it.
    for argv in [
        &["git", "log", "-p", "--submodule=diff", "-3"][..],
        &["git", "diff", "--submod=diff", "HEAD~2"],
        &["git", "checkout", "--recurse-submodules", "HEAD~1"],
    ] {
        let result = call(argv);
        assert!(is_error(&result), "must be refused: {result}");
        let text = tool_text(&result);
        assert!(
            text.contains("git inside submodules")
                || text.contains("s/.git/config sets diff.external"),
            "{argv:?}: {result}"
        );
    }
    // The same through the configuration.
    let config = r.join(".git/config");
    let mut text = std::fs::read_to_string(&config).expect("read");
    text.push_str("[diff]\n\tsubmodule = diff\n");
    std::fs::write(&config, text).expect("write");
    refused(
        &call(&["git", "log", "-p", "-3"]),
        "git repository configuration runs a program",
    );
    assert!(!marker.exists(), "git ran the submodule's external diff");
}

#[test]
fn a_submodule_only_in_commits_is_not_entered_with_the_sandbox_on() {
    submodules_in_commits(&[]);
}

#[test]
fn a_submodule_only_in_commits_is_not_entered_with_the_sandbox_off() {
    submodules_in_commits(&[("YIELDSHELL_SANDBOX", "off")]);
}

#[test]
fn a_split_index_does_not_hide_a_submodule() {
    let dir = TempDir::new("git-r5-split");
    let marker = dir.path().join("MARK");
    let r = superproject(dir.path(), &marker, true);
    let server = server(dir.path(), &[("YIELDSHELL_SANDBOX", "off")]);
    let call = |argv: &[&str]| {
        server.call(
            "shell_execute",
            json!({ "command": argv, "directory": path_str(&r) }),
        )
    };
    // Found in a plain index.
    refused(&call(&["git", "diff"]), "diff.external");
    git(&r, &["update-index", "--split-index"]);
    refused(&call(&["git", "diff"]), "split index");
    assert!(!marker.exists(), "git ran the submodule's external diff");
}

fn nested_repository(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r6-nested");
    let marker = dir.path().join("MARK");
    let script = dir.path().join("ev");
    armed_script(&script, &marker);
    let r = dir.path().join("r");
    repository(&r);
    let sub = r.join("sub");
    repository(&sub);
    std::fs::write(sub.join(".gitattributes"), "f.txt filter=x\n").expect("write");
    let config = sub.join(".git/config");
    let mut text = std::fs::read_to_string(&config).expect("read");
    text.push_str(&format!(
        "[filter \"x\"]\n\tclean = {}\n",
        path_str(&script)
    ));
    std::fs::write(&config, text).expect("write");
    let server = server(dir.path(), extra);
    let call = |argv: &[&str]| {
        server.call(
            "shell_execute",
            json!({ "command": argv, "directory": path_str(&r) }),
        )
    };
    // Not a submodule yet (`?? sub/`): a command that only reads never enters it and runs;
    // one that may add its gitlink is checked as if it were one, before any git runs.
    let r_status = call(&["git", "status", "--short"]);
    assert!(!is_error(&r_status), "{r_status}");
    assert!(tool_text(&r_status).contains("?? sub/"), "{r_status}");
    for argv in [
        &["git", "checkout", "-q", "main"][..],
        &["git", "reset", "-q"],
        &["git", "stash", "list"],
    ] {
        refused(&call(argv), "filter.x.clean");
    }
    // A repository whose configuration asks for the submodule summary.
    std::fs::remove_dir_all(&sub).expect("remove sub");
    let config = r.join(".git/config");
    let mut text = std::fs::read_to_string(&config).expect("read");
    text.push_str("[status]\n\tsubmoduleSummary = true\n");
    std::fs::write(&config, text).expect("write");
    refused(&call(&["git", "status"]), "status.submodulesummary");
    assert!(!marker.exists(), "a nested repository's filter ran");
}

#[test]
fn a_nested_repository_is_checked_before_it_becomes_a_submodule_with_the_sandbox_on() {
    nested_repository(&[]);
}

#[test]
fn a_nested_repository_is_checked_before_it_becomes_a_submodule_with_the_sandbox_off() {
    nested_repository(&[("YIELDSHELL_SANDBOX", "off")]);
}

fn tracked_git_dir(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-r7-tracked");
    let r = dir.path().join("r");
    repository(&r);
    let gd = r.join("gd");
    for sub in ["objects", "refs/heads"] {
        std::fs::create_dir_all(gd.join(sub)).expect("mkdir");
    }
    std::fs::write(gd.join("HEAD"), "ref: refs/heads/main\n").expect("write");
    std::fs::write(gd.join("config"), "[core]\n\tbare = true\n").expect("write");
    git(&r, &["add", "gd"]);
    git(&r, &["commit", "-q", "-m", "a bare repository as files"]);
    let server = server(dir.path(), extra);
    let r_diff = server.call(
        "shell_execute",
        json!({ "command": ["git", "--git-dir=gd", "log", "--oneline"], "directory": path_str(&r) }),
    );
    refused(&r_diff, "lies in the work tree of");
    // The outer repository itself runs.
    let ok = server.call(
        "shell_execute",
        json!({ "command": ["git", "log", "--oneline"], "directory": path_str(&r) }),
    );
    assert!(!is_error(&ok), "{ok}");
}

#[test]
fn a_git_directory_tracked_in_a_work_tree_is_refused_with_the_sandbox_on() {
    tracked_git_dir(&[]);
}

#[test]
fn a_git_directory_tracked_in_a_work_tree_is_refused_with_the_sandbox_off() {
    tracked_git_dir(&[("YIELDSHELL_SANDBOX", "off")]);
}

const LOCK: &str = "git cannot run at the same time as a program that may write files";

fn git_writers(extra: &[(&str, &str)], confined: bool) {
    let dir = TempDir::new("rt8-writers");
    let sibling = TempDir::new("rt8-sibling");
    let repo = dir.path().join("r");
    repository(&repo);
    repository(sibling.path());
    let server = server(dir.path(), extra);
    let run_in = |argv: &[&str], cwd: &Path, stdin: &str| {
        server.call(
            "shell_execute",
            json!({ "command": argv, "directory": path_str(cwd), "stdin": stdin }),
        )
    };
    let evil = "From: a <a@example.com>\nSubject: s\n\n[diff]\n\texternal = /bin/true\n";
    // Outputs into a git directory, whatever the subcommand that writes them.
    for argv in [
        &["git", "mailinfo", "r/.git/config", "r/msg"][..],
        &["git", "mailinfo", "-k", "r/msg", "r/.git/hooks/x"],
        &[
            "git",
            "merge-file",
            "-L",
            "a",
            "-L",
            "b",
            "-L",
            "c",
            "r/.git/config",
            "r/f.txt",
            "r/f.txt",
        ],
        &[
            "git",
            "merge-file",
            "--",
            "r/.git/config",
            "r/f.txt",
            "r/f.txt",
        ],
        &["git", "index-pack", "-o", "r/.git/config", "p.pack"],
    ] {
        refused(
            &run_in(argv, dir.path(), evil),
            "write into a git directory",
        );
    }
    let config = std::fs::read_to_string(repo.join(".git/config")).expect("config");
    assert!(!config.contains("external"), "{config}");
    // Out of git directories, they run.
    let ok = run_in(&["git", "mailinfo", "msg", "patch"], dir.path(), evil);
    assert!(!is_error(&ok), "{ok}");

    // git that may write keeps every other git out of its tree, readers included.
    let writer = start_waiting(&server, "git mailinfo msg2 patch2", path_str(&repo));
    let refused_diff = run_in(&["git", "diff"], &repo, "");
    refused(&refused_diff, LOCK);
    assert!(
        tool_text(&refused_diff).contains("git mailinfo"),
        "{refused_diff}"
    );
    refused(&run_in(&["git", "-C", "r", "log"], dir.path(), ""), LOCK);
    refused(&run_in(&["git", "apply"], &repo, ""), LOCK);
    // Elsewhere: only where the kernel confines its writes to its working directory.
    let elsewhere = run_in(&["git", "log", "--oneline"], sibling.path(), "");
    assert_eq!(is_error(&elsewhere), !confined, "{elsewhere}");
    finish(&server, &writer);
    let diff = run_in(&["git", "diff"], &repo, "");
    assert!(!is_error(&diff), "{diff}");

    // git that only reads runs beside git that only reads, and keeps writers out.
    let reader = start_waiting(&server, "git cat-file --batch", path_str(&repo));
    let log = run_in(&["git", "log", "--oneline"], &repo, "");
    assert!(!is_error(&log), "{log}");
    refused(&run_in(&["git", "mailinfo", "m", "p"], &repo, evil), LOCK);
    refused(
        &run_in(&["git", "checkout", "-q", "HEAD~1"], &repo, ""),
        LOCK,
    );
    finish(&server, &reader);
    // One pipeline cannot hold both.
    refused(
        &run_in(&["git", "diff", "HEAD~1", "|", "git", "apply"], &repo, ""),
        LOCK,
    );
}

#[test]
fn git_that_writes_runs_beside_no_other_git_with_the_sandbox_on() {
    git_writers(&[], true);
}

#[test]
fn git_that_writes_runs_beside_no_other_git_with_the_sandbox_off() {
    git_writers(&[("YIELDSHELL_SANDBOX", "off")], false);
}

/// With the sandbox on, an `https` remote starts git's own helper `git-remote-https`: the
/// helper must be among the files the sandbox lets run, or the one transport trusted mode
/// leaves open fails with "cannot exec".
#[test]
fn an_https_remote_starts_gits_own_helper_with_the_sandbox_on() {
    let dir = TempDir::new("rt8-https");
    repository(dir.path());
    let server = server(dir.path(), &[]);
    // Port 1 refuses the connection: the helper ran, and failed to connect.
    let result = run(&server, &["git", "ls-remote", "https://127.0.0.1:1/x"]);
    let text = result.to_string();
    assert!(is_error(&result), "{result}");
    assert!(!text.contains("cannot exec"), "{text}");
    assert!(text.contains("unable to access"), "{text}");
}

/// A path through `/proc/self` (or `/dev/fd/..`) names the server's
/// working directory when the server checks it and the call's when git uses it, so the
/// check read one repository and git another, whose `diff.external` ran a program. Such
/// paths are refused for git and for writers, as written, through a symbolic link, and
/// in a `.git` file.
fn process_relative_paths(extra: &[(&str, &str)]) {
    let dir = TempDir::new("rt9-proc");
    repository(dir.path());
    std::os::unix::fs::symlink("/proc/self/cwd", dir.path().join("here")).expect("symlink");
    std::fs::create_dir_all(dir.path().join("x")).expect("mkdir");
    std::fs::write(dir.path().join("x/.git"), "gitdir: /proc/self/cwd/.git\n").expect("write");
    let mut env = vec![("ALLOW_COMMANDS", "git,cat,cp")];
    env.extend_from_slice(extra);
    let server = server(dir.path(), &env);
    const PROC: &str = "path through a process's directory in /proc";
    for argv in [
        &["git", "-C", "/proc/self/cwd", "status"][..],
        &["git", "--git-dir=/proc/thread-self/cwd/.git", "log"],
        &["git", "--git-dir=/dev/fd/../cwd/.git", "log"],
        &["git", "-C", "here", "status"],
        &["git", "-C", "x", "status"],
        &["cp", "f.txt", "/dev/fd/../cwd/g/config"],
        &["cp", "-t", "/proc/self/cwd/g", "f.txt"],
    ] {
        refused(&run(&server, argv), PROC);
    }
    // Files of /proc that are the same kind of file in every process are not concerned.
    let status = run(&server, &["cp", "/proc/self/status", "status.txt"]);
    assert!(!is_error(&status), "{status}");
    // The same directory named plainly is fine.
    let plain = run(&server, &["git", "-C", path_str(dir.path()), "status"]);
    assert!(!is_error(&plain), "{plain}");
}

#[test]
fn paths_through_proc_are_refused_with_the_sandbox_on() {
    process_relative_paths(&[]);
}

#[test]
fn paths_through_proc_are_refused_with_the_sandbox_off() {
    process_relative_paths(&[("YIELDSHELL_SANDBOX", "off")]);
}

/// A hard link of a repository's configuration, in a tree the lock does
/// not tie to the repository, let a writer there rewrite it while git ran. A configuration
/// (or `.git` file, `commondir`, index) with another name is refused.
#[test]
fn a_configuration_with_another_name_is_refused() {
    let dir = TempDir::new("rt9-link");
    let repo = dir.path().join("x");
    repository(&repo);
    std::fs::create_dir_all(dir.path().join("y")).expect("mkdir");
    std::fs::hard_link(repo.join(".git/config"), dir.path().join("y/foo")).expect("link");
    let server = server(dir.path(), &[]);
    let status = |server: &Server| {
        server.call(
            "shell_execute",
            json!({ "command": ["git", "status"], "directory": path_str(&repo) }),
        )
    };
    refused(&status(&server), "has 2 names (hard links)");
    std::fs::remove_file(dir.path().join("y/foo")).expect("unlink");
    let ok = status(&server);
    assert!(!is_error(&ok), "{ok}");
}

/// git verifies signatures where the repository asks (`%G?` in
/// `format.pretty`), and with the sandbox off it ran the `gpg` it found on the `PATH`.
/// Without gpg on the allowlist it is given a program that does not exist.
#[test]
fn a_signature_the_repository_asks_for_runs_no_gpg_with_the_sandbox_off() {
    let dir = TempDir::new("rt10-gpg");
    repository(dir.path());
    let tree = Command::new("git")
        .args(["rev-parse", "HEAD^{tree}"])
        .current_dir(dir.path())
        .output()
        .expect("git");
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_string();
    let commit = format!(
        "tree {tree}\nauthor a <a@example.com> 1 +0000\ncommitter a <a@example.com> 1 +0000\n\
         gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
    );
    std::fs::write(dir.path().join("c.txt"), commit).expect("write");
    let made = Command::new("git")
        .args(["hash-object", "-t", "commit", "-w", "c.txt"])
        .current_dir(dir.path())
        .output()
        .expect("git");
    let id = String::from_utf8_lossy(&made.stdout).trim().to_string();
    git(dir.path(), &["reset", "-q", &id]);
    git(dir.path(), &["config", "format.pretty", "format:%h %G?"]);
    let server = server(dir.path(), &[("YIELDSHELL_SANDBOX", "off")]);
    let result = run(&server, &["git", "log", "-1"]);
    let text = result.to_string();
    assert!(text.contains("gpg-is-not-on-the-allowlist"), "{text}");
}
