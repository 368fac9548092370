//! `wait`'s `until`: a pattern matched over new output on a thread of its own.
//!
//! A slow pattern must not stall the server. Scans run on the `until` thread, never on
//! the workers (they run every tool call: `ps`, `read`, `write`, `exec`) and never under a
//! record's lock. Each watch keeps its scan state (the stream offset copied so far and the
//! unfinished last line), so every byte is scanned once, plus the unfinished line again
//! when more of it arrives. The thread takes the watches in turn, in slices of at most
//! [`SLICE`]: one wait's scan cannot hold back another's for long, and no slice runs past
//! its wait's deadline. A wait whose deadline passes is answered by its timer
//! (`tools/wait`) whether or not its scan is done, so a queued scan never makes a wait late.
//!
//! The look of a parked wait (on a worker, under the record's lock) only reads this
//! module's flags and offsets: [`UntilWatch::matched`], [`UntilWatch::behind`], and
//! [`UntilWatch::submit`] to queue a scan. The scanner wakes the waiter when it matches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use regex_lite::Regex;

use crate::base::ring::{Streams, STDERR, STDOUT};
use crate::process::record::{self as process, Proc, Watcher};

/// The longest a scan runs before the next watch's turn.
const SLICE: Duration = Duration::from_millis(20);
/// The most bytes matched in one piece: whole lines, or part of a longer line.
const SCAN_PIECE: usize = 4 << 10;
/// An unfinished line longer than this is not scanned again as more of it arrives.
const LONG_LINE: usize = 64 << 10;
/// The most bytes copied from a stream at a time (the copy is made under the record's
/// lock, and bounds the memory a watch holds).
const COPY_CHUNK: usize = 256 << 10;

/// Matches `until` over the output of one record from a sequence number on.
pub(crate) struct UntilWatch {
    shared: Arc<Shared>,
}

struct Shared {
    proc: Arc<Proc>,
    streams: Streams,
    deadline: Instant,
    /// Locked by the scanner thread only (and never while a record's lock is held).
    state: Mutex<State>,
    /// A scan of this watch is queued on the scanner.
    queued: AtomicBool,
    matched: AtomicBool,
    /// Per stream, the offset up to which every byte was copied and scanned.
    done_to: [AtomicU64; 2],
}

struct State {
    re: Regex,
    pending: [Pending; 2],
}

/// The bytes of one stream copied and not yet scanned to the end (or kept: the unfinished
/// last line, scanned again with what follows it).
struct Pending {
    bytes: Vec<u8>,
    /// The stream offset of `bytes[0]`.
    start: u64,
    /// Where the scan resumes in `bytes`.
    pos: usize,
    /// Everything in `bytes` was scanned since the last copy added to it.
    done: bool,
}

/// How a slice of scanning ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slice {
    Matched,
    /// Every byte written so far was scanned.
    CaughtUp,
    /// The slice's time ran out.
    More,
}

impl UntilWatch {
    /// Matches `re` against the output of `proc`'s `streams` from sequence `since_seq`
    /// on, until `deadline`.
    pub(crate) fn new(
        re: Regex,
        proc: &Arc<Proc>,
        since_seq: Option<u64>,
        streams: Streams,
        deadline: Instant,
    ) -> UntilWatch {
        let seq = since_seq.unwrap_or(1);
        let from = {
            let st = proc.lock();
            [
                st.output.stream_off_at(STDOUT, seq),
                st.output.stream_off_at(STDERR, seq),
            ]
        };
        let pending = from.map(|start| Pending {
            bytes: Vec::new(),
            start,
            pos: 0,
            done: true,
        });
        UntilWatch {
            shared: Arc::new(Shared {
                proc: proc.clone(),
                streams,
                deadline,
                state: Mutex::new(State { re, pending }),
                queued: AtomicBool::new(false),
                matched: AtomicBool::new(false),
                done_to: from.map(AtomicU64::new),
            }),
        }
    }

