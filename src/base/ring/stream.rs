//! One stream of an `Output`: its head (the first bytes, kept for good) and its ring (the
//! newest bytes after them), with the segments that map stream offsets to positions.

use std::collections::VecDeque;

use super::{is_continuation, utf8_width};

#[derive(Clone, Copy, Debug)]
pub(super) struct Seg {
    /// Position of the segment's first byte.
    pub(super) seq: u64,
    /// Stream offset (bytes ever written to this stream before it) of the first byte.
    pub(super) off: u64,
    pub(super) len: u64,
}

/// One stream: its head (the first bytes ever written, kept for good) and its ring (the
/// newest `cap` bytes after the head). Stream offsets `[0, head.len())` live in the head,
/// `[base, end_off())` in the ring, and `base >= head.len()`; the offsets in between (the
/// gap) were evicted. A segment never spans the head and the ring.
#[derive(Debug, Default)]
pub(super) struct Ring {
    /// The first bytes of the stream; grows as they arrive, up to the head size.
    pub(super) head: Vec<u8>,
    pub(super) head_segs: Vec<Seg>,
    /// The head took its last byte: everything after goes to the ring.
    pub(super) head_full: bool,
    pub(super) bytes: VecDeque<u8>,
    pub(super) segs: VecDeque<Seg>,
    /// Stream offset of `bytes[0]`.
    pub(super) base: u64,
    /// One past the newest evicted position (0 when nothing was evicted).
    pub(super) evicted_until: u64,
    /// The oldest evicted position (0 when nothing was evicted).
    pub(super) evicted_from: u64,
}

