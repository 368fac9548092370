//! The reaper thread: reaps every child, watches groups, and owns every deadline.
//!
//! SIGCHLD wakes it directly: signal-hook writes a byte to a socket pair the reaper polls
//! (no thread in between). Commands arrive on a channel, followed by a byte on the same
//! socket, so one `poll` with the next deadline as its timeout is the only place it sleeps.
//! It then reaps with `waitpid(-1, WNOHANG)` until nothing is left: a leader's exit is
//! recorded on its record; any other pid is an orphaned descendant that was reparented to
//! us (the server is a child subreaper) and is simply reaped, so no zombie stays. After
//! reaping it checks the groups whose leader has exited, under each record's lock.
//!
//! Deadlines (runtime timeouts and SIGKILL after a stop's grace) sit in one ordered map.
//! A group can empty without a SIGCHLD reaching us (its last member's parent left the
//! group), so while some leader has exited and its group has not been seen empty, the
//! reaper also wakes every 100 ms to look.
//!
//! Architecture invariant: only this thread reaps. Spawning registers the new leader in
//! `leaders` while holding that lock across the fork, so the reaper can never reap a
//! leader it does not know yet.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use parking_lot::Mutex;

use crate::base::sys::{self, libc};
use crate::process::guardian::Guardian;
use crate::process::record::{EndReason, Proc};

/// What the reaper is asked to do.
pub enum Cmd {
    /// Stop this record at `at` (runtime timeout), with `grace` before SIGKILL.
    Timeout(Arc<Proc>, Instant, Duration),
    /// Send SIGKILL at `at` unless the record finished.
    Kill(Arc<Proc>, Instant),
}

/// Handle to the reaper thread.
#[derive(Clone)]
pub struct Reaper {
    tx: Sender<Cmd>,
    waker: Arc<sys::ExitWaker>,
    /// Every stage of every record by pid, registered before its fork can be reaped.
    pub leaders: Arc<Mutex<HashMap<u32, Arc<Proc>>>>,
    /// The server's guardian, watched by this thread.
    pub guardian: Arc<Guardian>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Job {
    Timeout(Duration),
    Kill,
    ForceEnd,
}

const GROUP_CHECK: Duration = Duration::from_millis(100);
/// After SIGKILL, how long a record may wait for a pipe held by a process we cannot find.
const FORCE_END_AFTER: Duration = Duration::from_secs(2);

impl Reaper {
    /// Starts the reaper thread and routes SIGCHLD to it.
    pub fn start() -> std::io::Result<Reaper> {
        // Unbounded: commands are small and few (one per spawn or stop).
        let (tx, rx) = crossbeam_channel::unbounded();
        let (wake_read, wake_write) = sys::exit_wake()?;
        let leaders: Arc<Mutex<HashMap<u32, Arc<Proc>>>> = Arc::default();
        let guardian: Arc<Guardian> = Arc::default();
        let reaper = Reaper {
            tx,
            waker: Arc::new(wake_write),
            leaders: leaders.clone(),
            guardian: guardian.clone(),
        };
        std::thread::Builder::new()
            .name("reaper".into())
            .stack_size(256 * 1024)
            .spawn(move || run(rx, wake_read, leaders, guardian))?;
        Ok(reaper)
    }

