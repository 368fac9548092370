//! Output buffers: one byte ring per stream, positions in one sequence shared by both.
//!
//! Every byte of stdout and stderr gets one position (`seq`), starting at 1, in arrival
//! order. Each stream keeps at most `cap` bytes; older bytes are evicted from the front.
//! A ring remembers which runs of positions it holds as segments (`Seg`), so a read can
//! merge both streams in position order and stop at any position.
//!
//! Invariants (no syscalls, no clock here; everything is a pure function of the appends):
//! - positions of one stream increase strictly along its ring;
//! - `Output::next_seq` is one past the newest position of either stream;
//! - a read that starts where the previous one stopped (`next_seq`) sees every retained
//!   byte exactly once;
//! - a read never ends inside a UTF-8 character unless the character itself is longer than
//!   the whole budget, in which case it is returned whole (at most three bytes over).
//!
//! The appender (the process's reader thread) keeps characters whole: it holds back an
//! incomplete UTF-8 sequence until its last byte arrives (see `redact::Filter`), so a
//! character never straddles an append and never interleaves with the other stream.
//!
//! Each stream's store (head, ring, segments) is `stream::Ring`; this module merges the
//! two streams for reads.

/// Stream index: stdout.
pub const STDOUT: usize = 0;
/// Stream index: stderr.
pub const STDERR: usize = 1;

/// Which streams a read covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streams {
    /// stdout and stderr.
    Both,
    /// stdout only.
    Stdout,
    /// stderr only.
    Stderr,
}

impl Streams {
    fn has(self, stream: usize) -> bool {
        match self {
            Streams::Both => true,
            Streams::Stdout => stream == STDOUT,
            Streams::Stderr => stream == STDERR,
        }
    }
}

/// A read request.
#[derive(Clone, Copy, Debug)]
pub struct ReadReq {
    /// First position wanted; `None` means the oldest retained byte.
    pub since: Option<u64>,
    /// Return only the newest N lines of each selected stream (after `since`).
    pub tail_lines: Option<usize>,
    /// Streams to include.
    pub streams: Streams,
    /// Most bytes to return, both streams together.
    pub max_bytes: usize,
}

/// The result of a read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReadOut {
    /// Bytes of stdout, in order.
    pub stdout: Vec<u8>,
    /// Bytes of stderr, in order.
    pub stderr: Vec<u8>,
    /// Position of the first returned byte (or where the read started when none was).
    pub start_seq: u64,
    /// Where the next read should continue.
    pub next_seq: u64,
    /// The newest position assigned so far (0 when there was no output).
    pub latest_seq: u64,
    /// Part of the requested range had been evicted.
    pub truncated: bool,
    /// More selected output is available after `next_seq`.
    pub capped: bool,
    /// Evicted positions inside the requested range, first and last (inclusive), set
    /// exactly when `truncated` is: a read from the start returns the head, then skips
    /// these. Bytes of another stream that were not evicted may lie between them.
    pub gap: Option<(u64, u64)>,
    /// Per stream: where in its bytes evicted ones were skipped, and how many (0 when the
    /// count is unknown: the read started inside the evicted run). `mark_gaps` turns it
    /// into a marker line.
    pub dropped: [Option<(usize, u64)>; 2],
    /// Per stream: what `read_ends` left out between the head and the tail.
    pub omitted: [Option<Omitted>; 2],
}

/// The part of a stream that an answer left out between its first and last part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Omitted {
    /// Position of the first byte left out.
    pub from_seq: u64,
    /// Position of the last byte left out.
    pub to_seq: u64,
    /// Bytes left out, evicted ones included.
    pub bytes: u64,
    /// Of those, bytes no longer buffered (evicted).
    pub evicted: u64,
    /// The `since_seq` that pages the buffered ones (`None` when all were evicted).
    pub since_seq: Option<u64>,
}

/// Bytes kept free of a share for the marker line of `read_ends` (at most a quarter of it).
const MARKER_ROOM: u64 = 160;

pub mod highlights;
mod stream;

use stream::Ring;

/// Both rings of one process and the shared position counter.
#[derive(Debug)]
pub struct Output {
    rings: [Ring; 2],
    next_seq: u64,
    cap: usize,
    head_cap: usize,
    bytes_total: [u64; 2],
    /// Lines that look like errors, kept past eviction (none when highlights are off).
    highlights: Option<Box<highlights::Index>>,
}

impl Output {
    /// An empty buffer keeping at most `cap` bytes per stream (at least 1).
    pub fn new(cap: usize) -> Output {
        Output::with_head(cap, 0)
    }

    /// An empty buffer keeping, per stream, its first `head_cap` bytes for good (allocated
    /// as they arrive) and its newest `cap` bytes after those (at least 1).
    pub fn with_head(cap: usize, head_cap: usize) -> Output {
        Output {
            rings: [Ring::default(), Ring::default()],
            next_seq: 1,
            cap: cap.max(1),
            head_cap,
            bytes_total: [0; 2],
            highlights: None,
        }
    }

    /// Indexes the lines `matcher` finds from now on (see `highlights`).
    pub fn highlight(&mut self, matcher: std::sync::Arc<highlights::Matcher>) {
        self.highlights = Some(Box::new(highlights::Index::new(matcher)));
    }

    /// The end of `stream`: its unfinished last line is indexed too.
    pub fn close(&mut self, stream: usize) {
        if let Some(ix) = self.highlights.as_mut() {
            ix.close(stream);
        }
    }

    /// The positions of `stream` evicted so far, oldest and one past the newest.
    pub fn evicted(&self, stream: usize) -> Option<(u64, u64)> {
        let r = &self.rings[stream];
        (r.evicted_until > 0).then_some((r.evicted_from, r.evicted_until))
    }

