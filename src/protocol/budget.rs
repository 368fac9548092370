//! A byte budget for work that waits in a queue: what a hostile client can make the server
//! hold between reading a request and starting it.
//!
//! The dispatcher takes bytes from the budget before it queues a job (a tool call's
//! arguments, a batch's line) and the job gives them back when a worker starts it. When the
//! budget is spent, the dispatcher waits for a worker instead of queueing more, so the
//! reader stops reading and the client's writes block: backpressure instead of memory.
//! One job is always admitted, however large, so that a single request (at most one line)
//! never waits for itself.
//!
//! The number of waiting jobs is bounded too: each job answers, and an answer can be large
//! (a `read` of megabytes from a few bytes of request). Bounding the jobs taken but not yet
//! started bounds the answers that can still be produced once the dispatcher stops reading
//! because the answers already queued for stdout pass their own bound
//! (`transport::Outbox::wait_for_room`).

use parking_lot::{Condvar, Mutex};

/// Bytes that may wait in the queue at once (one full line's worth: `transport::MAX_LINE`).
pub const QUEUED_BYTES: usize = crate::protocol::transport::MAX_LINE;

/// Jobs that may wait for a worker at once.
pub const QUEUED_JOBS: usize = 16;

/// A count of bytes and jobs held, with limits; see the module documentation.
pub struct Budget {
    /// (bytes, jobs) held.
    held: Mutex<(usize, usize)>,
    freed: Condvar,
    limit: usize,
    max_jobs: usize,
}

impl Budget {
    /// A budget of `limit` bytes and `max_jobs` jobs.
    pub fn new(limit: usize, max_jobs: usize) -> Budget {
        Budget {
            held: Mutex::new((0, 0)),
            freed: Condvar::new(),
            limit,
            max_jobs: max_jobs.max(1),
        }
    }

    /// Takes `bytes` for one job, waiting while others hold some and the total would pass
    /// the limit, or while `max_jobs` jobs hold theirs.
    pub fn take(&self, bytes: usize) {
        let mut held = self.held.lock();
        while (held.0 > 0 && held.0.saturating_add(bytes) > self.limit) || held.1 >= self.max_jobs {
            self.freed.wait(&mut held);
        }
        held.0 += bytes;
        held.1 += 1;
    }

    /// Gives back the `bytes` of one job taken earlier.
    pub fn give(&self, bytes: usize) {
        let mut held = self.held.lock();
        held.0 = held.0.saturating_sub(bytes);
        held.1 = held.1.saturating_sub(1);
        drop(held);
        self.freed.notify_all();
    }

    /// Bytes held now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held.lock().0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn one_job_always_fits_and_more_wait_for_room() {
        let budget = Arc::new(Budget::new(100, 10));
        budget.take(500); // Alone: admitted though over the limit.
        let (tx, rx) = crossbeam_channel::bounded(1);
        let b = budget.clone();
        let waiter = std::thread::spawn(move || {
            b.take(60);
            let _ = tx.send(());
        });
        // Still blocked while the first job holds its bytes.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        budget.give(500);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("admitted once the bytes were given back");
        waiter.join().expect("join");
        assert_eq!(budget.held(), 60);
        budget.take(40); // Fits beside the 60.
        assert_eq!(budget.held(), 100);
    }

    #[test]
    fn the_number_of_jobs_is_bounded_too() {
        let budget = Arc::new(Budget::new(1000, 2));
        budget.take(0);
        budget.take(0);
        let (tx, rx) = crossbeam_channel::bounded(1);
        let b = budget.clone();
        let waiter = std::thread::spawn(move || {
            b.take(0);
            let _ = tx.send(());
        });
        // A third job waits although no byte is held.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        budget.give(0);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("admitted once a job started");
        waiter.join().expect("join");
    }
}
