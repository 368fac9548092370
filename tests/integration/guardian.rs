//! The guardian is watched: a command that stops or kills it, a start that fails, and a
//! guardian that reads nothing leave no survivor after a SIGKILL of the server and never
//! keep the server from answering or shutting down.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::agents::OuterCap;
use crate::support::{proc_state, send_signal, tagged, wait_until, Server};

/// The server's guardian: its child whose argv[0] is `yieldshell-guardian`.
fn guardian_of(server: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{server}/task")).ok()?;
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).next() == Some(b"yieldshell-guardian"))
        })
}

/// A `sleep` argument unique to this test: the stray a command leaves behind.
fn stray_tag() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "7772.{}{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Kills the strays tagged `tag` when the test ends, whatever happened.
struct Strays(String);

impl Drop for Strays {
    fn drop(&mut self) {
        for pid in tagged(&self.0) {
            send_signal(pid as i32, libc::SIGKILL);
        }
    }
}

/// A command that finds the guardian as any command can (the server's child named
/// `yieldshell-guardian`, looked for again while the list of children is read without it:
/// the kernel's list is not read atomically), sends it `signal`, and leaves a stray `sleep`
/// behind. When it finds none, it prints what it saw.
fn hostile(signal: &str, tag: &str) -> String {
    format!(
        "n=0; while [ -z \"$g\" ] && [ $n -lt 100 ]; do \
           for c in $(cat /proc/$PPID/task/*/children); do \
             [ \"$(tr '\\0' '\\n' </proc/$c/cmdline | head -n1)\" = yieldshell-guardian ] && g=$c; \
           done; n=$((n+1)); [ -n \"$g\" ] || sleep 0.05; \
         done; \
         [ -n \"$g\" ] || {{ for c in $(cat /proc/$PPID/task/*/children); do \
           echo \"child $c: $(tr '\\0' ' ' </proc/$c/cmdline)\" >&2; done; }}; \
         kill -{signal} $g; echo guardian=$g; sleep {tag} >/dev/null 2>&1 &"
    )
}

/// Runs one command first, so that a guardian runs, and checks that it does.
fn guardian_started(server: &Server) -> u32 {
    let first = server.sh("true");
    guardian_of(server.pid()).unwrap_or_else(|| {
        panic!(
            "no guardian runs after a command: {first}; stderr: {}",
            server.stderr_text()
        )
    })
}

fn guardian_in(result: &serde_json::Value) -> u32 {
    let out = result["stdout"].as_str().unwrap_or_default();
    out.trim()
        .strip_prefix("guardian=")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no guardian pid in {result}"))
}

/// SIGKILL of the server, then no stray tagged `tag` may be left.
fn assert_no_survivor(server: &Server, tag: &str) {
    assert!(
        wait_until(Duration::from_secs(10), || !tagged(tag).is_empty()),
        "the stray never started"
    );
    server.signal(libc::SIGKILL);
    server.wait_exit(Duration::from_secs(5)).expect("killed");
    assert!(
        wait_until(Duration::from_secs(10), || tagged(tag).is_empty()),
        "a command's process survived the SIGKILL of the server: {:?}; stderr: {}",
        tagged(tag),
        server.stderr_text()
    );
}

/// With a cgroup per command (the guardian empties the cgroups) and without (it kills the
/// groups it was told about and the marked processes).
const MODES: [&[(&str, &str)]; 2] = [&[], &[("YIELDSHELL_CGROUP", "off")]];

#[test]
fn a_stopped_guardian_is_continued_and_still_guards() {
    for env in MODES {
        a_stopped_guardian_guards(env);
    }
}

fn a_stopped_guardian_guards(env: &[(&str, &str)]) {
    let server = Server::ready_with_env(env);
    let started = guardian_started(&server);
    let tag = stray_tag();
    let _strays = Strays(tag.clone());
    let result = server.sh(&hostile("STOP", &tag));
    let guardian = guardian_in(&result);
    assert_eq!(guardian, started, "the command found another guardian");
    assert!(
        wait_until(Duration::from_secs(10), || {
            server.stderr_text().contains("was stopped by SIGSTOP")
                && proc_state(guardian) != Some('T')
        }),
        "the guardian was not continued: state {:?}; stderr: {}",
        proc_state(guardian),
        server.stderr_text()
    );
    assert_eq!(guardian_of(server.pid()), Some(guardian));
    assert_no_survivor(&server, &tag);
}

#[test]
fn a_killed_guardian_is_replaced_and_the_new_one_guards() {
    for env in MODES {
        a_killed_guardian_is_replaced(env);
    }
}

