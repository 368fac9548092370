//! Shell mode's own promises, attacked through the real binary: `workspace` roots held from
//! startup (a root renamed or replaced by a link grants nothing new), the working directory
//! entered as it was checked (a link swapped in after the check fails the call), and settings
//! that fail closed. The races run 1,000 attempts against a swapper thread that renames and
//! links in a loop, as root and, where `setpriv` can drop to `nobody`, as an ordinary user.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_error, path_str, run_binary, tool_text, unique_marker, Server};

/// The Landlock ABI of this kernel; prints why a test is skipped when below `need`.
fn kernel_has(need: u32, test: &str) -> bool {
    let abi = yieldshell::internals::sys::landlock_abi().unwrap_or(0);
    if abi < need {
        eprintln!("skipped {test}: needs Landlock ABI {need}, this kernel has ABI {abi}");
        return false;
    }
    true
}

/// A tree for one test, made world-writable so that a server running as `nobody` can use
/// it: `tmp` under the system temp dir (which `workspace` always lets a call write) and
/// `outside` under the build's temp dir, or `/var/tmp` when the build itself lies under the
/// system temp dir (a checkout in `/tmp`), so that no call may write it. Removed when
/// dropped.
struct Tree {
    tmp: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new(label: &str) -> Tree {
        let tmp = std::env::temp_dir().join(unique_marker(label));
        let build = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let under_tmp = |p: &Path| {
            p.starts_with("/tmp")
                || std::fs::canonicalize(p).is_ok_and(|c| c.starts_with("/tmp"))
                || p.starts_with(std::env::temp_dir())
        };
        let base = if under_tmp(build) {
            Path::new("/var/tmp")
        } else {
            build
        };
        let outside = base.join(unique_marker(label));
        for d in [&tmp, &outside] {
            std::fs::create_dir_all(d).expect("create a test directory");
            open_up(d);
        }
        Tree {
            tmp: tmp.canonicalize().expect("canonical"),
            outside: outside.canonicalize().expect("canonical"),
        }
    }

    /// Makes `rel` under `tmp`, open to every user.
    fn dir(&self, rel: &str) -> PathBuf {
        let path = self.tmp.join(rel);
        std::fs::create_dir_all(&path).expect("create a directory");
        open_up(&path);
        path
    }

    /// The files in `outside` (none may appear: no call may write there).
    fn outside_files(&self) -> Vec<String> {
        std::fs::read_dir(&self.outside)
            .map(|d| {
                d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
        let _ = std::fs::remove_dir_all(&self.outside);
    }
}

fn open_up(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).expect("chmod 777");
}

/// Who a server of these tests runs as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum User {
    /// The test's own user.
    Same,
    /// `nobody`, through `setpriv` (only when the test runs as root).
    Nobody,
}

/// The users these tests can run a server as, printing why `nobody` is skipped.
pub(crate) fn users(test: &str) -> Vec<User> {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
    });
    let setpriv = Command::new("setpriv")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if root && setpriv {
        return vec![User::Same, User::Nobody];
    }
    eprintln!(
        "{test}: runs as this user only (an ordinary user's run needs root and setpriv to \
         drop to nobody: root {root}, setpriv {setpriv})"
    );
    vec![User::Same]
}

/// A shell-mode server as `user`, with `env`, handshake done.
pub(crate) fn server_as(user: User, env: &[(&str, &str)]) -> Server {
    let command = match user {
        User::Same => crate::support::piped_command(env, &[]),
        User::Nobody => {
            let scrubbed = crate::support::scrubbed_command();
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(scrubbed.get_program())
                .env("HOME", "/nonexistent")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            for (name, value) in scrubbed.get_envs() {
                if value.is_none() {
                    c.env_remove(name);
                }
            }
            for (name, value) in env {
                c.env(name, value);
            }
            c
        }
    };
    let server = Server::spawn_command(command);
    server.initialize(crate::support::LATEST);
    server
}

/// Runs `command` in `cwd`; the result object, or the refusal's text.
fn exec_in(server: &Server, cwd: &Path, command: &str) -> Result<Value, String> {
    let result = server.call(
        "exec",
        json!({"command": command, "cwd": path_str(cwd), "side_effects": ["NONE"]}),
    );
    if is_error(&result) {
        return Err(tool_text(&result));
    }
    Ok(server.result_object(&result))
}

/// Starts a thread that swaps `path` between the real directory (kept at `<path>.real`
/// while away) and a symbolic link to `target`, as fast as it can, until the returned flag
/// is set; the thread's handle returns how many swaps it made.
fn swapper(path: PathBuf, target: PathBuf) -> (Arc<AtomicBool>, thread::JoinHandle<u64>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let real = PathBuf::from(format!("{}.real", path.display()));
    let handle = thread::spawn(move || {
        let mut swaps = 0u64;
        while !flag.load(Ordering::Relaxed) {
            if std::fs::rename(&path, &real).is_ok() {
                let _ = std::os::unix::fs::symlink(&target, &path);
                // Each state lasts about as long as a call takes from its check to its
                // start, so that both are met between the two (pacing, not synchronising).
                thread::sleep(Duration::from_micros(swaps % 7 * 50));
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::rename(&real, &path);
                swaps += 1;
            }
            thread::sleep(Duration::from_micros(swaps % 5 * 60));
        }
        swaps
    });
    (stop, handle)
}

// ---- workspace roots ----

