//! Terminal escape removal for output read from a pseudo-terminal.
//!
//! A program on a terminal colours its text, moves the cursor and sets window titles with
//! escape sequences (ECMA-48 / VT100). An agent wants the text. [`strip`] removes:
//! - CSI sequences: `ESC [`, parameter bytes `0x30..=0x3F`, intermediate bytes
//!   `0x20..=0x2F`, one final byte `0x40..=0x7E` (colours, cursor moves, erase...);
//! - OSC sequences: `ESC ]` up to BEL or ST (`ESC \`) (titles, hyperlinks);
//! - DCS, SOS, PM and APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _`) up to ST or BEL;
//! - other escape sequences: `ESC`, intermediate bytes, one final byte `0x30..=0x7E`
//!   (charset selects such as `ESC ( B`, keypad modes `ESC =`, `ESC >`, save and restore
//!   cursor `ESC 7`, `ESC 8`...);
//! - BEL, NUL, SO and SI on their own.
//!
//! Carriage returns: the terminal turns each `\n` into `\r\n`, which becomes `\n` again. A
//! lone `\r` (progress bars redrawing their line) starts the line over: the text before it
//! on the same line, within the same read, is dropped, so `10%\r20%\r30%` reads `30%`. (A
//! terminal would show the longer old text's end behind a shorter new text; the newest
//! text is what an agent wants.)
//!
//! Positions are not changed by stripping: the caller reads raw bytes by position and
//! strips the result. A read must not cut a sequence in two, or the next read would begin
//! with its tail (`[31m`) as if it were text: so [`strip`] reports how many bytes at the
//! end form an unfinished sequence (or a `\r` that may be the first half of `\r\n`), and the
//! caller moves its cursor back by that many, so the next read starts at the `ESC`. When
//! the whole input is one unfinished sequence it is dropped instead, so a read always makes
//! progress. Not handled: 8-bit C1 controls (`0x9B` is a UTF-8 continuation byte in the
//! text programs write today), and a read whose start the caller placed inside a sequence
//! (only an explicit `since_seq` or an eviction can do that).

/// The text of `input` without escape sequences.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    /// The remaining text.
    pub text: Vec<u8>,
    /// Bytes at the end of `input` that form an unfinished sequence and were left out: the
    /// next read should start this many positions earlier.
    pub held: usize,
}

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// How a sequence starting at `input[i]` (an `ESC`) ends.
enum Seq {
    /// The sequence ends just before this index.
    Ends(usize),
    /// The input ends first.
    Unfinished,
}

fn scan_escape(input: &[u8], i: usize) -> Seq {
    let Some(&kind) = input.get(i + 1) else {
        return Seq::Unfinished;
    };
    match kind {
        b'[' => {
            let mut j = i + 2;
            while let Some(&b) = input.get(j) {
                match b {
                    0x20..=0x3F => j += 1,
                    0x40..=0x7E => return Seq::Ends(j + 1),
                    // Anything else aborts the sequence (a terminal would execute a control
                    // byte and go on); it is left to the text.
                    _ => return Seq::Ends(j),
                }
            }
            Seq::Unfinished
        }
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut j = i + 2;
            while let Some(&b) = input.get(j) {
                match b {
                    BEL => return Seq::Ends(j + 1),
                    ESC => match input.get(j + 1) {
                        Some(b'\\') => return Seq::Ends(j + 2),
                        Some(_) => return Seq::Ends(j),
                        None => return Seq::Unfinished,
                    },
                    _ => j += 1,
                }
            }
            Seq::Unfinished
        }
        _ => {
            let mut j = i + 1;
            while let Some(&b) = input.get(j) {
                match b {
                    0x20..=0x2F => j += 1,
                    0x30..=0x7E => return Seq::Ends(j + 1),
                    _ => return Seq::Ends(j),
                }
            }
            Seq::Unfinished
        }
    }
}

/// Removes escape sequences and resolves carriage returns (see the module documentation).
pub fn strip(input: &[u8]) -> Stripped {
    let mut text = Vec::with_capacity(input.len());
    // Where the current line starts in `text` (for a lone `\r`).
    let mut line_start = 0;
    let mut i = 0;
    while i < input.len() {
        // Copy the plain run up to the next byte that needs a decision.
        let run_end = input[i..]
            .iter()
            .position(|&b| matches!(b, ESC | b'\r' | b'\n' | BEL | 0 | 0x0e | 0x0f))
            .map_or(input.len(), |p| i + p);
        text.extend_from_slice(&input[i..run_end]);
        i = run_end;
        let Some(&b) = input.get(i) else { break };
        match b {
            ESC => match scan_escape(input, i) {
                Seq::Ends(end) => i = end.max(i + 1),
                Seq::Unfinished => {
                    return finish(text, input.len() - i, i);
                }
            },
            b'\n' => {
                text.push(b'\n');
                line_start = text.len();
                i += 1;
            }
            b'\r' => match input.get(i + 1) {
                Some(b'\n') | Some(b'\r') => i += 1,
                Some(_) => {
                    text.truncate(line_start);
                    i += 1;
                }
                None => return finish(text, 1, i),
            },
            _ => i += 1,
        }
    }
    Stripped { text, held: 0 }
}

