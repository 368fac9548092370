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

/// The values to hide and the name of the variable each came from, longest value first.
#[derive(Debug, Default)]
pub struct Secrets {
    items: Vec<Secret>,
}

#[derive(Debug)]
struct Secret {
    name: String,
    value: Vec<u8>,
    finder: memmem::Finder<'static>,
}

/// Values shorter than this are never redacted, so that ordinary output is not mangled.
pub const MIN_SECRET_LEN: usize = 8;

impl Secrets {
    /// Builds the set from (variable name, value) pairs. Values are bytes: a value that is
    /// not UTF-8 is matched as it is. Short values are skipped, and a value given twice is
    /// kept once (under its first name).
    pub fn new<N, V>(pairs: impl IntoIterator<Item = (N, V)>) -> Secrets
    where
        N: AsRef<str>,
        V: AsRef<[u8]>,
    {
        let mut items: Vec<Secret> = Vec::new();
        for (name, value) in pairs {
            let value = value.as_ref();
            // A terminal turns each `\n` a program writes into `\r\n`: a value with a line
            // break is also looked for in that form.
            let on_terminal = (value.contains(&b'\n')).then(|| crlf(value));
            for value in std::iter::once(value).chain(on_terminal.as_deref()) {
                if value.len() < MIN_SECRET_LEN || items.iter().any(|s| s.value == value) {
                    continue;
                }
                items.push(Secret {
                    name: name.as_ref().to_string(),
                    value: value.to_vec(),
                    finder: memmem::Finder::new(value).into_owned(),
                });
            }
        }
        items.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
        Secrets { items }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A copy of this set extended with more pairs (for a call's `env` overlay). The
    /// server's own values come first, so a value given again by the call keeps the
    /// server's name.
    pub fn with<N, V>(&self, pairs: impl IntoIterator<Item = (N, V)>) -> Secrets
    where
        N: AsRef<str>,
        V: AsRef<[u8]>,
    {
        let own = self.items.iter().map(|s| (s.name.clone(), s.value.clone()));
        let more = pairs
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_vec()));
        Secrets::new(own.chain(more).collect::<Vec<_>>())
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

    /// `data` with every secret replaced (no copy when there is nothing to redact).
    pub fn redact_bytes(&self, data: Vec<u8>) -> Vec<u8> {
        if self.items.is_empty() {
            return data;
        }
        let mut out = Vec::with_capacity(data.len());
        self.redact_into(&data, &mut out);
        out
    }

    /// Appends `data` to `out` with every secret replaced.
    fn redact_into(&self, data: &[u8], out: &mut Vec<u8>) {
        let spans = self.spans(data);
        self.replace(data, data.len(), &spans, out);
    }

    /// Every byte range of `data` covered by at least one occurrence of a secret, in order,
    /// with the secrets each range covers. Occurrences are found at every position
    /// (overlapping ones included) and overlapping occurrences are merged, so that a
    /// decoy that matches first can never leave part of another secret in the clear.
    fn spans(&self, data: &[u8]) -> Vec<Span> {
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for (index, s) in self.items.iter().enumerate() {
            let mut from = 0;
            while let Some(at) = s.finder.find(&data[from..]) {
                let start = from + at;
                hits.push((start, start + s.value.len(), index));
                from = start + 1;
            }
        }
        // By start, longest first, so that an occurrence lying wholly inside another one
        // (a secret that contains another) does not add its name.
        hits.sort_unstable_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        let mut spans: Vec<Span> = Vec::new();
        for (start, end, index) in hits {
            match spans.last_mut() {
                Some(last) if start < last.end => {
                    if end > last.end {
                        last.end = end;
                        if !last.secrets.contains(&index) {
                            last.secrets.push(index);
                        }
                    }
                }
                _ => spans.push(Span {
                    start,
                    end,
                    secrets: vec![index],
                }),
            }
        }
        spans
    }

    /// Copies `data[..cut]` to `out` with each span replaced; `cut` must not fall inside a
    /// span.
    fn replace(&self, data: &[u8], cut: usize, spans: &[Span], out: &mut Vec<u8>) {
        let mut pos = 0;
        for span in spans.iter().take_while(|s| s.end <= cut) {
            out.extend_from_slice(&data[pos..span.start]);
            out.extend_from_slice(b"[REDACTED:");
            for (i, &index) in span.secrets.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(self.items[index].name.as_bytes());
            }
            out.push(b']');
            pos = span.end;
        }
        out.extend_from_slice(&data[pos..cut]);
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

/// A range of output covered by occurrences of secrets (indices into `Secrets::items`).
#[derive(Debug)]
struct Span {
    start: usize,
    end: usize,
    secrets: Vec<usize>,
}

/// `value` with each `\n` not already after a `\r` written as `\r\n`.
fn crlf(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 8);
    for (i, &b) in value.iter().enumerate() {
        if b == b'\n' && (i == 0 || value[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// A set of secrets that changes while streams are open (`policy::secrets::LiveSecrets`): a
/// filter made from it takes the newest set at each read.
pub trait Source: Send + Sync + std::fmt::Debug {
    /// Grows by one at every change.
    fn version(&self) -> u64;
    /// The set now.
    fn current(&self) -> Arc<Secrets>;
}

/// Per-stream filter state.
#[derive(Debug)]
pub struct Filter {
    secrets: Arc<Secrets>,
    /// Where newer sets come from, and the version `secrets` is.
    source: Option<(Arc<dyn Source>, u64)>,
    carry: Vec<u8>,
    scratch: Vec<u8>,
}

impl Filter {
    /// A filter for one stream.
    pub fn new(secrets: Arc<Secrets>) -> Filter {
        Filter {
            secrets,
            source: None,
            carry: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A filter for one stream that redacts with the newest set of `source` at each read.
    pub fn live(source: Arc<dyn Source>) -> Filter {
        let version = source.version();
        Filter {
            secrets: source.current(),
            source: Some((source, version)),
            carry: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn refresh(&mut self) {
        if let Some((source, seen)) = &mut self.source {
            let now = source.version();
            if now != *seen {
                *seen = now;
                self.secrets = source.current();
            }
        }
    }

    /// Feeds bytes read from the pipe; `emit` receives the bytes that are final (possibly
    /// nothing).
    pub fn feed(&mut self, data: &[u8], emit: &mut dyn FnMut(&[u8])) {
        self.refresh();
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
        // A merged span that crosses the cut is held whole: the bytes after the cut may
        // still extend it.
        let spans = self.secrets.spans(&self.carry);
        let cut = match spans.iter().find(|s| s.start < cut && cut < s.end) {
            Some(span) => span.start,
            None => cut,
        };
        if cut == 0 {
            return;
        }
        self.scratch.clear();
        self.secrets
            .replace(&self.carry, cut, &spans, &mut self.scratch);
        emit(&self.scratch);
        self.carry.drain(..cut);
    }

    /// Emits whatever is held back (end of file).
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        self.refresh();
        if self.carry.is_empty() {
            return;
        }
        self.scratch.clear();
        self.secrets.redact_into(&self.carry, &mut self.scratch);
        emit(&self.scratch);
        self.carry.clear();
    }

    /// How many bytes at the end of `buf` must wait for more input: an incomplete
    /// character, or the longest tail that could still become a secret. (`feed` then also
    /// holds a span of secrets that crosses this cut.)
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
        let pairs: Vec<(&str, &[u8])> = secrets.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
        run_bytes(&pairs, pieces)
    }

    fn run_bytes(secrets: &[(&str, &[u8])], pieces: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
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

    /// The server's secret must never appear, whatever the call's env adds as a decoy that
    /// matches first and consumes the secret's first byte.
    #[test]
    fn a_decoy_cannot_uncover_a_server_secret() {
        let server = Secrets::new([("MY_SECRET", "zTOPSECRETVALUE")]);
        let both = server.with([("DECOY_TOKEN", "XXXXXXXz")]);
        let text = "XXXXXXXzTOPSECRETVALUE";
        let out = both.redact_str(text);
        assert!(!out.contains("TOPSECRET"), "{out}");
        assert_eq!(out, "[REDACTED:DECOY_TOKEN,MY_SECRET]");
        // The same through the stream filter, split at every position.
        for split in 0..=text.len() {
            let (a, b) = text.as_bytes().split_at(split);
            let mut f = Filter::new(Arc::new(server.with([("DECOY_TOKEN", "XXXXXXXz")])));
            let mut out = Vec::new();
            f.feed(a, &mut |x| out.extend_from_slice(x));
            f.feed(b, &mut |x| out.extend_from_slice(x));
            f.finish(&mut |x| out.extend_from_slice(x));
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains("TOPSECRET"), "split {split}: {out}");
        }
    }

    #[test]
    fn overlapping_occurrences_of_one_secret_are_all_covered() {
        let s = Secrets::new([("A", "aaaaaaaa")]);
        assert_eq!(s.redact_str("aaaaaaaaa!"), "[REDACTED:A]!");
        assert_eq!(
            s.redact_str("aaaaaaaa aaaaaaaa"),
            "[REDACTED:A] [REDACTED:A]"
        );
    }

    #[test]
    fn a_value_given_again_keeps_the_servers_name() {
        let s = Secrets::new([("SERVER", "samevalue123")]).with([("CALL", "samevalue123")]);
        assert_eq!(s.redact_str("samevalue123"), "[REDACTED:SERVER]");
    }

    #[test]
    fn values_that_are_not_utf8_are_matched_as_bytes() {
        let value: &[u8] = b"\xffsecret\xfe\x80bytes";
        let (out, _) = run_bytes(&[("BIN", value)], &[b"<\xffsecr", b"et\xfe\x80bytes>"]);
        assert_eq!(out, b"<[REDACTED:BIN]>");
    }

    /// Every secret byte stays hidden for every way of cutting the stream in two or three
    /// pieces, checked against a naive oracle (no byte of any occurrence survives).
    #[test]
    fn stream_filter_matches_the_whole_text_oracle() {
        let secrets: &[(&str, &[u8])] = &[
            ("A", b"abcabcab"),
            ("B", b"cabXYZ12"),
            ("C", b"12345678"),
            ("D", b"bcabcabc"),
        ];
        let texts: &[&[u8]] = &[
            b"xxabcabcabXYZ12345678yy",
            b"abcabcabcabcabc",
            b"cabXYZ1234567812345678",
            b"no secret here at all",
            b"abcabcaXbcabcabc",
        ];
        let all = Secrets::new(secrets.iter().copied());
        for text in texts {
            let whole = {
                let mut out = Vec::new();
                all.redact_into(text, &mut out);
                out
            };
            for i in 0..=text.len() {
                for j in i..=text.len() {
                    let (out, _) = run_bytes(secrets, &[&text[..i], &text[i..j], &text[j..]]);
                    assert_eq!(
                        out,
                        whole,
                        "{:?} cut at {i},{j}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
            // The oracle: every byte inside an occurrence is gone.
            let kept = String::from_utf8_lossy(&whole).into_owned();
            for (_, v) in secrets {
                assert!(!kept.contains(&*String::from_utf8_lossy(v)), "{kept}");
            }
        }
    }
}