    /// The highlights kept, oldest first, and how many lines matched in all.
    pub fn highlights(&self) -> (Vec<highlights::Highlight>, u64) {
        match &self.highlights {
            Some(ix) => (ix.kept().cloned().collect(), ix.count()),
            None => (Vec::new(), 0),
        }
    }

    /// The bytes retained of both streams (head and ring): the most a read can copy.
    pub fn retained(&self) -> u64 {
        self.rings
            .iter()
            .map(|r| r.head_len() + r.bytes.len() as u64)
            .sum()
    }

    /// Appends bytes to a stream. Callers keep UTF-8 characters whole per append.
    pub fn push(&mut self, stream: usize, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let seq = self.next_seq;
        self.next_seq += data.len() as u64;
        self.bytes_total[stream] += data.len() as u64;
        self.rings[stream].push(seq, data, self.cap, self.head_cap);
        if let Some(ix) = self.highlights.as_mut() {
            ix.push(stream, seq, data);
        }
    }

    /// The newest position assigned so far (0 when there was no output).
    pub fn latest_seq(&self) -> u64 {
        self.next_seq - 1
    }

    /// The newest position of `stream` (0 when it has no output).
    pub fn newest_seq(&self, stream: usize) -> u64 {
        let ring = &self.rings[stream];
        ring.segs
            .back()
            .or(ring.head_segs.last())
            .map_or(0, |s| s.seq + s.len - 1)
    }

    /// Bytes ever written to `stream` (after redaction), evicted ones included.
    pub fn bytes_total(&self, stream: usize) -> u64 {
        self.bytes_total[stream]
    }

    /// Reads according to `req`. Never fails: a start before the oldest retained byte
    /// begins at the oldest retained byte and sets `truncated`.
    pub fn read(&self, req: &ReadReq) -> ReadOut {
        let latest = self.latest_seq();
        let oldest = self.oldest_seq(req.streams);
        let requested = req.since.unwrap_or(1).max(1);
        let mut out = ReadOut {
            latest_seq: latest,
            ..ReadOut::default()
        };
        // The requested range overlaps evicted bytes. Reading "from the start" (no `since`)
        // counts as requesting position 1.
        out.truncated = requested < self.evicted_until(req.streams);
        // A start past the newest output reads nothing and resumes at the real end, so a
        // bogus cursor does not hide the output that comes next.
        let start = requested.max(oldest).min(self.next_seq);
        if let Some(n) = req.tail_lines {
            return self.read_tail(req, start, n, out);
        }

        // A cursor per selected ring (segment index, stream offset), merged by position.
        let mut cur = [(usize::MAX, 0u64); 2];
        for (i, ring) in self.rings.iter().enumerate() {
            if req.streams.has(i) {
                let off = ring.char_start_at_or_after(ring.off_at_or_after(start));
                cur[i] = (ring.seg_index_of_off(off), off);
                if ring.has_gap() && off >= ring.base && off < ring.end_off() {
                    if requested <= ring.evicted_from {
                        out.dropped[i] = Some((0, ring.base - ring.head_len()));
                    } else if requested < ring.evicted_until {
                        out.dropped[i] = Some((0, 0));
                    }
                }
            }
        }
        let mut budget = req.max_bytes as u64;
        // One allocation per stream, sized for what can come back.
        for (i, ring) in self.rings.iter().enumerate() {
            // What is retained from the cursor on: the gap between head and ring holds
            // nothing.
            let from = cur[i].1;
            let retained = if ring.has_gap() && from < ring.head_len() {
                (ring.head_len() - from) + (ring.end_off() - ring.base)
            } else {
                ring.end_off().saturating_sub(from)
            };
            let avail = retained.min(budget.saturating_add(4)) as usize;
            if i == STDOUT {
                out.stdout.reserve_exact(avail);
            } else {
                out.stderr.reserve_exact(avail);
            }
        }
        let mut first_seq: Option<u64> = None;
        let mut last_end: Option<u64> = None;
        let mut capped = false;
        loop {
            // Pick the stream whose next retained byte has the lowest position.
            let mut pick: Option<(usize, u64)> = None;
            for (i, ring) in self.rings.iter().enumerate() {
                let (seg, off) = cur[i];
                if let Some(s) = ring.seg(seg) {
                    let seq = s.seq + (off - s.off);
                    if pick.is_none_or(|(_, best)| seq < best) {
                        pick = Some((i, seq));
                    }
                }
            }
            let Some((i, seq)) = pick else { break };
            if budget == 0 {
                capped = true;
                break;
            }
            let ring = &self.rings[i];
            let (seg, off) = cur[i];
            let Some(cur_seg) = ring.seg(seg) else { break };
            let seg_end_off = cur_seg.off + cur_seg.len;
            let avail = seg_end_off - off;
            let mut take = avail.min(budget);
            if take < avail {
                take = utf8_cut(ring, off, off + take, seg_end_off) - off;
                if take == 0 {
                    if first_seq.is_some() {
                        capped = true;
                        break;
                    }
                    // The very first character is wider than the budget: return it whole.
                    take = utf8_char_len(ring, off, seg_end_off);
                }
            }
            let buf = if i == STDOUT {
                &mut out.stdout
            } else {
                &mut out.stderr
            };
            ring.copy(off, off + take, buf);
            let copied = buf.len();
            first_seq.get_or_insert(seq);
            budget = budget.saturating_sub(take);
            last_end = Some(seq + take);
            if take < avail {
                capped = true;
                break;
            }
            cur[i] = match ring.seg(seg + 1) {
                // Across the gap: do not start inside a character whose lead was evicted.
                Some(next) if next.off != seg_end_off => {
                    let o = ring.char_start_at_or_after(next.off);
                    out.dropped[i] = Some((copied, o - seg_end_off));
                    (ring.seg_index_of_off(o), o)
                }
                Some(next) => (seg + 1, next.off),
                None => (seg + 1, seg_end_off),
            };
        }
        out.capped = capped;
        out.start_seq = first_seq.unwrap_or(start);
        out.next_seq = if capped {
            last_end.unwrap_or(start)
        } else {
            self.next_seq.max(start)
        };
        out.gap = self.gap(req.streams, requested, out.truncated);
        out
    }

