//! A byte budget for work that waits in a queue: what a hostile client can make the server
//! hold between reading a request and starting it.
//!
//! The dispatcher takes bytes from the budget before it queues a job (a tool call's
//! arguments, a batch's line) and the job gives them back when a worker starts it. When the
//! budget is spent, the dispatcher waits for a worker instead of queueing more, so the
//! reader stops reading and the client's writes block: backpressure instead of memory.
//! One job is always admitted, however large, so that a single request (at most one line)
//! never waits for itself.

use parking_lot::{Condvar, Mutex};

/// Bytes that may wait in the queue at once (one full line's worth: `transport::MAX_LINE`).
pub const QUEUED_BYTES: usize = crate::transport::MAX_LINE;

/// A count of bytes held, with a limit; see the module documentation.
pub struct Budget {
    held: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Budget {
        Budget {
            held: Mutex::new(0),
            freed: Condvar::new(),
            limit,
        }
    }

    /// Takes `bytes`, waiting while others hold some and the total would pass the limit.
    pub fn take(&self, bytes: usize) {
        let mut held = self.held.lock();
        while *held > 0 && held.saturating_add(bytes) > self.limit {
            self.freed.wait(&mut held);
        }
        *held += bytes;
    }

    /// Gives back `bytes` taken earlier.
    pub fn give(&self, bytes: usize) {
        let mut held = self.held.lock();
        *held = held.saturating_sub(bytes);
        drop(held);
        self.freed.notify_all();
    }

    /// Bytes held now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        *self.held.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn one_job_always_fits_and_more_wait_for_room() {
        let budget = Arc::new(Budget::new(100));
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
}
