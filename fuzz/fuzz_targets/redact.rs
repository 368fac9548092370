//! The streaming UTF-8 and secret filter between a pipe and its ring (`redact::Filter`).
//!
//! The input is assembled from raw bytes, whole secrets and partial secrets (so secrets
//! actually occur, also split and overlapping), then cut into pieces at arbitrary points.
//!
//! Properties:
//! - feeding the pieces one by one and then calling `finish` gives exactly the bytes that
//!   feeding the whole input at once gives, and both equal `Secrets::redact_str` on the
//!   whole input when it is UTF-8;
//! - no secret value (8 bytes or more) appears in the output (except where the output only
//!   spells it through a replacement text `[REDACTED:NAME]` itself, which is not a leak);
//! - with no secret, the output is the input, byte for byte;
//! - the emitted chunks never cut a valid UTF-8 character in two (the ring relies on it).
#![no_main]

use std::sync::Arc;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::internals::redact::{Filter, Secrets, MIN_SECRET_LEN};

#[derive(Arbitrary, Debug)]
enum Part {
    Bytes(Vec<u8>),
    Secret(u8),
    /// The first `len` bytes of a secret.
    Prefix(u8, u8),
    /// The last `len` bytes of a secret.
    Suffix(u8, u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    secrets: Vec<(String, String)>,
    parts: Vec<Part>,
    /// Piece lengths, used in turn (0 feeds an empty piece).
    cuts: Vec<u8>,
}

/// Runs the filter over the pieces; returns the output and the emitted chunks.
fn run(secrets: &Arc<Secrets>, pieces: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
    let mut filter = Filter::new(secrets.clone());
    let mut out = Vec::new();
    let mut boundaries = Vec::new();
    for piece in pieces {
        filter.feed(piece, &mut |b| {
            out.extend_from_slice(b);
            boundaries.push(out.len());
        });
    }
    filter.finish(&mut |b| {
        out.extend_from_slice(b);
        boundaries.push(out.len());
    });
    (out, boundaries)
}

/// True when a valid multi-byte UTF-8 character of `out` spans `boundary`.
fn splits_a_character(out: &[u8], boundary: usize) -> bool {
    (boundary.saturating_sub(3)..boundary).any(|i| {
        (boundary + 1..=(i + 4).min(out.len()))
            .any(|end| std::str::from_utf8(&out[i..end]).is_ok_and(|s| s.chars().count() == 1))
    })
}

fuzz_target!(|input: Input| {
    let pairs: Vec<(String, String)> = input.secrets.into_iter().take(6).collect();
    let values: Vec<&str> = pairs.iter().map(|(_, v)| v.as_str()).collect();
    let secrets = Arc::new(Secrets::new(
        pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())),
    ));

    let mut data = Vec::new();
    for part in input.parts.into_iter().take(64) {
        let secret = |i: u8| {
            values
                .get(i as usize % values.len().max(1))
                .map(|v| v.as_bytes())
        };
        match part {
            Part::Bytes(b) => data.extend_from_slice(&b),
            Part::Secret(i) => data.extend_from_slice(secret(i).unwrap_or(b"")),
            Part::Prefix(i, len) => {
                let s = secret(i).unwrap_or(b"");
                data.extend_from_slice(&s[..(len as usize).min(s.len())]);
            }
            Part::Suffix(i, len) => {
                let s = secret(i).unwrap_or(b"");
                data.extend_from_slice(&s[s.len() - (len as usize).min(s.len())..]);
            }
        }
    }

    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut rest = &data[..];
    let mut cuts = input.cuts.iter().cycle();
    while !rest.is_empty() {
        let n = match cuts.next() {
            Some(&n) => (n as usize).min(rest.len()),
            None => rest.len(),
        };
        let (piece, tail) = rest.split_at(n);
        pieces.push(piece);
        rest = tail;
        if pieces.len() > 4 * data.len() + 8 {
            pieces.push(rest);
            break;
        }
    }

    let (whole, _) = run(&secrets, &[&data]);
    let (split, boundaries) = run(&secrets, &pieces);
    assert_eq!(
        split, whole,
        "pieces {pieces:?} give other bytes than the whole input"
    );
    if let Ok(text) = std::str::from_utf8(&data) {
        assert_eq!(
            secrets.redact_str(text).as_bytes(),
            &whole[..],
            "redact_str differs"
        );
    }
    if secrets.is_empty() {
        assert_eq!(
            whole, data,
            "no secret, yet the output differs from the input"
        );
    }

    for boundary in boundaries {
        assert!(
            !splits_a_character(&split, boundary),
            "chunk boundary {boundary} splits a character in {split:?} (pieces {pieces:?})"
        );
    }

    // No secret in the output. A value the replacement texts could spell on their own (one
    // with a bracket, or a substring of `REDACTED:NAME`) is left out: finding it would not
    // show a leak.
    let bodies: Vec<String> = pairs.iter().map(|(n, _)| format!("REDACTED:{n}")).collect();
    for value in &values {
        if value.len() < MIN_SECRET_LEN
            || value.contains(['[', ']'])
            || bodies.iter().any(|b| b.contains(value))
        {
            continue;
        }
        assert!(
            !split.windows(value.len()).any(|w| w == value.as_bytes()),
            "secret {value:?} appears in the output {:?}",
            String::from_utf8_lossy(&split)
        );
    }
});