impl Ring {
    pub(super) fn end_off(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    pub(super) fn head_len(&self) -> u64 {
        self.head.len() as u64
    }

    /// Some offsets between the head and the ring were evicted.
    pub(super) fn has_gap(&self) -> bool {
        self.base > self.head_len()
    }

    /// The run of contiguous retained offsets that `off` (retained) belongs to.
    pub(super) fn region(&self, off: u64) -> (u64, u64) {
        if !self.has_gap() {
            (0, self.end_off())
        } else if off < self.head_len() {
            (0, self.head_len())
        } else {
            (self.base, self.end_off())
        }
    }

    /// `off` itself, or the first ring offset when `off` fell into the gap.
    pub(super) fn retained_from(&self, off: u64) -> u64 {
        if off >= self.head_len() && off < self.base {
            self.base
        } else {
            off
        }
    }

    pub(super) fn nsegs(&self) -> usize {
        self.head_segs.len() + self.segs.len()
    }

    /// Segment `i` of the stream: the head's first, then the ring's.
    pub(super) fn seg(&self, i: usize) -> Option<&Seg> {
        let h = self.head_segs.len();
        if i < h {
            self.head_segs.get(i)
        } else {
            self.segs.get(i - h)
        }
    }

    /// The first segment index for which `pred` is false (segments are ordered).
    pub(super) fn seg_partition(&self, pred: impl Fn(&Seg) -> bool) -> usize {
        let h = self.head_segs.partition_point(&pred);
        if h < self.head_segs.len() {
            h
        } else {
            h + self.segs.partition_point(&pred)
        }
    }

    pub(super) fn push(&mut self, mut seq: u64, mut data: &[u8], mut cap: usize, head_cap: usize) {
        if !self.head_full {
            let room = head_cap.saturating_sub(self.head.len());
            let mut take = data.len().min(room);
            if take < data.len() {
                // Never end the head inside a character: the rest goes to the ring whole.
                take = char_boundary_at_or_before(data, take);
                self.head_full = true;
            }
            if take > 0 {
                let need = self.head.len() + take;
                if need > self.head.capacity() {
                    // Grow as bytes arrive (a quiet command costs nothing), doubling. Under
                    // a memory limit the head ends where the allocator stops it.
                    let want = need.max(self.head.capacity() * 2).min(head_cap);
                    if self.head.try_reserve_exact(want - self.head.len()).is_err()
                        && self.head.try_reserve_exact(take).is_err()
                    {
                        take = char_boundary_at_or_before(
                            data,
                            self.head.capacity() - self.head.len(),
                        );
                        self.head_full = true;
                    }
                }
                let off = self.head_len();
                self.head.extend_from_slice(&data[..take]);
                match self.head_segs.last_mut() {
                    Some(last) if last.seq + last.len == seq => last.len += take as u64,
                    _ => self.head_segs.push(Seg {
                        seq,
                        off,
                        len: take as u64,
                    }),
                }
                seq += take as u64;
                data = &data[take..];
            }
            // The ring is still empty: it starts right after the head.
            self.base = self.head_len();
            if data.is_empty() {
                return;
            }
        }
        let off = self.end_off();
        match self.segs.back_mut() {
            Some(last) if last.seq + last.len == seq => last.len += data.len() as u64,
            _ => self.segs.push_back(Seg {
                seq,
                off,
                len: data.len() as u64,
            }),
        }
        // Under a memory limit (`ulimit -v`) the ring keeps what fits in the memory it
        // could get, the oldest bytes going first, instead of aborting the server.
        let target = cap.min(self.bytes.len() + data.len());
        if target > self.bytes.capacity()
            && self.bytes.try_reserve(target - self.bytes.len()).is_err()
        {
            cap = self.bytes.capacity().max(1);
        }
        if data.len() >= cap {
            // Everything retained so far goes, plus the head of `data`.
            let drop_old = self.bytes.len();
            self.evict(drop_old as u64);
            let skip = data.len() - cap;
            self.evict(skip as u64);
            self.bytes.extend(&data[skip..]);
            // `evict` advanced `base` past the skipped bytes, which were never stored.
            return;
        }
        // Evicted first, so the ring never grows past what it holds room for.
        let excess = (self.bytes.len() + data.len()).saturating_sub(cap);
        if excess > 0 {
            self.evict(excess as u64);
        }
        self.bytes.extend(data);
    }

    /// Drops the `n` oldest bytes of the ring (stored or, for a huge append, about to be
    /// skipped). The head is never evicted.
    pub(super) fn evict(&mut self, mut n: u64) {
        let stored = n.min(self.bytes.len() as u64);
        self.bytes.drain(..stored as usize);
        self.base += n;
        while n > 0 {
            let Some(front) = self.segs.front_mut() else {
                break;
            };
            let take = n.min(front.len);
            if self.evicted_from == 0 && take > 0 {
                self.evicted_from = front.seq;
            }
            front.seq += take;
            front.off += take;
            front.len -= take;
            n -= take;
            self.evicted_until = front.seq;
            if front.len == 0 {
                self.segs.pop_front();
            }
        }
    }

    /// The retained bytes at stream offsets `[from, to)` (the gap skipped), as up to three
    /// slices: from the head, then the two halves of the ring.
    pub(super) fn pieces(&self, from: u64, to: u64) -> [&[u8]; 3] {
        let hl = self.head_len();
        let h: &[u8] = if from < hl {
            &self.head[from as usize..to.min(hl) as usize]
        } else {
            &[]
        };
        let rf = from.max(self.base);
        if to <= rf {
            return [h, &[], &[]];
        }
        let (a, b) = self.bytes.as_slices();
        let start = (rf - self.base) as usize;
        let end = (to - self.base) as usize;
        if end <= a.len() {
            [h, &a[start..end], &[]]
        } else if start >= a.len() {
            [h, &b[start - a.len()..end - a.len()], &[]]
        } else {
            [h, &a[start..], &b[..end - a.len()]]
        }
    }

    pub(super) fn byte(&self, off: u64) -> u8 {
        if off < self.head_len() {
            self.head[off as usize]
        } else {
            self.bytes[(off - self.base) as usize]
        }
    }

    pub(super) fn copy(&self, from: u64, to: u64, out: &mut Vec<u8>) {
        for p in self.pieces(from, to) {
            out.extend_from_slice(p);
        }
    }

    /// Like `copy`, but a range that crosses the gap leaves out the rest of a character
    /// whose lead byte was evicted (as a read that crosses the gap does).
    pub(super) fn copy_across_gap(&self, from: u64, to: u64, out: &mut Vec<u8>) {
        let hl = self.head_len();
        if self.has_gap() && from < hl && to > self.base {
            self.copy(from, hl, out);
            let resume = self.char_start_at_or_after(self.base);
            if resume < to {
                self.copy(resume, to, out);
            }
        } else {
            self.copy(from, to, out);
        }
    }

    /// The offset of the last newline in `[from, to)` (one region), if any.
    pub(super) fn last_newline(&self, from: u64, to: u64) -> Option<u64> {
        let [h, a, b] = self.pieces(from, to);
        let ring_from = from.max(self.base);
        if let Some(i) = memchr::memrchr(b'\n', b) {
            return Some(ring_from + a.len() as u64 + i as u64);
        }
        if let Some(i) = memchr::memrchr(b'\n', a) {
            return Some(ring_from + i as u64);
        }
        memchr::memrchr(b'\n', h).map(|i| from + i as u64)
    }

    /// Index of the first segment that ends after position `seq`.
    pub(super) fn seg_index(&self, seq: u64) -> usize {
        self.seg_partition(|s| s.seq + s.len <= seq)
    }

    /// Index of the first segment that ends after stream offset `off`.
    pub(super) fn seg_index_of_off(&self, off: u64) -> usize {
        self.seg_partition(|s| s.off + s.len <= off)
    }

    /// The first offset at or after `off` that does not start inside a character: a
    /// continuation byte is skipped when the lead byte of its character is retained before
    /// it, or when nothing is retained before it (the lead byte was evicted).
    pub(super) fn char_start_at_or_after(&self, off: u64) -> u64 {
        let end = self.end_off();
        if off >= end || !is_continuation(self.byte(off)) {
            return off;
        }
        let (low, high) = self.region(off);
        let mut lead = off;
        while lead > low && off - lead < 3 {
            lead -= 1;
            let b = self.byte(lead);
            if !is_continuation(b) {
                let width = utf8_width(b) as u64;
                return if width > 1 && lead + width > off {
                    self.across_gap((lead + width).min(high))
                } else {
                    off
                };
            }
        }
        if lead == low && off - lead < 3 {
            // The lead byte was evicted: skip the rest of its character.
            let mut s = off;
            while s < high && s - off < 3 && is_continuation(self.byte(s)) {
                s += 1;
            }
            return self.across_gap(s);
        }
        off
    }

    /// `off` itself, or, when it fell into the gap, the first character start in the ring.
    pub(super) fn across_gap(&self, off: u64) -> u64 {
        let r = self.retained_from(off);
        if r == off {
            off
        } else {
            self.char_start_at_or_after(r)
        }
    }

    /// Maps a position to this stream's offset: the offset of the first retained byte
    /// whose position is `>= seq`, or the end.
    pub(super) fn off_at_or_after(&self, seq: u64) -> u64 {
        match self.seg(self.seg_index(seq)) {
            Some(s) if seq > s.seq => s.off + (seq - s.seq),
            Some(s) => s.off,
            None => self.end_off(),
        }
    }

    /// The position of the byte at stream offset `off` (which must be retained).
    pub(super) fn seq_of(&self, off: u64) -> u64 {
        match self.seg(self.seg_index_of_off(off)) {
            Some(s) => s.seq + (off - s.off),
            None => u64::MAX,
        }
    }

    /// The retained bytes from stream offset `from` to the end, as (position, length) runs
    /// appended to `out`; across the gap, the rest of a character whose lead byte was
    /// evicted is left out (as reads leave it out).
    pub(super) fn runs_from(&self, from: u64, out: &mut Vec<(u64, u64)>) {
        let resume = (self.has_gap() && from < self.head_len())
            .then(|| self.char_start_at_or_after(self.base));
        for seg in (self.seg_index_of_off(from)..self.nsegs()).filter_map(|j| self.seg(j)) {
            let mut start = seg.off.max(from);
            if let Some(r) = resume.filter(|_| seg.off >= self.base) {
                start = start.max(r);
            }
            let end = seg.off + seg.len;
            if end > start {
                out.push((seg.seq + (start - seg.off), end - start));
            }
        }
    }

    /// Where, at or after `off`, the newest `n` lines of the retained bytes begin (the
    /// retained bytes read as one text, the gap closed up).
    pub(super) fn tail_start(&self, off: u64, n: usize) -> u64 {
        let end = self.end_off();
        if n == 0 || off >= end {
            return end;
        }
        // The text ends where the ring ends, or at the head's end when all the ring holds
        // is the rest of a character whose lead was evicted.
        let text_end = if self.has_gap() && self.char_start_at_or_after(self.base) >= end {
            self.head_len()
        } else {
            end
        };
        if off >= text_end {
            return end;
        }
        // A final line without a newline counts as a line; a final newline does not start
        // an empty one.
        let mut scan_end = text_end;
        if self.byte(text_end - 1) == b'\n' {
            scan_end -= 1;
        }
        let regions = if self.has_gap() {
            [(self.base, end), (0, self.head_len())]
        } else {
            [(0, end), (0, 0)]
        };
        let mut found = 0;
        for (k, (lo, hi)) in regions.into_iter().enumerate() {
            let lo = lo.max(off);
            let mut hi = hi.min(scan_end);
            while hi > lo {
                match self.last_newline(lo, hi) {
                    Some(nl) => {
                        found += 1;
                        if found == n {
                            return self.across_gap(nl + 1);
                        }
                        hi = nl;
                    }
                    None => break,
                }
            }
            // The gap ends a line: the ring's text (if any is left once the rest of a
            // character whose lead was evicted is skipped) starts a new one.
            // (A head that ends with a newline marks that start itself.)
            let head_ends_line = self.head_len() > 0 && self.head[self.head.len() - 1] == b'\n';
            if k == 0 && self.has_gap() && lo == self.base && lo > off && !head_ends_line {
                let resume = self.char_start_at_or_after(self.base);
                if resume < end {
                    found += 1;
                    if found == n {
                        return resume;
                    }
                }
            }
        }
        off
    }
}

/// The largest index `<= at` of `data` that does not fall inside a UTF-8 character.
fn char_boundary_at_or_before(data: &[u8], at: usize) -> usize {
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
