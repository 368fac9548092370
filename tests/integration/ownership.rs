//! A command's processes stay its own: a daemon that leaves
//! the command's session (`setsid … &`), a double fork (`(setsid sh -c 'sleep &' &)`), one
//! with a cleared environment (`env -i`) and a non-dumpable one keep their record
//! `running` (an `exec` whose shell exits returns `backgrounded`), are counted by `ps`, end
//! with `stop` (before it answers), at shutdown and with `yieldshell call`.
//!
//! Where the server can make a cgroup per command (root with a cgroup v1 pids hierarchy, or
//! a delegated v2 subtree) the record holds them all. Without one (`YIELDSHELL_CGROUP=off`,
//! the fallback) `stop`, shutdown and `call` still end them; SECURITY.md says what differs.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{pid_gone, run_binary, unique_marker, wait_until, Server};

/// A `sleep` duration no other process uses, to find the daemon by its command line.
fn unique_sleep() -> String {
    let marker = unique_marker("own");
    let digits: String = marker.chars().filter(char::is_ascii_digit).collect();
    let tail = &digits[digits.len().saturating_sub(9)..];
    format!("600.{tail}")
}

/// Live (non-zombie) processes whose last argument is `tag`.
fn tagged(tag: &str) -> Vec<u32> {
    crate::support::tagged(tag)
        .into_iter()
        .filter(|&pid| !pid_gone(pid))
        .collect()
}

/// Kills what a failed test left (by tag), whatever happened.
struct Sweep(Vec<String>);

impl Drop for Sweep {
    fn drop(&mut self) {
        for tag in &self.0 {
            for pid in tagged(tag) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// A daemon shape: its label and the command that starts one, given its tag.
type Shape = (&'static str, fn(&str) -> String);

/// The daemon shapes: each leaves the command's group or session in its own way.
fn shapes() -> Vec<Shape> {
    vec![
        ("setsid", |t| {
            format!("setsid sleep {t} >/dev/null 2>&1 </dev/null & echo started")
        }),
        ("double fork", |t| {
            format!("(setsid sh -c 'sleep {t} &' &); echo started")
        }),
        ("env -i double fork", |t| {
            format!("(env -i setsid sleep {t} &); echo started")
        }),
        ("non-dumpable double fork", |t| {
            format!(
                "(setsid python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0); \
                 time.sleep(600)' {t} >/dev/null 2>&1 &); echo started"
            )
        }),
    ]
}

/// Whether the server runs each command in a cgroup: `ps` counts a record's processes.
fn has_cgroups(server: &Server, id: &str) -> bool {
    server
        .ps_entry(id)
        .is_some_and(|e| e["processes"].as_u64().is_some())
}

/// Starts `command`, waits until its daemon (found by `tag`) runs; returns the exec result.
fn start_daemon(server: &Server, command: &str, tag: &str) -> Value {
    let result = server.exec(json!({"command": command, "yield_ms": 20000}));
    assert!(
        wait_until(Duration::from_secs(20), || tagged(tag).len() == 1),
        "the daemon never ran: {result}"
    );
    result
}

#[test]
fn every_daemon_shape_keeps_its_record_running_until_stop_ends_it() {
    let python = std::path::Path::new("/usr/bin/python3").exists();
    for (label, shape) in shapes() {
        if label.starts_with("non-dumpable") && !python {
            eprintln!("skipped {label}: no python3");
            continue;
        }
        let server = Server::ready();
        let tag = unique_sleep();
        let _sweep = Sweep(vec![tag.clone()]);
        let result = start_daemon(&server, &shape(&tag), &tag);
        let id = result["process_id"]
            .as_str()
            .expect("process_id")
            .to_string();
        if !has_cgroups(&server, &id) {
            eprintln!("skipped the running-state checks of {label}: no cgroup per command here");
        } else {
            // The shell exited; the daemon it left keeps the record running.
            assert_eq!(result["status"], "backgrounded", "{label}: {result}");
            let entry = server.ps_entry(&id).expect("listed");
            assert_eq!(entry["status"], "running", "{label}: {entry}");
            // The intermediate shells are on their way out (reaped by the server).
            let mut entry = entry;
            assert!(
                wait_until(Duration::from_secs(10), || {
                    entry = server.ps_entry(&id).expect("listed");
                    entry["processes"] == 1
                }),
                "{label}: one daemon lives: {entry}"
            );
            assert_eq!(entry["status"], "running", "{label}: {entry}");
        }
        let daemon = tagged(&tag);
        let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 2000}));
        assert_eq!(stopped["stopped"], true, "{label}: {stopped}");
        assert_eq!(stopped["status"], "stopped", "{label}: {stopped}");
        // stop answers once every process of the record ended: no waiting here.
        assert!(
            daemon.iter().all(|&p| pid_gone(p)),
            "{label}: the daemon {daemon:?} survived stop"
        );
        let entry = server.ps_entry(&id).expect("listed");
        assert_eq!(entry["processes"], 0, "{label}: {entry}");
    }
}

#[test]
fn a_daemon_that_keeps_the_pipes_is_still_captured_after_its_shell_exits() {
    let server = Server::ready();
    let tag = unique_sleep();
    let _sweep = Sweep(vec![tag.clone()]);
    let command = format!(
        "setsid sh -c 'while [ ! -e /proc/$$/nonexistent ]; do sleep {tag}; done' & \
         setsid sh -c 'echo from-daemon; sleep 600' & echo started"
    );
    let result = server.exec(json!({"command": command, "yield_ms": 20000}));
    let id = result["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    if !has_cgroups(&server, &id) {
        eprintln!("skipped: no cgroup per command here");
        server.call_ok("stop", json!({"process_id": id, "force_after_ms": 1000}));
        return;
    }
    assert_eq!(result["status"], "backgrounded", "{result}");
    server.wait_for_output(&id, "from-daemon");
    let entry = server.ps_entry(&id).expect("listed");
    assert_eq!(entry["status"], "running", "{entry}");
    // Two daemon shells and their sleeps.
    assert_eq!(entry["processes"], 4, "{entry}");
    let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 2000}));
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert!(tagged(&tag).is_empty(), "a daemon survived stop");
}