fn a_killed_guardian_is_replaced(env: &[(&str, &str)]) {
    let server = Server::ready_with_env(env);
    let started = guardian_started(&server);
    let tag = stray_tag();
    let _strays = Strays(tag.clone());
    let result = server.sh(&hostile("KILL", &tag));
    let old = guardian_in(&result);
    assert_eq!(old, started, "the command found another guardian");
    assert!(
        wait_until(Duration::from_secs(10), || guardian_of(server.pid())
            .is_some_and(|g| g != old)),
        "no new guardian; stderr: {}",
        server.stderr_text()
    );
    assert!(
        server.stderr_text().contains("was killed by SIGKILL"),
        "{}",
        server.stderr_text()
    );
    assert_no_survivor(&server, &tag);
}

#[test]
fn a_guardian_that_could_not_start_is_started_by_a_later_command() {
    let cap = match OuterCap::make(400) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: no pids cgroup can be made here: {why}");
            return;
        }
    };
    let server = cap.start_server(&[]);
    // No task more: the guardian's spawn fails with EAGAIN (and so does the command's).
    let current: u64 = cap
        .read("pids.current")
        .trim()
        .parse()
        .expect("pids.current");
    cap.set_max(current);
    let failed = server.call("exec", json!({"command": "true", "side_effects": ["NONE"]}));
    cap.set_max(400);
    // The warning goes through the stderr writer's queue: wait for it to arrive.
    assert!(
        wait_until(Duration::from_secs(10), || server
            .stderr_text()
            .contains("cannot start the guardian")),
        "{failed}; guardian {:?}; stderr: {}",
        guardian_of(server.pid()),
        server.stderr_text()
    );
    assert_eq!(guardian_of(server.pid()), None);
    let tag = stray_tag();
    let _strays = Strays(tag.clone());
    server.sh(&format!("sleep {tag} >/dev/null 2>&1 &"));
    assert!(
        guardian_of(server.pid()).is_some(),
        "{}",
        server.stderr_text()
    );
    assert_no_survivor(&server, &tag);
}

/// A guardian that reads nothing: stopped by a command, and held frozen by the test where
/// the v1 freezer is mounted (the server's SIGCONT cannot wake it there), so its pipe fills:
/// without cgroups each command's group comes and goes as two lines.
#[test]
fn a_guardian_that_reads_nothing_never_stops_the_server() {
    let server = Server::ready_with_env(&[("YIELDSHELL_CGROUP", "off")]);
    let tag = stray_tag();
    let _strays = Strays(tag.clone());
    let result = server.sh(&hostile("STOP", &tag));
    let guardian = guardian_in(&result);
    let _frozen = Freezer::hold(guardian);
    let n = 6000;
    let window = 50;
    let started = Instant::now();
    let mut done = 0;
    while done < n {
        let ids: Vec<_> = (0..window)
            .map(|_| {
                server.send_request(
                    "tools/call",
                    json!({"name": "exec", "arguments": {"command": "true", "side_effects": ["NONE"]}}),
                )
            })
            .collect();
        for id in ids {
            let r = server.response(&id, Duration::from_secs(20));
            assert!(r.get("result").is_some(), "{r}");
        }
        done += window;
    }
    eprintln!("{n} execs in {:?}", started.elapsed());
    let ps = server.call_ok("ps", json!({"include_completed": false}));
    assert!(ps["processes"].is_array(), "{ps}");
    let t = Instant::now();
    server.close_stdin();
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(
        status.is_some(),
        "the server did not exit within 5 s of stdin EOF; stderr: {}",
        server.stderr_text()
    );
    eprintln!("exited {:?} after EOF", t.elapsed());
}

/// A v1 freezer cgroup holding one process frozen until dropped.
struct Freezer(Option<std::path::PathBuf>);

impl Freezer {
    fn hold(pid: u32) -> Freezer {
        let root = std::path::Path::new("/sys/fs/cgroup/freezer");
        let dir = root.join(format!("yieldshell-test-{}-{pid}", std::process::id()));
        if std::fs::create_dir(&dir).is_err() {
            eprintln!("no v1 freezer here: the guardian is only stopped");
            return Freezer(None);
        }
        let frozen = std::fs::write(dir.join("cgroup.procs"), pid.to_string()).is_ok()
            && std::fs::write(dir.join("freezer.state"), "FROZEN").is_ok();
        if !frozen {
            eprintln!("cannot freeze the guardian: it is only stopped");
        }
        Freezer(Some(dir))
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        let Some(dir) = &self.0 else { return };
        let _ = std::fs::write(dir.join("freezer.state"), "THAWED");
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines() {
            let _ = std::fs::write("/sys/fs/cgroup/freezer/cgroup.procs", pid);
        }
        let _ = std::fs::remove_dir(dir);
    }
}
