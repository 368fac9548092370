//! The registry of records: id to `Arc<Proc>`, in creation order, with the limits.
//!
//! Never blocks while holding its lock: it only takes records' state locks briefly to
//! read whether they finished.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::process::record::{Proc, Status};

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
    /// Places under the process limit taken by calls that are starting a record (one per
    /// process: a pipeline takes one per stage).
    reserved: usize,
}

/// A place under the process limit, taken by [`Table::reserve`] before a record is
/// spawned and given up when the record is inserted (or the start failed). Checking the
/// limit and taking the place happen under one lock, so concurrent calls cannot both take
/// the last place.
pub struct Slot<'a> {
    table: &'a Table,
    processes: usize,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.table.inner.lock().reserved -= self.processes;
    }
}

impl Table {
    /// The record with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Proc>> {
        self.inner.lock().by_id.get(id).cloned()
    }

    /// Adds a record started under `slot`; the record now counts instead of the slot.
    pub fn insert(&self, proc: Arc<Proc>, slot: Slot<'_>) {
        let mut inner = self.inner.lock();
        inner.by_id.insert(proc.info.id.clone(), proc.clone());
        inner.order.push(proc);
        inner.reserved -= slot.processes;
        drop(inner);
        std::mem::forget(slot);
    }

    /// Takes places for `processes` processes (a pipeline's stages) under `limit` live
    /// processes, counting every stage of the live records and the places already taken;
    /// `None` when they do not fit.
    pub fn reserve(&self, limit: usize, processes: usize) -> Option<Slot<'_>> {
        let processes = processes.max(1);
        let mut inner = self.inner.lock();
        let live: usize = inner
            .order
            .iter()
            .filter(|p| !p.is_finished())
            .map(|p| p.info.stages.len().max(1))
            .sum();
        if live + inner.reserved + processes > limit {
            return None;
        }
        inner.reserved += processes;
        Some(Slot {
            table: self,
            processes,
        })
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
