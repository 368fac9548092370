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
//! descendants), twice to catch processes forked during the first sweep, then exits. After
//! a clean shutdown there is nothing left for it to do.
//!
//! Where commands run in cgroups, the server writes once, first, `c<path prefix>`
//! (`<parent>/yieldshell-<server pid>-`) and nothing more: at end of file the guardian
//! kills every process in each of the server's command cgroups, found by listing the
//! parent (every process of a command is in its cgroup), and removes the emptied cgroups.
//!
//! The guardian is started lazily, by the first spawn: a server that never runs a command
//! (a client's probe that only asks `server/discover`, say) starts no process at all. And
//! since it is spawned (a `vfork`-style clone, `sys::spawn`) rather than forked, it can be
//! started at any time, from any thread.
//!
//! The server watches it ([`Guardian`], owned by the reaper): a command may stop or kill
//! it (it is the server's child, easy to find), and so may the OOM killer or an operator.
//! The reaper looks at it on every wake (`waitpid` with `WUNTRACED`: SIGCHLD also comes
//! for a stop): a stopped guardian is continued, an ended one replaced by a new one that
//! is sent the whole current state first (written into its pipe before it is spawned), and
//! a start that failed (`EAGAIN` at a pids limit, `EMFILE`) is tried again at the next
//! command and by the reaper, with a backoff. The pipe is never written with a blocking
//! write: lines wait in a bounded queue ([`QUEUE_BYTES`]); when it would overflow (a
//! stopped guardian reads nothing), the queue is replaced by a reset line (`r`) and the
//! whole current state, which the set of live groups bounds.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::base::sys::libc;
use crate::process::groups::{LIVE, PID, STARTS, STARTS_KEPT};
use crate::{base::sys, process::tree};

/// The hidden first argument that makes the binary a guardian.
pub const ARG: &str = "__yieldshell_guardian";

/// Most bytes of lines waiting for the guardian's pipe; past it the queue is replaced by a
/// reset and the whole current state.
pub(crate) const QUEUE_BYTES: usize = 64 * 1024;
/// The delay before the next start after a start failed or a guardian ended young: none
/// the first time, then this, doubled each time up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// A guardian that lived this long ended for a reason of its own: the backoff starts over.
const SETTLED: Duration = Duration::from_secs(10);
/// How often the reaper retries writing lines the pipe did not take.
const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// The server's side of its guardian: the running child, the state it must know (live
/// groups, announced orphans, the cgroups' prefix) and the lines it has not taken yet.
#[derive(Debug, Default)]
pub struct Guardian {
    inner: Mutex<Inner>,
    /// Whether commands run in cgroups (`configure` had a prefix): read without `inner`'s
    /// lock, which the orphan watch is started under.
    holds_cgroups: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct Inner {
    /// The marker prefix of this server's processes.
    prefix: String,
    /// The path prefix of this server's command cgroups, when commands run in cgroups.
    cgroups: Option<PathBuf>,
    child: Option<Child>,
    /// Whether a command was ever launched: from then on a guardian must run.
    wanted: bool,
    /// This program does not run as a guardian (it ended at once with status 0).
    unusable: bool,
    groups: HashSet<u32>,
    orphans: HashSet<(u32, u64)>,
    /// Bytes for the running guardian that its pipe did not take yet.
    pending: Vec<u8>,
    /// No start before this (after a failure or an early end).
    retry_at: Option<Instant>,
    backoff: Duration,
    /// Starts that failed or guardians that ended since one last ran settled.
    troubles: u32,
}

#[derive(Debug)]
struct Child {
    pid: u32,
    /// The write end, non-blocking.
    pipe: File,
    started: Instant,
}

impl Guardian {
    /// Sets the marker prefix of this server's processes and where its command cgroups are
    /// (every path that starts with `cgroups`, see `cgroup::Cgroups`).
    pub fn configure(&self, prefix: String, cgroups: Option<PathBuf>) {
        let mut g = self.inner.lock();
        g.prefix = prefix;
        self.holds_cgroups
            .store(cgroups.is_some(), Ordering::SeqCst);
        g.cgroups = cgroups;
    }

    /// Starts the guardian unless it runs already (a command is never started without
    /// one while one can be started: the backoff holds only the reaper's retries). Call
    /// before a process group is created.
    pub fn ensure_started(self: &Arc<Self>) {
        if sys::OWNER_DEATH_ENDS_COMMANDS {
            // The system ends every command with the server (Windows' kill-on-close jobs).
            return;
        }
        let mut g = self.inner.lock();
        if g.unusable {
            return;
        }
        g.wanted = true;
        if g.child.is_none() {
            self.start(&mut g);
        }
    }