    /// `read`, with a marker line in the text wherever evicted bytes were skipped (see
    /// `ReadOut::mark_gaps`).
    pub fn read_marked(&self, req: &ReadReq) -> ReadOut {
        let mut out = self.read(req);
        out.mark_gaps();
        out
    }

    /// The read of an answer that reports an end: all the selected output after `since`,
    /// except that a stream whose bytes exceed its share of `max_bytes` gives its first part
    /// (about a fifth of the share, cut after a line where one ends nearby), one marker
    /// line, and its last part (the rest, starting at a line). `omitted` names what was left
    /// out; `next_seq` is the end. `reader` names the record in the marker's advice (for an
    /// answer that shows no `process_id` next to the text; `Some("")`: no advice, nothing
    /// can read the record). Gaps are marked.
    pub fn read_ends(&self, req: &ReadReq, reader: Option<&str>) -> ReadOut {
        let mut out = self.read(&ReadReq {
            max_bytes: usize::MAX,
            tail_lines: None,
            ..*req
        });
        let lens = [out.stdout.len() as u64, out.stderr.len() as u64];
        let budget = req.max_bytes as u64;
        let shares = match req.streams {
            Streams::Stdout => [budget, 0],
            Streams::Stderr => [0, budget],
            Streams::Both if lens[0] + lens[1] <= budget => lens,
            Streams::Both if lens[0] <= budget / 2 => [lens[0], budget - lens[0]],
            Streams::Both if lens[1] <= budget / 2 => [budget - lens[1], lens[1]],
            Streams::Both => [budget / 2, budget - budget / 2],
        };
        let start = req
            .since
            .unwrap_or(1)
            .max(1)
            .max(self.oldest_seq(req.streams))
            .min(self.next_seq);
        for i in [STDOUT, STDERR] {
            if !req.streams.has(i) || lens[i] <= shares[i] {
                continue;
            }
            let ring = &self.rings[i];
            let buf = std::mem::take(if i == STDOUT {
                &mut out.stdout
            } else {
                &mut out.stderr
            });
            let s = ring.char_start_at_or_after(ring.off_at_or_after(start));
            let (cut, omitted) = ends(ring, &buf, s, shares[i], out.dropped[i], reader);
            out.dropped[i] = None;
            out.omitted[i] = omitted;
            if i == STDOUT {
                out.stdout = cut;
            } else {
                out.stderr = cut;
            }
        }
        out.mark_gaps();
        out
    }

    fn read_tail(&self, req: &ReadReq, start: u64, n: usize, mut out: ReadOut) -> ReadOut {
        let mut first_seq = u64::MAX;
        let mut starts = [0u64; 2];
        for (i, ring) in self.rings.iter().enumerate() {
            if !req.streams.has(i) {
                starts[i] = ring.end_off();
                continue;
            }
            let from = ring.char_start_at_or_after(ring.off_at_or_after(start));
            starts[i] = ring.tail_start(from, n);
        }
        // Respect the byte budget by keeping the newest bytes, in position order across
        // both streams: find the position `cut` such that the bytes at or after it fit.
        let budget = req.max_bytes as u64;
        // What would be returned, as (position, length) runs.
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for (i, ring) in self.rings.iter().enumerate() {
            ring.runs_from(starts[i], &mut pieces);
        }
        let total: u64 = pieces.iter().map(|p| p.1).sum();
        if total > budget {
            pieces.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
            let mut kept = 0u64;
            let mut cut = u64::MAX;
            for (seq, len) in pieces {
                if kept + len >= budget {
                    cut = seq + (len - (budget - kept));
                    break;
                }
                kept += len;
                cut = seq;
            }
            for (i, ring) in self.rings.iter().enumerate() {
                let mut s = starts[i].max(ring.off_at_or_after(cut));
                // Do not start inside a character.
                while s < ring.end_off() && is_continuation(ring.byte(s)) {
                    s = ring.retained_from(s + 1);
                }
                starts[i] = s;
            }
        }
        for (i, ring) in self.rings.iter().enumerate() {
            let end = ring.end_off();
            if starts[i] < end {
                first_seq = first_seq.min(ring.seq_of(starts[i]));
                let buf = if i == STDOUT {
                    &mut out.stdout
                } else {
                    &mut out.stderr
                };
                let hl = ring.head_len();
                if ring.has_gap() && starts[i] < hl && end > ring.base {
                    let at = buf.len() + (hl - starts[i]) as usize;
                    let n = ring.char_start_at_or_after(ring.base) - hl;
                    out.dropped[i] = Some((at, n));
                }
                ring.copy_across_gap(starts[i], end, buf);
            }
        }
        out.start_seq = if first_seq == u64::MAX {
            self.next_seq.max(start)
        } else {
            first_seq
        };
        out.next_seq = self.next_seq.max(start);
        out.capped = false;
        out.truncated = out.truncated && out.start_seq <= self.oldest_seq(req.streams);
        out.gap = self.gap(req.streams, req.since.unwrap_or(1).max(1), out.truncated);
        out
    }

    /// The evicted positions at or after `requested` among the selected streams.
    fn gap(&self, streams: Streams, requested: u64, truncated: bool) -> Option<(u64, u64)> {
        if !truncated {
            return None;
        }
        let mut from = u64::MAX;
        let mut until = 0;
        for (i, ring) in self.rings.iter().enumerate() {
            if streams.has(i) && ring.evicted_until > requested {
                from = from.min(ring.evicted_from.max(requested));
                until = until.max(ring.evicted_until);
            }
        }
        (until > 0).then(|| (from, until - 1))
    }

