//! Escapes from the kernel sandbox, closed, through
//! the real binary: confined processes hold no capability, cannot change another process's
//! limits, priority or affinity, cannot use io_uring, cannot make a TCP or MPTCP socket
//! under network deny, and trusted mode refuses a working directory inside or above the
//! safe `PATH`.
//!
//! As in `sandbox.rs`, trusted-mode tests use copies of harmless programs under names the
//! hardening table does not know (`prlimit` as `limiter`, `renice` as `nicer`, `taskset` as
//! `pinner`, `cat` as `reader`), and each refusal is paired with the same call without the
//! layer (`YIELDSHELL_SANDBOX=off`, `YIELDSHELL_NETWORK=allow`), which succeeds.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::renamed::Renamed;
use crate::support::{all_text, is_error, path_str, run_binary, Server};

const PROGRAMS: &[(&str, &str)] = &[
    ("limiter", "/usr/bin/prlimit"),
    ("nicer", "/usr/bin/renice"),
    ("pinner", "/usr/bin/taskset"),
    ("reader", "/usr/bin/cat"),
];
const OFF: (&str, &str) = ("YIELDSHELL_SANDBOX", "off");
/// The same calls without a per-command cgroup (as a server that is not root runs).
const NO_CGROUP: (&str, &str) = ("YIELDSHELL_CGROUP", "off");

/// True when this kernel has Landlock ABI `need` and the programs exist; prints why not.
fn can_run(need: u32, test: &str) -> bool {
    let abi = yieldshell::internals::sys::landlock_abi().unwrap_or(0);
    if abi < need {
        eprintln!("skipped {test}: needs Landlock ABI {need}, this kernel has ABI {abi}");
        return false;
    }
    if let Some((_, p)) = PROGRAMS.iter().find(|(_, p)| !Path::new(p).exists()) {
        eprintln!("skipped {test}: {p} is not installed");
        return false;
    }
    true
}

fn is_root() -> bool {
    status_field(
        &std::fs::read_to_string("/proc/self/status").unwrap_or_default(),
        "Uid:",
    )
    .is_some_and(|v| v.split_whitespace().nth(1) == Some("0"))
}

fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

/// A process of the test's own user to aim at, killed on drop.
struct Victim(Child);

impl Victim {
    fn start() -> Victim {
        let child = Command::new("sleep")
            .arg("300")
            .stdin(Stdio::null())
            .spawn()
            .expect("start sleep");
        Victim(child)
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
    fn nofile(&self) -> String {
        limits_nofile(&std::fs::read_to_string(format!("/proc/{}/limits", self.0.id())).unwrap())
    }
    fn nice(&self) -> String {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0.id())).unwrap();
        // Fields after the command name (which ends at the last ')'): nice is field 19.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split_whitespace().nth(16).unwrap().to_string()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn limits_nofile(limits: &str) -> String {
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `shell_execute` of `argv`: (succeeded, all text blocks joined).
fn run(server: &Server, argv: &[&str]) -> (bool, String) {
    run_in(server, argv, None)
}

fn run_in(server: &Server, argv: &[&str], directory: Option<&str>) -> (bool, String) {
    let mut args = json!({ "command": argv });
    if let Some(d) = directory {
        args["directory"] = json!(d);
    }
    let result = server.call("shell_execute", args);
    (!is_error(&result), all_text(&result))
}

/// Shell-mode `exec` to completion: (exit code, stdout + stderr).
fn sh(server: &Server, command: &str, env: Value) -> (Option<i64>, String) {
    let r = server.exec(json!({ "command": command, "env": env, "yield_ms": 15000 }));
    assert_eq!(r["status"], "completed", "{command}: {r}");
    let text = format!(
        "{}{}",
        r["stdout"].as_str().unwrap_or_default(),
        r["stderr"].as_str().unwrap_or_default()
    );
    (r["exit_code"].as_i64(), text)
}

/// The capability lines of a `/proc/<pid>/status`, all zero.
fn assert_no_capability(status: &str, what: &str) {
    for field in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
        let value = status_field(status, field).unwrap_or_else(|| panic!("{what}: {status}"));
        assert_eq!(
            value, "0000000000000000",
            "{what}: {field} {value}\n{status}"
        );
    }
}

