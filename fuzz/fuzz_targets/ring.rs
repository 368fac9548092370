//! The output rings (`ring::Output`): two byte rings of a small capacity, positions in one
//! sequence shared by both, checked against a naive model that stores every retained byte
//! with its position.
//!
//! Properties, for any sequence of pushes and reads:
//! - positions are assigned from 1 in arrival order, strictly increasing, across both
//!   streams; `latest_seq` is the number of bytes pushed; `bytes_total` counts per stream;
//!   each stream retains exactly its newest `cap` bytes;
//! - a read (without `tail_lines`) returns a prefix, in position order, of the retained bytes
//!   of the selected streams from `max(since, oldest)`; never more than `max_bytes + 3` bytes
//!   (and at least one byte when `max_bytes >= 1` and something is there); `capped` exactly
//!   when bytes are left after it; `start_seq` is the first returned position; `next_seq` is
//!   one past the last returned byte when capped, else one past the newest position;
//!   `truncated` exactly when a selected byte at or after the requested position was evicted;
//! - chaining `since_seq = next_seq` from 1 with a budget >= 4 returns every retained byte of
//!   the selected streams exactly once, in order, making progress on every call; when every
//!   push was valid UTF-8 and nothing was evicted, no read splits a character;
//! - a `tail_lines` read returns, per stream, a suffix of the retained bytes; exactly the
//!   newest N lines when they fit in the budget; never more than `max_bytes` bytes;
//! - `oldest_seq`, `stream_bytes_from` and `stream_off_at` agree with the model.
#![no_main]

use std::collections::VecDeque;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::ring::{Output, ReadOut, ReadReq, Streams, STDERR, STDOUT};

#[derive(Arbitrary, Debug)]
enum Op {
    PushBytes { stderr: bool, data: Vec<u8> },
    PushText { stderr: bool, text: String },
    Read {
        since: Option<u16>,
        max: u8,
        streams: u8,
        tail: Option<u8>,
    },
    Chain { budget: u8, streams: u8 },
}