/// Call 1 renames a root (writable from another root, or through /tmp) and puts a link to
/// a directory outside every root in its place; call 2 writes through that link. The rules
/// are made from the directories held since startup, so the write is refused; the renamed
/// root keeps its grant under its new name; nothing is written outside.
#[test]
fn a_root_renamed_and_replaced_by_a_link_grants_nothing_new() {
    if !kernel_has(
        1,
        "a_root_renamed_and_replaced_by_a_link_grants_nothing_new",
    ) {
        return;
    }
    let tree = Tree::new("ws-swap");
    // Two sibling roots under /tmp, and two nested roots outside it.
    let outer = tree.outside.join("outer");
    std::fs::create_dir_all(outer.join("b")).expect("mkdir");
    let target = tree.outside.join("target");
    std::fs::create_dir_all(&target).expect("mkdir");
    let cases = [
        (tree.dir("x/a"), tree.dir("x/b")),
        (outer.clone(), outer.join("b")),
    ];
    for (a, b) in cases {
        let roots = format!("{}:{}", a.display(), b.display());
        let server = server_as(
            User::Same,
            &[
                ("YIELDSHELL_SANDBOX", "workspace"),
                ("YIELDSHELL_ALLOWED_CWDS", &roots),
            ],
        );
        let moved = write_then_swap_for_a_link(&server, &a, &b, &target);
        let after = exec_in(
            &server,
            &a,
            &format!(
                "echo 2 > {b}/escaped; echo 3 > {moved}/kept; echo done",
                b = b.display()
            ),
        )
        .expect("call 2");
        assert_eq!(after["stdout"], "done\n", "{after}");
        assert!(
            !target.join("escaped").exists(),
            "a write through the link reached {}: {after}",
            target.display()
        );
        assert!(
            Path::new(&moved).join("kept").exists(),
            "the renamed root keeps its grant: {after}"
        );
        // The link itself is no working directory: it resolves outside every root.
        let refused = exec_in(&server, &b, "pwd").expect_err("cwd through the link");
        assert!(
            refused.contains("outside the allowed directories"),
            "{refused}"
        );
    }
}

/// From `cwd`, writes beneath `place` (it is writable), then renames `place` to
/// `<place>.real` and puts a link to `target` in its place; returns the new name.
fn write_then_swap_for_a_link(server: &Server, cwd: &Path, place: &Path, target: &Path) -> String {
    let probe = exec_in(server, cwd, &format!("echo 1 > {}/probe", place.display()))
        .expect("a write in the writable place");
    assert_eq!(probe["exit_code"], 0, "{probe}");
    let moved = format!("{}.real", place.display());
    let swap = exec_in(
        server,
        cwd,
        &format!(
            "mv {p} {moved} && ln -s {t} {p} && echo swapped",
            p = place.display(),
            t = target.display()
        ),
    )
    .expect("the swap");
    assert_eq!(swap["stdout"], "swapped\n", "{swap}");
    moved
}

/// A `YIELDSHELL_WRITABLE_PATHS` place that a call can rename (it lies under `/tmp`, which
/// `workspace` may write) and replace by a link grants nothing through the link: each
/// call's rule is made from the place opened without following links.
#[test]
fn a_writable_path_replaced_by_a_link_grants_nothing() {
    if !kernel_has(1, "a_writable_path_replaced_by_a_link_grants_nothing") {
        return;
    }
    let tree = Tree::new("ws-writable-swap");
    let root = tree.outside.join("root");
    std::fs::create_dir_all(&root).expect("mkdir");
    let target = tree.outside.join("target");
    std::fs::create_dir_all(&target).expect("mkdir");
    let shared = tree.dir("shared");
    let server = server_as(
        User::Same,
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", &root.display().to_string()),
            ("YIELDSHELL_WRITABLE_PATHS", &shared.display().to_string()),
        ],
    );
    write_then_swap_for_a_link(&server, &root, &shared, &target);
    let after = exec_in(
        &server,
        &root,
        &format!("echo 2 > {}/escaped; echo done", shared.display()),
    )
    .expect("call 2");
    assert_eq!(after["stdout"], "done\n", "{after}");
    assert!(
        !target.join("escaped").exists(),
        "a write through the link reached {}: {after}",
        target.display()
    );
}

/// A root that is a link at startup is the directory it resolved to then; replacing the
/// link later grants nothing. A root missing at startup stops a `workspace` server, naming
/// it, and is a warning under every other setting.
#[test]
fn roots_are_what_they_were_at_startup() {
    if !kernel_has(1, "roots_are_what_they_were_at_startup") {
        return;
    }
    let tree = Tree::new("ws-link-root");
    let real = tree.dir("real");
    let link = tree.tmp.join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let env = [
        ("YIELDSHELL_SANDBOX", "workspace"),
        ("YIELDSHELL_ALLOWED_CWDS", path_str(&link)),
    ];
    let server = server_as(User::Same, &env);
    let moved = exec_in(
        &server,
        &real,
        &format!(
            "rm {l} && ln -s {o} {l} && echo 1 > {l}/through-link; echo 2 > {r}/in-real; echo ok",
            l = link.display(),
            o = tree.outside.display(),
            r = real.display()
        ),
    )
    .expect("a call in the root");
    assert_eq!(moved["stdout"], "ok\n", "{moved}");
    assert!(
        tree.outside_files().is_empty(),
        "{:?}",
        tree.outside_files()
    );
    assert!(real.join("in-real").exists(), "{moved}");
    drop(server);

    let missing = tree.tmp.join("not-made-yet");
    let out = run_binary(
        &[],
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", path_str(&missing)),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(path_str(&missing)) && stderr.contains("YIELDSHELL_SANDBOX=workspace"),
        "{stderr}"
    );
    let server = Server::with_env(&[("YIELDSHELL_ALLOWED_CWDS", path_str(&missing))]);
    server.initialize(crate::support::LATEST);
    let mut stderr = String::new();
    crate::support::wait_until(Duration::from_secs(10), || {
        stderr = server.stderr_text();
        stderr.contains("not an existing directory")
    });
    assert!(
        stderr.contains(path_str(&missing)) && stderr.contains("not an existing directory"),
        "{stderr}"
    );
}

