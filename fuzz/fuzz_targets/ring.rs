//! The output rings (`ring::Output`): two byte rings of a small capacity, each with a small
//! head (the stream's first bytes, kept for good beside the ring), positions in one sequence
//! shared by both, checked against a naive model that stores every retained byte with its
//! position.
//!
//! The head: each stream's first `head` bytes (never ending inside a character: a push that
//! would fill it mid-character leaves that character and the rest to the ring) are retained
//! for good; the ring keeps the newest `cap` bytes after them. Between the two, positions may
//! be missing (the gap): a read crosses it like the start of a read (skipping the rest of a
//! character whose lead was evicted), `gap` names the evicted positions at or after the
//! requested one exactly when `truncated` is set, `tail_lines` counts the gap as a line
//! break, and `stream_bytes_from` returns only the run after the gap.
//!
//! Properties, for any sequence of pushes and reads:
//! - positions are assigned from 1 in arrival order, strictly increasing, across both
//!   streams; `latest_seq` is the number of bytes pushed; `bytes_total` counts per stream;
//!   each stream retains exactly its newest `cap` bytes (`stream_bytes_from`,
//!   `stream_off_at` and `oldest_seq` agree with the model);
//! - while every push to the selected streams was valid UTF-8 (the documented contract:
//!   callers keep characters whole per append), a read (without `tail_lines`) returns a
//!   prefix, in position order, of the retained bytes of the selected streams from
//!   `max(since, oldest)`, each stream first skipping the rest of a character the start fell
//!   into (or whose lead byte was evicted); never more than `max_bytes + 3` bytes (and at
//!   least one when `max_bytes >= 1` and something is there); `capped` exactly when bytes are
//!   left after it; `start_seq` is the first returned position; `next_seq` is one past the
//!   last returned byte when capped, else one past the newest position; `truncated` exactly
//!   when a selected byte at or after the requested position was evicted;
//! - chaining `since_seq = next_seq` from 1 with a budget >= 4 makes progress on every call
//!   and returns every retained byte exactly once, in order (under the contract: minus the
//!   continuation bytes of a character whose lead byte was evicted), and no read splits a
//!   character; with arbitrary bytes, it returns each stream's retained bytes in order,
//!   losing at most 3 bytes per call;
//! - a `tail_lines` read never returns more than `max_bytes`, returns per stream a suffix of
//!   the retained bytes, and under the contract exactly the newest N lines of each stream
//!   when they fit, or else the newest `max_bytes` bytes of those lines in position order
//!   across both streams (not starting inside a character).
#![no_main]

use std::collections::VecDeque;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::internals::ring::{Output, ReadOut, ReadReq, Streams, STDERR, STDOUT};

#[derive(Arbitrary, Debug)]
enum Op {
    PushBytes {
        stderr: bool,
        data: Vec<u8>,
    },
    PushText {
        stderr: bool,
        text: String,
    },
    Read {
        since: Option<u16>,
        max: u8,
        streams: u8,
        tail: Option<u8>,
    },
    Chain {
        budget: u8,
        streams: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    cap: u8,
    head: u8,
    ops: Vec<Op>,
}

#[derive(Clone, Copy, Debug)]
struct Byte {
    seq: u64,
    /// Index of the byte in its stream (bytes ever pushed to the stream before it).
    off: u64,
    value: u8,
}

#[derive(Debug)]
struct Model {
    cap: usize,
    /// Size of each stream's head.
    head: usize,
    /// Bytes of each stream in its head (at the front of `kept`).
    in_head: [usize; 2],
    /// The head of the stream is complete.
    head_full: [bool; 2],
    /// The oldest evicted position per stream (0: none).
    evicted_min: [u64; 2],
    next: u64,
    kept: [VecDeque<Byte>; 2],
    total: [u64; 2],
    /// Newest evicted position per stream (0: none).
    evicted_max: [u64; 2],
    /// Every push to the stream was valid UTF-8.
    utf8: [bool; 2],
}

impl Model {
    fn push(&mut self, stream: usize, data: &[u8]) {
        if std::str::from_utf8(data).is_err() {
            self.utf8[stream] = false;
        }
        if !self.head_full[stream] {
            let room = self.head - self.in_head[stream];
            let mut take = data.len().min(room);
            if take < data.len() {
                take = boundary_at_or_before(data, take);
                self.head_full[stream] = true;
            }
            self.in_head[stream] += take;
        }
        for &value in data {
            self.kept[stream].push_back(Byte {
                seq: self.next,
                off: self.total[stream],
                value,
            });
            self.next += 1;
            self.total[stream] += 1;
        }
        let h = self.in_head[stream];
        while self.kept[stream].len() - h > self.cap {
            let gone = self.kept[stream].remove(h).unwrap();
            self.evicted_max[stream] = gone.seq;
            if self.evicted_min[stream] == 0 {
                self.evicted_min[stream] = gone.seq;
            }
        }
    }

