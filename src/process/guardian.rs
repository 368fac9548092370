//! The guardian: a small process that kills our process groups if the server dies.
//!
//! SIGKILL gives the server no chance to clean up. So before the first command starts, the
//! server starts a guardian: its own binary again, run with a hidden first argument
//! ([`ARG`]), in a session of its own, with stdout and stderr on `/dev/null` and the read
//! end of a pipe as stdin. It ignores the terminal signals and reads the pipe. The server
//! writes `+<pgid>` when it starts a process group, `-<pgid>` when the group is gone, and
//! `o<pid> <start time>` for each process it saw re-parented to it (`tree::note_orphans`:
//! its environment may be unreadable, and once the server is gone it is a child of init).
//! When the pipe reaches end of file (the server exited, however it exited) the guardian
//! sends SIGKILL to every group still open, to every process carrying this server's marker
//! and to every announced orphan still running with the same start time (and their
//! descendants), twice to catch processes forked during the first sweep, then exits. After a clean shutdown there is nothing left for it to do.
//!
//! Where commands run in cgroups (SPEC section 15), the server writes once, first,
//! `c<path prefix>` (`<parent>/yieldshell-<server pid>-`): at end of file the guardian also
//! kills every process in each of the server's command cgroups, found by listing the
//! parent, and removes the emptied cgroups.
//!
//! The guardian is started lazily, by the first spawn: a server that never runs a command
//! (a client's probe that only asks `server/discover`, say) starts no process at all. And
//! since it is spawned (a `vfork`-style clone, `sys::spawn`) rather than forked, it can be
//! started at any time, from any thread.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, Write};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::process::groups::{LIVE, PID, PIPE, STARTS, STARTS_KEPT};
use crate::{base::sys, process::tree};

/// The hidden first argument that makes the binary a guardian.
pub const ARG: &str = "__yieldshell_guardian";

static PREFIX: OnceLock<String> = OnceLock::new();
/// The path prefix of this server's command cgroups, when commands run in cgroups.
static CGROUPS: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Tells the guardian (once it starts) where this server's command cgroups are: every path
/// that starts with `prefix` (see `cgroup::Cgroups`).
pub fn configure_cgroups(prefix: std::path::PathBuf) {
    let _ = CGROUPS.set(prefix);
}
/// Sets the marker prefix of this server's processes; the guardian starts with the first
/// command ([`ensure_started`]).
pub fn configure(prefix: String) {
    let _ = PREFIX.set(prefix);
}

/// Starts the guardian unless it runs already (or could not be started: that is warned
/// about once). Call before a process group is created.
pub fn ensure_started() {
    PIPE.get_or_init(|| match spawn() {
        Ok(pipe) => {
            tree::watch_orphans();
            Some(Mutex::new(pipe))
        }
        Err(e) => {
            crate::base::log::warn!(
                "cannot start the guardian ({e}); a SIGKILL of the server would leave its processes"
            );
            None
        }
    });
}

fn spawn() -> std::io::Result<File> {
    let (read, write) = std::io::pipe()?;
    let null = || File::options().read(true).write(true).open("/dev/null");
    let program = own_binary()?;
    let prefix = PREFIX.get().cloned().unwrap_or_default();
    // An empty environment: the guardian needs none, and the server's may hold secrets.
    let env: Vec<(OsString, OsString)> = Vec::new();
    let started = sys::spawn(sys::SpawnSpec {
        program: &program,
        arg0: Some("yieldshell-guardian"),
        args: &[ARG.to_string(), prefix],
        env: &env,
        cwd: std::path::Path::new("/"),
        stdin_pipe: false,
        stdin_file: Some(File::from(std::os::fd::OwnedFd::from(read))),
        stdout: Some(null()?),
        stderr: Some(null()?),
        join_group: None,
        terminal: None,
        setup: None,
    })?;
    PID.store(started.pid, Ordering::Relaxed);
    let mut pipe = File::from(std::os::fd::OwnedFd::from(write));
    if let Some(prefix) = CGROUPS.get().and_then(|p| p.to_str()) {
        pipe.write_all(format!("c{prefix}\n").as_bytes())?;
    }
    Ok(pipe)
}