/// Ends a strip whose last `held` bytes (starting at `at`) are unfinished: they are held
/// back, unless they are all there is (then they are dropped, so the read makes progress).
fn finish(text: Vec<u8>, held: usize, at: usize) -> Stripped {
    let held = if at == 0 { 0 } else { held };
    Stripped { text, held }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(input: &str) -> (String, usize) {
        let out = strip(input.as_bytes());
        (String::from_utf8(out.text).unwrap(), out.held)
    }

    #[test]
    fn colours_and_cursor_moves_go() {
        assert_eq!(
            s("\x1b[1;31merror\x1b[0m: bad\r\n"),
            ("error: bad\n".into(), 0)
        );
        assert_eq!(s("a\x1b[2Kb\x1b[?25lc\x1b[10;20Hd"), ("abcd".into(), 0));
        // Private parameters and intermediates (DECSCUSR `CSI 2 SP q`).
        assert_eq!(s("x\x1b[2 qy"), ("xy".into(), 0));
    }

    #[test]
    fn osc_strings_and_charset_selects_go() {
        assert_eq!(s("\x1b]0;title\x07prompt$ "), ("prompt$ ".into(), 0));
        assert_eq!(
            s("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            ("link".into(), 0)
        );
        assert_eq!(s("\x1b(Bplain\x1b)0"), ("plain".into(), 0));
        assert_eq!(s("\x1b=\x1b>\x1b7x\x1b8"), ("x".into(), 0));
        assert_eq!(s("\x1bPq#0;2\x1b\\ok"), ("ok".into(), 0));
        assert_eq!(s("ding\x07"), ("ding".into(), 0));
    }

    #[test]
    fn carriage_returns() {
        assert_eq!(s("one\r\ntwo\r\n"), ("one\ntwo\n".into(), 0));
        assert_eq!(s("10%\r20%\r30%\n"), ("30%\n".into(), 0));
        assert_eq!(s("keep\nbar 1\rbar 2"), ("keep\nbar 2".into(), 0));
        // `\r\r\n` (a program writing `\r\n` through the terminal's own conversion).
        assert_eq!(s("x\r\r\ny"), ("x\ny".into(), 0));
        // A final `\r` may be half of `\r\n`: held back.
        assert_eq!(s("line\r"), ("line".into(), 1));
    }

    #[test]
    fn unfinished_sequences_are_held_back() {
        assert_eq!(s("text\x1b"), ("text".into(), 1));
        assert_eq!(s("text\x1b[3"), ("text".into(), 3));
        assert_eq!(s("text\x1b]0;tit"), ("text".into(), 7));
        assert_eq!(s("text\x1b]0;t\x1b"), ("text".into(), 6));
        // The whole input unfinished: dropped, so a read makes progress.
        assert_eq!(s("\x1b[3"), ("".into(), 0));
    }

    #[test]
    fn split_reads_give_the_same_text_as_one() {
        let whole = "\x1b[32mok\x1b[0m 10%\r\x1b]0;t\x07done\r\nnext \x1b(Bline\r\n";
        let want = s(whole).0;
        let bytes = whole.as_bytes();
        for cut in 1..bytes.len() {
            // First read up to `cut`; the held bytes are read again with the rest.
            let first = strip(&bytes[..cut]);
            let resume = cut - first.held;
            let second = strip(&bytes[resume..]);
            let mut got = first.text.clone();
            got.extend_from_slice(&second.text);
            // A lone `\r` only resolves within one read: compare per line after it.
            let got = String::from_utf8(got).unwrap();
            assert!(
                got == want || got.ends_with("done\nnext line\n"),
                "cut {cut}: {got:?} vs {want:?}"
            );
            assert!(
                !got.contains('\x1b') && !got.contains('['),
                "cut {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn text_and_utf8_pass_through() {
        assert_eq!(
            s("héllo € [not an escape]\t"),
            ("héllo € [not an escape]\t".into(), 0)
        );
        // An escape aborted by a control byte leaves the byte.
        assert_eq!(s("a\x1b[3\nb"), ("a\nb".into(), 0));
    }
}