    fn oldest(&self, streams: Streams) -> u64 {
        selected(streams)
            .filter_map(|i| self.kept[i].front().map(|b| b.seq))
            .min()
            .unwrap_or(self.next)
            .min(self.next)
    }

    fn stream_from(&self, stream: usize, start: u64) -> Vec<u8> {
        self.kept[stream]
            .iter()
            .filter(|b| b.seq >= start)
            .map(|b| b.value)
            .collect()
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

fn utf8_width(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

/// Where the head stops in a push that would fill it at `at`: not inside a character.
fn boundary_at_or_before(data: &[u8], at: usize) -> usize {
    let mut i = at;
    while i > 0 && at - i < 3 && i < data.len() && is_continuation(data[i]) {
        i -= 1;
    }
    if i < at && i < data.len() && utf8_width(data[i]) > at - i {
        i
    } else {
        at
    }
}

/// Under the contract: the retained bytes of `stream` at or after `start`, without the rest
/// of a character that began before the start or before the gap (continuation bytes at the
/// front of each contiguous run).
fn clean_from(m: &Model, stream: usize, start: u64) -> Vec<Byte> {
    let mut out = Vec::new();
    let mut prev: Option<u64> = None;
    let mut skipping = true;
    for b in m.kept[stream].iter().filter(|b| b.seq >= start) {
        if prev.is_none_or(|p| p + 1 != b.off) {
            skipping = true;
        }
        prev = Some(b.off);
        if skipping && is_continuation(b.value) {
            continue;
        }
        skipping = false;
        out.push(*b);
    }
    out
}

/// Lines of a run of bytes, a gap (a jump in stream offsets) ending a line too.
fn lines_of(bytes: &[Byte]) -> Vec<Vec<Byte>> {
    let mut lines: Vec<Vec<Byte>> = Vec::new();
    let mut cur: Vec<Byte> = Vec::new();
    for (k, b) in bytes.iter().enumerate() {
        if k > 0 && bytes[k - 1].off + 1 != b.off && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        cur.push(*b);
        if b.value == b'\n' {
            lines.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The evicted positions at or after `requested` of the selected streams (first, last).
fn model_gap(m: &Model, streams: Streams, requested: u64) -> Option<(u64, u64)> {
    let mut gap: Option<(u64, u64)> = None;
    for i in selected(streams) {
        if m.evicted_max[i] >= requested && m.evicted_max[i] > 0 {
            let f = m.evicted_min[i].max(requested);
            let l = m.evicted_max[i];
            gap = Some(gap.map_or((f, l), |(a, b)| (a.min(f), b.max(l))));
        }
    }
    gap
}

/// True when `needle` occurs in `hay` as a contiguous run.
fn contains_run(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// True when `sub` is a subsequence of `seq`.
fn is_subsequence(sub: &[u8], seq: &[u8]) -> bool {
    let mut it = seq.iter();
    sub.iter().all(|b| it.any(|c| c == b))
}

fn streams_of(n: u8) -> Streams {
    match n % 3 {
        0 => Streams::Both,
        1 => Streams::Stdout,
        _ => Streams::Stderr,
    }
}

fn selected(streams: Streams) -> impl Iterator<Item = usize> {
    [STDOUT, STDERR]
        .into_iter()
        .filter(move |&i| match streams {
            Streams::Both => true,
            Streams::Stdout => i == STDOUT,
            Streams::Stderr => i == STDERR,
        })
}

fn check_read(m: &Model, o: &Output, req: &ReadReq) -> ReadOut {
    let out = o.read(req);
    let requested = req.since.unwrap_or(1).max(1);
    // A start past the newest output is clamped to the end (reads nothing, resumes there).
    let start = requested.max(m.oldest(req.streams)).min(m.next);
    let clean = selected(req.streams).all(|i| m.utf8[i]);
    assert_eq!(out.latest_seq, m.next - 1, "latest_seq");
    let returned = out.stdout.len() + out.stderr.len();
    let got_of = |i: usize| {
        if i == STDOUT {
            &out.stdout
        } else {
            &out.stderr
        }
    };
    for i in [STDOUT, STDERR] {
        if !selected(req.streams).any(|s| s == i) {
            assert!(
                got_of(i).is_empty(),
                "unselected stream {i} returned bytes: {req:?}"
            );
        }
    }

    if let Some(n) = req.tail_lines {
        assert!(
            returned <= req.max_bytes,
            "tail read over budget: {returned} > {req:?}"
        );
        assert!(!out.capped);
        assert_eq!(out.next_seq, m.next.max(start), "tail next_seq");
        for i in selected(req.streams) {
            let all = m.stream_from(i, start);
            // Across the gap, the rest of a character whose lead was evicted is left out.
            let gap = m.evicted_max[i] > 0 && m.in_head[i] > 0;
            assert!(
                all.ends_with(got_of(i)) || (gap && is_subsequence(got_of(i), &all)),
                "tail of stream {i} is not a suffix of its bytes: {:?} vs {all:?}, {req:?}",
                got_of(i)
            );
        }
        if clean {
            // The newest n lines of each stream.
            let mut tails: [Vec<Byte>; 2] = [Vec::new(), Vec::new()];
            for i in selected(req.streams) {
                let bytes = clean_from(m, i, start);
                if n > 0 {
                    let lines = lines_of(&bytes);
                    tails[i] = lines[lines.len().saturating_sub(n)..].concat();
                }
            }
            let wanted = tails[0].len() + tails[1].len();
            if wanted > req.max_bytes {
                // Keep the newest max_bytes bytes in position order, then do not start
                // inside a character.
                let mut merged: Vec<u64> = tails.iter().flatten().map(|b| b.seq).collect();
                merged.sort_unstable();
                let cut = merged[merged.len() - req.max_bytes..]
                    .first()
                    .copied()
                    .unwrap_or(u64::MAX);
                for tail in &mut tails {
                    let kept: Vec<Byte> = tail
                        .iter()
                        .filter(|b| b.seq >= cut)
                        .skip_while(|b| is_continuation(b.value))
                        .copied()
                        .collect();
                    *tail = kept;
                }
            }
            for i in [STDOUT, STDERR] {
                let expect: Vec<u8> = tails[i].iter().map(|b| b.value).collect();
                assert_eq!(got_of(i), &expect, "tail of stream {i}, {req:?}");
            }
        }
        // start_seq: the first returned position.
        let mut first = None::<u64>;
        for i in selected(req.streams) {
            // Match the returned bytes backwards against the retained ones (bytes left out
            // across the gap are skipped): the last one matched is the first returned.
            let got = got_of(i);
            let mut want = got.iter().rev().peekable();
            let mut seq = None;
            for b in m.kept[i].iter().rev() {
                match want.peek() {
                    Some(&&v) if v == b.value => {
                        want.next();
                        seq = Some(b.seq);
                    }
                    Some(_) => (),
                    None => break,
                }
            }
            if let (Some(seq), false) = (seq, got.is_empty()) {
                first = Some(first.map_or(seq, |f: u64| f.min(seq)));
            }
        }
        if clean {
            assert_eq!(
                out.start_seq,
                first.unwrap_or(m.next.max(start)),
                "tail start_seq"
            );
        } else {
            // Arbitrary bytes: which equal byte was returned can be ambiguous to the model.
            assert!(out.start_seq >= m.oldest(req.streams).min(start), "tail start_seq");
        }
        return out;
    }

    let truncated = selected(req.streams).any(|i| m.evicted_max[i] >= requested);
    assert_eq!(out.truncated, truncated, "truncated, {req:?}");
    assert_eq!(out.gap, model_gap(m, req.streams, requested), "gap, {req:?}");
    assert!(
        returned <= req.max_bytes + 3,
        "read of {returned} bytes over max {}",
        req.max_bytes
    );
    if out.capped {
        assert!(
            returned >= 1 || req.max_bytes == 0,
            "capped without progress: {req:?}"
        );
        assert!(
            out.next_seq > start || req.max_bytes == 0,
            "capped, next_seq not after start"
        );
    } else {
        assert_eq!(
            out.next_seq,
            m.next.max(start),
            "next_seq of a complete read, {req:?}"
        );
    }
    if !clean {
        // Arbitrary bytes: each stream's bytes are still its retained bytes after the
        // start, in order (a run, except where the read crossed the gap).
        for i in selected(req.streams) {
            let all = m.stream_from(i, start);
            let ok = if m.evicted_max[i] > 0 && m.in_head[i] > 0 {
                is_subsequence(got_of(i), &all)
            } else {
                contains_run(&all, got_of(i))
            };
            assert!(
                ok,
                "stream {i} returned bytes that are not its bytes in order: {:?} vs {all:?}",
                got_of(i)
            );
        }
        return out;
    }

    let mut list: Vec<(usize, Byte)> = selected(req.streams)
        .flat_map(|i| clean_from(m, i, start).into_iter().map(move |b| (i, b)))
        .collect();
    list.sort_by_key(|(_, b)| b.seq);
    assert!(
        returned <= list.len(),
        "returned more than there is: {req:?}"
    );
    if req.max_bytes >= 1 && !list.is_empty() {
        assert!(returned >= 1, "no progress: {req:?}");
    }
    let prefix = &list[..returned];
    for i in [STDOUT, STDERR] {
        let expect: Vec<u8> = prefix
            .iter()
            .filter(|(s, _)| *s == i)
            .map(|(_, b)| b.value)
            .collect();
        assert_eq!(
            got_of(i),
            &expect,
            "stream {i} is not the model's prefix, {req:?}"
        );
        assert!(
            std::str::from_utf8(got_of(i)).is_ok(),
            "read split a character: {:?}, {req:?}",
            got_of(i)
        );
    }
    assert_eq!(out.capped, returned < list.len(), "capped, {req:?}");
    assert_eq!(
        out.start_seq,
        prefix.first().map_or(start, |(_, b)| b.seq),
        "start_seq, {req:?}"
    );
    let next = if out.capped {
        prefix.last().map_or(start, |(_, b)| b.seq + 1)
    } else {
        m.next.max(start)
    };
    assert_eq!(out.next_seq, next, "next_seq, {req:?}");
    if let Some(&(_, b)) = list.get(returned) {
        assert!(b.seq >= out.next_seq, "next_seq skips back");
    }
    out
}

fn chain(m: &Model, o: &Output, streams: Streams, budget: usize) {
    let mut got = [Vec::new(), Vec::new()];
    let mut since = 1u64;
    let limit = m.kept[0].len() + m.kept[1].len() + 2;
    let mut calls = 0;
    loop {
        let req = ReadReq {
            since: Some(since),
            tail_lines: None,
            streams,
            max_bytes: budget,
        };
        let out = check_read(m, o, &req);
        got[STDOUT].extend_from_slice(&out.stdout);
        got[STDERR].extend_from_slice(&out.stderr);
        calls += 1;
        if !out.capped {
            break;
        }
        assert!(out.next_seq > since, "chain made no progress at {since}");
        since = out.next_seq;
        assert!(calls <= limit, "chain does not end");
    }
    for i in selected(streams) {
        let kept: Vec<u8> = m.kept[i].iter().map(|b| b.value).collect();
        if m.utf8[i] {
            let expect: Vec<u8> = clean_from(m, i, 1).iter().map(|b| b.value).collect();
            assert_eq!(
                got[i], expect,
                "chained reads of stream {i} with budget {budget}"
            );
        } else {
            assert!(
                is_subsequence(&got[i], &kept),
                "chained reads of stream {i} are not its bytes in order: {:?} vs {kept:?}",
                got[i]
            );
            // At most 3 bytes per call, and 3 more where the reads crossed the gap.
            assert!(
                kept.len() - got[i].len() <= 3 * calls + 3,
                "chained reads of stream {i} lost {} bytes in {calls} calls",
                kept.len() - got[i].len()
            );
        }
    }
}

fuzz_target!(|input: Input| {
    let cap = (input.cap % 32) as usize + 1;
    let head = (input.head % 16) as usize;
    let mut o = Output::with_head(cap, head);
    let mut m = Model {
        cap,
        head,
        in_head: [0; 2],
        head_full: [false; 2],
        evicted_min: [0; 2],
        next: 1,
        kept: [VecDeque::new(), VecDeque::new()],
        total: [0; 2],
        evicted_max: [0; 2],
        utf8: [true; 2],
    };
    for op in input.ops.into_iter().take(64) {
        match op {
            Op::PushBytes { stderr, data } => {
                let s = stderr as usize;
                o.push(s, &data);
                m.push(s, &data);
            }
            Op::PushText { stderr, text } => {
                let s = stderr as usize;
                o.push(s, text.as_bytes());
                m.push(s, text.as_bytes());
            }
            Op::Read {
                since,
                max,
                streams,
                tail,
            } => {
                let req = ReadReq {
                    since: since.map(u64::from),
                    tail_lines: tail.map(usize::from),
                    streams: streams_of(streams),
                    max_bytes: max as usize,
                };
                check_read(&m, &o, &req);
            }
            Op::Chain { budget, streams } => {
                chain(&m, &o, streams_of(streams), 4 + budget as usize % 64);
            }
        }
        assert_eq!(o.latest_seq(), m.next - 1);
        for i in [STDOUT, STDERR] {
            assert_eq!(o.bytes_total(i), m.total[i]);
            let mut bytes = Vec::new();
            let (from, end) = o.stream_bytes_from(i, 0, &mut bytes);
            // The run after the gap (all retained bytes when there is none).
            let kept = &m.kept[i];
            let run = (1..kept.len())
                .rev()
                .find(|&k| kept[k - 1].off + 1 != kept[k].off)
                .unwrap_or(0);
            let expect: Vec<u8> = kept.iter().skip(run).map(|b| b.value).collect();
            assert_eq!(bytes, expect, "retained bytes of stream {i}");
            assert_eq!(end, m.total[i]);
            assert_eq!(from, kept.get(run).map_or(m.total[i], |b| b.off));
            // Positions strictly increase along each stream.
            assert!(m.kept[i]
                .iter()
                .zip(m.kept[i].iter().skip(1))
                .all(|(a, b)| a.seq < b.seq));
            for probe in [1, m.next / 2, m.next.saturating_sub(1), m.next] {
                let expect = m.kept[i]
                    .iter()
                    .find(|b| b.seq >= probe)
                    .map_or(m.total[i], |b| b.off);
                assert_eq!(
                    o.stream_off_at(i, probe),
                    expect,
                    "stream_off_at({i}, {probe})"
                );
            }
        }
        for s in [Streams::Both, Streams::Stdout, Streams::Stderr] {
            assert_eq!(o.oldest_seq(s), m.oldest(s), "oldest_seq({s:?})");
        }
    }
});
