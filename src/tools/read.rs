//! `read`: a record's output from a cursor, as a typed snapshot.
//!
//! The snapshot is taken under the record's lock; the answer's memory is reserved first
//! (`room`), so a read too large for the process shows less instead of aborting it.

use crate::base::json;
use crate::base::ring::highlights::Highlight;
use crate::base::ring::{ReadOut, ReadReq, Streams};
use crate::process::record::{Proc, Status};
use crate::tools::engine::{stage_failure, Engine, ReadArgs, RESULT_TEXT_MAX};
use crate::tools::results::{Answer, ErrorKind, KilledFor, Output, Snapshot, ToolError};
use crate::tools::room::{affordable, answer_room, ANSWER_COPIES};

impl Engine {
    /// `read`.
    pub fn read(&self, id: &str, args: ReadArgs) -> Answer {
        let proc = self.table.get(id).ok_or_else(|| ToolError::unknown(id))?;
        let want = (self.budget(args.max_output_bytes) as u64).min(proc.lock().output.retained());
        if let Err(need) = answer_room(want) {
            return Err(ToolError::new(
                ErrorKind::Refused,
                format!(
                    "this read would need about {} MiB to answer, more than the server can \
                     allocate now (its memory limit); nothing was read: ask for less with \
                     max_output_bytes (at most {} bytes fit now) and read on with since_seq",
                    need >> 20,
                    affordable(want)
                ),
            )
            .about(id));
        }
        Ok(Output::Read(self.snapshot(&proc, args, false)))
    }

    /// The record's state and a slice of its output. Without `since_seq` (and
    /// `tail_lines`) the read goes on from the cursor of its `streams` choice; every answer
    /// moves that cursor forward to its `next_seq`. With `ends`, an answer
    /// about a finished record shows each long stream as head, marker and tail.
    pub(crate) fn snapshot(&self, proc: &Proc, args: ReadArgs, ends: bool) -> Snapshot {
        let slot = match args.streams {
            Streams::Both => 0,
            Streams::Stdout => 1,
            Streams::Stderr => 2,
        };
        let mut st = proc.lock();
        // Where the answer was asked to start: a tail read starts where the last answer
        // stopped, for the highlights it leaves out before its tail.
        let prior = st.cursors[slot].max(1);
        // Under 1.1 the reads are 1.1.2's: pages from the cursor, no head and tail, no
        // marker lines, and only a read of both streams with neither `since_seq` nor
        // `tail_lines` uses and moves the cursor (a narrowed read starts at the oldest byte).
        let v1_1 = self.config.api == crate::base::config::Api::V1_1;
        let resumes = !v1_1 || (slot == 0 && args.since_seq.is_none() && args.tail_lines.is_none());
        let since = match (args.since_seq, args.tail_lines) {
            (None, None) if resumes => Some(st.cursors[slot]).filter(|&c| c > 0),
            (since, _) => since,
        };
        // An answer the allocator cannot hold shows less (what fits), instead of aborting.
        let max_bytes = self.budget(args.max_output_bytes);
        let max_bytes = match answer_room((max_bytes as u64).min(st.output.retained())) {
            Ok(()) => max_bytes,
            Err(_) => affordable(max_bytes as u64) as usize,
        };
        let req = ReadReq {
            since,
            tail_lines: args.tail_lines.map(|n| n as usize),
            streams: args.streams,
            max_bytes,
        };
        // Head and tail are cut from a copy of everything retained: shown only when that
        // copy can be allocated (a plain read of the budget otherwise).
        let ends = ends
            && !v1_1
            && st.ended.is_some()
            && args.tail_lines.is_none()
            && answer_room(st.output.retained() / ANSWER_COPIES + req.max_bytes as u64).is_ok();
        let read = |req: &ReadReq| {
            if ends {
                st.output.read_ends(req, None)
            } else if v1_1 {
                st.output.read(req)
            } else {
                st.output.read_marked(req)
            }
        };
        let mut output = read(&req);
        // Escaped as JSON, a control character takes six bytes: a smaller budget keeps the
        // result's text under 64 KiB whatever the bytes are.
        // An operator who raised `YIELDSHELL_MAX_OUTPUT_BYTES` past it gets that much text.
        let text_max = RESULT_TEXT_MAX.max(self.config.max_output_bytes);
        let mut budget = req.max_bytes;
        for _ in 0..3 {
            let cost = json::text_cost(&output.stdout) + json::text_cost(&output.stderr);
            if cost <= text_max || budget <= 1 {
                break;
            }
            budget = (budget as u128 * text_max as u128 / cost as u128) as usize;
            budget = budget.max(1);
            output = read(&ReadReq {
                max_bytes: budget,
                ..req
            });
        }
        let status = st.status();
        let (exit_code, signal) = st.exit();
        let stdin_error = st.stdin_error.clone();
        let killed_for = KilledFor::from_state(st.killed_for_output(proc.info.output_cap));
        let failed_stage = stage_failure(&proc.info, &st);
        let running = status == Status::Running;
        let asked_from = match args.tail_lines {
            Some(_) => prior,
            None => since.unwrap_or(1),
        };
        let evicted = [st.output.evicted(0), st.output.evicted(1)];
        let highlights = left_out(
            proc,
            &st.output.highlights().0,
            (&output, evicted),
            asked_from,
        );
        crate::process::agents::shape_read(proc, &mut output, args.raw, running);
        let protected = proc
            .info
            .agent
            .protected_line(&[&output.stdout, &output.stderr]);
        // A `both` answer has shown each stream up to its end too.
        let moved = match (resumes, slot) {
            (false, _) => 0..0,
            (true, 0) => 0..3,
            (true, _) => slot..slot + 1,
        };
        for k in moved {
            st.cursors[k] = st.cursors[k].max(output.next_seq);
        }
        drop(st);
        Snapshot {
            process_id: proc.info.id.clone(),
            status,
            exit_code,
            signal,
            output,
            streams: args.streams,
            stdin_error,
            input: crate::process::agents::input_state(proc, running),
            killed_for,
            failed_stage,
            protected,
            highlights,
        }
    }
}

/// The highlights at or after `from` that `out` does not show: before its start, between
/// a stream's head and tail, or evicted (`evicted`: each stream's evicted positions). Their
/// text is cleaned of escape sequences (terminals) and redacted with the secrets in force
/// now.
fn left_out(
    proc: &Proc,
    kept: &[Highlight],
    (out, evicted): (&ReadOut, [Option<(u64, u64)>; 2]),
    from: u64,
) -> Vec<Highlight> {
    let shown = |h: &Highlight| {
        let omitted =
            out.omitted[h.stream].is_some_and(|o| o.from_seq <= h.seq && h.seq <= o.to_seq);
        let gone = evicted[h.stream].is_some_and(|(a, b)| a <= h.seq && h.seq < b);
        h.seq >= out.start_seq && !omitted && !gone
    };
    let wanted: Vec<&Highlight> = kept
        .iter()
        .filter(|h| h.seq >= from && h.seq < out.next_seq && !shown(h))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let secrets = proc.info.agent.secrets_now();
    wanted
        .into_iter()
        .map(|h| {
            let mut bytes = h.text.as_bytes().to_vec();
            if proc.info.agent.terminal.is_some() {
                bytes = crate::base::ansi::strip(&bytes).text;
            }
            let text = String::from_utf8_lossy(&secrets.redact_bytes(bytes)).into_owned();
            Highlight { text, ..h.clone() }
        })
        .collect()
}
