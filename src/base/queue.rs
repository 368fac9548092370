//! A first-in first-out queue that a thread blocks on: the pool's jobs and the stderr
//! writer's lines.
//!
//! A mutex and a condition variable (the standard library's, futex-based) rather than a
//! channel: a thread waiting here sleeps in the kernel after a short spin, where a
//! channel's receiver first yields the processor in a loop (`sched_yield`, several times
//! each time it finds its channel empty), which on a machine of two cores took time from
//! the command a call had just started (about 20 yields an `exec`, measured with `strace`).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The items waiting, and whether the queue is closed.
pub struct Queue<T> {
    state: Mutex<(VecDeque<T>, bool)>,
    ready: Condvar,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            state: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        }
    }
}

impl<T> Queue<T> {
    /// The state, whole even after a panic elsewhere: no code panics while holding it
    /// (only pushes and pops happen under the lock).
    fn lock(&self) -> MutexGuard<'_, (VecDeque<T>, bool)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `item` at the end and wakes one waiting thread. False (and `item` dropped)
    /// once the queue is closed.
    pub fn push(&self, item: T) -> bool {
        let mut state = self.lock();
        if state.1 {
            return false;
        }
        state.0.push_back(item);
        drop(state);
        self.ready.notify_one();
        true
    }

    /// The first item, waiting for one; `None` once the queue is closed and empty.
    pub fn pop(&self) -> Option<T> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.0.pop_front() {
                return Some(item);
            }
            if state.1 {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Closes: later pushes are refused; the items queued are still popped, then every
    /// waiting thread gets `None`.
    pub fn close(&self) {
        self.lock().1 = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::Queue;
    use std::sync::Arc;

    #[test]
    fn items_come_out_in_order_and_close_ends_the_waiters_after_them() {
        let q = Arc::new(Queue::default());
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    while let Some(i) = q.pop() {
                        got.push(i);
                    }
                    got
                })
            })
            .collect();
        for i in 0..1000 {
            assert!(q.push(i));
        }
        q.close();
        assert!(!q.push(1000), "a closed queue refuses");
        let mut all: Vec<i32> = Vec::new();
        for c in consumers {
            let got = c.join().unwrap();
            // Each consumer saw its items in the order they were pushed.
            assert!(got.windows(2).all(|w| w[0] < w[1]));
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
    }
}
