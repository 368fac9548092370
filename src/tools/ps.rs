//! `ps` and `cleanup`: the list of records as the model reads it, and forgetting the
//! finished ones.

use crate::base::ring::{STDERR, STDOUT};
use crate::base::stamp::rfc3339;
use crate::process::record::{Proc, Status};
use crate::tools::results::{Answer, Output, PsEntry};
use std::time::{Duration, Instant};

use super::engine::Engine;

impl Engine {
    /// `ps`.
    pub fn ps(&self, include_completed: bool, limit: usize) -> Answer {
        let now = Instant::now();
        let secrets = self.secrets.current();
        let mut list = Vec::new();
        for proc in self.table.newest_first() {
            if list.len() >= limit {
                break;
            }
            let st = proc.lock();
            let status = st.status();
            if !include_completed && status != Status::Running {
                continue;
            }
            let (exit_code, signal) = st.exit();
            let (ended_at, duration) = match st.ended {
                Some((at, wall)) => (
                    Some(rfc3339(wall)),
                    at.saturating_duration_since(proc.info.started),
                ),
                None => (None, now.saturating_duration_since(proc.info.started)),
            };
            let entry = PsEntry {
                process_id: proc.info.id.clone(),
                pid: proc.info.pid,
                // Redacted again with the secrets in force now: a call started later may
                // have brought a value this command line shows.
                name: proc.info.name.as_deref().map(|n| secrets.redact_str(n)),
                command: secrets.redact_str(&proc.info.command),
                cwd: proc.info.cwd.clone(),
                status,
                exit_code,
                signal,
                started_at: rfc3339(proc.info.started_wall),
                ended_at,
                duration_ms: duration.as_millis() as u64,
                stdout_bytes: st.output.bytes_total(STDOUT),
                stderr_bytes: st.output.bytes_total(STDERR),
                idle_ms: now.saturating_duration_since(st.last_output).as_millis() as u64,
                latest_seq: st.output.latest_seq(),
                stdin_error: st.stdin_error.clone(),
                input: Default::default(),
                processes: None,
            };
            drop(st);
            list.push((entry, proc));
        }
        count_live(&mut list);
        // Whether each waits for input, with one pass over /proc for all of them.
        let asked: Vec<(&Proc, bool)> = list
            .iter()
            .map(|(e, p)| (&**p, e.status == Status::Running))
            .collect();
        let states = crate::process::agents::input_states(&asked);
        let list = list
            .into_iter()
            .zip(states)
            .map(|((mut e, _), input)| {
                e.input = input;
                e
            })
            .collect();
        Ok(Output::Ps(list))
    }

    /// `cleanup`.
    pub fn cleanup(&self, completed_older_than_ms: u64, stopped_older_than_ms: u64) -> Answer {
        let removed = self.table.cleanup(
            Duration::from_millis(completed_older_than_ms),
            Duration::from_millis(stopped_older_than_ms),
        );
        Ok(Output::Cleanup(removed))
    }
}

/// Fills in each entry's live process count: zero for a record that ended, one read of a
/// kernel file (its cgroup's list, or its job) for one that runs.
///
/// The reads form a pass of their own, back to back, and a long list is split between this
/// thread and one more: with 1,000 running records the reads were about 3.5 µs each when
/// made between the entries' building and cost about as much as the rest of `ps`; in one
/// pass on two threads they add a third to it when `ps` is called again and again, and
/// still about as much when each `ps` finds the kernel's cgroup structures cold.
fn count_live(list: &mut [(PsEntry, std::sync::Arc<Proc>)]) {
    let running = list
        .iter()
        .filter(|(e, _)| e.status == Status::Running)
        .count();
    let counts = map_in_two(list, running >= SPLIT_FROM, |(entry, proc)| {
        match entry.status {
            Status::Running => proc.live_processes(),
            _ => Some(0),
        }
    });
    for ((entry, _), n) in list.iter_mut().zip(counts) {
        entry.processes = n;
    }
}

/// `f` of each item, in order; with `split`, the first half is mapped on a thread of its own
/// while this one maps the second. A thread that cannot be started (the process at its
/// limit) or that panics leaves its half to this thread.
fn map_in_two<T: Sync, R: Send>(items: &[T], split: bool, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let map = |part: &[T]| part.iter().map(&f).collect::<Vec<R>>();
    if !split {
        return map(items);
    }
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new()
            .name("ps-count".into())
            .spawn_scoped(s, || map(first));
        let later = map(second);
        let mut all = match helper.map(|h| h.join()) {
            Ok(Ok(mapped)) => mapped,
            _ => map(first),
        };
        all.extend(later);
        all
    })
}

/// The number of running records from which [`count_live`] splits its reads between two
/// threads (below it, a thread's start costs more than it saves).
const SPLIT_FROM: usize = 256;

#[cfg(test)]
mod tests {
    use super::map_in_two;

    #[test]
    fn a_split_map_keeps_the_order_and_maps_every_item_once() {
        let items: Vec<u32> = (0..1001).collect();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        for split in [false, true] {
            calls.store(0, std::sync::atomic::Ordering::Relaxed);
            let out = map_in_two(&items, split, |&i| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                (i * 3, std::thread::current().name().map(str::to_owned))
            });
            assert_eq!(
                calls.load(std::sync::atomic::Ordering::Relaxed),
                items.len()
            );
            let values: Vec<u32> = out.iter().map(|(v, _)| *v).collect();
            assert_eq!(values, items.iter().map(|i| i * 3).collect::<Vec<_>>());
            // Split, the first half ran on the helper thread and the second here.
            let on_helper = out
                .iter()
                .filter(|(_, name)| name.as_deref() == Some("ps-count"))
                .count();
            assert_eq!(on_helper, if split { items.len() / 2 } else { 0 });
        }
    }
}
