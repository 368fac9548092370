//! One managed command: its state machine, its output pump, its stdin.
//!
//! A record is *finished* only when three things have happened: the leader (the shell) was
//! reaped, its process group is empty, and both output pipes reached end of file. These
//! are separate facts, learned by separate threads (the reaper reaps and watches groups,
//! the pump reads the pipes), so a descendant that keeps the pipes open, or a group that
//! outlives its leader, never loses output and never makes a record look finished early.
//!
//! The state lives under one `parking_lot::Mutex`. Every change (new output, exit, group
//! gone, end of file, stop, cancellation) notifies a `Condvar` (shutdown sleeps on it) and
//! wakes every parked watcher (`exec`, `wait`, `stop`, `write`: see `wait`), which then
//! looks again on a pool worker: nothing polls and no call holds a thread while it waits.
//!
//! Architecture invariant: a process group is signalled only while `group_gone` is false,
//! checked under the state lock; the reaper sets `group_gone` under the same lock. Linux
//! does not reuse a pid while a process group of that id has a member, so `killpg` cannot
//! reach a stranger while the flag is false.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::base::ring::Output;
#[cfg(not(target_os = "linux"))]
use crate::base::ring::{STDERR, STDOUT};
#[cfg(not(target_os = "linux"))]
use crate::base::sys::fd::AsFd;
use crate::base::sys::libc;
use crate::base::sys::{self, WaitStatus};
use crate::policy::redact::Filter;
#[cfg(not(target_os = "linux"))]
use crate::policy::redact::Source;
use crate::process::cgroup::CommandGroup;
use crate::process::inputwait::Input;
use crate::process::pty::Terminal;
use crate::process::tree;

/// Status as shown to users.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Not finished.
    Running,
    /// Ended on its own.
    Completed,
    /// Ended after `timeout_ms`.
    TimedOut,
    /// Ended after `stop` (or cancellation, or shutdown).
    Stopped,
    /// The server lost track of it (an internal error).
    Failed,
}

impl Status {
    /// The name used in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::TimedOut => "timed_out",
            Status::Stopped => "stopped",
            Status::Failed => "failed",
        }
    }
}

/// Why a record is being ended, if not on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Nothing asked it to end.
    Natural,
    /// `stop`, cancellation or shutdown.
    Stopped,
    /// `timeout_ms` expired.
    TimedOut,
    /// Internal error.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Failed,
    /// A stream went over the output cap (trusted mode).
    OutputCap,
}

/// Static facts about a record.
#[derive(Debug)]
pub struct Info {
    /// `proc_` + 12 hex digits.
    pub id: String,
    /// Leader pid, also the process group id.
    pub pid: u32,
    /// Pids of every stage, in pipeline order (one entry for a shell command). Each stage
    /// leads its own session and process group, so these are also the record's process
    /// group ids. The record's exit status is that of the first stage that failed (see
    /// `State::failed_stage`), else the last stage's.
    pub stages: Vec<u32>,
    /// The program of each stage as the caller wrote it (`argv[0]`), to name a failed one.
    pub stage_names: Vec<String>,
    /// Stop the group when a stream exceeds this many bytes (trusted mode).
    pub output_cap: Option<u64>,
    /// The command as given (redacted).
    pub command: String,
    /// The label given by the caller.
    pub name: Option<String>,
    /// Resolved working directory.
    pub cwd: String,
    /// Wall-clock start.
    pub started_wall: SystemTime,
    /// Monotonic start.
    pub started: Instant,
    /// Environment marker value that proves a descendant is ours.
    pub marker: String,
    /// Terminal, stdin identity and cgroup.
    pub agent: crate::process::record::RecordExtras,
}