#[derive(Arbitrary, Debug)]
struct Input {
    cap: u8,
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
        for &value in data {
            self.kept[stream].push_back(Byte {
                seq: self.next,
                off: self.total[stream],
                value,
            });
            self.next += 1;
            self.total[stream] += 1;
            if self.kept[stream].len() > self.cap {
                let gone = self.kept[stream].pop_front().unwrap();
                self.evicted_max[stream] = gone.seq;
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

    /// Retained bytes of the selected streams at or after `start`, in position order, with
    /// their stream.
    fn merged_from(&self, streams: Streams, start: u64) -> Vec<(usize, Byte)> {
        let mut all: Vec<(usize, Byte)> = selected(streams)
            .flat_map(|i| self.kept[i].iter().map(move |b| (i, *b)))
            .filter(|(_, b)| b.seq >= start)
            .collect();
        all.sort_by_key(|(_, b)| b.seq);
        all
    }

    fn stream_from(&self, stream: usize, start: u64) -> Vec<u8> {
        self.kept[stream]
            .iter()
            .filter(|b| b.seq >= start)
            .map(|b| b.value)
            .collect()
    }
}

fn streams_of(n: u8) -> Streams {
    match n % 3 {
        0 => Streams::Both,
        1 => Streams::Stdout,
        _ => Streams::Stderr,
    }
}

fn selected(streams: Streams) -> impl Iterator<Item = usize> {
    [STDOUT, STDERR].into_iter().filter(move |&i| match streams {
        Streams::Both => true,
        Streams::Stdout => i == STDOUT,
        Streams::Stderr => i == STDERR,
    })
}

fn check_read(m: &Model, o: &Output, req: &ReadReq) -> ReadOut {
    let out = o.read(req);
    let requested = req.since.unwrap_or(1).max(1);
    let start = requested.max(m.oldest(req.streams));
    assert_eq!(out.latest_seq, m.next - 1, "latest_seq");
    let truncated = selected(req.streams).any(|i| m.evicted_max[i] >= requested);
    let returned = out.stdout.len() + out.stderr.len();
    for i in [STDOUT, STDERR] {
        if !selected(req.streams).any(|s| s == i) {
            let got = if i == STDOUT { &out.stdout } else { &out.stderr };
            assert!(got.is_empty(), "unselected stream {i} returned bytes: {req:?}");
        }
    }

    if let Some(n) = req.tail_lines {
        assert!(returned <= req.max_bytes, "tail read over budget: {returned} > {req:?}");
        assert!(!out.capped);
        assert_eq!(out.next_seq, m.next.max(start), "tail next_seq");
        let mut wanted = 0;
        let mut tails = [Vec::new(), Vec::new()];
        for i in selected(req.streams) {
            let all = m.stream_from(i, start);
            let lines: Vec<&[u8]> = all.split_inclusive(|&b| b == b'\n').collect();
            tails[i] = lines[lines.len().saturating_sub(n)..].concat();
            if n == 0 {
                tails[i].clear();
            }
            wanted += tails[i].len();
            let got = if i == STDOUT { &out.stdout } else { &out.stderr };
            assert!(
                all.ends_with(got),
                "tail of stream {i} is not a suffix of its bytes: {got:?} vs {all:?}, {req:?}"
            );
        }
        if wanted <= req.max_bytes {
            assert_eq!(out.stdout, tails[STDOUT], "stdout tail, {req:?}");
            assert_eq!(out.stderr, tails[STDERR], "stderr tail, {req:?}");
        }
        // start_seq: the first returned position.
        let mut first = None::<u64>;
        for i in selected(req.streams) {
            let got = if i == STDOUT { out.stdout.len() } else { out.stderr.len() };
            if got > 0 {
                let kept = &m.kept[i];
                let seq = kept[kept.len() - got].seq;
                first = Some(first.map_or(seq, |f: u64| f.min(seq)));
            }
        }
        assert_eq!(out.start_seq, first.unwrap_or(m.next.max(start)), "tail start_seq");
        return out;
    }

    assert_eq!(out.truncated, truncated, "truncated, {req:?}");
    let list = m.merged_from(req.streams, start);
    assert!(returned <= list.len(), "returned more than there is: {req:?}");
    assert!(
        returned <= req.max_bytes + 3,
        "read of {returned} bytes over max {}",
        req.max_bytes
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
        let got = if i == STDOUT { &out.stdout } else { &out.stderr };
        assert_eq!(got, &expect, "stream {i} is not the model's prefix, {req:?}");
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
        for i in selected(streams) {
            let piece = if i == STDOUT { &out.stdout } else { &out.stderr };
            if m.utf8[i] && m.evicted_max[i] == 0 {
                assert!(
                    std::str::from_utf8(piece).is_ok(),
                    "read split a character: {piece:?}, {req:?}"
                );
            }
        }
        got[STDOUT].extend_from_slice(&out.stdout);
        got[STDERR].extend_from_slice(&out.stderr);
        if !out.capped {
            break;
        }
        assert!(out.next_seq > since, "chain made no progress at {since}");
        since = out.next_seq;
        calls += 1;
        assert!(calls <= limit, "chain does not end");
    }
    for i in selected(streams) {
        let expect: Vec<u8> = m.kept[i].iter().map(|b| b.value).collect();
        assert_eq!(got[i], expect, "chained reads of stream {i} with budget {budget}");
    }
}

fuzz_target!(|input: Input| {
    let cap = (input.cap % 32) as usize + 1;
    let mut o = Output::new(cap);
    let mut m = Model {
        cap,
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
            let expect: Vec<u8> = m.kept[i].iter().map(|b| b.value).collect();
            assert_eq!(bytes, expect, "retained bytes of stream {i}");
            assert_eq!(end, m.total[i]);
            assert_eq!(from, m.total[i] - m.kept[i].len() as u64);
            // Positions strictly increase along each stream.
            assert!(m.kept[i].iter().zip(m.kept[i].iter().skip(1)).all(|(a, b)| a.seq < b.seq));
            for probe in [1, m.next / 2, m.next.saturating_sub(1), m.next] {
                let expect = m.kept[i]
                    .iter()
                    .find(|b| b.seq >= probe)
                    .map_or(m.total[i], |b| b.off);
                assert_eq!(o.stream_off_at(i, probe), expect, "stream_off_at({i}, {probe})");
            }
        }
        for s in [Streams::Both, Streams::Stdout, Streams::Stderr] {
            assert_eq!(o.oldest_seq(s), m.oldest(s), "oldest_seq({s:?})");
        }
    }
});
