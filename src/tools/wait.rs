//! Parked waits: a call that must wait holds no thread.
//!
//! A call that waits (`exec` in its yield, `wait`, `stop`'s grace, `shell_execute`)
//! builds a [`Watch`] (records, a condition, a deadline, its cancellation and progress) and
//! a completion, and parks them with [`Waits::park`]. Its worker is free at once. The
//! waiter is looked at again, on a pool worker, when:
//!
//! - one of its records changes: output (ingest), exit, group gone, end of file (reaper),
//!   cancellation. Records hold their waiters weakly (`process::Watcher`);
//! - its next wake-up time comes: the deadline, 250 ms after the leader's exit (`exec`),
//!   the next progress notification (once a second). The `waits` thread keeps these
//!   times in one ordered map.
//!
//! The first look that finds the condition met runs the completion, once; it builds and
//! sends the answer. A watch holds several records so that one waiter can wait for the
//! first of several processes: the outcome names the index of the record that ended it.
//!
//! Invariants: a waiter is registered on its records before its first look, so no change
//! is missed; at most one look of a waiter is queued at a time; the completion runs at
//! most once (the parked state is taken out under the waiter's lock).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::base::pool::Pool;
use crate::base::ring::{STDERR, STDOUT};
use crate::process::record::{self as process, Proc, Watcher};
use crate::tools::call::{Cancel, Progress};
use crate::tools::until::Scanner;
pub(crate) use crate::tools::until::UntilWatch;

/// What ends a watch besides its deadline and cancellation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitMode {
    /// `exec`: also end 250 ms after the leader exits.
    Exec,
    /// `wait`/`stop`: only on finish, match, deadline or cancel.
    Wait,
}

/// Why a watch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Finished,
    LeaderGone,
    Deadline,
    Cancelled,
    Matched,
    /// A process of the record is blocked reading its input and the record has been
    /// quiet for 300 ms (`until_input`).
    AwaitingInput,
}

/// What a custom check (see [`Watch::check`]) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// The condition is met: the watch ends as `Matched`.
    Done,
    /// Progress was made: look again soon.
    Moved,
    /// Nothing changed: look again later (the interval doubles, up to a ceiling).
    Idle,
}

/// A condition that records cannot signal (a pipe that takes bytes again): looked at on
/// every change of a record and at growing intervals.
type Checker = Box<dyn FnMut() -> Check + Send>;

const POLL_FIRST: Duration = Duration::from_millis(5);
const POLL_MAX: Duration = Duration::from_millis(200);

/// The condition a waiter waits for.
pub(crate) struct Watch {
    /// The records; the first one that meets the condition ends the watch.
    procs: Vec<Arc<Proc>>,
    mode: WaitMode,
    /// `until` matching, per record (same index as `procs`).
    until: Vec<Option<UntilWatch>>,
    deadline: Instant,
    cancel: Option<Arc<Cancel>>,
    progress: Option<Progress>,
    started: Instant,
    next_progress: Instant,
    /// How often progress is sent (once a second unless `progress_every` says otherwise).
    progress_every: Duration,
    check: Option<Checker>,
    poll: Duration,
    /// `until_input`: also end when a record waits for input; how long until the next
    /// look in `/proc` when it does not yet (grows from 250 ms to 1 s).
    input: Option<Duration>,
    /// End as `Finished` only once every record ended (`wait`'s `all`), not at the first.
    all: bool,
}

enum Step {
    Park(Instant),
    Done(Outcome, usize),
}

impl Watch {
    /// A watch over `procs` until `deadline`.
    pub(crate) fn new(procs: Vec<Arc<Proc>>, mode: WaitMode, deadline: Instant) -> Watch {
        let now = Instant::now();
        let until = procs.iter().map(|_| None).collect();
        Watch {
            procs,
            mode,
            until,
            deadline,
            cancel: None,
            progress: None,
            started: now,
            next_progress: now + Duration::from_secs(1),
            progress_every: Duration::from_secs(1),
            check: None,
            poll: POLL_FIRST,
            input: None,
            all: false,
        }
    }