/// Mutable state, under the record's lock.
#[derive(Debug)]
pub struct State {
    /// Both streams.
    pub output: Output,
    /// The exit of the last stage once every stage was reaped, and when.
    pub leader: Option<(WaitStatus, Instant)>,
    /// The exit of each stage, once reaped.
    pub stage_exits: Vec<Option<WaitStatus>>,
    /// The process group has no member left.
    pub group_gone: bool,
    /// End of file seen on stdout and stderr.
    pub eof: [bool; 2],
    /// When the record finished.
    pub ended: Option<(Instant, SystemTime)>,
    /// When SIGKILL was first sent to the record (by `stop`'s escalation, a timeout or a
    /// cancel): what `stop` waits on before it reports that the record outlived it.
    pub sigkill_at: Option<Instant>,
    /// Why it is ending.
    pub reason: EndReason,
    /// A failure writing the initial stdin.
    pub stdin_error: Option<String>,
    /// When output last arrived.
    pub last_output: Instant,
    /// Where a read without `since_seq` goes on, per `streams` choice (both, stdout,
    /// stderr); 0 before the first answer. Only moves forward.
    pub cursors: [u64; 3],
}

impl State {
    /// The status shown to users.
    pub fn status(&self) -> Status {
        if self.ended.is_none() {
            return Status::Running;
        }
        match self.reason {
            EndReason::Natural => Status::Completed,
            EndReason::Stopped | EndReason::OutputCap => Status::Stopped,
            EndReason::TimedOut => Status::TimedOut,
            EndReason::Failed => Status::Failed,
        }
    }

    /// What killed the record for its output: the stream, the limit and the bytes it
    /// printed (trusted mode's output cap).
    pub fn killed_for_output(&self, cap: Option<u64>) -> Option<(usize, u64, u64)> {
        if self.reason != EndReason::OutputCap {
            return None;
        }
        let cap = cap?;
        let over = |i| self.output.bytes_total(i) > cap;
        let stream = if over(0) || !over(1) { 0 } else { 1 };
        Some((stream, cap, self.output.bytes_total(stream)))
    }

    /// The first stage of a pipeline that failed, in pipeline order, with its exit: a
    /// non-zero status or a signal. A stage before the last one that was killed by SIGPIPE
    /// has not failed: a later stage stopped reading (`seq 1 1000000 | head -1`).
    pub fn failed_stage(&self) -> Option<(usize, WaitStatus)> {
        let last = self.stage_exits.len().checked_sub(1)?;
        if last == 0 {
            return None;
        }
        self.stage_exits
            .iter()
            .enumerate()
            .find_map(|(i, e)| match e {
                Some(WaitStatus::Exited(0)) | None => None,
                Some(WaitStatus::Signaled(libc::SIGPIPE)) if i < last => None,
                Some(status) => Some((i, *status)),
            })
    }

    /// The leader's exit code and signal name, if reaped.
    pub fn exit(&self) -> (Option<i32>, Option<String>) {
        match self.leader {
            Some((WaitStatus::Exited(code), _)) => (Some(code), None),
            Some((WaitStatus::Signaled(sig), _)) => (None, Some(sys::signal_name(sig))),
            None => (None, None),
        }
    }

    fn maybe_finish(&mut self) -> bool {
        if self.ended.is_none()
            && self.leader.is_some()
            && self.group_gone
            && self.eof == [true, true]
        {
            self.ended = Some((Instant::now(), SystemTime::now()));
            return true;
        }
        false
    }
}

/// One managed command.
#[derive(Debug)]
pub struct Proc {
    /// Static facts.
    pub info: Info,
    state: Mutex<State>,
    cond: Condvar,
    stdin: Mutex<Option<File>>,
    /// Parked waiters (see `wait`), held weakly: a finished waiter simply goes away.
    watchers: Mutex<Vec<Weak<dyn Watcher>>>,
    /// Writers of stdin in arrival order: only the first one writes, so that the bytes of
    /// two writes never interleave.
    writers: Mutex<std::collections::VecDeque<u64>>,
    next_writer: std::sync::atomic::AtomicU64,
}

/// Something parked on records that must look again when one of them changes.
pub trait Watcher: Send + Sync {
    /// Called after a change (output, exit, group gone, end of file, cancellation). Must
    /// not block: it schedules the look.
    fn wake(&self);
}

