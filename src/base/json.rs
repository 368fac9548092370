//! Writing JSON text fast: compact values, and strings through a SWAR escaper (also for
//! JSON that sits inside a JSON string: a tool result's text block).

use serde_json::Value;

/// Appends `v` as compact JSON. Strings go through a SWAR escaper, several times faster
/// than a byte-at-a-time one on long command output; numbers are delegated to serde_json.
/// Object keys keep the map's order.
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    write_tree(out, v, &ONCE);
}

/// Appends the JSON text of `v` as it appears *inside* a JSON string literal (without the
/// surrounding quotes): what `write_str` would produce for the output of `write_value`,
/// in one pass and without building that intermediate text.
pub fn write_value_in_string(out: &mut Vec<u8>, v: &Value) {
    write_tree(out, v, &TWICE);
}

/// The tree walk shared by both quoting levels: only the string escapes differ.
fn write_tree(out: &mut Vec<u8>, v: &Value, esc: &Escapes) {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(esc.delimiter);
        escape_into(out, s, esc);
        out.extend_from_slice(esc.delimiter);
    };
    match v {
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_tree(out, item, esc);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(out, k);
                out.push(b':');
                write_tree(out, item, esc);
            }
            out.push(b'}');
        }
        // Null, booleans and numbers: short, nothing to escape, and serde_json knows their
        // exact forms.
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// Appends `s` as a JSON string literal. Runs of bytes that need no escape are found eight
/// at a time and copied whole.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(ONCE.delimiter);
    escape_into(out, s, &ONCE);
    out.extend_from_slice(ONCE.delimiter);
}

/// Appends `s` as a JSON string literal in which every character a person cannot see
/// (`visible::is_invisible`: C1 controls, DEL, bidirectional and format characters, besides
/// the C0 controls every literal escapes) is a `\uXXXX` escape: the value a parser reads is
/// the same, and a terminal showing the line shows them as escapes. For lines people read
/// (the audit log).
pub fn write_str_visible(out: &mut Vec<u8>, s: &str) {
    let hidden = |c: char| c >= '\x7f' && crate::base::visible::is_invisible(c);
    if !s.chars().any(hidden) {
        return write_str(out, s);
    }
    out.extend_from_slice(ONCE.delimiter);
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if !hidden(c) {
            continue;
        }
        escape_into(out, &s[start..i], &ONCE);
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            out.extend_from_slice(format!("\\u{:04x}", unit).as_bytes());
        }
        start = i + c.len_utf8();
    }
    escape_into(out, &s[start..], &ONCE);
    out.extend_from_slice(ONCE.delimiter);
}

/// Escape sequences for one level of JSON string quoting, and for two levels (a string
/// literal inside a string literal).
struct Escapes {
    /// What encloses a string at this level: `"`, or `\"` inside another string.
    delimiter: &'static [u8],
    quote: &'static [u8],
    backslash: &'static [u8],
    newline: &'static [u8],
    carriage_return: &'static [u8],
    tab: &'static [u8],
    backspace: &'static [u8],
    form_feed: &'static [u8],
    unicode: &'static [u8],
}

const ONCE: Escapes = Escapes {
    delimiter: b"\"",
    quote: b"\\\"",
    backslash: b"\\\\",
    newline: b"\\n",
    carriage_return: b"\\r",
    tab: b"\\t",
    backspace: b"\\b",
    form_feed: b"\\f",
    unicode: b"\\u00",
};

// `"` becomes `\"` once; escaped again that is `\\\"` (and so on for the others).
const TWICE: Escapes = Escapes {
    delimiter: b"\\\"",
    quote: b"\\\\\\\"",
    backslash: b"\\\\\\\\",
    newline: b"\\\\n",
    carriage_return: b"\\\\r",
    tab: b"\\\\t",
    backspace: b"\\\\b",
    form_feed: b"\\\\f",
    unicode: b"\\\\u00",
};

