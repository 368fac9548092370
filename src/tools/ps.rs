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
            let mut entry = entry;
            entry.processes = match status {
                Status::Running => proc.live_processes(),
                _ => Some(0),
            };
            list.push((entry, proc));
        }
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