    /// Sends a command; a dead reaper means shutdown is under way, so errors are ignored.
    pub fn send(&self, cmd: Cmd) {
        if self.tx.send(cmd).is_ok() {
            self.waker.wake();
        }
    }
}

fn run(
    rx: Receiver<Cmd>,
    mut wake: sys::ExitWake,
    leaders: Arc<Mutex<HashMap<u32, Arc<Proc>>>>,
    guardian: Arc<Guardian>,
) {
    let mut jobs: BTreeMap<(Instant, u64), (Job, Arc<Proc>)> = BTreeMap::new();
    let mut seq = 0u64;
    let mut awaiting: Vec<Arc<Proc>> = Vec::new();
    let mut guardian_at: Option<Instant> = None;
    loop {
        let now = Instant::now();
        let mut wake_at = jobs.keys().next().map(|(at, _)| *at);
        if !awaiting.is_empty() {
            let check = now + GROUP_CHECK;
            wake_at = Some(wake_at.map_or(check, |w| w.min(check)));
        }
        if let Some(at) = guardian_at {
            wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
        }
        let timeout = wake_at.map_or(Duration::from_secs(3600), |w| {
            w.saturating_duration_since(now)
        });
        // Round up, so that a deadline less than a millisecond away is not a busy loop.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        if let Err(e) = wake.wait(ms) {
            crate::base::log::error!("poll failed in the reaper: {e}");
        }
        let mut due: Vec<(Instant, Job, Arc<Proc>)> = Vec::new();
        loop {
            match rx.try_recv() {
                Ok(Cmd::Timeout(proc, at, grace)) => due.push((at, Job::Timeout(grace), proc)),
                Ok(Cmd::Kill(proc, at)) => due.push((at, Job::Kill, proc)),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        // Before reaping: a stop of the guardian is seen only by a wait for it.
        guardian.watch();
        if reap_all(&leaders, &mut awaiting, &guardian) {
            // Deadlines of finished records are moot: drop them now rather than at their
            // due time (a default timeout is an hour away), so that the records' buffers
            // are freed when the table lets go of them.
            jobs.retain(|_, (_, proc)| !proc.is_finished());
        }
        // Fire due jobs; follow-up jobs are scheduled after the loop.
        let now = Instant::now();
        let mut follow = Vec::new();
        while let Some(entry) = jobs.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (job, proc) = entry.remove();
            if proc.is_finished() {
                continue;
            }
            match job {
                Job::Timeout(grace) => {
                    crate::base::log::info!(
                        "{} reached its timeout; sending SIGTERM",
                        proc.info.id
                    );
                    proc.set_reason(EndReason::TimedOut);
                    proc.signal(libc::SIGTERM);
                    follow.push((now + grace, Job::Kill, proc));
                }
                Job::Kill => {
                    crate::base::log::info!("{} outlived its grace; sending SIGKILL", proc.info.id);
                    proc.signal(libc::SIGKILL);
                    follow.push((now + FORCE_END_AFTER, Job::ForceEnd, proc));
                }
                Job::ForceEnd => {
                    crate::base::log::warn!(
                        "{}: a process we cannot see still holds its output pipes",
                        proc.info.id
                    );
                    proc.force_end();
                }
            }
        }
        for (at, job, proc) in due.into_iter().chain(follow) {
            seq += 1;
            jobs.insert((at, seq), (job, proc));
        }
        awaiting.retain(|p| !p.check_group(&guardian));
        guardian_at = guardian.watch();
    }
}

/// Reaps every exited child; returns whether anything was reaped.
fn reap_all(
    leaders: &Mutex<HashMap<u32, Arc<Proc>>>,
    awaiting: &mut Vec<Arc<Proc>>,
    guardian: &Guardian,
) -> bool {
    let mut reaped = false;
    // Holding the lock while reaping keeps a pipeline's first stage unreaped (a zombie, so
    // its process group still exists) until every stage has joined that group.
    let mut leaders = leaders.lock();
    loop {
        match sys::reap_any() {
            Ok(Some((pid, status))) => {
                reaped = true;
                let Some(proc) = leaders.remove(&pid) else {
                    guardian.reaped(pid, status);
                    continue;
                };
                crate::base::log::debug!("{} stage {pid} exited: {status:?}", proc.info.id);
                proc.on_stage_exit(pid, status);
                if proc.lock().leader.is_some() && !awaiting.iter().any(|p| Arc::ptr_eq(p, &proc)) {
                    awaiting.push(proc);
                }
            }
            Ok(None) => return reaped,
            Err(e) => {
                crate::base::log::error!("waitpid failed: {e}");
                return reaped;
            }
        }
    }
}
