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
use std::sync::Arc;

use crate::base::queue::Queue;

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// A fixed pool of named worker threads; cloning gives another handle to the same pool.
/// The workers end once every handle is gone and the queued jobs ran.
#[derive(Clone)]
pub struct Pool {
    handle: Arc<Handle>,
}

/// Closes the pool's queue when the last [`Pool`] handle is dropped.
struct Handle(Arc<Queue<Job>>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.close();
    }
}

const WORKER_STACK: usize = 512 * 1024;

impl Pool {
    /// Starts `workers` threads (at least one).
    pub fn new(workers: usize) -> std::io::Result<Pool> {
        // Unbounded: jobs are small closures, queued only while every worker is busy.
        let jobs: Arc<Queue<Job>> = Arc::default();
        let pool = Pool {
            handle: Arc::new(Handle(jobs.clone())),
        };
        for n in 0..workers.max(1) {
            let jobs = jobs.clone();
            std::thread::Builder::new()
                .name(format!("worker-{n}"))
                .stack_size(WORKER_STACK)
                .spawn(move || {
                    while let Some(job) = jobs.pop() {
                        run(job);
                    }
                })?;
        }
        Ok(pool)
    }

    /// The size of the pool for this machine: the number of cores, at least 2 and at most 8.
    pub fn default_size() -> usize {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 8)
    }

    /// Runs `job` on a worker.
    pub fn execute(&self, job: Job) {
        self.handle.0.push(job);
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