    /// The oldest retained position among the selected streams (or `next_seq` if none).
    pub fn oldest_seq(&self, streams: Streams) -> u64 {
        let mut oldest = self.next_seq;
        for (i, ring) in self.rings.iter().enumerate() {
            if streams.has(i) {
                if let Some(s) = ring.seg(0) {
                    oldest = oldest.min(s.seq);
                }
            }
        }
        oldest
    }

    fn evicted_until(&self, streams: Streams) -> u64 {
        (0..2)
            .filter(|&i| streams.has(i))
            .map(|i| self.rings[i].evicted_until)
            .max()
            .unwrap_or(0)
    }

    /// The bytes of `stream` from stream offset `from` (clamped to what is retained) to the
    /// end, appended to `out`; returns the offset where they started and the end offset.
    /// With a gap, bytes before it are not returned: the run is contiguous.
    pub fn stream_bytes_from(&self, stream: usize, from: u64, out: &mut Vec<u8>) -> (u64, u64) {
        let ring = &self.rings[stream];
        let from = if ring.has_gap() {
            from.max(ring.base)
        } else {
            from
        };
        let end = ring.end_off();
        if from < end {
            ring.copy(from, end, out);
        }
        (from.min(end), end)
    }

    /// Like [`Output::stream_bytes_from`], but copies at most `max` bytes: the range
    /// copied, `(start, end)`.
    pub fn stream_bytes_upto(
        &self,
        stream: usize,
        from: u64,
        max: usize,
        out: &mut Vec<u8>,
    ) -> (u64, u64) {
        let ring = &self.rings[stream];
        let from = if ring.has_gap() {
            from.max(ring.base)
        } else {
            from
        };
        let end = ring.end_off().min(from.saturating_add(max as u64));
        if from < end {
            ring.copy(from, end, out);
        }
        (from.min(end), end)
    }

    /// The stream offset just past the newest byte of `stream`.
    pub fn stream_end(&self, stream: usize) -> u64 {
        self.rings[stream].end_off()
    }

    /// The stream offset of the first byte of `stream` at or after position `seq`.
    pub fn stream_off_at(&self, stream: usize, seq: u64) -> u64 {
        self.rings[stream].off_at_or_after(seq)
    }
}

impl ReadOut {
    /// Puts a marker line into the text of each stream at the place where evicted bytes
    /// were skipped (none at the very end of a capped page: the next page starts with it).
    pub fn mark_gaps(&mut self) {
        for i in [STDOUT, STDERR] {
            let Some((at, n)) = self.dropped[i].take() else {
                continue;
            };
            let buf = if i == STDOUT {
                &mut self.stdout
            } else {
                &mut self.stderr
            };
            if at > buf.len() || (self.capped && at == buf.len() && at > 0) {
                continue;
            }
            let text = if n > 0 {
                format!(
                    "[… {} bytes dropped here: evicted from the buffer, no longer readable …]",
                    grouped(n)
                )
            } else {
                "[… output dropped before this point: evicted from the buffer, no longer readable …]"
                    .to_string()
            };
            let mut line = marker_line(buf[..at].last(), &text);
            let tail = buf.split_off(at);
            buf.append(&mut line);
            buf.extend_from_slice(&tail);
        }
    }
}

/// `text` as a line of its own after bytes ending with `last`.
fn marker_line(last: Option<&u8>, text: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(text.len() + 2);
    if last.is_some_and(|&b| b != b'\n') {
        line.push(b'\n');
    }
    line.extend_from_slice(text.as_bytes());
    line.push(b'\n');
    line
}

