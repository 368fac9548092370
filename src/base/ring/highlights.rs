//! Highlights: the lines of a command's output that look like errors, indexed as the
//! output arrives and kept after the ring evicts them (the first and the last few, each cut
//! to a few hundred bytes), so that an answer that leaves them out (head and tail, a gap,
//! a tail read) can still name them and their positions.
//!
//! The default pattern is a list of words (`KEYWORDS`), found without regard to case at
//! the start of a word; `YIELDSHELL_HIGHLIGHT_REGEX` replaces it with a regex. The common
//! floods cost one pass: a chunk without a line end only extends the open line (at most
//! `LINE_MAX` bytes of it are kept), and a chunk whose bytes cannot start a keyword (none of
//! `a`, `r`, `x` in either case: every keyword holds one) checks only the line that was
//! already open.

use std::collections::VecDeque;
use std::sync::Arc;

use regex_lite::Regex;

/// The words of the default pattern (matched without regard to case, at a word start).
pub const KEYWORDS: &[&str] = &[
    "error",
    "fatal",
    "failed",
    "failure",
    "panic",
    "exception",
    "traceback",
];

/// How many highlights are kept from the start of the output, and from its end.
pub const KEEP: usize = 5;

/// Most bytes of a line that are kept (and matched).
pub const LINE_MAX: usize = 300;

/// What makes a line a highlight.
#[derive(Debug)]
pub enum Matcher {
    /// `KEYWORDS`.
    Keywords,
    /// A regex (`YIELDSHELL_HIGHLIGHT_REGEX`).
    Regex(Regex),
}

impl Matcher {
    fn matches(&self, line: &[u8]) -> bool {
        match self {
            Matcher::Keywords => keyword_line(line),
            Matcher::Regex(re) => re.is_match(&String::from_utf8_lossy(line)),
        }
    }
}

/// Whether `line` holds a keyword at the start of a word.
fn keyword_line(line: &[u8]) -> bool {
    let n = line.len();
    if n < 5 {
        return false;
    }
    for i in 0..=n - 5 {
        let c = line[i] | 0x20;
        if !matches!(c, b'e' | b'f' | b'p' | b't') || (i > 0 && line[i - 1].is_ascii_alphabetic()) {
            continue;
        }
        let rest = &line[i..];
        if KEYWORDS
            .iter()
            .any(|k| rest.len() >= k.len() && rest[..k.len()].eq_ignore_ascii_case(k.as_bytes()))
        {
            return true;
        }
    }
    false
}

/// One line that matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    /// Position of the line's first byte.
    pub seq: u64,
    /// 0: stdout, 1: stderr.
    pub stream: usize,
    /// The line (its first `LINE_MAX` bytes, invalid UTF-8 as U+FFFD, `…` when cut).
    pub text: String,
}

/// The open line of one stream.
#[derive(Debug, Default)]
struct Open {
    seq: u64,
    bytes: Vec<u8>,
    cut: bool,
    open: bool,
}

/// The highlights of one record's output.
#[derive(Debug)]
pub struct Index {
    matcher: Arc<Matcher>,
    lines: [Open; 2],
    first: Vec<Highlight>,
    last: VecDeque<Highlight>,
    count: u64,
}

impl Index {
    /// An empty index that keeps the lines `matcher` finds.
    pub fn new(matcher: Arc<Matcher>) -> Index {
        Index {
            matcher,
            lines: [Open::default(), Open::default()],
            first: Vec::new(),
            last: VecDeque::new(),
            count: 0,
        }
    }

    /// Takes `data`, the bytes of `stream` at positions from `seq` on.
    pub fn push(&mut self, stream: usize, seq: u64, data: &[u8]) {
        let Some(first_nl) = memchr::memchr(b'\n', data) else {
            self.extend(stream, seq, data);
            return;
        };
        let keywords = matches!(*self.matcher, Matcher::Keywords);
        if keywords
            && memchr::memchr3(b'a', b'r', b'x', data).is_none()
            && memchr::memchr3(b'A', b'R', b'X', data).is_none()
        {
            // No line that starts in this chunk can hold a keyword: only the open line is
            // checked, and the last (unfinished) line is kept open.
            self.extend(stream, seq, &data[..first_nl]);
            self.end(stream);
            let last_nl = memchr::memrchr(b'\n', data).unwrap_or(first_nl);
            let tail = &data[last_nl + 1..];
            if !tail.is_empty() {
                self.extend(stream, seq + last_nl as u64 + 1, tail);
            }
            return;
        }
        let mut at = 0;
        for nl in memchr::memchr_iter(b'\n', data) {
            self.extend(stream, seq + at as u64, &data[at..nl]);
            self.end(stream);
            at = nl + 1;
        }
        if at < data.len() {
            self.extend(stream, seq + at as u64, &data[at..]);
        }
    }