    /// Called by the reaper on every wake: continues a stopped guardian, replaces an ended
    /// one (or retries a failed start when due) and writes what the pipe did not take.
    /// Returns when the reaper should look again, if it must.
    pub fn watch(self: &Arc<Self>) -> Option<Instant> {
        let mut g = self.inner.lock();
        if let Some(child) = &g.child {
            let pid = child.pid;
            match sys::watch_child(pid) {
                Ok(sys::ChildEvent::Stopped(sig)) => {
                    crate::base::log::warn!(
                        "the guardian (pid {pid}) was stopped by {}; continuing it",
                        sys::signal_name(sig)
                    );
                    if let Err(e) = sys::kill(pid, libc::SIGCONT) {
                        crate::base::log::warn!("cannot continue the guardian: {e}");
                    }
                }
                Ok(sys::ChildEvent::Ended(status)) => Self::ended(&mut g, Some(status)),
                Ok(sys::ChildEvent::Gone) => Self::ended(&mut g, None),
                Ok(sys::ChildEvent::Running) | Err(_) => {}
            }
        }
        let now = Instant::now();
        if g.wanted && g.child.is_none() && g.retry_at.is_none_or(|at| at <= now) {
            self.start(&mut g);
        }
        Self::flush(&mut g);
        if g.child.is_some() {
            (!g.pending.is_empty()).then(|| now + FLUSH_EVERY)
        } else if g.wanted {
            g.retry_at
        } else {
            None
        }
    }

    /// Called by the reaper for a child it reaped that was not a command's stage.
    pub fn reaped(&self, pid: u32, status: sys::WaitStatus) {
        let mut g = self.inner.lock();
        if g.child.as_ref().is_some_and(|c| c.pid == pid) {
            Self::ended(&mut g, Some(status));
        }
    }

    /// Tells the guardian that process group `pgid` started (`alive`) or is gone.
    ///
    /// Where commands run in cgroups, every process of every command is in its cgroup,
    /// which the guardian empties (and `tree` needs no start times: they only find strays
    /// of a command without a cgroup): no line is written, so a launch costs no write to the
    /// pipe and no wake-up of the guardian.
    pub fn announce(&self, pgid: u32, alive: bool) {
        let mut g = self.inner.lock();
        if g.cgroups.is_some() {
            drop(g);
            remember_live(pgid, alive, None);
            return;
        }
        remember_group(pgid, alive);
        let changed = if alive {
            g.groups.insert(pgid)
        } else {
            g.groups.remove(&pgid)
        };
        if changed {
            let line = format!("{}{pgid}\n", if alive { '+' } else { '-' });
            Self::send(&mut g, line.as_bytes());
        }
    }

    fn ended(g: &mut Inner, status: Option<sys::WaitStatus>) {
        let Some(child) = g.child.take() else { return };
        if status == Some(sys::WaitStatus::Exited(0)) {
            // A guardian ends with 0 only at end of file on its pipe, which the server
            // holds open: this binary did not run as a guardian (a test harness hosting an
            // in-process server). Starting it again would do the same.
            PID.store(0, Ordering::Relaxed);
            g.wanted = false;
            g.unusable = true;
            g.retry_at = None;
            crate::base::log::warn!(
                "the guardian (pid {}) ended at once: this program does not run as a \
                 guardian; a SIGKILL of the server would leave its processes",
                child.pid
            );
            return;
        }
        let how = match status {
            Some(sys::WaitStatus::Signaled(sig)) => {
                format!("was killed by {}", sys::signal_name(sig))
            }
            Some(sys::WaitStatus::Exited(code)) => format!("exited with status {code}"),
            None => "is gone".to_string(),
        };
        PID.store(0, Ordering::Relaxed);
        if child.started.elapsed() >= SETTLED {
            g.backoff = Duration::ZERO;
        }
        g.troubles += 1;
        crate::base::log::warn!(
            "the guardian (pid {}) {how}; starting a new one{}",
            child.pid,
            if g.backoff.is_zero() {
                String::new()
            } else {
                format!(" in {} ms", g.backoff.as_millis())
            }
        );
        Self::back_off(g);
    }

    fn back_off(g: &mut Inner) {
        g.retry_at = Some(Instant::now() + g.backoff);
        g.backoff = (g.backoff * 2).clamp(RETRY_FIRST, RETRY_MAX);
    }

