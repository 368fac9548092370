//! The worker pool: a fixed, small set of threads that run requests and the steps of
//! parked waits, off the main thread.
//!
//! No job blocks for long: a call that must wait parks (see `wait`) and frees its worker
//! at once, so the pool never grows. It starts `workers` threads and keeps them.
//!
//! Each job runs inside `catch_unwind`, so a panic in one request ends that job only (the
//! request's `Responder` answers it with an internal error as it is dropped) and the
//! worker lives on.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crossbeam_channel::{Receiver, Sender};

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// A fixed pool of named worker threads; cloning gives another handle to the same pool.
#[derive(Clone)]
pub struct Pool {
    sender: Sender<Job>,
}

const WORKER_STACK: usize = 512 * 1024;

impl Pool {
    /// Starts `workers` threads (at least one).
    pub fn new(workers: usize) -> std::io::Result<Pool> {
        // Unbounded: jobs are small closures, queued only while every worker is busy.
        let (sender, receiver) = crossbeam_channel::unbounded::<Job>();
        for n in 0..workers.max(1) {
            let rx = receiver.clone();
            std::thread::Builder::new()
                .name(format!("worker-{n}"))
                .stack_size(WORKER_STACK)
                .spawn(move || worker(rx))?;
        }
        Ok(Pool { sender })
    }

    /// The size of the pool for this machine: the number of cores, at least 2 and at most 8.
    pub fn default_size() -> usize {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8)
    }

    /// Runs `job` on a worker.
    pub fn execute(&self, job: Job) {
        let _ = self.sender.send(job);
    }
}

fn worker(rx: Receiver<Job>) {
    for job in rx {
        run(job);
    }
}

fn run(job: Job) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(job)) {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        crate::base::log::error!("a request handler panicked: {what}");
    }
}