/// Without roots, `workspace` grants writes beneath the call's working directory, so it
/// refuses the directories trusted mode refuses (`/`, system directories, the home), and
/// `check` says so; a project directory works.
#[test]
fn workspace_without_roots_refuses_system_working_directories() {
    if !kernel_has(
        1,
        "workspace_without_roots_refuses_system_working_directories",
    ) {
        return;
    }
    let tree = Tree::new("ws-noroots");
    let project = tree.dir("project");
    let server = server_as(User::Same, &[("YIELDSHELL_SANDBOX", "workspace")]);
    // Whole system trees, not only the subdirectories that hold programs.
    let system = [
        "/usr/include",
        "/usr/local/include",
        "/usr/src",
        "/usr/local/etc",
        "/usr/games",
        "/usr/local/games",
        "/var/www",
        "/var/backups",
        "/var/opt",
        "/var/local",
    ];
    for cwd in ["/", "/etc", "/usr", "/usr/lib"]
        .into_iter()
        .chain(system.into_iter().filter(|d| Path::new(d).is_dir()))
    {
        let refused = exec_in(&server, Path::new(cwd), "pwd").expect_err(cwd);
        assert!(
            refused.contains("YIELDSHELL_SANDBOX=workspace without YIELDSHELL_ALLOWED_CWDS")
                && refused.contains(cwd),
            "{cwd}: {refused}"
        );
    }
    let done = exec_in(&server, &project, "touch made && echo ok").expect("a project");
    assert_eq!(done["stdout"], "ok\n", "{done}");
    assert!(project.join("made").exists());
    // Without the sandbox nothing is granted, and nothing is refused.
    let plain = Server::ready();
    assert!(exec_in(&plain, Path::new("/"), "pwd").is_ok());

    let out = run_binary_in(
        Path::new("/"),
        &["check", "true"],
        &[("YIELDSHELL_SANDBOX", "workspace")],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("working directory: refused")
            && text.contains(
                "write only beneath the call's working directory (a working \
                              directory that is /"
            ),
        "{text}"
    );
}

/// `workspace` without roots also refuses the places a command's programs are looked up in
/// or run from: the server's `PATH` (and its ancestors), `~/bin` (on `PATH` by a login
/// profile, whether it exists or not) and the server's own executable's directory; and system
/// state under `/var` (`/var/tmp` stays usable).
#[test]
fn workspace_without_roots_refuses_where_commands_are_looked_up() {
    if !kernel_has(
        1,
        "workspace_without_roots_refuses_where_commands_are_looked_up",
    ) {
        return;
    }
    let tree = Tree::new("ws-lookup");
    let tools = tree.dir("tools/bin");
    let home = tree.dir("home");
    let project = tree.dir("project");
    let path = format!("{}:/usr/bin:/bin", tools.display());
    let server = server_as(
        User::Same,
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("PATH", &path),
            ("HOME", path_str(&home)),
        ],
    );
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_yieldshell")).expect("the binary");
    let exe_dir = exe.parent().expect("its directory").to_path_buf();
    let home_bin = home.join("bin");
    std::fs::create_dir_all(&home_bin).expect("~/bin");
    let mut refused_dirs = vec![tools.clone(), tree.tmp.join("tools"), home_bin, exe_dir];
    refused_dirs.extend(
        ["/var/log", "/var/cache", "/var"]
            .iter()
            .map(PathBuf::from)
            .filter(|d| d.is_dir()),
    );
    for cwd in &refused_dirs {
        let refused = exec_in(&server, cwd, "pwd").expect_err(path_str(cwd));
        assert!(
            refused.contains("YIELDSHELL_SANDBOX=workspace without YIELDSHELL_ALLOWED_CWDS"),
            "{}: {refused}",
            cwd.display()
        );
    }
    let done = exec_in(&server, &project, "touch made && echo ok").expect("a project");
    assert_eq!(done["stdout"], "ok\n", "{done}");
    if Path::new("/var/tmp").is_dir() {
        assert!(exec_in(&server, Path::new("/var/tmp"), "pwd").is_ok());
    }
}

/// A program that cannot be executed under `workspace` is the file's doing, not the
/// sandbox's (which restricts writes only): the error says so, and does not speak of an
/// allowlist, which shell mode does not have.
#[test]
fn workspace_exec_refusal_names_the_file_not_an_allowlist() {
    if !kernel_has(1, "workspace_exec_refusal_names_the_file_not_an_allowlist") {
        return;
    }
    let tree = Tree::new("ws-noexec");
    let project = tree.dir("project");
    let shell = project.join("not-a-shell");
    std::fs::write(&shell, "#!/bin/sh\necho ran\n").expect("write");
    let server = server_as(
        User::Same,
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", path_str(&project)),
        ],
    );
    let result = server.call(
        "exec",
        json!({"command": "true", "side_effects": ["NONE"], "cwd": path_str(&project),
               "shell": path_str(&shell)}),
    );
    let text = tool_text(&result);
    assert!(is_error(&result), "{text}");
    assert!(
        text.contains("Permission denied")
            && text.contains("restricts writes, not which programs run"),
        "{text}"
    );
    assert!(!text.contains("allowlisted"), "{text}");
}

fn run_binary_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = crate::support::scrubbed_command();
    command.current_dir(dir).args(args).stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run the yieldshell binary")
}

