//! The filter between a pipe and its ring: keeps UTF-8 characters whole and redacts secrets.
//!
//! Reads from a pipe end anywhere, so a character or a secret may arrive in two pieces.
//! The filter holds back the shortest tail that could still become one (an incomplete UTF-8
//! sequence, or a proper prefix of a secret) and emits it with the next read or at end of
//! file. Emitted bytes are final, so ring positions count the redacted text.
//!
//! With no secrets configured the filter copies nothing: it hands the input slice through,
//! minus at most three bytes of an incomplete character.

use std::sync::Arc;

use memchr::memmem;

/// The values to hide and what replaces each, longest value first.
#[derive(Debug, Default)]
pub struct Secrets {
    items: Vec<Secret>,
}

#[derive(Debug)]
struct Secret {
    value: Vec<u8>,
    replacement: Vec<u8>,
    finder: memmem::Finder<'static>,
}

/// Values shorter than this are never redacted, so that ordinary output is not mangled.
pub const MIN_SECRET_LEN: usize = 8;

impl Secrets {
    /// Builds the set from (variable name, value) pairs; short values are skipped and the
    /// longest value wins when one contains another.
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Secrets {
        let mut items: Vec<Secret> = Vec::new();
        for (name, value) in pairs {
            if value.len() < MIN_SECRET_LEN || items.iter().any(|s| s.value == value.as_bytes()) {
                continue;
            }
            items.push(Secret {
                value: value.as_bytes().to_vec(),
                replacement: format!("[REDACTED:{name}]").into_bytes(),
                finder: memmem::Finder::new(value.as_bytes()).into_owned(),
            });
        }
        items.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
        Secrets { items }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A copy of this set extended with more pairs (for a call's `env` overlay).
    pub fn with<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Secrets {
        let mut named: Vec<(String, String)> = Vec::new();
        for s in &self.items {
            let name =
                String::from_utf8_lossy(&s.replacement[10..s.replacement.len() - 1]).into_owned();
            named.push((name, String::from_utf8_lossy(&s.value).into_owned()));
        }
        for (k, v) in pairs {
            named.push((k.to_string(), v.to_string()));
        }
        Secrets::new(named.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Redacts a complete text (a command line, an argument), not a stream.
    pub fn redact_str(&self, text: &str) -> String {
        if self.items.is_empty() {
            return text.to_string();
        }
        let mut out = Vec::with_capacity(text.len());
        self.redact_into(text.as_bytes(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Appends `data` to `out` with every secret replaced, leftmost first, longest first.
    fn redact_into(&self, data: &[u8], out: &mut Vec<u8>) {
        self.redact_prefix(data, data.len(), out);
    }

    /// Redacts the first `cut` bytes of `data` into `out`, extending the cut over a secret
    /// that starts before it; returns how many bytes of `data` were consumed.
    fn redact_prefix(&self, data: &[u8], mut cut: usize, out: &mut Vec<u8>) -> usize {
        let mut pos = 0;
        loop {
            let rest = &data[pos..];
            let mut best: Option<(usize, &Secret)> = None;
            for s in &self.items {
                if let Some(at) = s.finder.find(rest) {
                    // Items are sorted longest first, so a tie keeps the longer one.
                    if best.is_none_or(|(b, _)| at < b) {
                        best = Some((at, s));
                    }
                }
            }
            match best {
                Some((at, s)) if pos + at < cut => {
                    out.extend_from_slice(&rest[..at]);
                    out.extend_from_slice(&s.replacement);
                    pos += at + s.value.len();
                    cut = cut.max(pos);
                }
                _ => {
                    out.extend_from_slice(&data[pos..cut]);
                    return cut;
                }
            }
        }
    }

    /// Length of the longest suffix of `data` that is a proper prefix of some secret.
    fn pending_prefix(&self, data: &[u8]) -> usize {
        let mut best = 0;
        for s in &self.items {
            let max = (s.value.len() - 1).min(data.len());
            for len in (best + 1..=max).rev() {
                if data[data.len() - len..] == s.value[..len] {
                    best = len;
                    break;
                }
            }
        }
        best
    }
}

/// Per-stream filter state.
#[derive(Debug)]
pub struct Filter {
    secrets: Arc<Secrets>,
    carry: Vec<u8>,
    scratch: Vec<u8>,
}

impl Filter {
    /// A filter for one stream.
    pub fn new(secrets: Arc<Secrets>) -> Filter {
        Filter {
            secrets,
            carry: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Feeds bytes read from the pipe; `emit` receives the bytes that are final (possibly
    /// nothing).
    pub fn feed(&mut self, data: &[u8], emit: &mut dyn FnMut(&[u8])) {
        if self.secrets.is_empty() && self.carry.is_empty() {
            let keep = incomplete_utf8_tail(data);
            if keep < data.len() {
                emit(&data[..data.len() - keep]);
            }
            self.carry.extend_from_slice(&data[data.len() - keep..]);
            return;
        }
        self.carry.extend_from_slice(data);
        let held = self.held_back_len(&self.carry);
        let cut = self.carry.len() - held;
        if cut == 0 {
            return;
        }
        if self.secrets.is_empty() {
            emit(&self.carry[..cut]);
            self.carry.drain(..cut);
            return;
        }
        self.scratch.clear();
        let consumed = self
            .secrets
            .redact_prefix(&self.carry, cut, &mut self.scratch);
        emit(&self.scratch);
        self.carry.drain(..consumed);
    }

    /// Emits whatever is held back (end of file).
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        if self.carry.is_empty() {
            return;
        }
        self.scratch.clear();
        self.secrets.redact_into(&self.carry, &mut self.scratch);
        emit(&self.scratch);
        self.carry.clear();
    }

    /// How many bytes at the end of `buf` must wait for more input. A secret that could
    /// still complete is held whole; the rest of the buffer is redacted now. Because a
    /// secret found inside the ready part is replaced there, only a prefix of a secret that
    /// begins in the tail needs holding.
    fn held_back_len(&self, buf: &[u8]) -> usize {
        let utf8 = incomplete_utf8_tail(buf);
        let secret = self.secrets.pending_prefix(buf);
        utf8.max(secret)
    }
}

/// Length (0 to 3) of an incomplete but so far valid UTF-8 sequence at the end of `data`.
pub fn incomplete_utf8_tail(data: &[u8]) -> usize {
    let n = data.len();
    for back in 1..=3.min(n) {
        let b = data[n - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let width = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if width > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(secrets: &[(&str, &str)], pieces: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
        let mut f = Filter::new(Arc::new(Secrets::new(secrets.iter().copied())));
        let mut out = Vec::new();
        let mut sizes = Vec::new();
        for p in pieces {
            let before = out.len();
            f.feed(p, &mut |b| out.extend_from_slice(b));
            sizes.push(out.len() - before);
        }
        f.finish(&mut |b| out.extend_from_slice(b));
        (out, sizes)
    }

    #[test]
    fn utf8_tail() {
        let check = |data: &[u8], expected: usize| {
            assert_eq!(incomplete_utf8_tail(data), expected, "{data:?}")
        };
        check(b"abc", 0);
        check("é".as_bytes(), 0);
        check(&"é".as_bytes()[..1], 1);
        check(&"€".as_bytes()[..2], 2);
        check(&"😀".as_bytes()[..3], 3);
        check(b"a\xff", 0);
        check(b"\x80\x80\x80\x80", 0);
    }

    #[test]
    fn characters_stay_whole_across_pieces() {
        let e = "€".as_bytes();
        let (out, sizes) = run(&[], &[b"a", &e[..1], &e[1..], b"b"]);
        assert_eq!(out, "a€b".as_bytes());
        assert_eq!(sizes, vec![1, 0, 3, 1]);
    }

    #[test]
    fn secret_split_across_pieces_is_redacted() {
        let (out, _) = run(
            &[("TOKEN", "supersecretvalue123")],
            &[b"x supersecr", b"etvalue123 y"],
        );
        assert_eq!(String::from_utf8(out).unwrap(), "x [REDACTED:TOKEN] y");
        let (out, _) = run(
            &[("TOKEN", "supersecretvalue123")],
            &[b"s", b"u", b"persecretvalue12", b"3"],
        );
        assert_eq!(String::from_utf8(out).unwrap(), "[REDACTED:TOKEN]");
        // A prefix that never completes comes out at end of file.
        let (out, _) = run(&[("TOKEN", "supersecretvalue123")], &[b"super"]);
        assert_eq!(out, b"super");
    }

    #[test]
    fn secret_completed_inside_the_held_tail_of_another_is_still_redacted() {
        let (out, _) = run(
            &[("A", "xxabcdef12"), ("B", "cdef1234ZZ")],
            &[b"xxabcdef12", b" done"],
        );
        assert_eq!(String::from_utf8(out).unwrap(), "[REDACTED:A] done");
    }

    #[test]
    fn longest_secret_wins_and_short_values_are_ignored() {
        let s = Secrets::new([("A", "abcdefgh"), ("B", "abcdefghijkl"), ("C", "short")]);
        assert_eq!(
            s.redact_str("xabcdefghijkl abcdefgh short"),
            "x[REDACTED:B] [REDACTED:A] short"
        );
        let t = s.with([("D", "overlayvalue")]);
        assert_eq!(
            t.redact_str("overlayvalue abcdefgh"),
            "[REDACTED:D] [REDACTED:A]"
        );
    }
}