#[test]
fn confined_processes_hold_no_capability_and_the_server_keeps_its_own() {
    if !can_run(1, "confined_processes_hold_no_capability") {
        return;
    }
    if !is_root() {
        eprintln!("skipped confined_processes_hold_no_capability: the tests do not run as root");
        return;
    }
    let fx = Renamed::new("esc-caps", PROGRAMS);
    for extra in [&[][..], &[NO_CGROUP][..]] {
        let server = fx.trusted("reader", extra);
        let (ok, text) = run(&server, &["reader", "/proc/self/status"]);
        assert!(ok, "{text}");
        assert_no_capability(&text, "trusted mode");
        // The server keeps its own: only its children dropped theirs.
        let own = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
        assert_ne!(
            status_field(&own, "CapEff:"),
            Some("0000000000000000"),
            "{own}"
        );
        let (ok, text) = run(&server, &["reader", "/proc/self/status"]);
        assert!(ok, "{text}");
        assert_no_capability(&text, "trusted mode, second call");
    }
    let server = fx.shell(&[("YIELDSHELL_SANDBOX", "workspace")]);
    let (code, text) = sh(&server, "cat /proc/self/status", json!({}));
    assert_eq!(code, Some(0), "{text}");
    assert_no_capability(&text, "shell workspace");
    // Without the sandbox a root server's commands are root with capabilities.
    let server = fx.trusted("reader", &[OFF]);
    let (ok, text) = run(&server, &["reader", "/proc/self/status"]);
    assert!(ok, "{text}");
    assert_ne!(status_field(&text, "CapEff:"), Some("0000000000000000"));
}

#[test]
fn a_confined_process_cannot_change_another_process_limits_priority_or_affinity() {
    if !can_run(1, "a_confined_process_cannot_change_another_process") {
        return;
    }
    let fx = Renamed::new("esc-prlimit", PROGRAMS);
    let victim = Victim::start();
    let (nofile, nice) = (victim.nofile(), victim.nice());
    let vpid = victim.pid();
    for extra in [&[][..], &[NO_CGROUP][..]] {
        let server = fx.trusted("limiter,nicer,pinner,reader", extra);
        let spid = server.pid().to_string();
        let server_nofile =
            limits_nofile(&std::fs::read_to_string(format!("/proc/{spid}/limits")).unwrap());
        let (ok, text) = run(&server, &["limiter", "--pid", &spid, "--nofile=8:8"]);
        assert!(!ok, "prlimit on the server must fail: {text}");
        assert!(text.contains("Operation not permitted"), "{text}");
        let after =
            limits_nofile(&std::fs::read_to_string(format!("/proc/{spid}/limits")).unwrap());
        assert_eq!(after, server_nofile);
        let (ok, text) = run(&server, &["limiter", "--pid", &vpid, "--nofile=16:16"]);
        assert!(!ok, "{text}");
        let (ok, text) = run(&server, &["nicer", "-n", "7", "-p", &spid]);
        assert!(!ok, "renice of the server must fail: {text}");
        let (ok, text) = run(&server, &["nicer", "-n", "7", "-p", &vpid]);
        assert!(!ok, "{text}");
        let (ok, text) = run(&server, &["pinner", "-p", "1", &spid]);
        assert!(!ok, "taskset of the server must fail: {text}");
        assert_eq!(
            (victim.nofile(), victim.nice()),
            (nofile.clone(), nice.clone())
        );
        // A process changing itself (pid 0) is not refused.
        let (ok, text) = run(
            &server,
            &["limiter", "--nofile=64:64", "reader", "/proc/self/limits"],
        );
        assert!(ok, "{text}");
        assert_eq!(limits_nofile(&text), "Max open files 64 64 files", "{text}");
        let (ok, text) = run(&server, &["pinner", "1", "reader", "/proc/self/status"]);
        assert!(ok, "{text}");
        assert_eq!(
            status_field(&text, "Cpus_allowed_list:"),
            Some("0"),
            "{text}"
        );
        // The server still works.
        server.assert_alive();
        let (ok, text) = run(&server, &["reader", "/proc/self/limits"]);
        assert!(ok, "{text}");
    }
    // The table lets the same calls through: without the sandbox they change the victim.
    let server = fx.trusted("limiter,nicer,pinner,reader", &[OFF]);
    let (ok, text) = run(&server, &["limiter", "--pid", &vpid, "--nofile=16:16"]);
    assert!(ok, "{text}");
    assert_eq!(victim.nofile(), "Max open files 16 16 files");
    let (ok, text) = run(&server, &["nicer", "-n", "7", "-p", &vpid]);
    assert!(ok, "{text}");
    assert_eq!(victim.nice(), "7");
}

