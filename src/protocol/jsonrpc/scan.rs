//! The id of a line too long to keep: a streaming scan of the top-level object's members.
//!
//! A line over `transport::MAX_LINE` is dropped as it is read, so it cannot be parsed; its
//! refusal should still name its id, or the client waits forever for an answer. [`IdScan`]
//! is fed the line piece by piece and keeps only what it needs: the nesting depth (a
//! count), whether it is inside a string, the name of the current top-level member (a few
//! bytes) and the raw text of the last top-level `id` (a short value). Memory is constant
//! and no recursion happens, whatever the line holds. The scan is lenient: it is not a
//! validator, and an id it returns is only a string or a number that parses as one.

use serde_json::Value;

/// Longest member name kept: enough for `"id"` written with escapes (`"\u0069\u0064"`).
const NAME_CAP: usize = 16;

/// Longest id kept, in bytes of JSON text. Longer ids are not echoed.
const ID_CAP: usize = 1024;

/// Where the scan is in the top-level object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Before the opening brace.
    Start,
    /// Where a member name (or the closing brace) comes.
    Name,
    /// After a member name, before its colon.
    Colon,
    /// In a member's value (nested values included).
    Value,
    /// The top-level object ended, or the line is not an object: nothing more to learn.
    Done,
}

/// A streaming scan for the top-level `id` member of a JSON object; see the module docs.
pub struct IdScan {
    at: At,
    /// Nesting inside the top-level object's current value (0 at its own level).
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// The raw text of the member name being read (capped at `NAME_CAP + 1`).
    name: Vec<u8>,
    /// Whether the current value is that of an `id` member.
    in_id: bool,
    /// The raw text of the current `id` value (capped at `ID_CAP + 1`).
    value: Vec<u8>,
    /// The raw text of the last complete `id` value (the last duplicate wins, as in
    /// the parser).
    found: Option<Vec<u8>>,
}

impl Default for IdScan {
    fn default() -> IdScan {
        IdScan::new()
    }
}

impl IdScan {
    /// A scan at the start of a line.
    pub fn new() -> IdScan {
        IdScan {
            at: At::Start,
            depth: 0,
            in_string: false,
            escaped: false,
            name: Vec::new(),
            in_id: false,
            value: Vec::new(),
            found: None,
        }
    }

    /// Scans the next bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.at == At::Done {
                return;
            }
            self.step(b);
        }
    }

    /// The id read so far: a string or a number, when the line had a readable one.
    pub fn id(&self) -> Option<Value> {
        let raw = self.found.as_deref()?;
        let text = std::str::from_utf8(raw)
            .ok()?
            .trim_matches([' ', '\t', '\r', '\n']);
        if text.starts_with('"') {
            return string_lenient(text).map(Value::String);
        }
        if text.contains(['.', 'e', 'E']) && !text.parse::<f64>().is_ok_and(f64::is_finite) {
            return None;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Number(_)) => Some(v),
            _ => None,
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            self.keep(b);
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.at == At::Name {
                    self.at = At::Colon;
                }
            }
            return;
        }
        let space = matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        match self.at {
            At::Start => match b {
                b'{' => self.at = At::Name,
                _ if space => (),
                _ => self.at = At::Done,
            },
            At::Name => match b {
                b'"' => {
                    self.name.clear();
                    self.name.push(b);
                    self.in_string = true;
                }
                b'}' => self.at = At::Done,
                b',' => (),
                _ if space => (),
                _ => self.at = At::Done,
            },
            At::Colon => match b {
                b':' => {
                    self.at = At::Value;
                    self.depth = 0;
                    self.in_id = self.name_is_id();
                    self.value.clear();
                }
                _ if space => (),
                _ => self.at = At::Done,
            },
            At::Value => match b {
                b'"' => {
                    self.in_string = true;
                    self.keep(b);
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    self.keep(b);
                }
                b'}' | b']' if self.depth == 0 => {
                    self.end_value();
                    self.at = At::Done;
                }
                b'}' | b']' => {
                    self.depth -= 1;
                    self.keep(b);
                }
                b',' if self.depth == 0 => {
                    self.end_value();
                    self.at = At::Name;
                }
                _ => self.keep(b),
            },
            At::Done => (),
        }
    }

    /// Keeps a byte of the name or of the `id` value being read.
    fn keep(&mut self, b: u8) {
        match self.at {
            At::Name if self.name.len() <= NAME_CAP => self.name.push(b),
            At::Value if self.in_id && self.value.len() <= ID_CAP => self.value.push(b),
            _ => (),
        }
    }

    fn name_is_id(&self) -> bool {
        if self.name == b"\"id\"" {
            return true;
        }
        self.name.len() <= NAME_CAP
            && self.name.contains(&b'\\')
            && std::str::from_utf8(&self.name)
                .ok()
                .and_then(string_lenient)
                .is_some_and(|n| n == "id")
    }

    fn end_value(&mut self) {
        if !self.in_id {
            return;
        }
        self.in_id = false;
        let value = std::mem::take(&mut self.value);
        // Too long to be an id worth echoing: as good as none (and it was the last).
        self.found = (value.len() <= ID_CAP).then_some(value);
    }
}