    /// The end of `stream`: its last line, if unfinished, is checked.
    pub fn close(&mut self, stream: usize) {
        self.end(stream);
    }

    /// How many lines matched in all.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The kept highlights, oldest first.
    pub fn kept(&self) -> impl Iterator<Item = &Highlight> {
        let newest_first = self.first.last().map(|h| h.seq);
        self.first.iter().chain(
            self.last
                .iter()
                .filter(move |h| newest_first.is_none_or(|s| h.seq > s)),
        )
    }

    fn extend(&mut self, stream: usize, seq: u64, bytes: &[u8]) {
        let line = &mut self.lines[stream];
        if !line.open {
            line.open = true;
            line.seq = seq;
            line.bytes.clear();
            line.cut = false;
        }
        let room = LINE_MAX - line.bytes.len();
        if bytes.len() > room {
            line.cut = true;
        }
        line.bytes
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end(&mut self, stream: usize) {
        let line = &mut self.lines[stream];
        if !line.open {
            return;
        }
        line.open = false;
        if !self.matcher.matches(&line.bytes) {
            return;
        }
        let mut text = String::from_utf8_lossy(&line.bytes).into_owned();
        if line.cut {
            text.push('…');
        }
        let h = Highlight {
            seq: line.seq,
            stream,
            text: text.trim_end_matches('\r').to_string(),
        };
        self.count += 1;
        if self.first.len() < KEEP {
            self.first.push(h);
        } else {
            if self.last.len() == KEEP {
                self.last.pop_front();
            }
            self.last.push_back(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Index {
        Index::new(Arc::new(Matcher::Keywords))
    }

    #[test]
    fn error_looking_lines_are_found_across_chunks_with_their_positions() {
        let mut ix = index();
        ix.push(0, 1, b"ok\nsrc/a.c:1: err");
        ix.push(0, 18, b"or: x\n");
        ix.push(1, 24, b"Traceback (most recent call last):\n");
        ix.push(0, 59, b"terror is not one\n");
        let kept: Vec<_> = ix.kept().cloned().collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(kept[0].seq, 4);
        assert_eq!(kept[0].text, "src/a.c:1: error: x");
        assert_eq!((kept[1].seq, kept[1].stream), (24, 1));
    }

    #[test]
    fn the_first_and_the_last_few_are_kept_and_long_lines_are_cut() {
        let mut ix = index();
        let mut seq = 1;
        for i in 0..100 {
            let line = format!("line {i}: FAILED\n");
            ix.push(0, seq, line.as_bytes());
            seq += line.len() as u64;
        }
        let long = format!("fatal {}\n", "z".repeat(1000));
        ix.push(0, seq, long.as_bytes());
        assert_eq!(ix.count(), 101);
        let kept: Vec<_> = ix.kept().collect();
        assert_eq!(kept.len(), 2 * KEEP);
        assert!(kept[0].text.starts_with("line 0:"));
        assert!(kept[KEEP].text.starts_with("line 96:"));
        assert!(kept[2 * KEEP - 1].text.ends_with('…'));
        assert!(kept[2 * KEEP - 1].text.len() <= LINE_MAX + 3);
    }

    #[test]
    fn a_chunk_that_cannot_start_a_keyword_still_ends_an_open_one() {
        let mut ix = index();
        // "exc" opens the line; the next chunk has no a, r or x.
        ix.push(0, 1, b"exc");
        ix.push(0, 4, b"eption in module\nyy\nyy\n");
        ix.close(0);
        assert_eq!(ix.count(), 1);
        ix.push(1, 100, b"panic");
        ix.close(1);
        assert_eq!(ix.count(), 2);
    }

    #[test]
    fn a_regex_replaces_the_words() {
        let mut ix = Index::new(Arc::new(Matcher::Regex(Regex::new("^WARN").unwrap())));
        ix.push(0, 1, b"error\nWARN disk\n");
        let kept: Vec<_> = ix.kept().collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].text, "WARN disk");
    }
}