#[test]
fn shell_workspace_cannot_renice_or_limit_the_server_nor_use_io_uring() {
    if !can_run(1, "shell_workspace_cannot_renice_or_limit_the_server") {
        return;
    }
    let fx = Renamed::new("esc-shell", PROGRAMS);
    let io_uring = "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); \
                    b = ctypes.create_string_buffer(120); r = l.syscall(425, 4, b); \
                    print(\"io_uring\", r if r < 0 else \"fd\", ctypes.get_errno() if r < 0 else 0)'";
    let server = fx.shell(&[("YIELDSHELL_SANDBOX", "workspace")]);
    let (code, text) = sh(&server, "prlimit --pid $PPID --nofile=8:8", json!({}));
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("Operation not permitted"), "{text}");
    let (code, text) = sh(&server, "renice -n 5 -p $PPID", json!({}));
    assert_ne!(code, Some(0), "{text}");
    // nice(1) lowers its own priority (who = 0): allowed.
    let (code, text) = sh(&server, "nice -n 3 cat /proc/self/stat", json!({}));
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = sh(&server, io_uring, json!({}));
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("io_uring -1 1"),
        "io_uring_setup must fail with EPERM: {text}"
    );
    // Every later call still works (a prlimit of the server must not make them fail).
    let (code, text) = sh(&server, "echo still-here", json!({}));
    assert_eq!((code, text.trim()), (Some(0), "still-here"));
    // Without the sandbox the same io_uring call gets a descriptor (unless disabled).
    let server = fx.shell(&[]);
    let (code, text) = sh(&server, io_uring, json!({}));
    assert_eq!(code, Some(0), "{text}");
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .is_ok_and(|v| v.trim() != "0");
    if disabled {
        eprintln!("io_uring is disabled on this machine: the unconfined half is not checked");
    } else {
        assert!(text.contains("io_uring fd"), "{text}");
    }
}

const NET_PROBE: &str = "import socket, sys
port = int(sys.argv[1])
for proto in (0, 262):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
        s.settimeout(5)
        s.connect(('127.0.0.1', port))
        print('connect', proto, 'ok')
    except OSError as e:
        print('connect', proto, 'refused', e.errno)
try:
    s = socket.socket()
    s.listen()
    print('listen ok')
except OSError as e:
    print('listen refused', e.errno)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('127.0.0.1', 0))
print('udp ok')
for name, family in (('vsock', 40), ('packet', 17)):
    try:
        socket.socket(family, socket.SOCK_DGRAM if family == 17 else socket.SOCK_STREAM).close()
        print(name, 'ok')
    except OSError as e:
        print(name, 'refused', e.errno)
socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
print('unix ok')
";

#[test]
fn network_deny_leaves_no_mptcp_connect_and_no_unbound_listen() {
    if !can_run(
        4,
        "network_deny_leaves_no_mptcp_connect_and_no_unbound_listen",
    ) {
        return;
    }
    let fx = Renamed::new("esc-net", PROGRAMS);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local listener");
    let port = listener.local_addr().expect("local addr").port();
    let command = format!("python3 -c \"$PROBE\" {port}");
    let env = json!({ "PROBE": NET_PROBE });
    let deny = ("YIELDSHELL_NETWORK", "deny");
    for extra in [
        &[deny][..],
        &[deny, ("YIELDSHELL_SANDBOX", "workspace")][..],
    ] {
        let server = fx.shell(extra);
        let (code, text) = sh(&server, &command, env.clone());
        assert_eq!(code, Some(0), "{extra:?}: {text}");
        assert!(text.contains("connect 0 refused 1"), "{extra:?}: {text}");
        assert!(text.contains("connect 262 refused 1"), "{extra:?}: {text}");
        assert!(text.contains("listen refused 1"), "{extra:?}: {text}");
        assert!(text.contains("udp ok"), "{extra:?}: {text}");
        // vsock would reach a VM's host.
        assert!(text.contains("vsock refused 1"), "{extra:?}: {text}");
        assert!(text.contains("packet refused 1"), "{extra:?}: {text}");
        assert!(text.contains("unix ok"), "{extra:?}: {text}");
    }
    // Network allowed: the same probe connects (MPTCP too, where the kernel has it) and
    // listens.
    let server = fx.shell(&[]);
    let (code, text) = sh(&server, &command, env);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("connect 0 ok"), "{text}");
    assert!(text.contains("listen ok"), "{text}");
    // Without the filter the families are the kernel's business: vsock opens where the
    // kernel has it (errno 97, EAFNOSUPPORT, elsewhere), never EPERM.
    assert!(!text.contains("vsock refused 1"), "{text}");
    let mptcp =
        std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|v| v.trim() == "1");
    if mptcp {
        assert!(text.contains("connect 262 ok"), "{text}");
    } else {
        eprintln!("MPTCP is not enabled here: its unconfined connect is not checked");
    }
}

