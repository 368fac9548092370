//! Waiting on a record: until it finishes, its leader exits, its output matches `until`,
//! a deadline passes, or the call is cancelled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use regex_lite::Regex;

use crate::engine::{CallCtx, ReadArgs};
use crate::process::{self, Proc};
use crate::ring::{Streams, STDERR, STDOUT};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitMode {
    /// `exec`: also return 250 ms after the leader exits.
    Exec,
    /// `wait`/`stop`: only on finish, match, deadline or cancel.
    Wait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Finished,
    LeaderGone,
    Deadline,
    Cancelled,
    Matched,
}

/// Incremental matching of `until` over new output, line by line per stream.
pub(crate) struct UntilWatch<'a> {
    re: &'a Regex,
    /// Stream offset where scanning resumes (the start of an unfinished line).
    from: [u64; 2],
    streams: Streams,
    scratch: Vec<u8>,
}

impl<'a> UntilWatch<'a> {
    pub(crate) fn new(re: &'a Regex, proc: &Proc, args: ReadArgs) -> UntilWatch<'a> {
        let st = proc.lock();
        let seq = args.since_seq.unwrap_or(1);
        let from = [
            st.output.stream_off_at(STDOUT, seq),
            st.output.stream_off_at(STDERR, seq),
        ];
        UntilWatch {
            re,
            from,
            streams: args.streams,
            scratch: Vec::new(),
        }
    }

    fn check(&mut self, st: &process::State) -> bool {
        for stream in [STDOUT, STDERR] {
            let wanted = match self.streams {
                Streams::Both => true,
                Streams::Stdout => stream == STDOUT,
                Streams::Stderr => stream == STDERR,
            };
            if !wanted {
                continue;
            }
            self.scratch.clear();
            let (start, end) =
                st.output
                    .stream_bytes_from(stream, self.from[stream], &mut self.scratch);
            if start == end {
                continue;
            }
            if self.re.is_match(&String::from_utf8_lossy(&self.scratch)) {
                return true;
            }
            // Resume at the start of the last unfinished line; a very long line without a
            // newline is not rescanned forever.
            self.from[stream] = match memchr::memrchr(b'\n', &self.scratch) {
                Some(i) => start + i as u64 + 1,
                None if self.scratch.len() > 64 * 1024 => end,
                None => start,
            };
        }
        false
    }
}

pub(crate) fn wait_loop(
    proc: &Arc<Proc>,
    deadline: Instant,
    ctx: &CallCtx<'_>,
    mode: WaitMode,
    mut until: Option<UntilWatch<'_>>,
) -> Outcome {
    let started = Instant::now();
    let mut next_progress = started + Duration::from_secs(1);
    let mut st = proc.lock();
    loop {
        if ctx.cancel.is_cancelled() {
            return Outcome::Cancelled;
        }
        if st.ended.is_some() {
            return Outcome::Finished;
        }
        if let Some(w) = until.as_mut() {
            if w.check(&st) {
                return Outcome::Matched;
            }
        }
        let now = Instant::now();
        let mut wake = deadline;
        if mode == WaitMode::Exec {
            if let Some((_, exited_at)) = st.leader {
                let at = exited_at + process::LEADER_EXIT_GRACE;
                if now >= at {
                    return Outcome::LeaderGone;
                }
                wake = wake.min(at);
            }
        }
        if now >= deadline {
            return Outcome::Deadline;
        }
        if let Some(progress) = ctx.progress {
            if now >= next_progress {
                let bytes = st.output.bytes_total(STDOUT) + st.output.bytes_total(STDERR);
                let elapsed = now.saturating_duration_since(started).as_millis() as u64;
                // Never call out while holding the record's lock.
                parking_lot::MutexGuard::unlocked(&mut st, || progress(elapsed, bytes));
                next_progress = now + Duration::from_secs(1);
                continue;
            }
            wake = wake.min(next_progress);
        }
        proc.wait_until(&mut st, wake);
    }
}