    /// Starts a guardian; its whole state is in its pipe before it runs.
    fn start(self: &Arc<Self>, g: &mut Inner) {
        match spawn(g) {
            Ok(child) => {
                if g.troubles > 0 {
                    crate::base::log::warn!(
                        "the guardian runs again (pid {}), told {} live groups",
                        child.pid,
                        g.groups.len()
                    );
                }
                PID.store(child.pid, Ordering::Relaxed);
                g.child = Some(child);
                g.retry_at = None;
                g.troubles = 0;
                tree::watch_orphans(self.clone());
            }
            Err(e) => {
                g.troubles += 1;
                let wait = g.backoff.max(RETRY_FIRST);
                crate::base::log::warn!(
                    "cannot start the guardian ({e}); trying again at the next command and in \
                     {} ms: until one runs, a SIGKILL of the server would leave its processes",
                    wait.as_millis()
                );
                g.backoff = wait;
                Self::back_off(g);
            }
        }
    }

    /// Queues `line` for the running guardian and writes what the pipe takes. With no
    /// guardian running nothing is queued: the next one is sent the whole state.
    fn send(g: &mut Inner, line: &[u8]) {
        if g.child.is_none() {
            return;
        }
        if g.pending.len() + line.len() > QUEUE_BYTES {
            // A leading newline ends a line the pipe took only in part; the reset then
            // drops whatever that line said.
            let mut reset = b"\nr\n".to_vec();
            reset.extend_from_slice(&state(g));
            g.pending = reset;
        } else {
            g.pending.extend_from_slice(line);
        }
        Self::flush(g);
    }