/// 1,000 calls race a swapper that renames the only root (under /tmp, which every call may
/// write) and links it to a directory outside: no call writes outside, as root and as an
/// ordinary user.
#[test]
fn a_root_swapped_during_calls_never_widens_the_rules() {
    if !kernel_has(1, "a_root_swapped_during_calls_never_widens_the_rules") {
        return;
    }
    let _load = crate::support::heavy_load();
    for user in users("a_root_swapped_during_calls_never_widens_the_rules") {
        let tree = Tree::new("ws-race");
        let root = tree.dir("root");
        let work = tree.dir("work");
        let roots = format!("{}:{}", work.display(), root.display());
        let server = server_as(
            user,
            &[
                ("YIELDSHELL_SANDBOX", "workspace"),
                ("YIELDSHELL_ALLOWED_CWDS", &roots),
            ],
        );
        let (stop, handle) = swapper(root.clone(), tree.outside.clone());
        let mut ran = 0;
        for i in 0..1000 {
            // The directory named by the root's path, whatever it is at this moment.
            let command = format!("echo {i} > {}/f{i} 2>/dev/null; echo ran", root.display());
            if exec_in(&server, &work, &command).is_ok() {
                ran += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = handle.join().expect("the swapper");
        assert!(
            swaps > 0 && ran == 1000,
            "{user:?}: swaps {swaps}, ran {ran}"
        );
        assert!(
            tree.outside_files().is_empty(),
            "{user:?}: written outside: {:?}",
            tree.outside_files()
        );
        eprintln!("{user:?}: 1000 calls, {swaps} swaps, nothing written outside");
    }
}

// ---- the working directory ----

/// 1,000 calls ask for a directory inside the only allowed root while a swapper replaces it
/// with a link to a directory outside: every call either starts inside the root or fails,
/// with no sandbox and no cgroup (the child's plainest path), as root and as an ordinary user.
#[test]
fn a_working_directory_swapped_after_its_check_is_never_entered() {
    let _load = crate::support::heavy_load();
    for user in users("a_working_directory_swapped_after_its_check_is_never_entered") {
        let tree = Tree::new("cwd-race");
        let root = tree.dir("root");
        let dir = tree.dir("root/d");
        let server = server_as(
            user,
            &[
                ("YIELDSHELL_ALLOWED_CWDS", path_str(&root)),
                ("YIELDSHELL_CGROUP", "off"),
                ("YIELDSHELL_SANDBOX", "off"),
            ],
        );
        let (stop, handle) = swapper(dir.clone(), tree.outside.clone());
        let (mut inside, mut failed) = (0, 0);
        for _ in 0..1000 {
            match exec_in(&server, &dir, "pwd -P") {
                Ok(result) if result["status"] == "failed_to_start" => failed += 1,
                Ok(result) => {
                    let pwd = result["stdout"].as_str().unwrap_or_default().trim_end();
                    assert!(
                        Path::new(pwd).starts_with(&root),
                        "{user:?}: a command started in {pwd}, outside {}: {result}",
                        root.display()
                    );
                    inside += 1;
                }
                Err(_) => failed += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = handle.join().expect("the swapper");
        assert!(
            swaps > 0 && inside > 0,
            "{user:?}: swaps {swaps}, inside {inside}"
        );
        eprintln!(
            "{user:?}: 1000 calls, {swaps} swaps: {inside} started inside, {failed} refused or \
             failed, none outside"
        );
    }
}

// ---- settings that fail closed ----

/// A value with nothing in it stops the server, naming the variable and what is accepted;
/// `,` alone still clears the blocklist, and under `YIELDSHELL_API=1.1` an empty blocklist is
/// the default list and an empty root list no restriction, as in 1.1.2.
#[test]
fn settings_with_nothing_in_them_stop_the_server() {
    for (variable, value, accepted) in [
        (
            "YIELDSHELL_ALLOWED_CWDS",
            ":::",
            "colon-separated directories",
        ),
        (
            "YIELDSHELL_ALLOWED_CWDS",
            " ",
            "colon-separated directories",
        ),
        ("YIELDSHELL_ALLOWED_CWDS", "", "colon-separated directories"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "", "',' alone"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "  ", "',' alone"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ",,", "',' alone"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ", ,", "',' alone"),
        ("YIELDSHELL_AUDIT_LOG", " ", "a file path"),
        ("YIELDSHELL_NETWORK", "", "allow or deny"),
        ("YIELDSHELL_SANDBOX", " ", "workspace"),
        ("YIELDSHELL_MODE", "", "shell or trusted"),
        ("YIELDSHELL_LIMITS", " ", "cpu=60"),
        ("YIELDSHELL_TOOLS", "", "tool names"),
        ("YIELDSHELL_CGROUP", " ", "auto, on or off"),
        ("YIELDSHELL_API", "", "1.1"),
        ("YIELDSHELL_DENY_COMMAND_REGEX", "", "a regex"),
    ] {
        let out = run_binary(&[], &[(variable, value)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variable}={value:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{variable}={value:?}")) && stderr.contains(accepted),
            "{variable}={value:?}: {stderr}"
        );
    }
    let api = [
        ("YIELDSHELL_API", "1.1"),
        ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ""),
        ("YIELDSHELL_ALLOWED_CWDS", ""),
    ];
    let server = Server::ready_with_env(&api);
    let result = server.call(
        "execute",
        json!({"command": "echo hi", "side_effects": ["RUNS_INLINE_CODE"]}),
    );
    assert!(
        tool_text(&result).contains("RUNS_INLINE_CODE"),
        "1.1.2's default list: {result}"
    );
    let result = server.call(
        "execute",
        json!({"command": "pwd", "cwd": "/", "side_effects": ["NONE"]}),
    );
    assert!(!is_error(&result), "no restriction, as in 1.1.2: {result}");
    let server = Server::ready_with_env(&[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ",")]);
    let result = server.exec(json!({"command": "echo ran", "side_effects": ["RUNS_INLINE_CODE"]}));
    assert_eq!(result["stdout"], "ran\n", "{result}");
}

// ---- bounded regex work ----

/// A pattern that compiles to more than the cap is refused, naming the cap: `until` at
/// once, a command regex at startup.
#[test]
fn a_regex_over_the_size_cap_is_refused_naming_the_cap() {
    let server = Server::ready();
    let id = server.spawn_bg("sleep 5");
    for pattern in ["(?:a?){100000}b", "(?:a?){20000}b", "(?:a?){1000}b"] {
        let result = server.call_err(
            "wait",
            json!({"process_id": id, "until": pattern, "timeout_ms": 100}),
        );
        let text = tool_text(&result);
        assert!(
            text.contains("until") && text.contains("32 KiB") && text.contains(pattern),
            "{text}"
        );
    }
    let result = server.call_ok(
        "wait",
        json!({"process_id": id, "until": "(?:a?){200}b|never", "timeout_ms": 100}),
    );
    assert_eq!(result["wait_result"], "deadline_reached", "{result}");
    let big = "(?:a?){5000}b";
    let out = run_binary(&[], &[("YIELDSHELL_DENY_COMMAND_REGEX", big)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("YIELDSHELL_DENY_COMMAND_REGEX") && stderr.contains("64 KiB"),
        "{stderr}"
    );
}

/// A shell-mode command longer than one argument can hold (128 KiB, `sh -c` takes it as one)
/// is refused before a command regex spends time on it, with what to do instead; a long
/// command that can run, whose check takes longer than its `yield_ms`, still gets its full
/// yield (the clock starts with the process) and answers completed.
#[test]
fn a_command_too_long_to_run_is_refused_before_the_regexes() {
    let server = Server::ready_with_env(&[("YIELDSHELL_DENY_COMMAND_REGEX", "(?:[a-z]x?){400}b")]);
    let long = format!("echo done #{}", "a".repeat(4 << 20));
    let started = std::time::Instant::now();
    let refused = server.call_err("exec", json!({"command": long, "side_effects": ["NONE"]}));
    let took = started.elapsed();
    let text = tool_text(&refused);
    assert!(
        text.contains(&format!("the command is {} bytes", long.len()))
            && text.contains("128 KiB")
            && text.contains("stdin"),
        "{text}"
    );
    assert!(took < Duration::from_secs(5), "the refusal took {took:?}");
    // A `shell` no system could execute is refused before the regexes too.
    let shell = format!("/x/{}", "a".repeat(200_000));
    let started = std::time::Instant::now();
    let refused = server.call_err(
        "exec",
        json!({"command": "true", "shell": shell, "side_effects": ["NONE"]}),
    );
    let took = started.elapsed();
    let text = tool_text(&refused);
    assert!(text.contains("longer than any path"), "{text}");
    assert!(took < Duration::from_secs(5), "the refusal took {took:?}");
    // About 5 s of checking here (a third of that on a fast machine), over the yield.
    let slow_check = format!("echo done #{}", "a".repeat(30_000));
    let ran = server.exec(json!({"command": slow_check, "yield_ms": 1500}));
    assert_eq!(ran["status"], "completed", "{ran}");
    assert_eq!(ran["exit_code"], 0, "{ran}");
    assert_eq!(ran["stdout"], "done\n", "{ran}");
}

/// The heaviest `until` the cap allows, over 60 KB of output without a newline: `ps` and
/// `exec` stay answered while it runs (it is matched outside the record's lock), and the
/// wait answers near its `timeout_ms` (the scan looks at the clock between pieces).
#[test]
fn a_heavy_until_stalls_neither_the_server_nor_its_own_deadline() {
    let _bound = crate::support::time_bound();
    let server = Server::ready();
    let id = server.spawn_bg("head -c 61440 /dev/zero | tr '\\0' a; sleep 30");
    server.wait_for_output(&id, "a{100}");
    let started = std::time::Instant::now();
    let wait = server.send_request(
        "tools/call",
        json!({"name": "wait", "arguments":
            {"process_id": id, "until": "(?:a?){300}b", "timeout_ms": 1500}}),
    );
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    let response = loop {
        if let Some(response) = server.try_response(&wait, Duration::from_millis(1)) {
            break response;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no answer to the wait"
        );
        let t = std::time::Instant::now();
        let ps = server.call_ok("ps", json!({}));
        assert!(
            ps["processes"].as_array().is_some_and(|p| !p.is_empty()),
            "{ps}"
        );
        let hi = server.sh("echo hi");
        assert_eq!(hi["stdout"], "hi\n", "{hi}");
        slowest = slowest.max(t.elapsed());
        answered += 1;
    };
    let took = started.elapsed();
    let result = server.result_object(&response["result"]);
    assert_eq!(result["wait_result"], "deadline_reached", "{result}");
    eprintln!("wait answered after {took:?}; {answered} ps+exec pairs, slowest {slowest:?}");
    assert!(
        answered > 0,
        "the wait answered before anything else was asked"
    );
    assert!(
        slowest < crate::support::loaded(Duration::from_secs(1)),
        "ps + exec took {slowest:?} while the until ran"
    );
    assert!(
        took < crate::support::loaded(Duration::from_secs(4)),
        "a wait with timeout_ms 1500 answered after {took:?}"
    );
}

/// Sixteen waits with a slow `until` over 12 MB of output (3,000 lines of 4,000 letters):
/// `ps`, `read`, `write` and `exec` stay answered at once (the scans run on a thread of their
/// own, in turns, not on the workers that run the tools), and every wait answers near its
/// `timeout_ms`, however long it queued behind the others' scans.
#[test]
fn many_slow_untils_stall_neither_the_tools_nor_their_deadlines() {
    let _bound = crate::support::time_bound();
    let server = Server::ready();
    let id = server.spawn_bg(
        "yes \"$(head -c 4000 /dev/zero | tr '\\0' a)\" | head -n 3000; echo all-out; sleep 60",
    );
    server.wait_for_output(&id, "all-out");
    let other = server.spawn_bg_with(json!({"command": "cat", "close_stdin": false}));
    let started = std::time::Instant::now();
    let waits: Vec<Value> = (0..16)
        .map(|_| {
            server.send_request(
                "tools/call",
                json!({"name": "wait", "arguments": {"process_id": id,
                    "until": "(?:[a-z]x?){30}b", "timeout_ms": 2000, "since_seq": 1,
                    "max_output_bytes": 100}}),
            )
        })
        .collect();
    let t = std::time::Instant::now();
    let ps = server.call_ok("ps", json!({}));
    assert!(
        ps["processes"].as_array().is_some_and(|p| p.len() >= 2),
        "{ps}"
    );
    let read = server.call_ok("read", json!({"process_id": id, "max_output_bytes": 10}));
    assert!(read["stdout"].is_string(), "{read}");
    let write = server.call_ok("write", json!({"process_id": other, "input": "hi\n"}));
    assert_eq!(write["ok"], true, "{write}");
    let hi = server.sh("echo hi");
    assert_eq!(hi["stdout"], "hi\n", "{hi}");
    let tools = t.elapsed();
    let mut last = Duration::ZERO;
    for wait in &waits {
        let response = server.response(wait, Duration::from_secs(120));
        let result = server.result_object(&response["result"]);
        assert_eq!(result["wait_result"], "deadline_reached", "{result}");
        last = last.max(started.elapsed());
    }
    eprintln!(
        "ps, read, write and exec took {tools:?}; the last of 16 waits answered after {last:?}"
    );
    assert!(
        tools < crate::support::loaded(Duration::from_secs(1)),
        "ps, read, write and exec took {tools:?} while 16 untils were scanned"
    );
    assert!(
        last < crate::support::loaded(Duration::from_millis(3000)),
        "waits with timeout_ms 2000 answered after {last:?}"
    );
}

// ---- secrets across calls ----

const TOKEN_A: &str = "call-a-secret-5f1c2e";

/// A's secret (in its `env`) is hidden from every other call while A is kept: from a call
/// started before A that reads A's environment, from one started after, from `ps` (a command
/// line written before A came), and from the audit line of a refused call; once A is
/// forgotten, it is an ordinary string again.
#[test]
fn one_call_secret_is_hidden_from_every_other_call_while_it_is_kept() {
    let dir = crate::support::TempDir::new("secret-cross");
    let pidfile = dir.path().join("pid");
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "TOKEN"),
        ("YIELDSHELL_DEFAULT_CWD", path_str(dir.path())),
    ]);
    // Started before A: waits for A's pid, then prints A's environment.
    let before = server.spawn_bg(&format!(
        "while [ ! -s {p} ]; do sleep 0.02; done; tr '\\0' '\\n' < /proc/$(cat {p})/environ; \
         echo done-reading",
        p = pidfile.display()
    ));
    let quoted = server.spawn_bg(&format!("sleep 30 # {TOKEN_A}"));
    // What was written before A came (the audit line of `quoted`) cannot be taken back.
    let mut logged_before = 0;
    crate::support::wait_until(Duration::from_secs(10), || {
        let stderr = server.stderr_text();
        logged_before = stderr.len();
        stderr.matches("AUDIT").count() >= 2
    });
    let a = server.exec(json!({
        "command": "sleep 30", "yield_ms": 0, "side_effects": ["NONE"],
        "env": {"MY_TOKEN": TOKEN_A},
    }));
    let a_id = crate::support::process_id(&a);
    let a_pid = crate::support::pid_of(&a);
    // Named to `before` once its environment reads whole (it reads empty for a moment
    // after the spawn returns, until the loader has laid it out).
    crate::support::wait_until(Duration::from_secs(10), || {
        std::fs::read(format!("/proc/{a_pid}/environ")).is_ok_and(|e| !e.is_empty())
    });
    std::fs::write(&pidfile, a_pid.to_string()).expect("write the pid");
    server.wait_exit_of(&before);
    let (out, _) = server.read_all(&before);
    assert!(
        !out.contains(TOKEN_A) && out.contains("MY_TOKEN=[REDACTED:MY_TOKEN]"),
        "a call started before A: {out}"
    );
    let after = server.sh(&format!("tr '\\0' '\\n' < /proc/{a_pid}/environ"));
    let out = after["stdout"].as_str().unwrap_or_default();
    assert!(
        !out.contains(TOKEN_A) && out.contains("MY_TOKEN=[REDACTED:MY_TOKEN]"),
        "a call started after A: {after}"
    );
    // Documented limit: a transformed value is not found (here reversed).
    let reversed: String = TOKEN_A.chars().rev().collect();
    let shown = server.sh(&format!("printf '%s\\n' \"$(cat /proc/{a_pid}/environ | tr '\\0' '\\n' | grep MY_TOKEN= | cut -d= -f2 | rev)\""));
    assert_eq!(shown["stdout"], format!("{reversed}\n"), "{shown}");
    let entry = server.ps_entry(&quoted).expect("listed");
    assert_eq!(
        entry["command"], "sleep 30 # [REDACTED:MY_TOKEN]",
        "ps of a command line written before A: {entry}"
    );
    let refused = server.call_err(
        "exec",
        json!({"command": format!("echo {TOKEN_A}"), "side_effects": ["RUNS_INLINE_CODE"]}),
    );
    assert!(!tool_text(&refused).contains(TOKEN_A), "{refused}");
    let mut stderr = String::new();
    crate::support::wait_until(Duration::from_secs(10), || {
        stderr = server.stderr_text()[logged_before..].to_string();
        stderr.contains("\"rejected\"")
    });
    assert!(
        !stderr.contains(TOKEN_A),
        "the audit lines show A's secret: {stderr}"
    );
    assert!(stderr.contains("echo [REDACTED:MY_TOKEN]"), "{stderr}");

    // Forgotten: no record holds the value any more.
    server.call_ok("stop", json!({"process_id": a_id}));
    server.call_ok("stop", json!({"process_id": quoted}));
    server.call_ok(
        "cleanup",
        json!({"completed_older_than_ms": 0, "stopped_older_than_ms": 0}),
    );
    let plain = server.sh(&format!("echo {TOKEN_A}"));
    assert_eq!(plain["stdout"], format!("{TOKEN_A}\n"), "{plain}");
}

/// A refused call's audit line hides the values of its own `env` (command, directory as
/// given, reason), and the debug log never shows a request's secret.
#[test]
fn refused_calls_and_the_debug_log_hide_the_call_own_secrets() {
    let secret = "refused-secret-77aa11";
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_REDACT_ENV_REGEX", "TOKEN"),
        ("YIELDSHELL_LOG", "debug"),
    ]);
    let cases = [
        json!({"command": format!("echo {secret}"), "side_effects": ["RUNS_INLINE_CODE"],
               "env": {"MY_TOKEN": secret}}),
        json!({"command": format!("echo {secret}"), "side_effects": ["NONE"],
               "cwd": format!("/nonexistent/{secret}"), "env": {"MY_TOKEN": secret}}),
        // Malformed: refused before the tool sees typed arguments.
        json!({"command": format!("echo {secret}"), "side_effects": ["NONE"],
               "timeout_ms": "soon", "env": {"MY_TOKEN": secret}}),
    ];
    for args in cases {
        let result = server.call_err("exec", args.clone());
        assert!(is_error(&result), "{result}");
    }
    let ran = server.exec(json!({"command": "echo \"$MY_TOKEN\"", "env": {"MY_TOKEN": secret}}));
    assert_eq!(ran["stdout"], "[REDACTED:MY_TOKEN]\n", "{ran}");
    let mut stderr = String::new();
    crate::support::wait_until(Duration::from_secs(10), || {
        stderr = server.stderr_text();
        stderr.matches("AUDIT").count() >= 4
    });
    assert!(stderr.contains("<- "), "debug logging is on: {stderr}");
    assert!(
        !stderr.contains(secret) && !stderr.contains("refused-secret"),
        "{stderr}"
    );
    assert!(
        stderr.contains("/nonexistent/[REDACTED:MY_TOKEN]"),
        "{stderr}"
    );
}