/// The path that executes this very binary (also after it was replaced on disk, on Linux).
fn own_binary() -> std::io::Result<String> {
    if cfg!(target_os = "linux") {
        return Ok("/proc/self/exe".to_string());
    }
    let path = std::env::current_exe()?;
    path.into_os_string()
        .into_string()
        .map_err(|_| std::io::Error::other("the binary's path is not UTF-8"))
}

/// The guardian's `main`: `args` are the arguments after [`ARG`] (the marker prefix).
pub fn main(args: &[OsString]) -> std::process::ExitCode {
    sys::ignore_terminal_signals();
    // Like the server, not readable through /proc by the commands it watches over.
    let _ = sys::set_dumpable(false);
    let prefix = args
        .first()
        .and_then(|p| p.to_str())
        .unwrap_or_default()
        .to_string();
    let mut groups: HashSet<u32> = HashSet::new();
    let mut orphans: HashSet<(u32, u64)> = HashSet::new();
    let mut cgroups: Option<std::path::PathBuf> = None;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, rest) = line.split_at(line.len().min(1));
        if sign == "c" {
            cgroups = Some(rest.into());
            continue;
        }
        if sign == "o" {
            // `o<pid> <start time>`: a process the server saw re-parented to it.
            let mut parts = rest.split(' ');
            let pid = parts.next().and_then(|p| p.parse().ok());
            let start = parts.next().and_then(|p| p.parse().ok());
            if let (Some(pid), Some(start)) = (pid, start) {
                orphans.insert((pid, start));
            }
            continue;
        }
        let Ok(pgid) = rest.parse::<u32>() else {
            continue;
        };
        match sign {
            "+" => groups.insert(pgid),
            _ => groups.remove(&pgid),
        };
    }
    let orphans: Vec<(u32, u64)> = orphans.into_iter().collect();
    for _ in 0..2 {
        for &pgid in &groups {
            let _ = sys::killpg(pgid, libc::SIGKILL);
        }
        if !prefix.is_empty() {
            tree::signal_all_with(&prefix, &orphans, libc::SIGKILL);
        }
        if let Some(prefix) = &cgroups {
            kill_cgroups(prefix);
        }
    }
    if let Some(prefix) = &cgroups {
        remove_cgroups(prefix);
    }
    std::process::ExitCode::SUCCESS
}

/// Tells the guardian that process group `pgid` started (`alive`) or is gone.
pub fn announce(pgid: u32, alive: bool) {
    {
        let start = if alive { tree::start_of(pgid) } else { None };
        if let Some(start) = start {
            let mut starts = STARTS.lock();
            let (map, order) = starts.get_or_insert_with(Default::default);
            map.insert(pgid, start);
            order.push_back(pgid);
            while order.len() > STARTS_KEPT {
                if let Some(old) = order.pop_front() {
                    if !order.contains(&old) {
                        map.remove(&old);
                    }
                }
            }
        }
        let mut live = LIVE.lock();
        let set = live.get_or_insert_with(HashMap::new);
        if alive {
            set.insert(pgid, start);
        } else {
            set.remove(&pgid);
        }
    }
    if alive {
        tree::wake_watch();
    }
    if let Some(Some(pipe)) = PIPE.get() {
        let line = format!("{}{pgid}\n", if alive { '+' } else { '-' });
        let _ = pipe.lock().write_all(line.as_bytes());
    }
}

/// The command cgroups whose paths start with `prefix` (`<parent>/yieldshell-<pid>-`).
fn cgroups_under(prefix: &std::path::Path) -> Vec<std::path::PathBuf> {
    let (Some(parent), Some(start)) = (prefix.parent(), prefix.file_name()) else {
        return Vec::new();
    };
    let start = start.to_string_lossy().into_owned();
    let Ok(dir) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&start))
        .map(|e| e.path())
        .collect()
}

/// SIGKILL to every process in the server's command cgroups.
fn kill_cgroups(prefix: &std::path::Path) {
    for dir in cgroups_under(prefix) {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            // Still in the cgroup (checked through the handle's pid) means still ours.
            if let Ok(handle) = sys::ProcHandle::open(pid) {
                let _ = handle.signal(libc::SIGKILL);
            }
        }
    }
}

/// Removes the server's command cgroups once their processes are gone (a killed process
/// leaves its cgroup when it is reaped: wait up to a second).
fn remove_cgroups(prefix: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let left: Vec<_> = cgroups_under(prefix)
            .into_iter()
            .filter(|d| std::fs::remove_dir(d).is_err())
            .collect();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