/// Appends `s` escaped with `esc` (without quotes around it).
fn escape_into(out: &mut Vec<u8>, s: &str, esc: &Escapes) {
    let bytes = s.as_bytes();
    // Room for some escapes too, so that a long string is not copied by a regrowth.
    out.reserve(bytes.len() + bytes.len() / 8 + 2);
    let mut start = 0; // first byte not yet copied
    let mut i = 0;
    while i < bytes.len() {
        if i + 8 <= bytes.len() && !needs_escape8(&bytes[i..i + 8]) {
            i += 8;
            continue;
        }
        let b = bytes[i];
        let escape: Option<&[u8]> = match b {
            b'"' => Some(esc.quote),
            b'\\' => Some(esc.backslash),
            b'\n' => Some(esc.newline),
            b'\r' => Some(esc.carriage_return),
            b'\t' => Some(esc.tab),
            0x08 => Some(esc.backspace),
            0x0c => Some(esc.form_feed),
            0..=0x1f => None,
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        match escape {
            Some(e) => out.extend_from_slice(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(esc.unicode);
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xf) as usize]);
            }
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// A generous estimate of the length of `v` as JSON (for reserving buffers).
pub fn json_len_estimate(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + s.len() / 16 + 2,
        Value::Array(items) => items.iter().map(json_len_estimate).sum::<usize>() + items.len() + 2,
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + 4 + json_len_estimate(v))
                .sum::<usize>()
                + 2
        }
        _ => 24,
    }
}

/// Whether any of these eight bytes is below 0x20, `"` or `\\` (SWAR: eight at a time).
fn needs_escape8(chunk: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    let w = u64::from_le_bytes(word);
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI != 0;
    // A byte below 0x20 borrows into its own clear high bit.
    w.wrapping_sub(LO * 0x20) & !w & HI != 0
        || has_zero(w ^ (LO * b'"' as u64))
        || has_zero(w ^ (LO * b'\\' as u64))
}

/// The bytes `bytes` take as text in a JSON string: invalid UTF-8 counted as U+FFFD (three
/// bytes per replaced sequence, as `String::from_utf8_lossy` makes it), plus what escaping
/// adds. Valid text, the usual case, is counted in one pass the compiler vectorises.
pub fn text_cost(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len() + escape_extra(bytes),
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            text.len() + escape_extra(text.as_bytes())
        }
    }
}

/// What escaping adds to `bytes`: one byte for `"`, `\\` and the five control characters
/// with a short escape (`\\n`, `\\r`, `\\t`, `\\b`, `\\f`), five for every other control byte.
fn escape_extra(bytes: &[u8]) -> usize {
    let mut total = 0usize;
    // Per chunk a u16 sum (at most 5 * 4096), which vectorises.
    for chunk in bytes.chunks(4096) {
        let mut sum: u16 = 0;
        for &b in chunk {
            let control = u16::from(b < 0x20);
            let short = u16::from(b == b'\n')
                | u16::from(b == b'\r')
                | u16::from(b == b'\t')
                | u16::from(b == 0x08)
                | u16::from(b == 0x0c);
            let quote = u16::from(b == b'"') | u16::from(b == b'\\');
            sum += control * 5 - short * 4 + quote;
        }
        total += usize::from(sum);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost is the length of what the escaper writes for the lossy text.
    #[test]
    fn text_cost_is_the_escaped_length() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 7, 8, 9, 100, 4095, 4096, 4097, 20_000] {
            let mut bytes = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Mostly text, some control bytes, quotes and invalid sequences.
                let b = match seed % 16 {
                    0 => (seed >> 8) as u8 % 0x20,
                    1 => b'"',
                    2 => b'\\',
                    3 => 0xff,
                    4 => 0xc3,
                    _ => b'a' + (seed >> 8) as u8 % 26,
                };
                bytes.push(b);
            }
            let text = String::from_utf8_lossy(&bytes);
            let mut out = Vec::new();
            write_str(&mut out, &text);
            // write_str adds the two quotes.
            assert_eq!(text_cost(&bytes), out.len() - 2, "length {len}");
        }
    }

    #[test]
    fn visible_literals_escape_what_a_person_cannot_see_and_parse_back_the_same() {
        for text in [
            "plain \"text\"\n",
            "rm \u{202e}gpj.exe\u{202c} \u{9b}2K\u{7f} \u{200b}\u{e0041} é日",
            "\u{2066}",
        ] {
            let mut out = Vec::new();
            write_str_visible(&mut out, text);
            let line = String::from_utf8(out).expect("utf-8");
            assert!(
                !line.chars().any(crate::base::visible::is_invisible),
                "{line}"
            );
            let back: String = serde_json::from_str(&line).expect("a JSON string");
            assert_eq!(back, text);
        }
        let mut out = Vec::new();
        write_str_visible(&mut out, "a\u{202e}b\u{e0041}");
        assert_eq!(out, br#""a\u202eb\udb40\udc41""#);
    }
}
