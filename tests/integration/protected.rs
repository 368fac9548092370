//! Protected paths (`YIELDSHELL_PROTECTED_PATHS`) attacked through the real binary, with the
//! kernel sandbox on: what a call writes into a git directory, a shell rc file or an
//! agent's settings must plant nothing that the person's own programs run later. Each test
//! runs git itself, outside the server, as the person would (`git status`, `git checkout`),
//! and looks for the marker file that a planted hook or `core.fsmonitor` would make; the
//! same attack under `YIELDSHELL_PROTECTED_PATHS=none` makes it, so the protection is what
//! stops it. Each runs as root and, where `setpriv` can drop to `nobody`, as an ordinary
//! user (then the call's namespaces start with a user namespace).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::promises::{server_as, users, User};
use crate::support::{all_text, is_error, path_str, tool_text, unique_marker, Server};

/// The kernel has Landlock (the protection rides on the sandbox); prints why not.
fn kernel_has_landlock(test: &str) -> bool {
    let abi = yieldshell::internals::sys::landlock_abi().unwrap_or(0);
    if abi < 6 {
        eprintln!("skipped {test}: needs Landlock ABI 6, this kernel has ABI {abi}");
        return false;
    }
    true
}

/// A repository for one test, in `root` (under the system temp dir), owned by the user the
/// server runs as: `repo` (a commit, `.envrc`, `.bashrc`, `sub/`), `payload.sh` (touches
/// `marker` when run) and `marker`. Removed when dropped.
struct Repo {
    root: PathBuf,
    repo: PathBuf,
    marker: PathBuf,
    payload: PathBuf,
    user: User,
}

impl Repo {
    fn new(label: &str, user: User) -> Repo {
        let root = std::env::temp_dir().join(unique_marker(label));
        let repo = root.join("repo");
        std::fs::create_dir_all(repo.join("sub")).expect("mkdir");
        let root = root.canonicalize().expect("canonical");
        let repo = root.join("repo");
        let marker = root.join("marker");
        let payload = root.join("payload.sh");
        std::fs::write(&payload, format!("#!/bin/sh\ntouch {}\n", marker.display()))
            .expect("payload");
        std::fs::set_permissions(&payload, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let r = Repo {
            root,
            repo,
            marker,
            payload,
            user,
        };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.name", "Person"]);
        r.git(&["config", "user.email", "person@example.com"]);
        std::fs::write(r.repo.join("README"), "hello\n").expect("write");
        std::fs::write(r.repo.join(".envrc"), "export A=1\n").expect("write");
        std::fs::write(r.repo.join(".bashrc"), "alias ll='ls -l'\n").expect("write");
        r.git(&["add", "README"]);
        r.git(&["commit", "-q", "-m", "first"]);
        r.hand_over(&r.root);
        r
    }

    /// Gives `path`, and what lies beneath it (links not followed), to the user the server
    /// runs as, when that is `nobody`.
    fn hand_over(&self, path: &Path) {
        if self.user == User::Nobody {
            let ok = Command::new("chown")
                .args(["-hR", "65534:65534"])
                .arg(path)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown {} to nobody", path.display());
        }
    }

    /// Runs git in the repository as the person would, outside the server (hooks and
    /// `core.fsmonitor` on, as git has them); panics when git cannot run at all.
    fn git(&self, args: &[&str]) -> std::process::Output {
        let out = Command::new("git")
            .args(["-c", "safe.directory=*", "-C"])
            .arg(&self.repo)
            .args(args)
            .env("HOME", &self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git");
        out
    }

    /// The person's next git commands: `status` (runs `core.fsmonitor`) and a checkout
    /// (runs the `post-checkout` hook). True when the payload ran.
    fn persons_git_runs_the_payload(&self) -> bool {
        self.git(&["status", "--short"]);
        self.git(&["checkout", "-q", "-B", "person"]);
        self.git(&["checkout", "-q", "main"]);
        self.marker.exists()
    }

    /// A tar archive in the repository, `name`, of the files `files` (relative path,
    /// content, executable) laid out in a staging directory.
    fn archive(&self, name: &str, files: &[(&str, &str, bool)]) {
        self.archive_with_links(name, files, &[]);
    }

    /// `archive`, with symbolic links too (relative path, target).
    fn archive_with_links(&self, name: &str, files: &[(&str, &str, bool)], links: &[(&str, &str)]) {
        let stage = self.root.join(format!("stage-{name}"));
        for (rel, target) in links {
            let path = stage.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::os::unix::fs::symlink(target, &path).expect("symlink");
        }
        for (rel, content, exec) in files {
            let path = stage.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, content).expect("write");
            if *exec {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        let members: Vec<&str> = files
            .iter()
            .map(|(rel, _, _)| *rel)
            .chain(links.iter().map(|(rel, _)| *rel))
            .collect();
        let ok = Command::new("tar")
            .arg("-C")
            .arg(&stage)
            .arg("-cf")
            .arg(self.repo.join(name))
            .args(&members)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "make {name}");
        self.hand_over(&self.repo.join(name));
    }

    /// The repository's configuration as git reads it, with every include and
    /// `commondir` followed: the keys a payload could hide behind.
    fn config(&self) -> String {
        String::from_utf8_lossy(&self.git(&["config", "--list", "--show-origin"]).stdout)
            .into_owned()
    }
}

impl Drop for Repo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The hooks, configuration and `commondir` archives an attacker would hand to `tar -x`.
fn plant_archives(r: &Repo) {
    let payload = format!("#!/bin/sh\ntouch {}\n", r.marker.display());
    r.archive("hooks.tar", &[(".git/hooks/post-checkout", &payload, true)]);
    let config = std::fs::read_to_string(r.repo.join(".git/config")).expect("config");
    let evil = format!("{config}[core]\n\tfsmonitor = {}\n", r.payload.display());
    r.archive("config.tar", &[(".git/config", &evil, false)]);
    // A new `commondir` sends git to a copy of the git directory whose configuration runs
    // the payload.
    r.archive(
        "commondir.tar",
        &[
            (".git/commondir", "../evil\n", false),
            ("evil/config", &evil, false),
            ("evil/HEAD", "ref: refs/heads/main\n", false),
            ("evil/objects/.keep", "", false),
            ("evil/refs/heads/.keep", "", false),
        ],
    );
}

/// `shell_execute` of `argv`: the result, and its text.
fn run(server: &Server, argv: &[&str]) -> (Value, String) {
    let result = server.call("shell_execute", json!({ "command": argv }));
    let text = all_text(&result);
    (result, text)
}

/// A trusted-mode server (sandbox on) allowing tar, git and cp, working in the repository.
fn trusted(r: &Repo, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("ALLOW_COMMANDS", "tar,git,cp"),
        ("MCP_SHELL_SAFE_PATH", "/usr/bin:/bin"),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&r.repo)),
        ("YIELDSHELL_SANDBOX", "on"),
    ];
    env.extend_from_slice(extra);
    server_as(r.user, &env)
}

