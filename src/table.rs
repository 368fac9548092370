//! The registry of records: id to `Arc<Proc>`, in creation order, with the limits.
//!
//! Never blocks while holding its lock: it only takes records' state locks briefly to
//! read whether they finished.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::process::{Proc, Status};

/// All records of this server.
#[derive(Default)]
pub struct Table {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Oldest first.
    order: Vec<Arc<Proc>>,
    by_id: HashMap<String, Arc<Proc>>,
}

impl Table {
    /// The record with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Proc>> {
        self.inner.lock().by_id.get(id).cloned()
    }

    /// Adds a record.
    pub fn insert(&self, proc: Arc<Proc>) {
        let mut inner = self.inner.lock();
        inner.by_id.insert(proc.info.id.clone(), proc.clone());
        inner.order.push(proc);
    }

    /// Every record, newest first.
    pub fn newest_first(&self) -> Vec<Arc<Proc>> {
        let inner = self.inner.lock();
        inner.order.iter().rev().cloned().collect()
    }

    /// Records that have not finished.
    pub fn live(&self) -> Vec<Arc<Proc>> {
        let inner = self.inner.lock();
        inner
            .order
            .iter()
            .filter(|p| !p.is_finished())
            .cloned()
            .collect()
    }

    /// How many records have not finished.
    pub fn live_count(&self) -> usize {
        self.inner
            .lock()
            .order
            .iter()
            .filter(|p| !p.is_finished())
            .count()
    }

    /// Removes finished records that ended more than `max_age` ago, then all but the
    /// newest `keep` finished ones. Returns how many were removed.
    pub fn retain(&self, max_age: Duration, keep: usize) -> usize {
        let now = Instant::now();
        self.remove_where(
            |age, _status, finished_newer| age > max_age || finished_newer >= keep,
            now,
        )
    }

    /// Removes finished records by age: `completed` ones older than `completed_age`, the
    /// others (stopped, timed out, failed) older than `stopped_age`.
    pub fn cleanup(&self, completed_age: Duration, stopped_age: Duration) -> usize {
        let now = Instant::now();
        self.remove_where(
            |age, status, _| match status {
                Status::Completed => age > completed_age,
                _ => age > stopped_age,
            },
            now,
        )
    }

    /// Removes finished records for which `doomed(age since end, status, number of newer
    /// finished records kept)` holds.
    fn remove_where(
        &self,
        doomed: impl Fn(Duration, Status, usize) -> bool,
        now: Instant,
    ) -> usize {
        let mut inner = self.inner.lock();
        let mut kept_finished = 0usize;
        let mut remove: Vec<usize> = Vec::new();
        for (i, p) in inner.order.iter().enumerate().rev() {
            let st = p.lock();
            let Some((ended, _)) = st.ended else { continue };
            let status = st.status();
            drop(st);
            if doomed(now.saturating_duration_since(ended), status, kept_finished) {
                remove.push(i);
            } else {
                kept_finished += 1;
            }
        }
        for &i in &remove {
            let p = inner.order.remove(i);
            inner.by_id.remove(&p.info.id);
        }
        remove.len()
    }
}