#[test]
fn every_daemon_shape_ends_at_shutdown_with_and_without_cgroups() {
    for cgroup in ["auto", "off"] {
        let server = Server::ready_with_env(&[("YIELDSHELL_CGROUP", cgroup)]);
        let mut tags = Vec::new();
        for (label, shape) in shapes() {
            if label.starts_with("non-dumpable")
                && !std::path::Path::new("/usr/bin/python3").exists()
            {
                continue;
            }
            let tag = unique_sleep();
            start_daemon(&server, &shape(&tag), &tag);
            tags.push(tag);
        }
        let sweep = Sweep(tags.clone());
        server.close_stdin();
        assert!(
            server.wait_exit(Duration::from_secs(20)).is_some(),
            "the server did not exit (cgroup {cgroup})"
        );
        for tag in &sweep.0 {
            assert!(
                wait_until(Duration::from_secs(5), || tagged(tag).is_empty()),
                "a daemon survived the shutdown (cgroup {cgroup}): {tag}"
            );
        }
    }
}

#[test]
fn stop_ends_every_daemon_shape_without_cgroups_too() {
    for (label, shape) in shapes() {
        if label.starts_with("non-dumpable") && !std::path::Path::new("/usr/bin/python3").exists() {
            continue;
        }
        let server = Server::ready_with_env(&[("YIELDSHELL_CGROUP", "off")]);
        let tag = unique_sleep();
        let _sweep = Sweep(vec![tag.clone()]);
        let id = server
            .exec(json!({"command": format!("{}; sleep 600", shape(&tag)), "yield_ms": 0}))
            ["process_id"]
            .as_str()
            .expect("process_id")
            .to_string();
        assert!(
            wait_until(Duration::from_secs(20), || tagged(&tag).len() == 1),
            "{label}: the daemon never ran"
        );
        let stopped = server.call_ok("stop", json!({"process_id": id, "force_after_ms": 2000}));
        assert_eq!(stopped["stopped"], true, "{label}: {stopped}");
        assert!(
            wait_until(Duration::from_secs(10), || tagged(&tag).is_empty()),
            "{label}: the daemon survived stop without cgroups"
        );
    }
}