/// The id of a whole line, by the same scan.
pub fn scan_id(line: &[u8]) -> Option<Value> {
    let mut scan = IdScan::new();
    scan.feed(line);
    scan.id()
}

/// The text of a raw JSON string (lone surrogates replaced by U+FFFD); `None` when `raw`
/// is not a string.
pub fn string_lenient(raw: &str) -> Option<String> {
    if !raw.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<String>(raw) {
        Ok(s) => Some(s),
        Err(_) => serde_json::from_str(&replace_lone_surrogates(raw)?).ok(),
    }
}

/// `text` (valid JSON) with every `\uXXXX` escape of a lone surrogate replaced by `\ufffd`;
/// `None` when there is none.
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let digits = text.get(at..at + 4)?;
        u32::from_str_radix(digits, 16).ok()
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', &bytes[i..]) {
        let at = i + off;
        if bytes.get(at + 1) != Some(&b'u') {
            i = at + 2; // Any other escape is two bytes (and `\\` must not start a `\u`).
            continue;
        }
        let Some(unit) = hex(at + 2) else {
            i = at + 2;
            continue;
        };
        let paired_low = || {
            bytes.get(at + 6) == Some(&b'\\')
                && bytes.get(at + 7) == Some(&b'u')
                && hex(at + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l))
        };
        if (0xD800..0xDC00).contains(&unit) && paired_low() {
            i = at + 12;
        } else if (0xD800..0xE000).contains(&unit) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..at]);
            o.push_str("\\ufffd");
            copied = at + 6;
            i = at + 6;
        } else {
            i = at + 6;
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_top_level_id_wherever_it_is() {
        let check = |line: &str, expected: Option<Value>| {
            assert_eq!(scan_id(line.as_bytes()), expected, "{line}");
            // Fed byte by byte, the answer is the same.
            let mut scan = IdScan::new();
            for b in line.as_bytes() {
                scan.feed(std::slice::from_ref(b));
            }
            assert_eq!(scan.id(), expected, "{line} (byte by byte)");
        };
        check(
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            Some(json!(7)),
        );
        check(r#" { "id" : "a\"b" , "x":1}"#, Some(json!("a\"b")));
        check(
            r#"{"params":{"id":1,"deep":[{"id":2}]},"s":"\"id\":3","id":"me"}"#,
            Some(json!("me")),
        );
        check(r#"{"\u0069d":4}"#, Some(json!(4)));
        check(r#"{"id":1,"id":2}"#, Some(json!(2)));
        check(r#"{"id":null}"#, None);
        check(r#"{"id":{"a":1}}"#, None);
        check(r#"{"id":1e99999}"#, None);
        check(r#"[{"id":1}]"#, None);
        check(r#"{"method":"ping"}"#, None);
        check(r#"{"ids":1,"i":2}"#, None);
        // An unfinished line (cut where it became too long) still gives an id seen early.
        check(
            r#"{"id":"early","params":{"x":[0,0,0"#,
            Some(json!("early")),
        );
        check(r#"{"params":{"x":[0,0,0"#, None);
        // A value still being read at the cut is not an id.
        check(r#"{"id":"unfinish"#, None);
    }

    #[test]
    fn a_deep_line_costs_no_recursion() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"params\":{}1{},\"id\":\"deep\"}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(scan_id(deep.as_bytes()), Some(json!("deep")));
        let long_id = format!("{{\"id\":\"{}\"}}", "x".repeat(ID_CAP + 10));
        assert_eq!(scan_id(long_id.as_bytes()), None);
    }

    #[test]
    fn ids_with_digits_beyond_a_u64_keep_them() {
        let id = scan_id(b"{\"id\":123456789012345678901234567890}").expect("an id");
        assert_eq!(id.to_string(), "123456789012345678901234567890");
    }
}
