//! A descendant that left its group and made itself non-dumpable: its environment, and so
//! its marker, is unreadable to the server's user, yet `stop`, the end of input and a
//! SIGKILL of the server must still end it. The server runs as an
//! unprivileged user (`nobody` through `setpriv` or `runuser` when the tests run as root),
//! since root reads every environment. Each case also runs without `prctl` (the
//! control, found by its marker).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{tagged, unique_marker, wait_until};

const PYTHON: &str = "/usr/bin/python3";

/// The binary, run unprivileged, over raw JSON lines.
struct Unprivileged {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

/// The command prefix that drops root, or why the test cannot run.
fn drop_root() -> Result<Vec<String>, String> {
    // The effective uid is the second number of the "Uid:" line of /proc/self/status.
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .ok_or("no Uid line in /proc/self/status")?;
    if euid != "0" {
        return Ok(Vec::new());
    }
    let candidates: [&[&str]; 2] = [
        &[
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
        ],
        &["runuser", "-u", "nobody", "--"],
    ];
    for prefix in candidates {
        let probe = Command::new(prefix[0])
            .args(&prefix[1..])
            .args(["/usr/bin/test", "-x", env!("CARGO_BIN_EXE_yieldshell")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if probe.is_ok_and(|s| s.success()) {
            return Ok(prefix.iter().map(|s| s.to_string()).collect());
        }
    }
    Err("running as root and neither setpriv nor runuser can run the binary as nobody".into())
}

impl Unprivileged {
    fn start(dir: &std::path::Path) -> Result<Unprivileged, String> {
        if !std::path::Path::new(PYTHON).exists() {
            return Err(format!("{PYTHON} is missing"));
        }
        let mut argv = drop_root()?;
        argv.push(env!("CARGO_BIN_EXE_yieldshell").to_string());
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the binary: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut server = Unprivileged {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "nondumpable", "version": "1"}}),
        );
        Ok(server)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write a request");
        stdin.flush().expect("flush");
        loop {
            let mut text = String::new();
            let n = self.stdout.read_line(&mut text).expect("read a line");
            assert!(n > 0, "the server closed stdout before answering {method}");
            let message: Value = serde_json::from_str(&text).expect("a JSON line");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": args}));
        answer["result"]["structuredContent"].clone()
    }

    /// Ends input and waits for the exit.
    fn end_input(&mut self) {
        self.stdin = None;
        let _ = self.child.wait();
    }

    /// SIGKILLs the server (the binary: setpriv and runuser -u exec it) and reaps it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Unprivileged {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A world-writable scratch directory (the server runs as another user).
fn scratch(label: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(unique_marker(label));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    dir
}

/// The command: a python that leaves the group (`setsid`), detaches from the shell, makes
/// itself non-dumpable when `prctl`, then writes `ready`; the shell ends once it is ready
/// when `finish`, or keeps running.
fn command(dir: &std::path::Path, tag: &str, prctl: bool, finish: bool) -> String {
    let ready = dir.join(format!("{tag}.ready"));
    let ready = ready.display();
    let undump = if prctl {
        "ctypes.CDLL(None).prctl(4, 0); "
    } else {
        ""
    };
    let script = format!(
        "import ctypes, time; {undump}open('{ready}', 'w').write('ready'); time.sleep(120)"
    );
    let tail = if finish { "" } else { "; sleep 120" };
    format!(
        "(setsid {PYTHON} -c \"{script}\" {tag} >/dev/null 2>&1 &); \
         while [ ! -e {ready} ]; do sleep 0.05; done{tail}"
    )
}

/// Starts the stray; returns the record's id once the stray is ready.
fn start_stray(
    server: &mut Unprivileged,
    dir: &std::path::Path,
    tag: &str,
    prctl: bool,
    finish: bool,
) -> String {
    let result = server.call(
        "exec",
        json!({"command": command(dir, tag, prctl, finish), "side_effects": ["NONE"],
               "yield_ms": 0}),
    );
    let id = result["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let ready = dir.join(format!("{tag}.ready"));
    assert!(
        wait_until(Duration::from_secs(20), || ready.exists()),
        "the stray never got ready: {result}"
    );
    assert_eq!(tagged(tag).len(), 1, "one stray runs");
    id
}

fn assert_gone(tag: &str, after: &str) {
    assert!(
        wait_until(Duration::from_secs(10), || tagged(tag).is_empty()),
        "a stray that left its group survived {after}: {:?}",
        tagged(tag)
    );
}

/// Runs `case` with and without `prctl`, or prints why it cannot run.
fn each_variant(label: &str, case: impl Fn(&mut Unprivileged, &std::path::Path, &str, bool)) {
    for prctl in [true, false] {
        let dir = scratch(label);
        let mut server = match Unprivileged::start(&dir) {
            Ok(s) => s,
            Err(reason) => {
                eprintln!("skipped {label}: {reason}");
                return;
            }
        };
        let cleanup = Cleanup {
            tag: unique_marker(&format!("{label}_{prctl}")),
            dir,
        };
        case(&mut server, &cleanup.dir, &cleanup.tag, prctl);
        drop(server);
    }
}

/// Whatever happened (a failed assertion too), leaves no stray and no directory behind.
struct Cleanup {
    tag: String,
    dir: std::path::PathBuf,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in tagged(&self.tag) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn nondumpable_stray_outside_the_group_dies_on_stop() {
    each_variant("nd_stop", |server, dir, tag, prctl| {
        let id = start_stray(server, dir, tag, prctl, false);
        let stopped = server.call("stop", json!({"process_id": id, "force_after_ms": 1000}));
        // `stopped` is left out at its default, true.
        assert_eq!(stopped["status"], "stopped", "{stopped}");
        assert_ne!(stopped["stopped"], false, "{stopped}");
        assert_gone(tag, &format!("stop (prctl: {prctl})"));
        server.end_input();
    });
}

#[test]
fn nondumpable_stray_outside_the_group_dies_at_end_of_input() {
    each_variant("nd_eof", |server, dir, tag, prctl| {
        start_stray(server, dir, tag, prctl, false);
        server.end_input();
        assert_gone(tag, &format!("the end of input (prctl: {prctl})"));
    });
}

#[test]
fn nondumpable_stray_of_a_finished_record_dies_at_end_of_input() {
    each_variant("nd_eof_done", |server, dir, tag, prctl| {
        let id = start_stray(server, dir, tag, prctl, true);
        let waited = server.call("wait", json!({"process_id": id, "timeout_ms": 20000}));
        assert_eq!(waited["status"], "completed", "{waited}");
        server.end_input();
        assert_gone(tag, &format!("the end of input (prctl: {prctl})"));
    });
}

#[test]
fn nondumpable_stray_of_a_finished_record_dies_when_the_server_is_killed() {
    each_variant("nd_kill_done", |server, dir, tag, prctl| {
        let id = start_stray(server, dir, tag, prctl, true);
        // The record ends once its group is gone, and the server announces the strays it
        // was left with to the guardian before that.
        let waited = server.call("wait", json!({"process_id": id, "timeout_ms": 20000}));
        assert_eq!(waited["status"], "completed", "{waited}");
        server.kill();
        assert_gone(tag, &format!("a SIGKILL of the server (prctl: {prctl})"));
    });
}

#[test]
fn stop_leaves_the_nondumpable_stray_of_an_earlier_record_alone() {
    each_variant("nd_other", |server, dir, tag, prctl| {
        let earlier = start_stray(server, dir, tag, prctl, true);
        let waited = server.call("wait", json!({"process_id": earlier, "timeout_ms": 20000}));
        assert_eq!(waited["status"], "completed", "{waited}");
        let later = server.call(
            "exec",
            json!({"command": "echo ready; sleep 120", "side_effects": ["NONE"],
                   "yield_ms": 0}),
        );
        let id = later["process_id"].as_str().expect("process_id");
        let stopped = server.call("stop", json!({"process_id": id, "force_after_ms": 1000}));
        // `stopped` is left out at its default, true.
        assert_eq!(stopped["status"], "stopped", "{stopped}");
        assert_ne!(stopped["stopped"], false, "{stopped}");
        assert_eq!(
            tagged(tag).len(),
            1,
            "stop of a later record ended an earlier record's stray (prctl: {prctl})"
        );
        server.end_input();
        assert_gone(tag, &format!("the end of input (prctl: {prctl})"));
    });
}

#[test]
fn nondumpable_stray_outside_the_group_dies_at_the_timeout() {
    each_variant("nd_timeout", |server, dir, tag, prctl| {
        let result = server.call(
            "exec",
            json!({"command": command(dir, tag, prctl, false), "side_effects": ["NONE"],
                   "yield_ms": 0, "timeout_ms": 3000}),
        );
        let id = result["process_id"]
            .as_str()
            .expect("process_id")
            .to_string();
        let ready = dir.join(format!("{tag}.ready"));
        assert!(
            wait_until(Duration::from_secs(20), || ready.exists()),
            "the stray never got ready: {result}"
        );
        let waited = server.call("wait", json!({"process_id": id, "timeout_ms": 30000}));
        assert_eq!(waited["status"], "timed_out", "{waited}");
        assert_gone(tag, &format!("the timeout (prctl: {prctl})"));
        server.end_input();
    });
}