impl Proc {
    /// A record for a freshly spawned leader.
    /// Each stream keeps its newest `buffer_bytes` and its first `head_bytes` for good.
    pub fn new(info: Info, buffer_bytes: usize, head_bytes: usize, stdin: Option<File>) -> Proc {
        let now = Instant::now();
        let stages = info.stages.len();
        Proc {
            info,
            state: Mutex::new(State {
                output: Output::with_head(buffer_bytes, head_bytes),
                leader: None,
                stage_exits: vec![None; stages],
                group_gone: false,
                sigkill_at: None,
                eof: [false, false],
                ended: None,
                reason: EndReason::Natural,
                stdin_error: None,
                last_output: now,
                cursors: [0; 3],
            }),
            cond: Condvar::new(),
            stdin: Mutex::new(stdin),
            watchers: Mutex::new(Vec::new()),
            writers: Mutex::new(std::collections::VecDeque::new()),
            next_writer: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Locks the state.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Sleeps until notified or `deadline`; returns the guard.
    pub fn wait_until(&self, guard: &mut MutexGuard<'_, State>, deadline: Instant) {
        self.cond.wait_until(guard, deadline);
    }

    /// Wakes every waiter (used by cancellation).
    pub fn notify(&self) {
        self.changed();
    }

    /// Registers a parked waiter: it is woken on every change of this record until it is
    /// dropped.
    pub fn watch(&self, watcher: Weak<dyn Watcher>) {
        let mut list = self.watchers.lock();
        list.retain(|w| w.strong_count() > 0);
        list.push(watcher);
    }

    /// Wakes the condition variable and every parked waiter. Called after each change,
    /// never with the state lock held.
    fn changed(&self) {
        self.cond.notify_all();
        let live: Vec<Arc<dyn Watcher>> = {
            let mut list = self.watchers.lock();
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        for w in live {
            w.wake();
        }
    }

    /// Whether the record has finished.
    pub fn is_finished(&self) -> bool {
        self.state.lock().ended.is_some()
    }

    /// Takes bytes read from `stream` (or its end of file, with `None`) through the
    /// stream's filter into the ring, enforces the output cap, and wakes waiters.
    pub fn take_output(&self, stream: usize, filter: &mut Filter, data: Option<&[u8]>) {
        let mut finished = false;
        let mut st = self.state.lock();
        let out = &mut st.output;
        match data {
            None => {
                filter.finish(&mut |bytes| out.push(stream, bytes));
                out.close(stream);
                st.eof[stream] = true;
                finished = st.maybe_finish();
                if finished {
                    self.release_stdin();
                }
            }
            Some(bytes) => {
                filter.feed(bytes, &mut |b| out.push(stream, b));
                st.last_output = Instant::now();
            }
        }
        let over_cap = self
            .info
            .output_cap
            .is_some_and(|cap| st.output.bytes_total(stream) > cap)
            && st.reason == EndReason::Natural
            && st.ended.is_none();
        if over_cap {
            st.reason = EndReason::OutputCap;
            if !st.group_gone {
                for &pgid in &self.info.stages {
                    let _ = sys::killpg(pgid, libc::SIGKILL);
                }
            }
        }
        drop(st);
        self.changed();
        if finished {
            self.clear_after_finish();
        }
    }

    /// Closes the server's end of stdin once the record finished, so that finished records
    /// hold no descriptor. A writer still holding it notices within a second and gives up.
    fn release_stdin(&self) {
        if let Some(mut slot) = self.stdin.try_lock() {
            *slot = None;
        }
        // Called exactly when the record finishes: its temporary directory can go too.
        self.info.agent.finished();
    }

    /// Removes the record's cgroup. Called once, by the thread that saw the record finish,
    /// after the record's waiters were woken: the `rmdir` of a cgroup (tens of
    /// microseconds) is not on the path of the answer.
    fn clear_after_finish(&self) {
        self.info.agent.finished_after_answer();
    }

    /// Whether the server still holds the command's stdin (a write in progress counts).
    pub fn stdin_open(&self) -> bool {
        self.stdin.try_lock().is_none_or(|slot| slot.is_some())
    }

    /// Called by the reaper when stage `pid` was reaped.
    pub fn on_stage_exit(&self, pid: u32, status: WaitStatus) {
        let mut finished = false;
        let mut st = self.state.lock();
        if let Some(i) = self.info.stages.iter().position(|&p| p == pid) {
            st.stage_exits[i] = Some(status);
        }
        if st.stage_exits.iter().all(Option::is_some) {
            // A pipeline fails with its first failed stage, as MCP Shell Server reported it.
            let last = st.stage_exits.last().copied().flatten().unwrap_or(status);
            let exit = st.failed_stage().map_or(last, |(_, failed)| failed);
            st.leader = Some((exit, Instant::now()));
            finished = st.maybe_finish();
            if finished {
                self.release_stdin();
            }
        }
        drop(st);
        self.changed();
        if finished {
            self.clear_after_finish();
        }
    }

    /// Called by the reaper: checks under the lock whether the group is empty now.
    /// Returns true when it is (and records it).
    pub fn check_group(&self, guardian: &crate::process::guardian::Guardian) -> bool {
        let mut st = self.state.lock();
        if !st.group_gone
            && !self.info.stages.iter().any(|&pgid| sys::group_exists(pgid))
            && self.info.agent.cgroup.as_ref().is_none_or(|g| g.is_empty())
        {
            st.group_gone = true;
            for &pgid in &self.info.stages {
                guardian.announce(pgid, false);
            }
            // What this record left behind (re-parented to the server) must not outlive a
            // SIGKILL of the server: tell the guardian, before anyone learns it finished.
            tree::note_orphans(guardian);
            let finished = st.maybe_finish();
            if finished {
                self.release_stdin();
            }
            drop(st);
            self.changed();
            if finished {
                self.clear_after_finish();
            }
            return true;
        }
        st.group_gone
    }

    /// Marks the record as ending for `reason` unless it already ends for another reason.
    pub fn set_reason(&self, reason: EndReason) {
        let mut st = self.state.lock();
        if st.ended.is_none() && st.reason == EndReason::Natural {
            st.reason = reason;
        }
    }

    /// Sends `signal` to the process group of every stage; true if any was reached. The
    /// caller holds the state lock and has checked `group_gone`.
    fn killpg_all(&self, signal: i32) -> bool {
        let mut sent = false;
        for &pgid in &self.info.stages {
            sent |= sys::killpg(pgid, signal).is_ok();
        }
        sent
    }

    /// Sends `signal` to the process groups and the cgroup only (shutdown signals the
    /// strays of all records with one walk of the server's descendants instead of one per
    /// record).
    pub fn signal_group(&self, signal: i32) -> bool {
        let sent_group = {
            let mut st = self.state.lock();
            if signal == libc::SIGKILL && st.sigkill_at.is_none() {
                st.sigkill_at = Some(Instant::now());
            }
            !st.group_gone && self.killpg_all(signal)
        };
        sent_group | (self.info.agent.signal_cgroup(signal) > 0)
    }

    /// Sends `signal` to every process of the record: its process groups and its cgroup
    /// (which holds all of them, wherever they moved: the cost is what the record holds);
    /// without a cgroup, also to every marked or adopted descendant that left the groups.
    /// Returns false when nothing was left to signal.
    pub fn signal(&self, signal: i32) -> bool {
        // Without a cgroup the strays are found by walking down from the stages: walk while
        // the tree is whole, before the group's signal ends a parent and its children move
        // to the server.
        let strays = self.info.agent.cgroup.is_none()
            && tree::signal_strays(
                &self.info.marker,
                &self.info.stages,
                signal,
                self.info
                    .agent
                    .guardian
                    .as_deref()
                    .map(|g| g as &dyn tree::Orphans),
            ) > 0;
        self.signal_group(signal) | strays
    }

    /// How many processes of the record live now, when it has a cgroup (Linux) or a job
    /// (Windows) to count them in.
    pub fn live_processes(&self) -> Option<usize> {
        self.info
            .agent
            .cgroup
            .as_ref()
            .map(|g| g.process_count())
            .or_else(|| sys::group_process_count(*self.info.stages.first()?))
    }

    /// Ends the record even though a pipe is still open (a descendant we could not find
    /// holds it). Used only after SIGKILL and a further grace.
    pub fn force_end(&self) {
        let mut finished = false;
        let mut st = self.state.lock();
        if st.ended.is_none() && st.leader.is_some() && st.group_gone {
            st.eof = [true, true];
            finished = st.maybe_finish();
            if finished {
                self.release_stdin();
            }
        }
        drop(st);
        self.changed();
        if finished {
            self.clear_after_finish();
        }
    }

    /// Joins the queue of stdin writers; returns the writer's ticket.
    pub fn stdin_enqueue(&self) -> u64 {
        let ticket = self
            .next_writer
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.writers.lock().push_back(ticket);
        ticket
    }

    /// Whether writer `ticket` is first in the queue.
    pub fn stdin_turn(&self, ticket: u64) -> bool {
        self.writers.lock().front() == Some(&ticket)
    }

    /// Leaves the queue of stdin writers; the next writer is woken.
    pub fn stdin_leave(&self, ticket: u64) {
        let was_first = {
            let mut q = self.writers.lock();
            let first = q.front() == Some(&ticket);
            q.retain(|&t| t != ticket);
            first
        };
        if was_first {
            self.changed();
        }
    }

    /// Writes as much of `data[*off..]` as stdin takes without blocking. `Ok(true)` once
    /// everything is written (stdin is then closed if `close`); a failure closes stdin.
    pub fn write_now(&self, data: &[u8], off: &mut usize, close: bool) -> Result<bool, String> {
        let Some(mut slot) = self.stdin.try_lock() else {
            return Ok(false);
        };
        let Some(file) = slot.as_mut() else {
            return Err("stdin is closed".into());
        };
        let result = loop {
            if *off >= data.len() {
                break Ok(true);
            }
            match file.write(&data[*off..]) {
                Ok(0) => break Err("stdin accepted no bytes".to_string()),
                Ok(n) => *off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => (),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    break Err("the process closed its stdin (broken pipe)".into())
                }
                Err(e) => break Err(format!("writing stdin failed: {e}")),
            }
        };
        if result.is_err() || (close && result == Ok(true)) {
            *slot = None;
        }
        result
    }

    /// Records a failure of the initial stdin write.
    pub fn set_stdin_error(&self, error: String) {
        self.state.lock().stdin_error = Some(error);
    }
}

/// Size of the pump's read buffer, on its own stack.
#[cfg(not(target_os = "linux"))]
const READ_CHUNK: usize = 32 * 1024;

/// Stack size of a pump thread: the read buffer plus room for the filter and locking.
#[cfg(not(target_os = "linux"))]
pub const PUMP_STACK: usize = READ_CHUNK + 64 * 1024;

/// Reads both pipes until end of file, filtering into the ring. Runs on its own thread
/// (where there is no epoll; on Linux `ingest` reads every pipe).
#[cfg(not(target_os = "linux"))]
pub fn pump(proc: Arc<Proc>, stdout: Option<File>, stderr: Option<File>, secrets: Arc<dyn Source>) {
    if sys::PIPE_THREADS {
        return pump_threads(proc, stdout, stderr, secrets);
    }
    let mut filters = [Filter::live(secrets.clone()), Filter::live(secrets)];
    let mut files = [stdout, stderr];
    for stream in [STDOUT, STDERR] {
        if files[stream].is_none() {
            proc.take_output(stream, &mut filters[stream], None);
        }
    }
    let mut buf = [0u8; READ_CHUNK];
    while files.iter().any(Option::is_some) {
        let fds = [
            files[0].as_ref().map(|f| f.as_fd()),
            files[1].as_ref().map(|f| f.as_fd()),
        ];
        let ready = match sys::poll_read2(fds, -1) {
            Ok(r) => r,
            Err(e) => {
                crate::base::log::warn!("poll on the pipes of {} failed: {e}", proc.info.id);
                break;
            }
        };
        for stream in [STDOUT, STDERR] {
            if !ready.readable[stream] {
                continue;
            }
            let Some(file) = files[stream].as_mut() else {
                continue;
            };
            match read_chunk(file, &mut buf) {
                Some(0) => {
                    proc.take_output(stream, &mut filters[stream], None);
                    files[stream] = None;
                }
                Some(n) => proc.take_output(stream, &mut filters[stream], Some(&buf[..n])),
                None => (),
            }
        }
    }
    // Either both streams ended, or polling failed: make sure the record can finish.
    for stream in [STDOUT, STDERR] {
        if files[stream].is_some() {
            proc.take_output(stream, &mut filters[stream], None);
        }
    }
}

/// [`pump`] where pipes cannot be polled (Windows): stderr on a thread of its own, stdout
/// on this one.
#[cfg(not(target_os = "linux"))]
fn pump_threads(
    proc: Arc<Proc>,
    stdout: Option<File>,
    stderr: Option<File>,
    secrets: Arc<dyn Source>,
) {
    if let Some(file) = stderr {
        let (p, s) = (proc.clone(), secrets.clone());
        let started = std::thread::Builder::new()
            .name("pump-stderr".into())
            .stack_size(PUMP_STACK)
            .spawn(move || pump_one(&p, STDERR, Some(file), s));
        if let Err(e) = started {
            crate::base::log::warn!("cannot read the stderr of {}: {e}", proc.info.id);
            proc.take_output(STDERR, &mut Filter::live(secrets.clone()), None);
        }
    } else {
        pump_one(&proc, STDERR, None, secrets.clone());
    }
    pump_one(&proc, STDOUT, stdout, secrets);
}

/// Reads one pipe until end of file, filtering into the ring.
#[cfg(not(target_os = "linux"))]
fn pump_one(proc: &Proc, stream: usize, file: Option<File>, secrets: Arc<dyn Source>) {
    let mut filter = Filter::live(secrets);
    let Some(mut file) = file else {
        proc.take_output(stream, &mut filter, None);
        return;
    };
    let mut buf = [0u8; READ_CHUNK];
    loop {
        match read_chunk(&mut file, &mut buf) {
            Some(0) => {
                proc.take_output(stream, &mut filter, None);
                return;
            }
            Some(n) => proc.take_output(stream, &mut filter, Some(&buf[..n])),
            None => (),
        }
    }
}

/// Reads once; `Some(0)` is end of file (or an error, which ends the stream the same way),
/// `None` means try again later.
pub fn read_chunk(file: &mut File, buf: &mut [u8]) -> Option<usize> {
    match file.read(buf) {
        Ok(n) => Some(n),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => None,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
        Err(_) => Some(0),
    }
}

/// How long after the leader's exit a still-busy record is reported as backgrounded.
pub const LEADER_EXIT_GRACE: Duration = Duration::from_millis(250);
/// What a record carries for this section.
#[derive(Debug, Default)]
pub struct RecordExtras {
    /// The command's terminal (`tty: true`).
    pub terminal: Option<Terminal>,
    /// What the command's stdin is, when the server holds its other end.
    pub input: Option<Input>,
    /// The command's cgroup: every process it starts, capped by `pids`.
    pub cgroup: Option<CommandGroup>,
    /// The secrets in force (the server's and every kept record's), for a terminal's
    /// reads: removing escape sequences can join the pieces of a secret that the stream's
    /// filter saw apart (`hunt\x1b[0mer2`), so the cleaned text is redacted again.
    pub secrets: Option<std::sync::Arc<crate::policy::secrets::LiveSecrets>>,
    /// The call's own secrets in that set, for as long as the record is kept.
    pub _lease: crate::policy::secrets::Lease,
    /// The call's private temporary directory (kernel sandbox on, trusted mode), emptied and
    /// given back when the record ends.
    pub tmp: Option<crate::process::tmpdir::CallDir>,
    /// The server's guardian, told about the orphans a signal to the record finds.
    pub guardian: Option<std::sync::Arc<crate::process::guardian::Guardian>>,
    /// The call's protected paths and the protected names it did not find, to report
    /// those it creates (`YIELDSHELL_PROTECTED_PATHS`).
    pub protected: Option<crate::policy::sandbox::protected::Watch>,
}

impl RecordExtras {
    /// The line of a result about the call's protected paths (`protected::Watch::line`):
    /// the names it created, and what is protected when `shown` (the output in the
    /// answer) has a write refused.
    pub fn protected_line(&self, shown: &[&[u8]]) -> Option<String> {
        use crate::policy::sandbox::protected::shows_refused_write;
        let watch = self.protected.as_ref()?;
        watch.line(shown.iter().any(|s| shows_refused_write(s)))
    }

    /// The secrets in force now.
    pub fn secrets_now(&self) -> std::sync::Arc<crate::policy::redact::Secrets> {
        self.secrets
            .as_ref()
            .map_or_else(Default::default, |s| s.current())
    }
}

impl crate::policy::trusted::git::lock::Ends for Proc {
    fn is_finished(&self) -> bool {
        Proc::is_finished(self)
    }
}