    /// The scanner found a match.
    pub(crate) fn matched(&self) -> bool {
        self.shared.matched.load(Ordering::Acquire)
    }

    /// The record (its state `st`) holds output this watch has not scanned yet.
    pub(crate) fn behind(&self, st: &process::State) -> bool {
        [STDOUT, STDERR].into_iter().any(|stream| {
            self.shared.wanted(stream)
                && st.output.stream_end(stream)
                    > self.shared.done_to[stream].load(Ordering::Acquire)
        })
    }

    /// Queues a scan (unless one is queued); `wake` is woken when it matches.
    pub(crate) fn submit(&self, scanner: &Scanner, wake: &Weak<dyn Watcher>) {
        if !self.shared.queued.swap(true, Ordering::AcqRel) {
            let job = Job {
                shared: self.shared.clone(),
                wake: wake.clone(),
            };
            if scanner.tx.send(job).is_err() {
                self.shared.queued.store(false, Ordering::Release);
            }
        }
    }
}

impl Shared {
    fn wanted(&self, stream: usize) -> bool {
        match self.streams {
            Streams::Both => true,
            Streams::Stdout => stream == STDOUT,
            Streams::Stderr => stream == STDERR,
        }
    }
}

impl State {
    /// Scans until a match, the end of the output, or `until`.
    fn run(&mut self, shared: &Shared, until: Instant) -> Slice {
        loop {
            for stream in [STDOUT, STDERR] {
                match self.pending[stream].scan(&self.re, until) {
                    Some(Slice::Matched) => return Slice::Matched,
                    Some(_) => return Slice::More,
                    None => (),
                }
            }
            if !self.copy(shared) {
                for stream in [STDOUT, STDERR] {
                    let p = &self.pending[stream];
                    let end = p.start + p.bytes.len() as u64;
                    shared.done_to[stream].store(end, Ordering::Release);
                }
                return Slice::CaughtUp;
            }
            if Instant::now() >= until {
                return Slice::More;
            }
        }
    }

    /// Copies the next bytes of each wanted stream (under the record's lock; no matching
    /// here). False when there were none.
    fn copy(&mut self, shared: &Shared) -> bool {
        let st = shared.proc.lock();
        let mut any = false;
        for stream in [STDOUT, STDERR] {
            if !shared.wanted(stream) {
                continue;
            }
            let p = &mut self.pending[stream];
            let from = p.start + p.bytes.len() as u64;
            let mut fresh = Vec::new();
            let (start, end) = st
                .output
                .stream_bytes_upto(stream, from, COPY_CHUNK, &mut fresh);
            if start >= end {
                continue;
            }
            if start > from {
                // Evicted before it was copied: what was kept does not join what follows.
                p.bytes.clear();
                p.start = start;
                p.pos = 0;
            }
            p.bytes.extend_from_slice(&fresh);
            p.done = false;
            any = true;
        }
        any
    }
}

impl Pending {
    /// Scans from `pos` in pieces of at most [`SCAN_PIECE`] bytes that end at a line's end
    /// where one does. None when everything was scanned without a match; then only the
    /// unfinished last line is kept (a very long one is dropped).
    fn scan(&mut self, re: &Regex, until: Instant) -> Option<Slice> {
        if self.done {
            return None;
        }
        let len = self.bytes.len();
        while self.pos < len {
            let pos = self.pos;
            let mut stop = (pos + SCAN_PIECE).min(len);
            if stop < len {
                if let Some(i) = memchr::memrchr(b'\n', &self.bytes[pos..stop]) {
                    stop = pos + i + 1;
                }
            }
            if re.is_match(&String::from_utf8_lossy(&self.bytes[pos..stop])) {
                return Some(Slice::Matched);
            }
            self.pos = stop;
            if self.pos < len && Instant::now() >= until {
                return Some(Slice::More);
            }
        }
        match memchr::memrchr(b'\n', &self.bytes) {
            Some(i) => {
                self.bytes.drain(..=i);
                self.start += i as u64 + 1;
            }
            None if len > LONG_LINE => {
                self.bytes.clear();
                self.start += len as u64;
            }
            None => (),
        }
        self.pos = 0;
        self.done = true;
        None
    }
}