    /// Writes what the pipe takes without blocking.
    fn flush(g: &mut Inner) {
        let Some(child) = &g.child else { return };
        while !g.pending.is_empty() {
            match (&child.pipe).write(&g.pending) {
                Ok(0) => break,
                Ok(n) => {
                    g.pending.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Full (a stopped or slow guardian), or broken (it ended: the reaper sees
                // its end and starts a new one, which is sent the whole state).
                Err(_) => break,
            }
        }
    }
}

impl tree::Orphans for Guardian {
    /// Tells the guardian about a process that was re-parented to the server (`pid`, with
    /// its start time from `/proc/<pid>/stat`, which tells it from a later process of the
    /// same pid): a SIGKILL of the server must not let it survive, even when its
    /// environment (and so its marker) cannot be read.
    fn announce_orphan(&self, pid: u32, start: u64) {
        let mut g = self.inner.lock();
        if g.orphans.insert((pid, start)) {
            let line = format!("o{pid} {start}\n");
            Guardian::send(&mut g, line.as_bytes());
        }
    }

    /// The guardian's pid, while one runs.
    fn pid(&self) -> Option<u32> {
        self.inner.lock().child.as_ref().map(|c| c.pid)
    }

    /// Whether its server's commands run in cgroups (it was configured with their prefix).
    fn holds_cgroups(&self) -> bool {
        self.holds_cgroups.load(Ordering::SeqCst)
    }
}

/// Everything a new guardian must know: the cgroups' prefix, the live groups and the
/// announced orphans, as lines.
fn state(g: &Inner) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(prefix) = g.cgroups.as_ref().and_then(|p| p.to_str()) {
        out.extend_from_slice(format!("c{prefix}\n").as_bytes());
    }
    for pgid in &g.groups {
        out.extend_from_slice(format!("+{pgid}\n").as_bytes());
    }
    for (pid, start) in &g.orphans {
        out.extend_from_slice(format!("o{pid} {start}\n").as_bytes());
    }
    out
}

fn spawn(g: &mut Inner) -> std::io::Result<Child> {
    let (read, write) = std::io::pipe()?;
    let pipe = File::from(crate::base::sys::fd::OwnedFd::from(write));
    sys::set_nonblocking(crate::base::sys::fd::AsFd::as_fd(&pipe))?;
    // The state goes in before the guardian exists: once it runs, it knows every group.
    let mut pending = state(g);
    while !pending.is_empty() {
        match (&pipe).write(&pending) {
            Ok(0) => break,
            Ok(n) => {
                pending.drain(..n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    let null = || File::options().read(true).write(true).open("/dev/null");
    let program = own_binary()?;
    // An empty environment: the guardian needs none, and the server's may hold secrets.
    let env: Vec<(OsString, OsString)> = Vec::new();
    let started = sys::spawn(sys::SpawnSpec {
        program: &program,
        arg0: Some("yieldshell-guardian"),
        args: &[ARG.to_string(), g.prefix.clone()],
        env: &env,
        cwd: std::path::Path::new("/"),
        stdin_pipe: false,
        stdin_file: Some(File::from(crate::base::sys::fd::OwnedFd::from(read))),
        stdout: Some(null()?),
        stderr: Some(null()?),
        join_group: None,
        terminal: None,
        setup: None,
    })?;
    g.pending = pending;
    Ok(Child {
        pid: started.pid,
        pipe,
        started: Instant::now(),
    })
}

/// Keeps what `tree` reads of live groups (their leaders' start times).
fn remember_group(pgid: u32, alive: bool) {
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
        remember_live(pgid, alive, start);
    }
    if alive {
        tree::wake_watch();
    }
}

/// Keeps the set of live groups that `tree` reads.
fn remember_live(pgid: u32, alive: bool, start: Option<u64>) {
    let mut live = LIVE.lock();
    let set = live.get_or_insert_with(std::collections::HashMap::new);
    if alive {
        set.insert(pgid, start);
    } else {
        set.remove(&pgid);
    }
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

/// What the guardian knows, from the lines the server sent.
#[derive(Debug, Default, PartialEq, Eq)]
struct Known {
    groups: HashSet<u32>,
    orphans: HashSet<(u32, u64)>,
    cgroups: Option<PathBuf>,
}

impl Known {
    fn apply(&mut self, line: &str) {
        let (sign, rest) = line.split_at(line.len().min(1));
        match sign {
            "c" => self.cgroups = Some(rest.into()),
            // A reset: the whole state follows.
            "r" => {
                self.groups.clear();
                self.orphans.clear();
            }
            "o" => {
                // `o<pid> <start time>`: a process the server saw re-parented to it.
                let mut parts = rest.split(' ');
                let pid = parts.next().and_then(|p| p.parse().ok());
                let start = parts.next().and_then(|p| p.parse().ok());
                if let (Some(pid), Some(start)) = (pid, start) {
                    self.orphans.insert((pid, start));
                }
            }
            "+" | "-" => {
                if let Ok(pgid) = rest.parse::<u32>() {
                    if sign == "+" {
                        self.groups.insert(pgid);
                    } else {
                        self.groups.remove(&pgid);
                    }
                }
            }
            _ => {}
        }
    }
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
    let mut known = Known::default();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        known.apply(&line);
    }
    let Known {
        groups,
        orphans,
        cgroups,
    } = known;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sys::fd::AsFd;
    use std::io::Read;

    /// A guardian that does not read: the server's writes never block, the queue stays
    /// bounded, and once it reads again what it gets leaves it knowing exactly the live
    /// groups (the reset after an overflow drops what it was told before).
    #[test]
    fn a_full_pipe_never_blocks_and_the_state_comes_back_whole() {
        let (mut read, write) = std::io::pipe().unwrap();
        let pipe = File::from(crate::base::sys::fd::OwnedFd::from(write));
        sys::set_nonblocking(pipe.as_fd()).unwrap();
        let guardian = Guardian::default();
        guardian.inner.lock().child = Some(Child {
            pid: u32::MAX,
            pipe,
            started: Instant::now(),
        });
        // About 400 KiB of lines, six times what the pipe and the queue hold together.
        let first = 1_000_000;
        let kept: HashSet<u32> = (first..first + 30_000).filter(|p| p % 3000 == 0).collect();
        for pgid in first..first + 30_000 {
            guardian.announce(pgid, true);
            if !kept.contains(&pgid) {
                guardian.announce(pgid, false);
            }
            assert!(guardian.inner.lock().pending.len() <= QUEUE_BYTES + 64);
        }
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            read.read_to_string(&mut text).unwrap();
            let mut known = Known::default();
            let mut resets = 0;
            for line in text.lines() {
                resets += usize::from(line == "r");
                known.apply(line);
            }
            (known, resets)
        });
        loop {
            let mut g = guardian.inner.lock();
            Guardian::flush(&mut g);
            if g.pending.is_empty() {
                g.child = None;
                break;
            }
            drop(g);
            std::thread::yield_now();
        }
        let (known, resets) = reader.join().unwrap();
        assert!(resets >= 1, "the queue overflowed at least once");
        assert_eq!(known.groups, kept);
        for pgid in kept {
            remember_group(pgid, false);
        }
    }

    #[test]
    fn lines_apply_in_order() {
        let mut k = Known::default();
        for line in [
            "c/sys/fs/cgroup/pids/yieldshell-1-",
            "+5",
            "+6",
            "-5",
            "o7 99",
            "x",
            "+",
        ] {
            k.apply(line);
        }
        assert_eq!(k.groups, HashSet::from([6]));
        assert_eq!(k.orphans, HashSet::from([(7, 99)]));
        assert_eq!(
            k.cgroups.as_deref(),
            Some(std::path::Path::new("/sys/fs/cgroup/pids/yieldshell-1-"))
        );
        k.apply("r");
        assert!(k.groups.is_empty() && k.orphans.is_empty());
    }
}