/// The server's mount table, to compare before and after calls.
fn mounts_of(server: &Server) -> String {
    std::fs::read_to_string(format!("/proc/{}/mountinfo", server.pid())).expect("mountinfo")
}

/// Trusted mode: `tar -x` of a hook, a configuration and a `commondir`, and `cp -r` of a
/// downloaded tree holding a `.git`, plant nothing the person's git runs; an ordinary
/// archive extracts and `git add` and `git commit` work; the server's mount table is the
/// same after the calls. Under `none` the hook archive does plant its payload.
#[test]
fn trusted_tar_and_cp_plant_nothing_that_git_runs_while_git_commits() {
    if !kernel_has_landlock("trusted_tar_and_cp_plant_nothing_that_git_runs_while_git_commits") {
        return;
    }
    for user in users("trusted_tar_and_cp_plant_nothing_that_git_runs_while_git_commits") {
        let r = Repo::new("prot-trusted", user);
        plant_archives(&r);
        r.archive("plain.tar", &[("src/lib.txt", "fine\n", false)]);
        let pkg = ".git/hooks/post-checkout";
        r.archive(
            "vendor.tar",
            &[(
                &format!("vendor/pkg/{pkg}")[..],
                &format!("#!/bin/sh\ntouch {}\n", r.marker.display())[..],
                true,
            )],
        );
        let server = trusted(&r, &[]);
        let before = mounts_of(&server);
        for archive in ["hooks.tar", "config.tar", "commondir.tar"] {
            let (result, text) = run(&server, &["tar", "-xf", archive]);
            assert!(is_error(&result), "{user:?} {archive}: {text}");
            // tar words a refused replacement of a file as "File exists": no line then.
            if archive == "config.tar" {
                continue;
            }
            assert!(
                text.contains("Read-only file system"),
                "{user:?} {archive}: {text}"
            );
            let protected = result["structuredContent"]["protected"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(
                protected.contains("YIELDSHELL_PROTECTED_PATHS")
                    && protected.contains(&format!("{}", r.repo.join(".git").display())),
                "{user:?} {archive}: {result}"
            );
        }
        let (result, text) = run(&server, &["tar", "-xf", "vendor.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        let (_, text) = run(&server, &["cp", "-r", "vendor/pkg/.", "."]);
        assert!(!r.repo.join(pkg).exists(), "{user:?}: {text}");
        assert!(!r.persons_git_runs_the_payload(), "{user:?}");
        assert!(
            !r.config().contains("fsmonitor"),
            "{user:?}: {}",
            r.config()
        );
        assert!(!r.repo.join(".git/commondir").exists(), "{user:?}");
        // What is not protected still works: an archive, and git's own writes.
        let (result, text) = run(&server, &["tar", "-xf", "plain.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(r.repo.join("src/lib.txt").exists(), "{user:?}");
        let (result, text) = run(&server, &["git", "add", "src/lib.txt"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        let (result, text) = run(&server, &["git", "commit", "-q", "-m", "from the call"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        let log = String::from_utf8_lossy(&r.git(&["log", "--format=%s"]).stdout).into_owned();
        assert!(log.starts_with("from the call"), "{user:?}: {log}");
        assert_eq!(
            before,
            mounts_of(&server),
            "{user:?}: the server's mounts changed"
        );
        drop(server);

        // The same hook archive without the protection plants the payload.
        let server = trusted(&r, &[("YIELDSHELL_PROTECTED_PATHS", "none")]);
        warns_of_none(&server);
        let (result, text) = run(&server, &["tar", "-xf", "hooks.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(r.persons_git_runs_the_payload(), "{user:?}: the control");
    }
}

/// Trusted mode: git stages keep write access to the git directory but not to its
/// configuration or hooks, also when git writes through a link in the work tree (`git
/// merge-file` on a link to `.git/config`; `checkout-index --prefix` and `--work-tree`
/// through a link to `.git/hooks`), while `git add` and `git commit` work. Under `none`
/// the `merge-file` route plants its `core.fsmonitor`.
#[test]
fn trusted_git_writes_nothing_through_a_link_into_git_configuration_or_hooks() {
    let test = "trusted_git_writes_nothing_through_a_link_into_git_configuration_or_hooks";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-gitlink", user);
        let config = std::fs::read_to_string(r.repo.join(".git/config")).expect("config");
        let evil = format!("{config}[core]\n\tfsmonitor = {}\n", r.payload.display());
        let hook = format!("#!/bin/sh\ntouch {}\n", r.marker.display());
        r.archive_with_links(
            "links.tar",
            &[
                ("base.txt", &config, false),
                ("other.txt", &evil, false),
                ("post-checkout", &hook, true),
            ],
            &[("notes.txt", ".git/config"), ("hk", ".git/hooks")],
        );
        let server = trusted(&r, &[]);
        let (result, text) = run(&server, &["tar", "-xf", "links.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        let merge = ["git", "merge-file", "notes.txt", "base.txt", "other.txt"];
        let (result, text) = run(&server, &merge);
        assert!(is_error(&result), "{user:?}: {text}");
        assert!(text.contains("Read-only file system"), "{user:?}: {text}");
        let (result, text) = run(&server, &["git", "add", "post-checkout"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        for argv in [
            &["git", "checkout-index", "--prefix=hk/", "post-checkout"][..],
            &["git", "--work-tree=hk", "checkout", "--", "post-checkout"][..],
        ] {
            let (result, text) = run(&server, argv);
            assert!(is_error(&result), "{user:?} {argv:?}: {text}");
        }
        assert!(
            !r.repo.join(".git/hooks/post-checkout").exists(),
            "{user:?}"
        );
        assert!(
            !r.config().contains("fsmonitor"),
            "{user:?}: {}",
            r.config()
        );
        let (result, text) = run(&server, &["git", "commit", "-q", "-m", "from the call"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(!r.persons_git_runs_the_payload(), "{user:?}");
        drop(server);

        let server = trusted(&r, &[("YIELDSHELL_PROTECTED_PATHS", "none")]);
        let (result, text) = run(&server, &merge);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(r.persons_git_runs_the_payload(), "{user:?}: the control");
    }
}

/// Trusted mode: `tar -x` cannot replace the `.git` file of a submodule or of a linked
/// worktree in the work tree with one naming a git directory of the archive's, whose
/// configuration would run the payload at the person's next git there. Under `none` the
/// worktree's is replaced.
#[test]
fn trusted_tar_cannot_replace_the_git_files_of_submodules_and_worktrees() {
    let test = "trusted_tar_cannot_replace_the_git_files_of_submodules_and_worktrees";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-gitfiles", user);
        let up = r.root.join("upstream");
        let git_in = |dir: &Path, args: &[&str]| {
            let ok = Command::new("git")
                .args([
                    "-c",
                    "safe.directory=*",
                    "-c",
                    "protocol.file.allow=always",
                    "-C",
                ])
                .arg(dir)
                .args(args)
                .env("HOME", &r.root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "git {args:?}");
        };
        std::fs::create_dir_all(&up).expect("mkdir");
        git_in(&up, &["init", "-q"]);
        git_in(
            &up,
            &[
                "-c",
                "user.name=u",
                "-c",
                "user.email=u@x",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "u",
            ],
        );
        git_in(
            &r.repo,
            &["submodule", "add", "-q", path_str(&up), "vendor/lib"],
        );
        git_in(&r.repo, &["worktree", "add", "-q", "wt", "-b", "feat"]);
        r.hand_over(&r.root);
        let config = std::fs::read_to_string(r.repo.join(".git/config")).expect("config");
        let evil = |worktree: &str| {
            format!(
                "{config}[core]\n\tworktree = {worktree}\n\tfsmonitor = {}\n",
                r.payload.display()
            )
        };
        let (sub, wt) = (evil("../vendor/lib"), evil("../wt"));
        for (name, target, gitdir, cfg) in [
            (
                "sub.tar",
                "vendor/lib/.git",
                "gitdir: ../../evil-sub\n",
                &sub,
            ),
            ("wt.tar", "wt/.git", "gitdir: ../evil-wt\n", &wt),
        ] {
            let dir = if name == "sub.tar" {
                "evil-sub"
            } else {
                "evil-wt"
            };
            let (c, h, o, rf) = (
                format!("{dir}/config"),
                format!("{dir}/HEAD"),
                format!("{dir}/objects/.keep"),
                format!("{dir}/refs/heads/.keep"),
            );
            r.archive(
                name,
                &[
                    (target, gitdir, false),
                    (&c, cfg, false),
                    (&h, "ref: refs/heads/main\n", false),
                    (&o, "", false),
                    (&rf, "", false),
                ],
            );
        }
        let server = trusted(&r, &[]);
        for name in ["sub.tar", "wt.tar"] {
            let (result, text) = run(&server, &["tar", "-xf", name]);
            assert!(is_error(&result), "{user:?} {name}: {text}");
        }
        let sub_file = std::fs::read_to_string(r.repo.join("vendor/lib/.git")).expect("read");
        let wt_file = std::fs::read_to_string(r.repo.join("wt/.git")).expect("read");
        assert!(
            !sub_file.contains("evil") && !wt_file.contains("evil"),
            "{user:?}"
        );
        let person = |dir: &Path| {
            Command::new("git")
                .args(["-c", "safe.directory=*", "-C"])
                .arg(dir)
                .args(["status", "--short"])
                .env("HOME", &r.root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .expect("git");
            r.marker.exists()
        };
        assert!(
            !person(&r.repo.join("vendor/lib")) && !person(&r.repo.join("wt")),
            "{user:?}"
        );
        drop(server);

        let server = trusted(&r, &[("YIELDSHELL_PROTECTED_PATHS", "none")]);
        let (result, text) = run(&server, &["tar", "-xf", "wt.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(person(&r.repo.join("wt")), "{user:?}: the control");
    }
}

/// Trusted mode: a repository planted in the work tree whose configuration names a
/// program (`core.fsmonitor`, `core.hooksPath`) is not recorded by `git add` as a
/// submodule, which the person's `git status` would recurse into and run it; the refusal
/// names the key. A nested repository without such keys leaves git working.
#[test]
fn trusted_git_add_refuses_a_nested_repository_that_runs_a_program() {
    let test = "trusted_git_add_refuses_a_nested_repository_that_runs_a_program";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-nested", user);
        let config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
        let nested = |dir: &str, extra: &str| {
            [
                (format!("{dir}/.git/config"), format!("{config}{extra}")),
                (
                    format!("{dir}/.git/HEAD"),
                    "ref: refs/heads/main\n".to_string(),
                ),
                (format!("{dir}/.git/objects/.keep"), String::new()),
                (format!("{dir}/.git/refs/heads/.keep"), String::new()),
                (format!("{dir}/file"), "x\n".to_string()),
            ]
        };
        let evil = format!("\tfsmonitor = {}\n", r.payload.display());
        let hooks = "\thooksPath = ../hooks\n".to_string();
        let mut files = nested("vendor/lib", &evil).to_vec();
        files.extend(nested("vendor/hk", &hooks));
        files.extend(nested("vendor/ok", ""));
        let files: Vec<(&str, &str, bool)> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str(), false))
            .collect();
        r.archive("nested.tar", &files);
        let server = trusted(&r, &[]);
        let (result, text) = run(&server, &["tar", "-xf", "nested.tar"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        // Every nested repository is checked, whichever is added: each refused one is
        // removed (outside the server) before the next.
        for (dir, key) in [
            ("vendor/lib", "core.fsmonitor"),
            ("vendor/hk", "core.hooksPath"),
        ] {
            let (result, text) = run(&server, &["git", "add", dir]);
            assert!(is_error(&result), "{user:?} {dir}: {text}");
            assert!(
                text.to_lowercase().contains(&key.to_lowercase())
                    && text.contains(dir)
                    && text.contains("nested"),
                "{user:?}: {text}"
            );
            let staged = String::from_utf8_lossy(&r.git(&["ls-files", "-s"]).stdout).into_owned();
            assert!(!staged.contains(dir), "{user:?}: {staged}");
            assert!(!r.persons_git_runs_the_payload(), "{user:?}");
            std::fs::remove_dir_all(r.repo.join(dir)).expect("remove");
        }
        // The nested repository left sets no such key: git works again.
        std::fs::write(r.repo.join("README"), "changed\n").expect("write");
        let (result, text) = run(&server, &["git", "add", "README"]);
        assert!(!is_error(&result), "{user:?}: {text}");
    }
}

/// The startup warning of `YIELDSHELL_PROTECTED_PATHS=none` is on the server's stderr.
fn warns_of_none(server: &Server) {
    let warned = crate::support::wait_until(std::time::Duration::from_secs(5), || {
        server
            .stderr_text()
            .contains("YIELDSHELL_PROTECTED_PATHS=none: a sandboxed call may write")
    });
    assert!(warned, "{}", server.stderr_text());
}

/// A shell-mode `workspace` server whose root holds the repository.
fn workspace(r: &Repo, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("YIELDSHELL_SANDBOX", "workspace"),
        ("YIELDSHELL_ALLOWED_CWDS", path_str(&r.root)),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&r.repo)),
    ];
    env.extend_from_slice(extra);
    server_as(r.user, &env)
}

/// `exec` of `command` in `cwd`: the result object.
fn exec_in(server: &Server, cwd: &Path, command: &str) -> Value {
    let result = server.call(
        "exec",
        json!({"command": command, "cwd": path_str(cwd), "side_effects": ["NONE"]}),
    );
    assert!(!is_error(&result), "{command}: {}", tool_text(&result));
    server.result_object(&result)
}

/// A `.git` that is a symbolic link (a git directory kept elsewhere) cannot be bound: a
/// call in `workspace` that points it at another git directory is told so in its result.
#[test]
fn workspace_reports_a_git_link_replaced() {
    if !kernel_has_landlock("workspace_reports_a_git_link_replaced") {
        return;
    }
    for user in users("workspace_reports_a_git_link_replaced") {
        let r = Repo::new("prot-gitlink-ws", user);
        let store = r.root.join("store.git");
        std::fs::rename(r.repo.join(".git"), &store).expect("move");
        std::os::unix::fs::symlink(&store, r.repo.join(".git")).expect("link");
        let server = workspace(&r, &[]);
        let o = exec_in(&server, &r.repo, "ln -sfn /nonexistent .git; echo done");
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(
            line.contains("created or replaced")
                && line.contains(&r.repo.join(".git").display().to_string()),
            "{user:?}: {o}"
        );
        // A call that leaves it alone is told nothing.
        std::fs::remove_file(r.repo.join(".git")).expect("remove");
        std::os::unix::fs::symlink(&store, r.repo.join(".git")).expect("link");
        let o = exec_in(&server, &r.repo, "echo quiet");
        assert!(o["protected"].is_null(), "{user:?}: {o}");
    }
}

/// A protected file that has another name (a hard link a call made, `ln docs.json
/// .mcp.json`) stays writable through that name: every result of a call that protects it
/// says so.
#[test]
fn workspace_reports_a_protected_file_with_another_name() {
    if !kernel_has_landlock("workspace_reports_a_protected_file_with_another_name") {
        return;
    }
    for user in users("workspace_reports_a_protected_file_with_another_name") {
        let r = Repo::new("prot-hardlink", user);
        let server = workspace(&r, &[]);
        let o = exec_in(
            &server,
            &r.repo,
            "echo '{}' > docs.json; ln docs.json .mcp.json",
        );
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(line.contains("created"), "{user:?}: {o}");
        let o = exec_in(&server, &r.repo, "echo quiet");
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(
            line.contains("hard link") && line.contains(".mcp.json"),
            "{user:?}: {o}"
        );
        // With one name again, the next call is told nothing.
        std::fs::remove_file(r.repo.join("docs.json")).expect("remove");
        let o = exec_in(&server, &r.repo, "echo quiet");
        assert!(o["protected"].is_null(), "{user:?}: {o}");
    }
}

/// A `workspace` root named through a symbolic link gets one startup warning: the link is
/// not protected, and a call may repoint it where it lies in a writable place.
#[test]
fn a_root_reached_through_a_link_is_warned_of() {
    if !kernel_has_landlock("a_root_reached_through_a_link_is_warned_of") {
        return;
    }
    let r = Repo::new("prot-rootlink", User::Same);
    let link = r.root.join("proj");
    std::os::unix::fs::symlink(&r.repo, &link).expect("link");
    let server = server_as(
        User::Same,
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", path_str(&link)),
            ("YIELDSHELL_DEFAULT_CWD", path_str(&link)),
        ],
    );
    let warned = crate::support::wait_until(std::time::Duration::from_secs(5), || {
        server
            .stderr_text()
            .contains("is reached through a symbolic link")
    });
    assert!(warned, "{}", server.stderr_text());
    drop(server);
    let server = workspace(&r, &[]);
    let o = exec_in(&server, &r.repo, "echo ready");
    assert!(o["protected"].is_null(), "{o}");
    assert!(
        !server.stderr_text().contains("symbolic link"),
        "{}",
        server.stderr_text()
    );
}

/// What the repository's configuration names as programs in the work tree (a
/// `core.hooksPath` directory, as husky sets, and a `core.fsmonitor` script) is read-only
/// for a `workspace` call like `.git/hooks`; under `none` the call rewrites the script.
#[test]
fn workspace_calls_cannot_rewrite_the_hooks_and_monitor_the_configuration_names() {
    let test = "workspace_calls_cannot_rewrite_the_hooks_and_monitor_the_configuration_names";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-named", user);
        std::fs::create_dir_all(r.repo.join(".githooks")).expect("mkdir");
        std::fs::create_dir_all(r.repo.join("tools")).expect("mkdir");
        std::fs::write(r.repo.join("tools/fsm"), "#!/bin/sh\nexit 1\n").expect("write");
        std::fs::set_permissions(
            r.repo.join("tools/fsm"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        r.git(&["config", "core.hooksPath", ".githooks"]);
        r.git(&["config", "core.fsmonitor", "tools/fsm"]);
        r.hand_over(&r.root);
        let p = r.payload.display().to_string();
        let plant = format!("cp {p} .githooks/post-checkout; cp {p} tools/fsm; echo done");
        let server = workspace(&r, &[]);
        let o = exec_in(&server, &r.repo, &plant);
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(
            line.contains(".githooks") && line.contains("tools/fsm"),
            "{user:?}: {o}"
        );
        assert!(!r.repo.join(".githooks/post-checkout").exists(), "{user:?}");
        assert!(!r.persons_git_runs_the_payload(), "{user:?}");
        drop(server);

        let server = workspace(&r, &[("YIELDSHELL_PROTECTED_PATHS", "none")]);
        exec_in(&server, &r.repo, &plant);
        assert!(r.persons_git_runs_the_payload(), "{user:?}: the control");
    }
}

/// Shell mode `workspace`: every way to put a payload where the person's git finds it
/// fails, from the repository's root and from below it, also after `umount` and a
/// read-write remount tried inside the call; the dotfiles are kept; reading still works;
/// a protected name the call creates is named in the result and the audit line; the
/// server's mount table is unchanged.
#[test]
fn workspace_calls_cannot_plant_what_git_or_a_shell_runs_later() {
    if !kernel_has_landlock("workspace_calls_cannot_plant_what_git_or_a_shell_runs_later") {
        return;
    }
    for user in users("workspace_calls_cannot_plant_what_git_or_a_shell_runs_later") {
        let r = Repo::new("prot-ws", user);
        let server = workspace(&r, &[]);
        let before = mounts_of(&server);
        let p = r.payload.display().to_string();
        let g = r.repo.join(".git").display().to_string();
        let repo = r.repo.display().to_string();
        let attacks = [
            format!("cp {p} {g}/hooks/post-checkout"),
            format!(
                "echo 'touch {}' >> {g}/hooks/pre-commit",
                r.marker.display()
            ),
            format!("git config core.fsmonitor {p}"),
            format!("git config include.path {repo}/evil.cfg"),
            format!("echo ../evil > {g}/commondir"),
            format!("mv {g}/hooks {g}/hooks.old"),
            format!(
                "mkdir -p /tmp/$$/h && cp {p} /tmp/$$/h/post-checkout && rm -rf {g}/hooks && \
                 mv /tmp/$$/h {g}/hooks"
            ),
            format!("mv {g} {repo}/.git.old"),
            format!("cp -r {g} {repo}/.g2 && rm -rf {g} && mv {repo}/.g2 {g}"),
            format!(
                "mv {repo} {repo}.old && mkdir {repo} && cp -r {repo}.old/. {repo}/ && \
                 cp {p} {g}/hooks/post-checkout"
            ),
            format!("echo 'touch {}' >> {repo}/.envrc", r.marker.display()),
            format!("echo 'touch {}' > {repo}/.bashrc", r.marker.display()),
            format!("rm -f {repo}/.envrc"),
            format!("umount {g} || true; umount -l {g} || true; cp {p} {g}/hooks/post-checkout"),
            format!("mount -o remount,rw {g} || true; cp {p} {g}/hooks/post-checkout"),
            format!(
                "unshare -U unshare -m sh -c 'umount {g} || true; \
                 mount -o remount,rw {g} || true; cp {p} {g}/hooks/post-checkout'"
            ),
        ];
        for cwd in [r.repo.clone(), r.repo.join("sub")] {
            for attack in &attacks {
                let o = exec_in(&server, &cwd, &format!("set -e; {attack}"));
                assert_ne!(
                    o["exit_code"],
                    json!(0),
                    "{user:?} in {cwd:?}: {attack}: {o}"
                );
            }
        }
        // One of them, with its line.
        let o = exec_in(&server, &r.repo, &format!("echo x > {g}/hooks/pre-push"));
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(
            line.contains("YIELDSHELL_PROTECTED_PATHS") && line.contains(&g),
            "{user:?}: {o}"
        );
        // Reading and writing beside them still work.
        let o = exec_in(
            &server,
            &r.repo,
            "git status --short && git log --oneline | wc -l",
        );
        assert_eq!(o["exit_code"], json!(0), "{user:?}: {o}");
        let o = exec_in(&server, &r.repo, "echo fine > notes.txt && cat .envrc");
        assert_eq!(o["stdout"], json!("export A=1\n"), "{user:?}: {o}");
        assert!(!r.persons_git_runs_the_payload(), "{user:?}");
        let config = r.config();
        assert!(
            !config.contains("fsmonitor") && !config.contains("include"),
            "{user:?}: {config}"
        );
        assert!(!r.repo.join(".git/commondir").exists(), "{user:?}");
        assert_eq!(
            std::fs::read_to_string(r.repo.join(".bashrc")).expect(".bashrc"),
            "alias ll='ls -l'\n"
        );
        assert!(r.repo.join(".git/hooks").is_dir() && !r.root.join("repo.old").exists());
        // A protected name that was not there is reported when the call makes it.
        let o = exec_in(&server, &r.repo, "echo '{}' > .mcp.json");
        assert!(told_created(&o, ".mcp.json"), "{user:?}: {o}");
        assert!(
            crate::support::wait_until(std::time::Duration::from_secs(5), || {
                server.stderr_text().lines().any(|l| {
                    l.contains("AUDIT")
                        && l.contains(
                            "\"protected\":\"this call created or replaced protected name",
                        )
                })
            }),
            "{user:?}: {}",
            server.stderr_text()
        );
        assert_eq!(
            before,
            mounts_of(&server),
            "{user:?}: the server's mounts changed"
        );
    }
}

/// `none` lets a call write the git directory (with its startup warning); a custom list
/// protects only its own names.
#[test]
fn none_and_a_custom_list_protect_what_they_say() {
    if !kernel_has_landlock("none_and_a_custom_list_protect_what_they_say") {
        return;
    }
    for user in users("none_and_a_custom_list_protect_what_they_say") {
        let r = Repo::new("prot-list", user);
        std::fs::write(r.repo.join("notes.txt"), "mine\n").expect("write");
        r.hand_over(&r.repo.join("notes.txt"));
        let g = r.repo.join(".git").display().to_string();
        let server = workspace(&r, &[("YIELDSHELL_PROTECTED_PATHS", "notes.txt")]);
        let o = exec_in(&server, &r.repo, "echo x > notes.txt");
        assert_ne!(o["exit_code"], json!(0), "{user:?}: {o}");
        let o = exec_in(&server, &r.repo, &format!("echo x > {g}/description"));
        assert_eq!(o["exit_code"], json!(0), "{user:?}: {o}");
        drop(server);
        let server = workspace(&r, &[("YIELDSHELL_PROTECTED_PATHS", "none")]);
        warns_of_none(&server);
        let o = exec_in(&server, &r.repo, &format!("echo x > {g}/hooks/pre-commit"));
        assert_eq!(o["exit_code"], json!(0), "{user:?}: {o}");
        assert!(o.get("protected").is_none(), "{user:?}: {o}");
    }
}

/// Where namespaces cannot be made (pretended by a test-only variable), the server starts,
/// says in one warning line what is not protected, and `check` says it too; calls then
/// write the git directory as without the setting.
#[test]
fn without_namespaces_one_warning_says_what_is_not_protected() {
    if !kernel_has_landlock("without_namespaces_one_warning_says_what_is_not_protected") {
        return;
    }
    let r = Repo::new("prot-nons", User::Same);
    let server = workspace(&r, &[("YIELDSHELL_TEST_NO_NAMESPACES", "1")]);
    let warned = crate::support::wait_until(std::time::Duration::from_secs(5), || {
        server
            .stderr_text()
            .contains("YIELDSHELL_PROTECTED_PATHS: not protected: the git directory")
    });
    assert!(warned, "{}", server.stderr_text());
    let g = r.repo.join(".git").display().to_string();
    let o = exec_in(&server, &r.repo, &format!("echo x > {g}/description"));
    assert_eq!(o["exit_code"], json!(0), "{o}");
    let lines = server
        .stderr_text()
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("YIELDSHELL_PROTECTED_PATHS"))
        .count();
    assert_eq!(lines, 1, "{}", server.stderr_text());
    let out = crate::support::run_binary(
        &["--sandbox", "workspace", "check", "true"],
        &[
            ("YIELDSHELL_TEST_NO_NAMESPACES", "1"),
            ("YIELDSHELL_DEFAULT_CWD", path_str(&r.repo)),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("protected paths: not protected"), "{text}");
    let out = crate::support::run_binary(
        &["--sandbox", "workspace", "check", "true"],
        &[("YIELDSHELL_DEFAULT_CWD", path_str(&r.repo))],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("read-only, and not to be renamed or replaced (YIELDSHELL_PROTECTED_PATHS)"),
        "{text}"
    );
}

/// A working directory that is not in a repository can be made a git directory itself
/// (`HEAD`, `objects`, `refs` and a `config` git reads before it looks above). Copying the
/// names in is refused by the argument rules, which read what `cp SRC DIR` makes; an archive
/// whose members they cannot read still may write them (the call may write there), and the
/// call that makes `HEAD` is told so in its result, naming it, before the person runs git.
#[test]
fn a_call_that_makes_the_working_directory_a_git_directory_is_told() {
    if !kernel_has_landlock("a_call_that_makes_the_working_directory_a_git_directory_is_told") {
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique_marker("protect-head"));
    let work = root.join("work");
    std::fs::create_dir_all(work.join("s/objects")).expect("mkdir");
    std::fs::create_dir_all(work.join("s/refs")).expect("mkdir");
    std::fs::create_dir_all(work.join("h")).expect("mkdir");
    std::fs::write(work.join("h/HEAD"), "ref: refs/heads/main\n").expect("write HEAD");
    let made = Command::new("tar")
        .args(["-cf", "../h.tar", "HEAD"])
        .current_dir(work.join("h"))
        .status()
        .expect("tar");
    assert!(made.success() && work.join("h.tar").exists());
    let work = work.canonicalize().expect("canonical");
    let server = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "cp,tar"),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&work)),
    ]);
    let call = |command: &str| {
        server.call(
            "exec",
            json!({"command": command, "side_effects": ["MODIFIES_WORKSPACE_FILES"]}),
        )
    };
    let ok = |command: &str| {
        let result = call(command);
        assert!(!is_error(&result), "{command}: {}", tool_text(&result));
        server.result_object(&result)
    };
    let o = ok("cp -r s/. .");
    assert!(o.get("protected").is_none(), "{o}");
    for refused in ["cp h/HEAD .", "cp -t . h/HEAD", "cp -r h/. ."] {
        let text = tool_text(&call(refused));
        assert!(
            text.contains("HEAD would sit next to other git files"),
            "{refused}: {text}"
        );
    }
    assert!(!work.join("HEAD").exists());
    let o = ok("tar -xf h.tar");
    assert!(told_created(&o, &format!("{}/HEAD", work.display())), "{o}");
    let _ = std::fs::remove_dir_all(&root);
}

/// In a repository that did not change for a while the server keeps a call's protected
/// paths for the next call. A name another program makes there between two calls is
/// protected at the next call all the same, and a name a call makes is reported.
#[test]
fn protected_paths_kept_between_calls_see_what_changed() {
    let test = "protected_paths_kept_between_calls_see_what_changed";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-kept", user);
        let _ = std::fs::remove_file(r.repo.join(".envrc"));
        let server = workspace(&r, &[]);
        let git = r.repo.join(".git");
        let quiet = || {
            use yieldshell::internals::protected::{wait_unchanged, QUIET};
            let paths = [&r.root, &r.repo, &git].map(PathBuf::as_path);
            let margin = QUIET + std::time::Duration::from_millis(500);
            assert!(wait_unchanged(
                &paths,
                margin,
                std::time::Duration::from_secs(30)
            ));
        };
        quiet();
        // Kept by the first, given to the second.
        for _ in 0..2 {
            let o = exec_in(&server, &r.repo, "true");
            assert!(o["protected"].is_null(), "{user:?}: {o}");
        }
        // Made by another program between two calls: protected at the next.
        std::fs::write(r.repo.join(".envrc"), "echo safe\n").expect("write");
        exec_in(
            &server,
            &r.repo,
            "echo evil > .envrc; echo evil >> .envrc; true",
        );
        assert_eq!(
            std::fs::read_to_string(r.repo.join(".envrc")).expect("read"),
            "echo safe\n",
            "{user:?}"
        );
        // Made by a call in a directory that had not changed: reported.
        quiet();
        exec_in(&server, &r.repo, "true");
        let o = exec_in(&server, &r.repo, "echo '{}' > .mcp.json");
        assert!(told_created(&o, ".mcp.json"), "{user:?}: {o}");
    }
}

/// Trusted mode: the server opens a redirection's target itself, outside the call's mount
/// namespace, so a `>` onto a protected name (or into a protected directory, or creating
/// a missing one) is refused before anything is opened; `none` lets it write.
#[test]
fn trusted_redirections_cannot_write_protected_paths() {
    let test = "trusted_redirections_cannot_write_protected_paths";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-redirect", user);
        std::fs::create_dir_all(r.repo.join(".husky")).expect("mkdir");
        let hook = r.repo.join(".husky/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        r.git(&["config", "core.hooksPath", ".husky"]);
        r.hand_over(&r.root);
        let payload = format!("touch {}", r.marker.display());
        let server = trusted(&r, &[("ALLOW_COMMANDS", "echo")]);
        for target in [
            ".envrc",
            ".husky/post-checkout",
            ".mcp.json",
            ".claude/settings.json",
        ] {
            for op in [">", ">>"] {
                let (result, text) = run(&server, &["echo", &payload, op, target]);
                assert!(is_error(&result), "{user:?} {op} {target}: {text}");
                assert!(
                    text.contains("is protected"),
                    "{user:?} {op} {target}: {text}"
                );
            }
        }
        assert_eq!(
            std::fs::read_to_string(r.repo.join(".envrc")).expect("read"),
            "export A=1\n"
        );
        assert!(!r.repo.join(".mcp.json").exists());
        assert!(!r.persons_git_runs_the_payload(), "{user:?}");
        // An ordinary file is still written.
        let (result, text) = run(&server, &["echo", "notes", ">", "notes.txt"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        // Under `none` the same redirection writes the hook: the refusal is what stops it.
        let open = trusted(
            &r,
            &[
                ("ALLOW_COMMANDS", "echo"),
                ("YIELDSHELL_PROTECTED_PATHS", "none"),
            ],
        );
        let (result, text) = run(&open, &["echo", &payload, ">>", ".husky/post-checkout"]);
        assert!(!is_error(&result), "{user:?}: {text}");
        assert!(r.persons_git_runs_the_payload(), "{user:?}");
    }
}

/// A link in the tree on the way to what the configuration names (`tools -> tools-v1`
/// before `core.hooksPath = tools/hooks`) cannot be bound: pointing it elsewhere is told
/// in the result. A `core.hooksPath` whose directory does not exist yet, parents included,
/// is watched whole: a call that makes it is told.
#[test]
fn workspace_reports_a_link_to_the_hooks_and_a_new_hooks_path() {
    let test = "workspace_reports_a_link_to_the_hooks_and_a_new_hooks_path";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-hooklink", user);
        std::fs::create_dir_all(r.repo.join("tools-v1/hooks")).expect("mkdir");
        std::os::unix::fs::symlink("tools-v1", r.repo.join("tools")).expect("link");
        r.git(&["config", "core.hooksPath", "tools/hooks"]);
        r.hand_over(&r.root);
        let server = workspace(&r, &[]);
        let o = exec_in(
            &server,
            &r.repo,
            "mkdir -p tools-v2/hooks && ln -sfn tools-v2 tools",
        );
        let line = o["protected"].as_str().unwrap_or_default();
        assert!(
            line.contains(&r.repo.join("tools").display().to_string()),
            "{user:?}: {o}"
        );
        r.git(&["config", "core.hooksPath", "ci/git/hooks"]);
        let o = exec_in(&server, &r.repo, "mkdir -p ci/git/hooks");
        assert!(told_created(&o, "ci/git/hooks"), "{user:?}: {o}");
    }
}

/// git's global configuration where `XDG_CONFIG_HOME` is not set (`.config/git/config`) is
/// protected with `.gitconfig`; the `.git` of a submodule `.gitmodules` names but that is not
/// checked out (its gitlink in the index, its directory empty) is watched: a call that makes
/// it is told, since the person's `git status` would enter it.
#[test]
fn workspace_protects_the_xdg_git_config_and_watches_a_missing_submodule() {
    let test = "workspace_protects_the_xdg_git_config_and_watches_a_missing_submodule";
    if !kernel_has_landlock(test) {
        return;
    }
    for user in users(test) {
        let r = Repo::new("prot-xdg", user);
        std::fs::create_dir_all(r.repo.join(".config/git")).expect("mkdir");
        std::fs::write(r.repo.join(".config/git/config"), "[user]\n").expect("write");
        std::fs::create_dir_all(r.repo.join("lib")).expect("mkdir");
        std::fs::write(
            r.repo.join(".gitmodules"),
            "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.invalid/lib\n",
        )
        .expect("write");
        r.hand_over(&r.root);
        let server = workspace(&r, &[]);
        let o = exec_in(
            &server,
            &r.repo,
            "printf '[core]\\n\\tfsmonitor = true\\n' >> .config/git/config; true",
        );
        assert_eq!(
            std::fs::read_to_string(r.repo.join(".config/git/config")).expect("read"),
            "[user]\n",
            "{user:?}: {o}"
        );
        let o = exec_in(&server, &r.repo, "mkdir -p lib/.git/objects && echo made");
        assert!(told_created(&o, "lib/.git"), "{user:?}: {o}");
    }
}

/// True when the result `o` says the call created a protected name, naming `what`.
fn told_created(o: &Value, what: &str) -> bool {
    o["protected"]
        .as_str()
        .is_some_and(|line| line.contains("created") && line.contains(what))
}