/// A queued scan: the watch, and the waiter to wake when it matches.
struct Job {
    shared: Arc<Shared>,
    wake: Weak<dyn Watcher>,
}

/// The handle to the `until` thread; it ends when the handle is dropped.
pub(crate) struct Scanner {
    tx: Sender<Job>,
}

impl Scanner {
    /// Starts the `until` thread.
    pub(crate) fn start() -> std::io::Result<Scanner> {
        let (tx, rx) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("until".into())
            .stack_size(256 * 1024)
            .spawn(move || run_scans(&rx))?;
        Ok(Scanner { tx })
    }
}

/// The `until` thread: runs the queued scans in turn, a slice each.
fn run_scans(rx: &Receiver<Job>) {
    let mut turns: VecDeque<Job> = VecDeque::new();
    loop {
        turns.extend(rx.try_iter());
        let job = match turns.pop_front() {
            Some(job) => job,
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        if let Some(again) = slice(job) {
            turns.push_back(again);
        }
    }
}

/// One slice of a scan; the job back when it has more to do.
fn slice(job: Job) -> Option<Job> {
    // A waiter that was answered is gone: its scan is no longer wanted.
    let wake = job.wake.upgrade()?;
    let shared = &job.shared;
    // Cleared first: output that arrives during this slice queues another one.
    shared.queued.store(false, Ordering::Release);
    let now = Instant::now();
    if now >= shared.deadline {
        return None;
    }
    let until = (now + SLICE).min(shared.deadline);
    let found = shared.state.lock().run(shared, until);
    match found {
        Slice::Matched => {
            shared.matched.store(true, Ordering::Release);
            wake.wake();
            None
        }
        Slice::CaughtUp => None,
        Slice::More => {
            let again =
                Instant::now() < shared.deadline && !shared.queued.swap(true, Ordering::AcqRel);
            again.then_some(job)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending() -> Pending {
        Pending {
            bytes: Vec::new(),
            start: 0,
            pos: 0,
            done: true,
        }
    }

    fn add(p: &mut Pending, text: &str) {
        p.bytes.extend_from_slice(text.as_bytes());
        p.done = false;
    }

    #[test]
    fn a_line_split_across_copies_is_matched_and_finished_lines_are_dropped() {
        let re = Regex::new("(?m)^ready$").unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let mut p = pending();
        add(&mut p, "starting\nrea");
        assert_eq!(p.scan(&re, far), None);
        // Only the unfinished line is kept, at its stream offset.
        assert_eq!((p.bytes.as_slice(), p.start), (&b"rea"[..], 9));
        // Nothing new: nothing is scanned again.
        assert_eq!(p.scan(&re, far), None);
        add(&mut p, "dy\n");
        assert_eq!(p.scan(&re, far), Some(Slice::Matched));
    }

    #[test]
    fn a_scan_stops_at_its_time_and_resumes_where_it_stopped() {
        let re = Regex::new("zzz").unwrap();
        let mut p = pending();
        add(&mut p, &"a\n".repeat(4 * SCAN_PIECE));
        assert_eq!(p.scan(&re, Instant::now()), Some(Slice::More));
        let resumed = p.pos;
        assert!(resumed > 0 && resumed < p.bytes.len(), "{resumed}");
        add(&mut p, "zzz\n");
        let far = Instant::now() + Duration::from_secs(60);
        assert_eq!(p.scan(&re, far), Some(Slice::Matched));
    }

    #[test]
    fn a_long_line_without_an_end_is_not_kept() {
        let re = Regex::new("b").unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let mut p = pending();
        add(&mut p, &"a".repeat(LONG_LINE + 1));
        assert_eq!(p.scan(&re, far), None);
        assert!(p.bytes.is_empty());
        assert_eq!(p.start, LONG_LINE as u64 + 1);
    }
}