/// A path the server resolves can show a secret that no output filter saw: a link whose
/// target names the server's secret. Neither a refusal's text (the resolved path), `ps`'s
/// `cwd` nor `yieldshell check` shows it.
#[test]
fn texts_the_server_makes_from_paths_hide_the_secrets() {
    let secret = "server-secret-in-a-path-3c9d";
    let dir = crate::support::TempDir::new("secret-paths");
    let inside = dir.path().join("in");
    let hidden = dir.path().join(secret);
    std::fs::create_dir_all(&inside).expect("mkdir in");
    std::fs::create_dir_all(&hidden).expect("mkdir hidden");
    let link = inside.join("l");
    std::os::unix::fs::symlink(&hidden, &link).expect("symlink");
    let redact = [
        ("YIELDSHELL_REDACT_ENV_REGEX", "TOKEN"),
        ("SRV_TOKEN", secret),
    ];
    let mut env = redact.to_vec();
    env.push(("YIELDSHELL_ALLOWED_CWDS", path_str(&inside)));
    env.push(("YIELDSHELL_DEFAULT_CWD", path_str(&inside)));
    let server = Server::ready_with_env(&env);
    for cwd in [path_str(&link), "l"] {
        let refused = server.call_err(
            "exec",
            json!({"command": "pwd", "side_effects": ["NONE"], "cwd": cwd}),
        );
        let text = tool_text(&refused);
        assert!(text.contains("outside"), "{text}");
        assert!(
            !text.contains(secret),
            "the refusal shows the secret: {text}"
        );
        assert!(text.contains("[REDACTED:SRV_TOKEN]"), "{text}");
    }
    drop(server);
    let server = Server::ready_with_env(&redact);
    let id =
        server.spawn_bg_with(json!({"command": "sleep 30", "cwd": path_str(&inside.join("l"))}));
    let entry = server.ps_entry(&id).expect("listed");
    let cwd = entry["cwd"].as_str().unwrap_or_default();
    assert!(!cwd.contains(secret), "ps shows the secret: {entry}");
    assert!(cwd.ends_with("[REDACTED:SRV_TOKEN]"), "{entry}");
    // `yieldshell check` shows the resolved directory too.
    env.push(("YIELDSHELL_DEFAULT_CWD", path_str(&link)));
    let out = run_binary(&["check", "true"], &env);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        !text.contains(secret) && text.contains("[REDACTED:SRV_TOKEN]"),
        "{text}"
    );
}