/// `n` with a comma every three digits.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One stream's bytes `buf` (read from stream offset `s`, with the gap skipped at
/// `dropped`) cut to `share`: head, marker line, tail. Returns the new bytes and what was
/// left out.
fn ends(
    ring: &Ring,
    buf: &[u8],
    s: u64,
    share: u64,
    dropped: Option<(usize, u64)>,
    reader: Option<&str>,
) -> (Vec<u8>, Option<Omitted>) {
    let len = buf.len();
    // The head is short (a fifth): the end of a finished command is where its result and
    // its errors usually are.
    let head_budget = (share / 5) as usize;
    let room = MARKER_ROOM.min(share / 4);
    let tail_budget = share.saturating_sub(head_budget as u64 + room) as usize;
    // The head ends after a line when one ends in its second half, else on a character.
    let mut h = head_budget.min(len);
    match memchr::memrchr(b'\n', &buf[..h]) {
        Some(nl) if nl + 1 >= h / 2 => h = nl + 1,
        _ => {
            let mut k = 0;
            while h > 0 && h < len && k < 3 && is_continuation(buf[h]) {
                h -= 1;
                k += 1;
            }
        }
    }
    // The tail starts at a line when one starts in its first half, else on a character.
    let mut t = len.saturating_sub(tail_budget).max(h);
    let window = &buf[t..(t + tail_budget / 2).min(len)];
    match memchr::memchr(b'\n', window) {
        Some(nl) if t > h && (t == 0 || buf[t - 1] != b'\n') => t += nl + 1,
        _ => {
            let mut k = 0;
            while t < len && k < 3 && is_continuation(buf[t]) {
                t += 1;
                k += 1;
            }
        }
    }
    if t <= h {
        return (buf.to_vec(), None);
    }
    // Buffer index to stream offset: the gap (a crossing from the head into the ring)
    // sits at `at`, where the offsets jump from the head's end to `resume`.
    let hl = ring.head_len();
    let crossing = (ring.has_gap() && s < hl).then(|| {
        let resume = ring.char_start_at_or_after(ring.base);
        ((hl - s) as usize, resume)
    });
    let off_of = |k: usize| match crossing {
        Some((at, resume)) if k >= at => resume + (k - at) as u64,
        _ => s + k as u64,
    };
    let retained = |off: u64| !ring.has_gap() || off < hl || off >= ring.base;
    let off_h = match crossing {
        Some((at, _)) if h == at => hl,
        _ => off_of(h),
    };
    let off_t = off_of(t);
    let evicted = match crossing {
        Some((at, resume)) if h <= at && at < t => resume - hl,
        _ => 0,
    };
    let from_seq = if retained(off_h) {
        ring.seq_of(off_h)
    } else {
        ring.evicted_from
    };
    let to_seq = if retained(off_t - 1) {
        ring.seq_of(off_t - 1)
    } else {
        ring.evicted_until - 1
    };
    let page = match crossing {
        Some((at, _)) if h == at => off_of(h),
        _ => off_h,
    };
    let since_seq = (page < off_t && retained(page)).then(|| ring.seq_of(page));
    let omitted = Omitted {
        from_seq,
        to_seq,
        bytes: off_t - off_h,
        evicted,
        since_seq,
    };
    let how = match reader {
        Some(id) => format!("read with process_id={id} and"),
        None => "read with".to_string(),
    };
    let text = match (since_seq, evicted) {
        _ if reader == Some("") => format!("[… {} bytes omitted …]", grouped(omitted.bytes)),
        (Some(seq), 0) => format!(
            "[… {} bytes omitted; {how} since_seq={seq} to see them …]",
            grouped(omitted.bytes)
        ),
        (Some(seq), e) => format!(
            "[… {} bytes omitted, {} of them evicted from the buffer; {how} since_seq={seq} to see the rest …]",
            grouped(omitted.bytes),
            grouped(e)
        ),
        (None, _) => format!(
            "[… {} bytes omitted, evicted from the buffer: no longer readable …]",
            grouped(omitted.bytes)
        ),
    };
    // The gap's own marker stays where it is when it falls in the head or the tail.
    let mut head = buf[..h].to_vec();
    let mut tail = buf[t..].to_vec();
    let mut parts = ReadOut::default();
    match dropped {
        Some((at, n)) if at <= h => {
            parts.stdout = std::mem::take(&mut head);
            parts.dropped[STDOUT] = Some((at, n));
            parts.mark_gaps();
            head = parts.stdout;
        }
        Some((at, n)) if at >= t => {
            parts.stdout = std::mem::take(&mut tail);
            parts.dropped[STDOUT] = Some((at - t, n));
            parts.mark_gaps();
            tail = parts.stdout;
        }
        _ => (),
    }
    let mut cut = head;
    let mut line = marker_line(cut.last(), &text);
    cut.append(&mut line);
    cut.append(&mut tail);
    (cut, Some(omitted))
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The largest cut `<= cut` at or after `from` that does not split a valid UTF-8 character
/// that would be complete within `limit`.
fn utf8_cut(ring: &Ring, from: u64, cut: u64, limit: u64) -> u64 {
    // Look back at most three bytes for the lead byte of the character the cut is inside.
    let mut lead = cut;
    let mut back = 0;
    while lead > from && back < 4 {
        lead -= 1;
        back += 1;
        let b = ring.byte(lead);
        if !is_continuation(b) {
            let width = utf8_width(b);
            if width > 1 && lead + width as u64 > cut && lead + width as u64 <= limit {
                return lead;
            }
            return cut;
        }
    }
    cut
}

fn utf8_char_len(ring: &Ring, at: u64, limit: u64) -> u64 {
    let width = utf8_width(ring.byte(at)).max(1) as u64;
    width.min(limit - at)
}

fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(since: Option<u64>, max: usize) -> ReadReq {
        ReadReq {
            since,
            tail_lines: None,
            streams: Streams::Both,
            max_bytes: max,
        }
    }

    fn text(v: &[u8]) -> String {
        String::from_utf8_lossy(v).into_owned()
    }

    #[test]
    fn merge_in_position_order_and_chain() {
        let mut o = Output::new(1024);
        o.push(STDOUT, b"aa");
        o.push(STDERR, b"bbb");
        o.push(STDOUT, b"cc");
        let r = o.read(&req(None, 100));
        assert_eq!(
            (text(&r.stdout), text(&r.stderr)),
            ("aacc".into(), "bbb".into())
        );
        assert_eq!(
            (r.start_seq, r.next_seq, r.latest_seq, r.capped, r.truncated),
            (1, 8, 7, false, false)
        );
        // A budget of 3 stops inside stderr's run.
        let r = o.read(&req(Some(1), 3));
        assert_eq!(
            (text(&r.stdout), text(&r.stderr), r.next_seq, r.capped),
            ("aa".into(), "b".into(), 4, true)
        );
        let r = o.read(&req(Some(4), 3));
        assert_eq!(
            (text(&r.stdout), text(&r.stderr), r.next_seq, r.capped),
            ("c".into(), "bb".into(), 7, true)
        );
        let r = o.read(&req(Some(7), 3));
        assert_eq!(
            (text(&r.stdout), text(&r.stderr), r.next_seq, r.capped),
            ("c".into(), "".into(), 8, false)
        );
        let r = o.read(&req(Some(8), 3));
        assert_eq!(
            (r.stdout.len() + r.stderr.len(), r.next_seq, r.start_seq),
            (0, 8, 8)
        );
    }

    #[test]
    fn chained_reads_see_every_byte_once() {
        let mut o = Output::new(1 << 20);
        let mut expect = [Vec::new(), Vec::new()];
        for i in 0..2000u32 {
            let stream = (i % 3 == 0) as usize;
            let line = format!("line {i} é\n");
            o.push(stream, line.as_bytes());
            expect[stream].extend_from_slice(line.as_bytes());
        }
        for budget in [1usize, 2, 3, 7, 64, 1000] {
            let mut got = [Vec::new(), Vec::new()];
            let mut since = 1;
            loop {
                let r = o.read(&req(Some(since), budget));
                got[0].extend_from_slice(&r.stdout);
                got[1].extend_from_slice(&r.stderr);
                assert!(
                    std::str::from_utf8(&r.stdout).is_ok(),
                    "split character at budget {budget}"
                );
                assert!(r.next_seq > since || !r.capped);
                since = r.next_seq;
                if !r.capped {
                    break;
                }
            }
            assert_eq!(got, expect, "budget {budget}");
        }
    }

    #[test]
    fn eviction_sets_truncated_and_starts_at_oldest() {
        let mut o = Output::new(4);
        o.push(STDOUT, b"abcdef");
        let r = o.read(&req(Some(1), 100));
        assert_eq!(
            (text(&r.stdout), r.start_seq, r.truncated),
            ("cdef".into(), 3, true)
        );
        let r = o.read(&req(Some(3), 100));
        assert!(!r.truncated);
        o.push(STDOUT, b"gh");
        let r = o.read(&req(Some(5), 100));
        assert_eq!(
            (text(&r.stdout), r.truncated, r.next_seq),
            ("efgh".into(), false, 9)
        );
        let r = o.read(&req(None, 100));
        assert!(r.truncated);
        // Other stream is not affected by this stream's eviction.
        let r = o.read(&ReadReq {
            streams: Streams::Stderr,
            ..req(Some(1), 100)
        });
        assert!(!r.truncated);
    }

    #[test]
    fn tail_lines() {
        let mut o = Output::new(1024);
        o.push(STDOUT, b"one\ntwo\nthree\nfour\n");
        o.push(STDERR, b"e1\ne2");
        let r = o.read(&ReadReq {
            tail_lines: Some(2),
            ..req(None, 100)
        });
        assert_eq!(
            (text(&r.stdout), text(&r.stderr)),
            ("three\nfour\n".into(), "e1\ne2".into())
        );
        assert_eq!(r.next_seq, o.latest_seq() + 1);
        let r = o.read(&ReadReq {
            tail_lines: Some(10),
            ..req(None, 100)
        });
        assert_eq!(text(&r.stdout), "one\ntwo\nthree\nfour\n");
        let r = o.read(&ReadReq {
            tail_lines: Some(1),
            streams: Streams::Stdout,
            ..req(None, 3)
        });
        assert_eq!(
            (text(&r.stdout), text(&r.stderr)),
            ("ur\n".into(), "".into())
        );
    }

    #[test]
    fn tail_budget_keeps_the_newest_bytes_across_streams() {
        let mut o = Output::new(1 << 20);
        o.push(STDOUT, &[b'a'; 3000]);
        o.push(STDERR, &[b'b'; 3000]);
        o.push(STDOUT, b"end\n");
        let r = o.read(&ReadReq {
            tail_lines: Some(1),
            ..req(None, 100)
        });
        assert_eq!(text(&r.stdout), "end\n");
        assert_eq!(text(&r.stderr), "b".repeat(96));
    }

    #[test]
    fn a_start_inside_a_character_skips_to_the_next_one() {
        let mut o = Output::new(1024);
        o.push(STDOUT, "aé€".as_bytes());
        // Position 3 is the second byte of é.
        let r = o.read(&req(Some(3), 100));
        assert_eq!(text(&r.stdout), "€");
        // Eviction that cuts a character leaves no half of it.
        let mut o = Output::new(5);
        o.push(STDOUT, "ééé".as_bytes());
        let r = o.read(&req(None, 100));
        assert_eq!(text(&r.stdout), "éé");
        // Garbage continuation bytes are not characters: they stay (as U+FFFD).
        let mut o = Output::new(64);
        o.push(STDOUT, b"ab\x80\x80\x80\x80c");
        let r = o.read(&req(Some(3), 100));
        assert_eq!(r.stdout, b"\x80\x80\x80\x80c");
    }

    #[test]
    fn a_cursor_past_the_end_resumes_at_the_end() {
        let mut o = Output::new(64);
        o.push(STDOUT, b"abc");
        let r = o.read(&req(Some(100), 10));
        assert_eq!(
            (r.stdout.len(), r.next_seq, r.truncated, r.capped),
            (0, 4, false, false)
        );
        o.push(STDOUT, b"d");
        assert_eq!(o.read(&req(Some(r.next_seq), 10)).stdout, b"d");
    }

    #[test]
    fn wide_char_over_tiny_budget_is_returned_whole() {
        let mut o = Output::new(64);
        o.push(STDOUT, "€x".as_bytes());
        let r = o.read(&req(Some(1), 1));
        assert_eq!(
            (text(&r.stdout), r.next_seq, r.capped),
            ("€".into(), 4, true)
        );
    }

    #[test]
    fn huge_append_keeps_tail() {
        let mut o = Output::new(4);
        o.push(STDOUT, b"ab");
        o.push(STDERR, b"zz");
        o.push(STDOUT, b"0123456789");
        let r = o.read(&req(None, 100));
        assert_eq!(
            (text(&r.stdout), text(&r.stderr)),
            ("6789".into(), "zz".into())
        );
        assert_eq!(r.start_seq, 3);
        let r = o.read(&ReadReq {
            streams: Streams::Stdout,
            ..req(Some(1), 100)
        });
        assert_eq!((r.start_seq, r.truncated), (11, true));
        assert_eq!(o.bytes_total(STDOUT), 12);
    }

    #[test]
    fn head_survives_eviction_and_reports_the_gap() {
        let mut o = Output::with_head(8, 6);
        o.push(STDOUT, b"error: first\n");
        for i in 0..10 {
            o.push(STDOUT, format!("line{i}\n").as_bytes());
        }
        let r = o.read(&req(None, 1000));
        // The head (6 bytes), then the newest 8 bytes.
        assert_eq!(text(&r.stdout), "error:8\nline9\n");
        assert!(r.truncated);
        let total = o.latest_seq();
        assert_eq!(r.gap, Some((7, total - 8)));
        assert_eq!((r.start_seq, r.next_seq), (1, total + 1));
        // A budget that ends inside the head, then a chained read that crosses the gap.
        let r1 = o.read(&req(Some(1), 4));
        assert_eq!(
            (text(&r1.stdout), r1.next_seq, r1.capped),
            ("erro".into(), 5, true)
        );
        let r2 = o.read(&req(Some(r1.next_seq), 100));
        assert_eq!(text(&r2.stdout), "r:8\nline9\n");
        assert_eq!(r2.gap, Some((7, total - 8)));
        // A read starting past the gap has none.
        let r3 = o.read(&req(Some(total - 2), 100));
        assert_eq!(
            (text(&r3.stdout), r3.truncated, r3.gap),
            ("e9\n".into(), false, None)
        );
        // A read starting inside the gap starts at the ring.
        let r4 = o.read(&req(Some(10), 100));
        assert_eq!(text(&r4.stdout), "8\nline9\n");
        assert_eq!(r4.gap, Some((10, total - 8)));
    }

    #[test]
    fn head_keeps_characters_whole_and_the_gap_skips_orphans() {
        // The head would end inside "é": it stops before it.
        let mut o = Output::with_head(3, 2);
        o.push(STDOUT, "aé".as_bytes());
        o.push(STDOUT, "€€".as_bytes());
        let r = o.read(&req(None, 100));
        assert_eq!(text(&r.stdout), "a€");
        assert!(std::str::from_utf8(&r.stdout).is_ok());
        // Nothing evicted yet: head and ring are contiguous, nothing lost.
        let mut o = Output::with_head(8, 4);
        o.push(STDOUT, b"abcdefgh");
        let r = o.read(&req(None, 100));
        assert_eq!(
            (text(&r.stdout), r.truncated, r.gap),
            ("abcdefgh".into(), false, None)
        );
        // The head costs nothing until bytes arrive, and stays within its size.
        let mut o = Output::with_head(4, 1 << 20);
        assert_eq!(o.rings[STDOUT].head.capacity(), 0);
        o.push(STDOUT, b"x");
        assert!(o.rings[STDOUT].head.capacity() <= 8);
    }

    #[test]
    fn head_tail_lines_and_until_scan_see_the_retained_text() {
        let mut o = Output::with_head(6, 4);
        o.push(STDOUT, b"h1\nh2\n");
        o.push(STDOUT, b"xxxxxxxx\nt1\nt2\n");
        let r = o.read(&ReadReq {
            tail_lines: Some(2),
            ..req(None, 100)
        });
        assert_eq!(text(&r.stdout), "t1\nt2\n");
        let r = o.read(&ReadReq {
            tail_lines: Some(10),
            ..req(None, 100)
        });
        assert_eq!(text(&r.stdout), "h1\nht1\nt2\n");
        let r = o.read(&ReadReq {
            tail_lines: Some(3),
            ..req(None, 100)
        });
        assert_eq!(text(&r.stdout), "ht1\nt2\n");
        // Without a gap the scan for `until` starts in the head.
        let mut o = Output::with_head(100, 4);
        o.push(STDOUT, b"ready\n");
        let mut buf = Vec::new();
        assert_eq!(o.stream_bytes_from(STDOUT, 0, &mut buf), (0, 6));
        assert_eq!(buf, b"ready\n");
    }

    #[test]
    fn ends_keep_the_first_and_last_lines_around_one_marker() {
        let mut o = Output::with_head(1 << 20, 0);
        let mut all = String::new();
        for i in 0..5000 {
            all.push_str(&format!("line {i}\n"));
        }
        o.push(STDOUT, all.as_bytes());
        o.push(STDERR, b"error: it failed\n");
        let r = o.read_ends(&req(None, 2000), None);
        let out = text(&r.stdout);
        assert_eq!(text(&r.stderr), "error: it failed\n");
        assert!(out.starts_with("line 0\nline 1\n"), "{out}");
        assert!(out.ends_with("line 4999\n"), "{out}");
        assert_eq!(out.matches("[… ").count(), 1, "{out}");
        assert!(out
            .lines()
            .all(|l| l.starts_with("line ") || l.starts_with("[… ")));
        let om = r.omitted[STDOUT].expect("omitted");
        let marker = out.lines().find(|l| l.starts_with("[… ")).unwrap().len() + 1;
        assert_eq!(
            om.bytes as usize,
            all.len() - (out.len() - marker),
            "{om:?}"
        );
        assert_eq!((om.evicted, om.since_seq), (0, Some(om.from_seq)));
        assert_eq!(om.to_seq - om.from_seq + 1, om.bytes);
        assert!(out.contains(&format!("since_seq={} to see them", om.from_seq)));
        assert_eq!((r.next_seq, r.capped), (o.latest_seq() + 1, false));
        assert!(out.len() <= 2000, "{}", out.len());
        // The stream that fits is whole; nothing left out of it.
        assert_eq!(r.omitted[STDERR], None);
        // Paging the omitted range gives back exactly the bytes left out.
        let page = o.read(&req(Some(om.from_seq), om.bytes as usize));
        let head_len = out.find("[… ").unwrap();
        assert_eq!(
            text(&page.stdout),
            all[head_len..head_len + om.bytes as usize]
        );
    }

    #[test]
    fn ends_never_split_a_character_and_name_what_was_evicted() {
        let mut o = Output::with_head(3000, 1000);
        o.push(STDOUT, "é".repeat(20_000).as_bytes());
        let r = o.read_ends(&req(None, 1000), None);
        let out = std::str::from_utf8(&r.stdout).expect("whole characters");
        assert!(out.starts_with('é') && out.ends_with('é'));
        let om = r.omitted[STDOUT].expect("omitted");
        assert!(om.evicted > 30_000, "{om:?}");
        assert!(out.contains("of them evicted from the buffer"), "{out}");
        // Everything after the head's part that is still buffered: the rest of the head.
        assert!(om.since_seq.is_some_and(|s| s < 1000), "{om:?}");
        // Nothing buffered in the omitted range: said so, with no advice to read.
        let mut o = Output::with_head(1000, 0);
        o.push(STDOUT, &[b'x'; 50_000]);
        let r = o.read_ends(&req(None, 900), Some(""));
        let out = text(&r.stdout);
        assert_eq!(
            out.matches("[… ").count(),
            2,
            "the eviction and the cut: {out}"
        );
    }

    #[test]
    fn a_read_across_the_gap_marks_it() {
        let mut o = Output::with_head(8, 6);
        o.push(STDOUT, b"error: first\n");
        for i in 0..10 {
            o.push(STDOUT, format!("line{i}\n").as_bytes());
        }
        let r = o.read_marked(&req(None, 1000));
        let dropped = o.latest_seq() - 6 - 8;
        assert_eq!(
            text(&r.stdout),
            format!(
                "error:\n[… {dropped} bytes dropped here: evicted from the buffer, no longer readable …]\n8\nline9\n"
            )
        );
        assert_eq!(grouped(1_268_895), "1,268,895");
        assert_eq!(grouped(999), "999");
    }

    /// A model that stores every retained byte with its position, checked against random
    /// pushes of text and reads (the fuzz target in `fuzz/` does the same with any bytes).
    #[test]
    fn head_and_ring_agree_with_a_model() {
        #[derive(Clone, Copy)]
        struct B {
            seq: u64,
            off: u64,
            v: u8,
        }
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n.max(1)
        };
        let words = ["a", "bc\n", "é", "€x", "\n", "𝄞", "long line\n"];
        for round in 0..300 {
            let cap = 1 + next(24) as usize;
            let head_cap = next(12) as usize;
            let mut o = Output::with_head(cap, head_cap);
            let mut kept: [Vec<B>; 2] = [Vec::new(), Vec::new()];
            let mut in_head = [0usize; 2];
            let mut full = [false; 2];
            let mut total = [0u64; 2];
            let mut evicted: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            let mut seq = 1u64;
            for _ in 0..next(30) {
                let s = next(2) as usize;
                let mut chunk = String::new();
                for _ in 0..1 + next(4) {
                    chunk.push_str(words[next(words.len() as u64) as usize]);
                }
                o.push(s, chunk.as_bytes());
                let data = chunk.as_bytes();
                let mut take = 0;
                if !full[s] {
                    let room = head_cap - in_head[s];
                    take = data.len().min(room);
                    if take < data.len() {
                        while take > 0 && !chunk.is_char_boundary(take) {
                            take -= 1;
                        }
                        full[s] = true;
                    }
                    in_head[s] += take;
                }
                for &v in data {
                    kept[s].push(B {
                        seq,
                        off: total[s],
                        v,
                    });
                    seq += 1;
                    total[s] += 1;
                }
                while kept[s].len() - in_head[s] > cap {
                    evicted[s].push(kept[s].remove(in_head[s]).seq);
                }
                let _ = take;
            }
            for _ in 0..6 {
                let streams = [Streams::Both, Streams::Stdout, Streams::Stderr][next(3) as usize];
                let since = next(seq + 2);
                let r = o.read(&ReadReq {
                    since: Some(since),
                    tail_lines: None,
                    streams,
                    max_bytes: 1000,
                });
                let requested = since.max(1);
                let mut expect = [Vec::new(), Vec::new()];
                let mut gap: Option<(u64, u64)> = None;
                for i in 0..2 {
                    if !streams.has(i) {
                        continue;
                    }
                    let mut prev: Option<u64> = None;
                    let mut skipping = true;
                    for b in kept[i].iter().filter(|b| b.seq >= requested) {
                        if prev.is_none_or(|p| p + 1 != b.off) {
                            skipping = true;
                        }
                        prev = Some(b.off);
                        if skipping && is_continuation(b.v) {
                            continue;
                        }
                        skipping = false;
                        expect[i].push(b.v);
                    }
                    if let (Some(&first), Some(&last)) = (evicted[i].first(), evicted[i].last()) {
                        if last >= requested {
                            let f = first.max(requested);
                            gap = Some(gap.map_or((f, last), |(a, b)| (a.min(f), b.max(last))));
                        }
                    }
                }
                assert_eq!(r.stdout, expect[0], "round {round} stdout since {since}");
                assert_eq!(r.stderr, expect[1], "round {round} stderr since {since}");
                assert_eq!(r.gap, gap, "round {round} gap since {since}");
                assert_eq!(r.truncated, gap.is_some(), "round {round}");
                // Chained small reads return the same bytes.
                let mut got = [Vec::new(), Vec::new()];
                let mut at = requested;
                loop {
                    let c = o.read(&ReadReq {
                        since: Some(at),
                        tail_lines: None,
                        streams,
                        max_bytes: 4,
                    });
                    assert!(std::str::from_utf8(&c.stdout).is_ok());
                    got[0].extend_from_slice(&c.stdout);
                    got[1].extend_from_slice(&c.stderr);
                    if !c.capped {
                        break;
                    }
                    assert!(c.next_seq > at);
                    at = c.next_seq;
                }
                assert_eq!(got, expect, "round {round} chained since {since}");
            }
        }
    }
}