    /// Ends as `Finished` once every record ended, instead of at the first (the outcome
    /// names the last record found ended).
    pub(crate) fn all(mut self) -> Watch {
        self.all = true;
        self
    }

    /// Also ends when a process of a record is blocked reading its input. A
    /// blocked reader makes no event: while the records are quiet, `/proc` is
    /// looked at again after 250 ms, then less often, up to once a second.
    pub(crate) fn until_input(mut self) -> Watch {
        self.input = Some(Duration::from_millis(250));
        self
    }

    /// Also ends (as `Matched`) when `check` says so; it runs before the records are
    /// looked at, on every look.
    pub(crate) fn check(mut self, check: impl FnMut() -> Check + Send + 'static) -> Watch {
        self.check = Some(Box::new(check));
        self
    }

    /// Also ends when the output of record `index` matches `until`.
    pub(crate) fn until(mut self, index: usize, until: UntilWatch) -> Watch {
        if let Some(slot) = self.until.get_mut(index) {
            *slot = Some(until);
        }
        self
    }

    /// Also ends (as `Cancelled`) when the call is cancelled.
    pub(crate) fn cancel(mut self, cancel: &Arc<Cancel>) -> Watch {
        self.cancel = Some(cancel.clone());
        self
    }

    /// Sends a progress notification once a second while parked.
    pub(crate) fn progress(mut self, progress: Option<Progress>) -> Watch {
        self.progress = progress;
        self
    }

    /// Sends progress every `every` instead of once a second.
    pub(crate) fn progress_every(mut self, every: Duration) -> Watch {
        self.progress_every = every;
        self.next_progress = self.started + every;
        self
    }

    /// One look: the outcome, or when to look again at the latest. An `until` with
    /// output to scan queues its scan on `scanner`, which wakes `waker` when it matches.
    fn step(&mut self, now: Instant, scanner: &Scanner, waker: &Weak<dyn Watcher>) -> Step {
        if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Step::Done(Outcome::Cancelled, 0);
        }
        let mut wake = self.deadline;
        if let Some(check) = self.check.as_mut() {
            match check() {
                Check::Done => return Step::Done(Outcome::Matched, 0),
                Check::Moved => self.poll = POLL_FIRST,
                Check::Idle => self.poll = (self.poll * 2).min(POLL_MAX),
            }
            wake = wake.min(now + self.poll);
        }
        let mut ended = (0, 0);
        for (i, proc) in self.procs.iter().enumerate() {
            if self.until[i].as_ref().is_some_and(UntilWatch::matched) {
                return Step::Done(Outcome::Matched, i);
            }
            let st = proc.lock();
            if st.ended.is_some() {
                if !self.all {
                    return Step::Done(Outcome::Finished, i);
                }
                ended = (ended.0 + 1, i);
                continue;
            }
            if let Some(w) = self.until[i].as_ref() {
                if w.behind(&st) {
                    w.submit(scanner, waker);
                }
            }
            if self.mode == WaitMode::Exec {
                if let Some((_, exited_at)) = st.leader {
                    let at = exited_at + process::LEADER_EXIT_GRACE;
                    if now >= at {
                        return Step::Done(Outcome::LeaderGone, i);
                    }
                    wake = wake.min(at);
                }
            }
            if let Some(every) = self.input {
                use crate::process::agents::Precheck;
                match crate::process::agents::precheck(proc, &st, now) {
                    Precheck::No => (),
                    Precheck::NotYet(at) => wake = wake.min(at),
                    Precheck::Look(pid, input) => {
                        drop(st);
                        if crate::process::inputwait::blocked_reader(pid, &input).is_some() {
                            return Step::Done(Outcome::AwaitingInput, i);
                        }
                        wake = wake.min(now + every);
                        self.input = Some((every * 2).min(Duration::from_secs(1)));
                    }
                }
            }
        }
        if self.all && ended.0 == self.procs.len() {
            return Step::Done(Outcome::Finished, ended.1);
        }
        if now >= self.deadline {
            return Step::Done(Outcome::Deadline, 0);
        }
        if let Some(progress) = &self.progress {
            if now >= self.next_progress {
                let mut bytes = 0;
                for proc in &self.procs {
                    let st = proc.lock();
                    bytes += st.output.bytes_total(STDOUT) + st.output.bytes_total(STDERR);
                }
                let elapsed = now.saturating_duration_since(self.started).as_millis() as u64;
                // No record lock is held here.
                progress(elapsed, bytes);
                self.next_progress = now + self.progress_every;
            }
            wake = wake.min(self.next_progress);
        }
        Step::Park(wake)
    }
}