/// On a terminal, a secret with a line break comes back as `\r\n` (the terminal's doing),
/// and one split by escape sequences: neither shows, raw or not.
#[test]
fn terminal_reads_hide_a_secret_split_by_line_ends_or_escapes() {
    let server = Server::ready_with_env(&[("YIELDSHELL_REDACT_ENV_REGEX", "TOKEN")]);
    let multi = "first-half-91ab\nsecond-half-91ab";
    let split = "hunter2long-secret";
    let id = server.spawn_bg_with(json!({
        "command": "printf '%s\\n' \"$MULTI_TOKEN\"; printf 'hunter2\\033[0mlong-secret\\n'; \
                    echo end-of-test; sleep 30",
        "tty": true,
        "env": {"MULTI_TOKEN": multi, "SPLIT_TOKEN": split},
    }));
    server.wait_for_output(&id, "end-of-test");
    for raw in [false, true] {
        let read = server.call_ok(
            "read",
            json!({"process_id": id, "raw": raw, "since_seq": 1}),
        );
        let out = read["stdout"].as_str().unwrap_or_default();
        for piece in ["first-half", "second-half", "hunter2"] {
            assert!(!out.contains(piece), "raw {raw}: {piece} shows: {out:?}");
        }
        assert!(
            out.contains("[REDACTED:MULTI_TOKEN]") && out.contains("[REDACTED:SPLIT_TOKEN]"),
            "raw {raw}: {out:?}"
        );
    }
}