#[test]
fn trusted_mode_refuses_a_working_directory_in_or_above_the_safe_path() {
    let fx = Renamed::new("esc-cwd", PROGRAMS);
    let bin = path_str(&fx.bin).to_string();
    let server = fx.trusted("cp,cat,wc", &[]);
    // Shadowing: a copy of a program under an allowed name in the PATH.
    let (ok, text) = run_in(&server, &["cp", "/usr/bin/echo", "wc"], Some(&bin));
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "directory {bin} is {bin}, a directory of the safe PATH"
        )),
        "{text}"
    );
    assert!(text.contains("YIELDSHELL_ALLOWED_CWDS"), "{text}");
    assert!(!fx.bin.join("wc").exists());
    // Inside one, through a symlink, and an ancestor of one.
    std::fs::create_dir_all(fx.bin.join("sub")).unwrap();
    std::os::unix::fs::symlink(&fx.bin, fx.work.join("tools")).unwrap();
    for (dir, says) in [
        (format!("{bin}/sub"), "is inside"),
        ("tools".to_string(), "is "),
        ("/".to_string(), "is an ancestor of"),
        (path_str(&fx.root).to_string(), "is an ancestor of"),
        ("/usr".to_string(), "is an ancestor of /usr/bin"),
    ] {
        let (ok, text) = run_in(&server, &["cat", "/dev/null"], Some(&dir));
        assert!(!ok, "{dir}: {text}");
        assert!(
            text.contains(says) && text.contains("safe PATH"),
            "{dir}: {text}"
        );
    }
    // exec's cwd, and the default cwd.
    let r = server.call(
        "exec",
        json!({ "command": "cat /dev/null", "cwd": "/", "side_effects": ["NONE"] }),
    );
    assert!(is_error(&r) && all_text(&r).contains("safe PATH"), "{r}");
    let (ok, text) = run(&server, &["cat", "/dev/null"]);
    assert!(ok, "{text}");
    let path = fx.safe_path();
    let above = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "cat"),
        ("MCP_SHELL_SAFE_PATH", &path),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.root)),
    ]);
    let (ok, text) = run(&above, &["cat", "/dev/null"]);
    assert!(!ok && text.contains("YIELDSHELL_DEFAULT_CWD"), "{text}");
    // A directory the operator lists exactly in YIELDSHELL_ALLOWED_CWDS is accepted, and
    // then the shadowing works: the rule is what refused it above.
    let roots = format!("{bin}:{}", fx.work.display());
    let server = fx.trusted("cp,cat,wc", &[("YIELDSHELL_ALLOWED_CWDS", &roots), OFF]);
    let (ok, text) = run_in(&server, &["cp", "/usr/bin/echo", "wc"], Some(&bin));
    assert!(ok, "{text}");
    let (ok, text) = run(&server, &["wc", "shadowed"]);
    assert!(ok && text.trim() == "shadowed", "{text}");
}

#[test]
fn check_says_whether_the_filter_and_the_capability_drop_apply() {
    if !can_run(
        4,
        "check_says_whether_the_filter_and_the_capability_drop_apply",
    ) {
        return;
    }
    let env = [("ALLOW_COMMANDS", "cat"), ("YIELDSHELL_NETWORK", "deny")];
    let out = run_binary(&["check", "cat", "x"], &env);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("every capability dropped"), "{text}");
    // Every distribution kernel for these architectures can install seccomp filters.
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert!(text.contains("no io_uring (seccomp)"), "{text}");
        assert!(text.contains("no TCP, MPTCP, SCTP or raw socket"), "{text}");
        assert!(!text.contains("not enforced here"), "{text}");
    }
    // Without the filter (as on another architecture), the status says what stays open.
    let mut env = env.to_vec();
    env.push(("YIELDSHELL_TEST_NO_SECCOMP", "1"));
    let out = run_binary(&["check", "cat", "x"], &env);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("not enforced here: the seccomp filter"),
        "{text}"
    );
    assert!(!text.contains("no io_uring (seccomp)"), "{text}");
}