/// What runs when a watch ends: the outcome and the index of the record that ended it.
pub(crate) type Completion = Box<dyn FnOnce(Outcome, usize) + Send>;

struct Parked {
    watch: Watch,
    then: Completion,
    /// The earliest wake-up queued in the timer map for this waiter.
    timer_at: Option<Instant>,
}

/// One parked call.
struct Waiter {
    id: u64,
    parked: Mutex<Option<Parked>>,
    /// A look is queued on the pool.
    queued: AtomicBool,
    waits: Weak<Waits>,
}

impl Watcher for Waiter {
    fn wake(&self) {
        if let Some(waits) = self.waits.upgrade() {
            waits.schedule(self.id);
        }
    }
}

/// Every parked waiter, the timer thread and the pool that runs the looks.
pub struct Waits {
    live: Mutex<HashMap<u64, Arc<Waiter>>>,
    next_id: AtomicU64,
    timers: Mutex<BTreeMap<(Instant, u64), u64>>,
    timer_cond: Condvar,
    pool: Pool,
    /// Runs the scans of `until` (never on the pool).
    scanner: Scanner,
}

impl Waits {
    /// Starts the `waits` timer thread and the `until` thread; looks run on `pool`.
    pub fn start(pool: Pool) -> std::io::Result<Arc<Waits>> {
        let scanner = Scanner::start()?;
        let waits = Arc::new(Waits {
            live: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            timers: Mutex::new(BTreeMap::new()),
            timer_cond: Condvar::new(),
            pool,
            scanner,
        });
        let weak = Arc::downgrade(&waits);
        std::thread::Builder::new()
            .name("waits".into())
            .stack_size(128 * 1024)
            .spawn(move || run_timers(&weak))?;
        Ok(waits)
    }

    /// Parks `watch`: `then` runs (once) when it ends. The first look happens here, on the
    /// caller's thread, so a condition already met completes at once. Returns the waiter's
    /// waker, for a watch over no record that an event outside the records ends (its
    /// `Cancel`, see `Cancel::wake`).
    pub(crate) fn park(self: &Arc<Self>, watch: Watch, then: Completion) -> Weak<dyn Watcher> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let procs = watch.procs.clone();
        let waiter = Arc::new(Waiter {
            id,
            parked: Mutex::new(Some(Parked {
                watch,
                then,
                timer_at: None,
            })),
            queued: AtomicBool::new(false),
            waits: Arc::downgrade(self),
        });
        self.live.lock().insert(id, waiter.clone());
        let as_watcher: Arc<dyn Watcher> = waiter.clone();
        for proc in &procs {
            proc.watch(Arc::downgrade(&as_watcher));
        }
        self.look(&waiter);
        Arc::downgrade(&as_watcher)
    }

    /// Queues one look of waiter `id` on the pool, unless one is queued already.
    fn schedule(self: &Arc<Self>, id: u64) {
        let Some(waiter) = self.live.lock().get(&id).cloned() else {
            return;
        };
        if waiter.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let waits = self.clone();
        self.pool.execute(Box::new(move || {
            // Cleared first: a change during this look queues another one.
            waiter.queued.store(false, Ordering::Release);
            waits.look(&waiter);
        }));
    }

    /// Looks at a waiter: completes it, or sets its next wake-up.
    fn look(&self, waiter: &Arc<Waiter>) {
        let mut slot = waiter.parked.lock();
        let Some(parked) = slot.as_mut() else {
            return;
        };
        let now = Instant::now();
        let as_watcher: Arc<dyn Watcher> = waiter.clone();
        let waker = Arc::downgrade(&as_watcher);
        match parked.watch.step(now, &self.scanner, &waker) {
            Step::Park(at) => {
                // A queued wake-up that is still ahead and not later than `at` does.
                let covered = parked.timer_at.is_some_and(|t| t > now && t <= at);
                if !covered {
                    parked.timer_at = Some(at);
                    self.add_timer(at, waiter.id);
                }
            }
            Step::Done(outcome, index) => {
                let Some(parked) = slot.take() else { return };
                drop(slot);
                self.live.lock().remove(&waiter.id);
                (parked.then)(outcome, index);
            }
        }
    }

    fn add_timer(&self, at: Instant, id: u64) {
        let mut timers = self.timers.lock();
        let first = timers.keys().next().is_none_or(|&(t, _)| at < t);
        timers.insert((at, id), id);
        if first {
            self.timer_cond.notify_one();
        }
    }
}