#[test]
fn yieldshell_call_leaves_no_process_behind() {
    for cgroup in ["auto", "off"] {
        for (label, shape) in shapes() {
            if label.starts_with("non-dumpable")
                && !std::path::Path::new("/usr/bin/python3").exists()
            {
                continue;
            }
            let tag = unique_sleep();
            let _sweep = Sweep(vec![tag.clone()]);
            let args = json!({"command": shape(&tag), "side_effects": ["NONE"],
                              "yield_ms": 1500})
            .to_string();
            let out = run_binary(
                &["call", "exec", &args],
                &[("YIELDSHELL_CGROUP", cgroup), ("PATH", "/usr/bin:/bin")],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{label}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // `call` returns after its shutdown: whatever the command left is gone already
            // (a killed process may need a moment to leave /proc).
            assert!(
                wait_until(Duration::from_secs(2), || tagged(&tag).is_empty()),
                "{label} (cgroup {cgroup}): left behind by yieldshell call: {:?}",
                tagged(&tag)
            );
        }
    }
}

/// What escapes (SECURITY.md): a process that moves itself out of its command's cgroup
/// (root can write any cgroup's `cgroup.procs`) is no longer the record's, so `stop`
/// misses it; it is still a descendant of the server (a child subreaper), so shutdown
/// ends it.
#[test]
fn a_process_that_leaves_its_cgroup_escapes_stop_but_not_shutdown() {
    let server = Server::ready();
    let tag = unique_sleep();
    let _sweep = Sweep(vec![tag.clone()]);
    let probe = server.exec(json!({"command": "sleep 600", "yield_ms": 0}));
    let probe_id = probe["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    let cgroups = has_cgroups(&server, &probe_id);
    let outside = probe["pid"]
        .as_u64()
        .and_then(|pid| outside_of_command_cgroup(pid as u32));
    server.call_ok(
        "stop",
        json!({"process_id": probe_id, "force_after_ms": 1000}),
    );
    if !cgroups {
        eprintln!("skipped: no cgroup per command here");
        return;
    }
    let outside = outside.expect("the command's cgroup and its parent's cgroup.procs");
    let command = format!(
        "setsid sh -c 'echo $$ > {outside} && exec sleep {tag}' >/dev/null 2>&1 & echo started"
    );
    let result = start_daemon(&server, &command, &tag);
    let id = result["process_id"]
        .as_str()
        .expect("process_id")
        .to_string();
    // Out of the cgroup: the record ended when its shell did.
    let waited = server.call_ok("wait", json!({"process_id": id, "timeout_ms": 20000}));
    assert_eq!(waited["status"], "completed", "{waited}");
    assert_eq!(tagged(&tag).len(), 1, "the escaped process runs");
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(20)).is_some());
    assert!(
        wait_until(Duration::from_secs(5), || tagged(&tag).is_empty()),
        "the escaped process survived the shutdown"
    );
}

/// The `cgroup.procs` of the cgroup that holds `pid`'s command cgroup (v1 or v2,
/// whichever the server made it in), found from `/proc/<pid>/cgroup` and the mounts.
fn outside_of_command_cgroup(pid: u32) -> Option<String> {
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let (controllers, path) = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctl, path) = (parts.next()?, parts.next()?, parts.next()?);
        path.contains("/yieldshell-")
            .then(|| (ctl.to_string(), path.to_string()))
    })?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut f = left.split(' ');
        let (root, point) = (f.nth(3)?, f.next()?);
        let mut r = right.split(' ');
        let (fstype, _, opts) = (r.next()?, r.next()?, r.next()?);
        let hit = match controllers.as_str() {
            "" => fstype == "cgroup2",
            ctl => fstype == "cgroup" && opts.split(',').any(|o| o == ctl),
        };
        (hit && root == "/").then(|| point.to_string())
    })?;
    let parent = path.rsplit_once('/')?.0;
    Some(format!("{mount}{parent}/cgroup.procs"))
}
