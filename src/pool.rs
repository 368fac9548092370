//! The worker pool: runs requests off the main thread, growing on demand.
//!
//! Blocking tools (`exec` in its yield, `wait`, `stop`) hold a worker for up to 55 s, so a
//! fixed small pool would let a few of them starve everything else. Instead a job goes to
//! an idle worker when there is one and otherwise starts a new worker, up to `max`; beyond
//! that jobs queue. Workers that stay idle for a while exit, down to `min`.
//!
//! Each job runs inside `catch_unwind`, so a panic in one request becomes that request's
//! internal error and the worker lives on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// A growable pool of named worker threads.
pub struct Pool {
    // The sender comes first so that it is dropped (closing the channel) before anything
    // that waits for the workers.
    sender: Sender<Job>,
    receiver: Receiver<Job>,
    shared: Arc<Shared>,
}

struct Shared {
    /// Invariant: `total >= min(busy, max)`, so a queued job always has a worker coming,
    /// unless `max` workers are busy.
    counts: Mutex<Counts>,
    min: usize,
    max: usize,
}

#[derive(Default)]
struct Counts {
    /// Jobs sent and not finished.
    busy: usize,
    /// Live workers.
    total: usize,
    /// Names handed out.
    named: usize,
}

const IDLE_EXIT: Duration = Duration::from_secs(30);
const WORKER_STACK: usize = 512 * 1024;

impl Pool {
    /// A pool keeping `min` workers once started and growing to at most `max`.
    pub fn new(min: usize, max: usize) -> Pool {
        // Unbounded: jobs wait here only while `max` workers are all busy.
        let (sender, receiver) = crossbeam_channel::unbounded();
        let shared = Arc::new(Shared {
            counts: Mutex::new(Counts::default()),
            min,
            max: max.max(1),
        });
        Pool {
            sender,
            receiver,
            shared,
        }
    }

    /// Runs `job` on a worker.
    pub fn execute(&self, job: Job) {
        let mut counts = self.shared.counts.lock();
        counts.busy += 1;
        if counts.busy > counts.total && counts.total < self.shared.max {
            let rx = self.receiver.clone();
            let shared = self.shared.clone();
            let name = format!("worker-{}", counts.named);
            let spawned = std::thread::Builder::new()
                .name(name)
                .stack_size(WORKER_STACK)
                .spawn(move || worker(rx, shared));
            match spawned {
                Ok(_) => {
                    counts.total += 1;
                    counts.named += 1;
                }
                Err(e) => crate::error!(
                    "cannot start a worker thread: {e}; the request waits for a free worker"
                ),
            }
        }
        drop(counts);
        let _ = self.sender.send(job);
    }
}

fn worker(rx: Receiver<Job>, shared: Arc<Shared>) {
    loop {
        match rx.recv_timeout(IDLE_EXIT) {
            Ok(job) => {
                run(job);
                shared.counts.lock().busy -= 1;
            }
            Err(RecvTimeoutError::Timeout) => {
                let mut counts = shared.counts.lock();
                if counts.total > shared.min && counts.total > counts.busy {
                    counts.total -= 1;
                    return;
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

fn run(job: Job) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(job)) {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        crate::error!("a request handler panicked: {what}");
    }
}