/// The `waits` thread: wakes waiters at their times. Ends when the `Waits` is dropped.
fn run_timers(waits: &Weak<Waits>) {
    loop {
        let Some(w) = waits.upgrade() else { return };
        let mut due = Vec::new();
        {
            let mut timers = w.timers.lock();
            let now = Instant::now();
            while let Some(entry) = timers.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if due.is_empty() {
                // Sleep until the first time, or a while: a new earlier time notifies.
                let until = timers
                    .keys()
                    .next()
                    .map_or(now + Duration::from_secs(1), |&(t, _)| t);
                w.timer_cond.wait_until(&mut timers, until);
            }
        }
        for id in due {
            w.schedule(id);
        }
    }
}

/// Writes `data` to a record's stdin without holding a thread: the write is parked
/// until the pipe took every byte (after any earlier write), the record finished, or
/// `deadline`; then `then` gets the result.
pub(crate) fn park_write(
    waits: &Arc<Waits>,
    proc: Arc<Proc>,
    data: Vec<u8>,
    close: bool,
    deadline: Instant,
    then: Box<dyn FnOnce(Result<(), String>) + Send>,
) {
    let ticket = proc.stdin_enqueue();
    let len = data.len();
    let state: Arc<Mutex<WriteState>> = Arc::default();
    let (writer, shared) = (proc.clone(), state.clone());
    let watch = Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).check(move || {
        if !writer.stdin_turn(ticket) {
            return Check::Idle;
        }
        let mut st = shared.lock();
        st.had_turn = true;
        let before = st.written;
        match writer.write_now(&data, &mut st.written, close) {
            Ok(true) => {
                st.result = Some(Ok(()));
                Check::Done
            }
            Err(e) => {
                st.result = Some(Err(e));
                Check::Done
            }
            Ok(false) if st.written > before => Check::Moved,
            Ok(false) => Check::Idle,
        }
    });
    waits.park(
        watch,
        Box::new(move |outcome, _| {
            proc.stdin_leave(ticket);
            let mut st = state.lock();
            let result = match (st.result.take(), outcome) {
                (Some(r), _) => r,
                (None, Outcome::Finished) => {
                    Err("the process finished before reading all of its stdin".into())
                }
                (None, _) if !st.had_turn => Err(
                    "stdin is busy with an earlier write that the process has not accepted yet"
                        .into(),
                ),
                (None, _) => Err(format!(
                    "the process did not read its stdin in time ({} bytes not written)",
                    len - st.written
                )),
            };
            drop(st);
            then(result);
        }),
    );
}

/// A parked write: bytes written so far, whether it was ever this writer's turn, and the
/// result once known.
#[derive(Default)]
struct WriteState {
    written: usize,
    had_turn: bool,
    result: Option<Result<(), String>>,
}