// ---- process ids ----

/// Ids are unique and show no pattern from one to the next (they were a base plus a multiple
/// of a counter, so two ids gave every other).
#[test]
fn process_ids_are_not_guessable_from_one_another() {
    let server = Server::ready();
    let ids: Vec<u64> = (0..40)
        .map(|_| {
            let id = crate::support::process_id(&server.sh("true"));
            assert!(
                id.len() == 17 && id.starts_with("proc_"),
                "the id format the tools and the 1.1 profile expect: {id}"
            );
            u64::from_str_radix(&id[5..], 16).expect("12 hex digits")
        })
        .collect();
    let unique: std::collections::HashSet<&u64> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:x?}");
    let steps: std::collections::HashSet<u64> =
        ids.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
    assert!(steps.len() >= 38, "steps repeat: {ids:x?}");
}

/// The audit log is never opened through a link in its last component: a `workspace` call
/// that may write the log's directory (here `/tmp`) and leaves a link there (to a shell's
/// rc file, say) would otherwise have the next server append its lines to the link's
/// target. Such a log is refused at startup, and one that lies where `workspace` calls may
/// write is named in a warning.
#[test]
fn the_audit_log_is_not_opened_through_a_link() {
    let tree = Tree::new("audit-link");
    let target = tree.outside.join("bashrc");
    std::fs::write(&target, "# the person's rc file\n").expect("write the target");
    let link = tree.tmp.join("audit.log");
    std::os::unix::fs::symlink(&target, &link).expect("make the link");
    let link_text = link.display().to_string();
    let out = run_binary(&[], &[("YIELDSHELL_AUDIT_LOG", link_text.as_str())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&target).expect("read the target"),
        "# the person's rc file\n",
        "the link's target was written"
    );
    // Nor through a second hard link to another file.
    let hard = tree.outside.join("audit-hard.log");
    std::fs::hard_link(&target, &hard).expect("make a hard link");
    let hard_text = hard.display().to_string();
    let out = run_binary(&[], &[("YIELDSHELL_AUDIT_LOG", hard_text.as_str())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("2 hard links"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&target).expect("read the target"),
        "# the person's rc file\n",
        "the hard link's other name was written"
    );
    if !kernel_has(
        1,
        "the_audit_log_is_not_opened_through_a_link (workspace warning)",
    ) {
        return;
    }
    let root = tree.outside.join("root");
    std::fs::create_dir_all(&root).expect("mkdir");
    let log = tree.tmp.join("real-audit.log");
    let log_text = log.display().to_string();
    let root_text = root.display().to_string();
    let out = run_binary(
        &[],
        &[
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", root_text.as_str()),
            ("YIELDSHELL_AUDIT_LOG", log_text.as_str()),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("YIELDSHELL_AUDIT_LOG") && stderr.contains("workspace calls may write"),
        "{stderr}"
    );
}

/// Under `workspace`, the server's own executable and a directory of its `PATH` that lie
/// where calls may write (here `/tmp`) are each named in a startup warning: a call could
/// replace what the next start, or a later shell, runs outside the sandbox.
#[test]
fn what_workspace_calls_could_replace_is_named_at_startup() {
    if !kernel_has(1, "what_workspace_calls_could_replace_is_named_at_startup") {
        return;
    }
    let tree = Tree::new("exe-in-tmp");
    let bin = tree.dir("bin");
    let exe = bin.join("yieldshell");
    std::fs::copy(env!("CARGO_BIN_EXE_yieldshell"), &exe).expect("copy the binary");
    let root = tree.outside.join("root");
    std::fs::create_dir_all(&root).expect("mkdir");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut command = Command::new(&exe);
    command
        .env_clear()
        .env("PATH", &path)
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("YIELDSHELL_SANDBOX", "workspace")
        .env("YIELDSHELL_ALLOWED_CWDS", &root)
        .current_dir(&root)
        .stdin(Stdio::null());
    let out = command.output().expect("run the copy");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("executable {}", exe.display()))
            && stderr.contains(&format!("PATH directory {}", bin.display())),
        "{stderr}"
    );
}
