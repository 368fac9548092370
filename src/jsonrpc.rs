//! JSON-RPC 2.0 messages as they cross the stdio boundary.
//!
//! Incoming lines are classified into requests, notifications, responses (which a
//! tools-only server never expects, so they are dropped) and invalid messages. Ids are kept
//! as raw JSON values and echoed back exactly (`1` and `"1"` stay different). Outgoing
//! messages are serialized compactly, so a message never contains a raw newline.

use std::fmt;

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// Invalid JSON (or not UTF-8).
pub const PARSE_ERROR: i64 = -32700;
/// Not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Bad parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// A fault of the server itself.
pub const INTERNAL_ERROR: i64 = -32603;

/// One classified message.
#[derive(Debug)]
pub enum Incoming {
    /// A request: must get exactly one response.
    Request {
        /// The id as sent.
        id: Value,
        /// Method name.
        method: String,
        /// Parameters (an empty object when absent or null).
        params: Map<String, Value>,
    },
    /// A notification: never answered.
    Notification {
        /// Method name.
        method: String,
        /// Parameters.
        params: Map<String, Value>,
    },
    /// A response sent to the server: dropped.
    Response,
    /// Not a valid message; answered with `-32600`, with the id when it was readable.
    Invalid {
        /// The id, when it was a string or a number.
        id: Option<Value>,
        /// What was wrong.
        message: String,
    },
}

/// Classifies one parsed JSON value (not an array: batches are split by the caller).
pub fn classify(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return Incoming::Invalid {
            id: None,
            message: "expected a JSON-RPC object".into(),
        };
    };
    let id = obj.remove("id");
    let readable_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        _ => None,
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => (),
        other => {
            let got = other.map_or("nothing".to_string(), |v| v.to_string());
            return Incoming::Invalid {
                id: readable_id,
                message: format!("jsonrpc must be \"2.0\", got {got}"),
            };
        }
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Incoming::Invalid {
                id: readable_id,
                message: format!("method must be a string, got {other}"),
            }
        }
        None => {
            if obj.contains_key("result") || obj.contains_key("error") {
                return Incoming::Response;
            }
            return Incoming::Invalid {
                id: readable_id,
                message: "missing method".into(),
            };
        }
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Incoming::Invalid {
                id: readable_id,
                message: format!("params must be an object, got {}", type_name(&other)),
            }
        }
    };
    match id {
        None => Incoming::Notification { method, params },
        Some(v @ (Value::String(_) | Value::Number(_))) => Incoming::Request {
            id: v,
            method,
            params,
        },
        Some(other) => Incoming::Invalid {
            id: None,
            message: format!(
                "id must be a string or an integer, got {}",
                type_name(&other)
            ),
        },
    }
}

/// The JSON type name of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A success response.
pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response; `id` is omitted when unknown (as MCP's schema prefers to `null`).
pub fn error(id: Option<&Value>, code: i64, message: &str) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    if let Some(id) = id {
        obj.insert("id".into(), id.clone());
    }
    obj.insert("error".into(), json!({"code": code, "message": message}));
    Value::Object(obj)
}

/// A notification from the server.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// Serializes a message as one line (without the newline).
pub fn to_line(message: &Value) -> Vec<u8> {
    // Serializing a `Value` cannot fail: its keys are strings and it holds no non-finite
    // floats.
    let mut line = Vec::with_capacity(128);
    let _ = serde_json::to_writer(&mut line, message);
    line
}

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

// ---------------------------------------------------------------------------------------
// Reading a line without building what a method ignores.
//
// `parse_line` checks the whole line (UTF-8, JSON syntax) without allocating, and returns
// borrowed raw slices: the top level, then the envelope's fields, then any fields of
// `params` a method asks for. A field nobody asked for is skipped with `IgnoredAny`, so a
// hostile line costs its own bytes and little more, whatever its shape. Only the values a
// method reads become `Value`s, and those are bounded (`MAX_NODES`).

/// Most messages in one batch.
pub const MAX_BATCH: usize = 10_000;

/// Most values (scalars, arrays, objects) in one field turned into a `Value`.
pub const MAX_NODES: usize = 4096;

/// A line checked as JSON: one message or a batch, both still raw.
#[derive(Debug)]
pub enum Line<'a> {
    /// One message (any JSON value; `classify_raw` says whether it is a valid one).
    Single(&'a RawValue),
    /// A JSON array: its elements, raw.
    Batch(Vec<&'a RawValue>),
}

/// Parses one input line as far as routing needs. `Err` is the text of a `-32700` answer.
pub fn parse_line(line: &[u8]) -> Result<Line<'_>, String> {
    let text = std::str::from_utf8(line)
        .map_err(|e| format!("Parse error: input is not valid UTF-8 ({e})"))?;
    let raw: &RawValue =
        serde_json::from_str(text).map_err(|e| format!("Parse error: invalid JSON ({e})"))?;
    // Skipping a value has no depth limit; parsing one into a `Value` has (128). Refuse
    // deeper lines here, as a whole-line parse did, so no later step meets them.
    if let Some(column) = too_deep(text, MAX_DEPTH) {
        return Err(format!(
            "Parse error: invalid JSON (nesting deeper than {MAX_DEPTH} at column {column})"
        ));
    }
    if raw.get().starts_with('[') {
        let items = batch_items(raw).map_err(|e| format!("Invalid Request: {e}"))?;
        return Ok(Line::Batch(items));
    }
    Ok(Line::Single(raw))
}

/// The elements of a raw array, at most `MAX_BATCH`.
fn batch_items(raw: &RawValue) -> Result<Vec<&RawValue>, String> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Result<Vec<&'de RawValue>, String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<&'de RawValue>()? {
                if items.len() == MAX_BATCH {
                    return Ok(Err(format!(
                        "a batch may hold at most {MAX_BATCH} messages; send fewer per line"
                    )));
                }
                items.push(item);
            }
            Ok(Ok(items))
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_seq(Items).map_err(|e| e.to_string())?
}

/// The raw values of the members `names` of a raw JSON object (the last one wins when a
/// name repeats); every other member is skipped unparsed. All `None` when `raw` is not an
/// object.
pub fn fields<'a, const K: usize>(
    raw: &'a RawValue,
    names: [&str; K],
) -> [Option<&'a RawValue>; K] {
    let mut found = [None; K];
    for (name, value) in named_fields(raw, &names) {
        if let Some(i) = names.iter().position(|n| *n == name) {
            found[i] = Some(value);
        }
    }
    found
}

/// The JSON type name of a raw value, for messages.
pub fn raw_type_name(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// Whether a raw value is `null`.
pub fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// A raw value as a `Value`, with lone surrogate escapes replaced by U+FFFD. Refuses values
/// of more than `MAX_NODES` nodes (the message says how many are allowed).
pub fn to_value(raw: &RawValue) -> Result<Value, String> {
    let text = raw.get();
    if text.starts_with(['[', '{']) && count_nodes(text) > MAX_NODES {
        return Err(format!(
            "holds more than {MAX_NODES} values (arrays and objects here are meant to be small)"
        ));
    }
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(e) => match replace_lone_surrogates(text) {
            Some(fixed) => serde_json::from_str(&fixed).map_err(|e| e.to_string()),
            None => Err(e.to_string()),
        },
    }
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

/// A raw value shown in a message: as compact JSON when short, else its first characters.
pub fn show_raw(raw: &RawValue) -> String {
    let text = raw.get();
    if text.len() <= 200 {
        if let Ok(v) = to_value(raw) {
            return v.to_string();
        }
    }
    let mut cut = text.len().min(77);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &text[..cut])
}

/// Deepest nesting accepted (serde_json's limit for a `Value`).
const MAX_DEPTH: usize = 128;

/// The 1-based column where valid JSON `text` first nests deeper than `limit`, if it does.
fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i + 1);
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i + 1);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => (),
        }
        i += 1;
    }
    None
}

/// The index just past the closing quote of a string whose content starts at `i`.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while let Some(q) = memchr::memchr(b'"', &bytes[i..]) {
        let end = i + q;
        let backslashes = bytes[i..end]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        i = end + 1;
        if backslashes % 2 == 0 {
            break;
        }
    }
    i
}

/// Upper bound of the number of values in valid JSON text: one per array or object and one
/// per comma and per container, counted outside strings. No allocation.
fn count_nodes(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut nodes = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i + 1);
                continue;
            }
            b',' | b'[' | b'{' => nodes += 1,
            _ => (),
        }
        i += 1;
    }
    nodes
}

/// `text` (valid JSON) with every `\uXXXX` escape of a lone surrogate replaced by `\ufffd`;
/// `None` when there is none.
fn replace_lone_surrogates(text: &str) -> Option<String> {
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

/// Classifies one raw message, reading only the envelope: `params` stays raw.
pub fn classify_raw(raw: &RawValue) -> IncomingRaw<'_> {
    if !raw.get().starts_with('{') {
        return IncomingRaw::Invalid {
            id: None,
            message: "expected a JSON-RPC object".into(),
        };
    }
    let [jsonrpc, id, method, params, result, error] = fields(
        raw,
        ["jsonrpc", "id", "method", "params", "result", "error"],
    );
    if let Some(number) = id.filter(|v| raw_type_name(v) == "number") {
        // Integers of any length are kept digit for digit; a fraction or exponent beyond
        // a double is not a number anyone can echo.
        let text = number.get();
        if text.contains(['.', 'e', 'E']) && !text.parse::<f64>().is_ok_and(f64::is_finite) {
            return IncomingRaw::Unparsable(format!(
                "Parse error: number out of range: id {}",
                show_raw(number)
            ));
        }
    }
    let readable_id = id
        .filter(|v| matches!(raw_type_name(v), "string" | "number"))
        .and_then(|v| to_value(v).ok());
    match jsonrpc.map(|v| (v, string_lenient(v.get()))) {
        Some((_, Some(v))) if v == "2.0" => (),
        other => {
            let got = other.map_or("nothing".to_string(), |(v, _)| show_raw(v));
            return IncomingRaw::Invalid {
                id: readable_id,
                message: format!("jsonrpc must be \"2.0\", got {got}"),
            };
        }
    }
    let method = match method {
        Some(m) => match string_lenient(m.get()) {
            Some(m) => m,
            None => {
                return IncomingRaw::Invalid {
                    id: readable_id,
                    message: format!("method must be a string, got {}", show_raw(m)),
                }
            }
        },
        None => {
            if result.is_some() || error.is_some() {
                return IncomingRaw::Response;
            }
            return IncomingRaw::Invalid {
                id: readable_id,
                message: "missing method".into(),
            };
        }
    };
    let params = match params {
        Some(p) if is_null(p) => None,
        Some(p) if p.get().starts_with('{') => Some(p),
        Some(other) => {
            return IncomingRaw::Invalid {
                id: readable_id,
                message: format!("params must be an object, got {}", raw_type_name(other)),
            }
        }
        None => None,
    };
    match (id, readable_id) {
        (None, _) => IncomingRaw::Notification { method, params },
        (Some(_), Some(id)) => IncomingRaw::Request { id, method, params },
        (Some(other), None) => IncomingRaw::Invalid {
            id: None,
            message: format!(
                "id must be a string or an integer, got {}",
                raw_type_name(other)
            ),
        },
    }
}

/// One message classified from its raw text; `params` (an object, or `None` when absent
/// or null) is still raw.
#[derive(Debug)]
pub enum IncomingRaw<'a> {
    /// A request: must get exactly one response.
    Request {
        /// The id as sent (numbers keep their exact digits).
        id: Value,
        /// Method name.
        method: String,
        /// Parameters, raw.
        params: Option<&'a RawValue>,
    },
    /// A notification: never answered.
    Notification {
        /// Method name.
        method: String,
        /// Parameters, raw.
        params: Option<&'a RawValue>,
    },
    /// A response sent to the server: dropped.
    Response,
    /// Not a valid message; answered with `-32600`, with the id when it was readable.
    Invalid {
        /// The id, when it was a string or a number.
        id: Option<Value>,
        /// What was wrong.
        message: String,
    },
    /// JSON that no number type can hold (an id beyond the range of a double, such as
    /// `1e99999`): answered with `-32700` and no id, as a parse error.
    Unparsable(String),
}

/// The members `names` of raw params as a map of `Value`s (absent and null members left
/// out; every other member skipped unparsed). `Err` names a member too large to read.
pub fn params_map(params: Option<&RawValue>, names: &[&str]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    let Some(params) = params else {
        return Ok(map);
    };
    for (name, raw) in named_fields(params, names) {
        if is_null(raw) {
            continue;
        }
        let value = to_value(raw).map_err(|e| format!("{name} {e}"))?;
        map.insert(name.to_string(), value);
    }
    Ok(map)
}

/// The members of a raw object whose names are in `names` (any number of names), raw.
pub fn named_fields<'a, 'n>(raw: &'a RawValue, names: &[&'n str]) -> Vec<(&'n str, &'a RawValue)> {
    struct Named<'s, 'n>(&'s [&'n str]);
    impl<'de, 'n> Visitor<'de> for Named<'_, 'n> {
        type Value = Vec<(&'n str, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found: Vec<(&'n str, &'de RawValue)> = Vec::new();
            while let Some(key) = map.next_key::<&'de RawValue>()? {
                let key = key.get();
                let decoded;
                let bare = if key.contains('\\') {
                    decoded = string_lenient(key).unwrap_or_default();
                    decoded.as_str()
                } else {
                    &key[1..key.len() - 1]
                };
                match self.0.iter().find(|n| **n == bare) {
                    Some(name) => {
                        let value = map.next_value::<&'de RawValue>()?;
                        found.retain(|(n, _)| n != name);
                        found.push((name, value));
                    }
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(found)
        }
    }
    if !raw.get().starts_with('{') {
        return Vec::new();
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_map(Named(names)).unwrap_or_default()
}

/// A request id: a string or a number, echoed exactly as sent (integers of any size
/// included). Two ids are the same when their JSON text is: `1` and `"1"` differ, and
/// `notifications/cancelled` names a request by the same text.
#[derive(Clone, Debug)]
pub struct RequestId {
    value: Value,
    key: String,
}

impl RequestId {
    /// The id of a request; `None` unless `value` is a string or a number.
    pub fn new(value: Value) -> Option<RequestId> {
        if !(value.is_string() || value.is_number()) {
            return None;
        }
        let key = value.to_string();
        Some(RequestId { value, key })
    }

    /// The id as sent.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its JSON text, the key under which the request is in flight.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &RequestId) -> bool {
        self.key == other.key
    }
}

impl Eq for RequestId {}

impl std::hash::Hash for RequestId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> String {
        match classify(serde_json::from_str(line).unwrap()) {
            Incoming::Request { id, method, params } => {
                format!("request {id} {method} {}", params.len())
            }
            Incoming::Notification { method, .. } => format!("notification {method}"),
            Incoming::Response => "response".into(),
            Incoming::Invalid { id, message } => format!("invalid {id:?} {message}"),
        }
    }

    #[test]
    fn classification() {
        let check = |line: &str, expected: &str| assert_eq!(kind(line), expected, "{line}");
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "request 1 ping 0",
        );
        check(
            r#"{"jsonrpc":"2.0","id":"1","method":"ping","params":null}"#,
            "request \"1\" ping 0",
        );
        check(
            r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":1}}"#,
            "request 7 x 1",
        );
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "notification notifications/initialized",
        );
        check(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, "response");
        check(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}"#,
            "response",
        );
        check(
            r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
            "invalid Some(Number(2)) jsonrpc must be \"2.0\", got \"1.0\"",
        );
        check(
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            "invalid None id must be a string or an integer, got null",
        );
        check(
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            "invalid None id must be a string or an integer, got object",
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
            "invalid Some(Number(4)) params must be an object, got array",
        );
        check(
            r#"{"jsonrpc":"2.0","id":5}"#,
            "invalid Some(Number(5)) missing method",
        );
        check(r#"[1]"#, "invalid None expected a JSON-RPC object");
        check(r#""x""#, "invalid None expected a JSON-RPC object");
    }

    #[test]
    fn fast_writer_matches_serde_json() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet: Vec<char> = "ab \"\\\n\r\t\u{0}\u{1}\u{8}\u{c}\u{1f}\u{7f}é€😀/x"
            .chars()
            .collect();
        for len in 0..200 {
            let mut text = String::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let mut fast = Vec::new();
            write_str(&mut fast, &text);
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                serde_json::to_string(&text).unwrap(),
                "{text:?}"
            );
        }
        let value = serde_json::json!({"a": [1, -2.5, null, true, "x\ny"], "b": {"c": "\u{1}"}, "d": 18446744073709551615u64});
        let mut fast = Vec::new();
        write_value(&mut fast, &value);
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }

    #[test]
    fn error_without_id_omits_it() {
        let line = String::from_utf8(to_line(&error(None, PARSE_ERROR, "bad"))).unwrap();
        assert_eq!(
            line,
            r#"{"error":{"code":-32700,"message":"bad"},"jsonrpc":"2.0"}"#
        );
    }

    #[test]
    fn request_ids_compare_by_their_text() {
        let one = RequestId::new(json!(1)).unwrap();
        let text = RequestId::new(json!("1")).unwrap();
        assert_ne!(one, text);
        assert_eq!(one, RequestId::new(json!(1)).unwrap());
        let big: Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(RequestId::new(big).unwrap().key(), "18446744073709551615");
        assert!(RequestId::new(json!(null)).is_none());
        assert!(RequestId::new(json!({"a": 1})).is_none());
    }
}

#[cfg(test)]
mod raw_tests {
    use super::*;

    fn kind(line: &str) -> String {
        match parse_line(line.as_bytes()) {
            Err(e) => format!("error {e}"),
            Ok(Line::Batch(items)) => format!("batch {}", items.len()),
            Ok(Line::Single(raw)) => match classify_raw(raw) {
                IncomingRaw::Request { id, method, params } => {
                    format!("request {id} {method} {}", params.map_or("-", |p| p.get()))
                }
                IncomingRaw::Notification { method, .. } => format!("notification {method}"),
                IncomingRaw::Response => "response".into(),
                IncomingRaw::Invalid { id, message } => format!("invalid {id:?} {message}"),
                IncomingRaw::Unparsable(message) => format!("unparsable {message}"),
            },
        }
    }

    #[test]
    fn raw_classification_matches_the_value_one() {
        let check = |line: &str, expected: &str| assert_eq!(kind(line), expected, "{line}");
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "request 1 ping -",
        );
        check(
            r#"{"jsonrpc":"2.0","id":"1","method":"ping","params":null}"#,
            "request \"1\" ping -",
        );
        check(
            r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":1}}"#,
            "request 7 x {\"a\":1}",
        );
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "notification notifications/initialized",
        );
        check(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, "response");
        check(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}"#,
            "response",
        );
        check(
            r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
            "invalid Some(Number(2)) jsonrpc must be \"2.0\", got \"1.0\"",
        );
        check(
            r#"{"id":2,"method":"ping"}"#,
            "invalid Some(Number(2)) jsonrpc must be \"2.0\", got nothing",
        );
        check(
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            "invalid None id must be a string or an integer, got null",
        );
        check(
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            "invalid None id must be a string or an integer, got object",
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
            "invalid Some(Number(4)) params must be an object, got array",
        );
        check(
            r#"{"jsonrpc":"2.0","id":8,"method":42}"#,
            "invalid Some(Number(8)) method must be a string, got 42",
        );
        check(
            r#"{"jsonrpc":"2.0","id":5}"#,
            "invalid Some(Number(5)) missing method",
        );
        check(r#"1"#, "invalid None expected a JSON-RPC object");
        check(
            r#"{"jsonrpc":"2.0","id":1e99999,"method":"ping"}"#,
            "unparsable Parse error: number out of range: id 1e+99999",
        );
        check(r#""x""#, "invalid None expected a JSON-RPC object");
        check(r#"[1, {"a": 2}]"#, "batch 2");
        check(r#"[]"#, "batch 0");
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        check(
            &deep,
            "error Parse error: invalid JSON (nesting deeper than 128 at column 129)",
        );
        let deep = format!("[\"[[[\",{}1{}]", "{\"a\":".repeat(127), "}".repeat(127));
        check(&deep, "batch 2");
        assert!(kind(r#"{"jsonrpc":"2.0","id":41,"method":"ping""#)
            .starts_with("error Parse error: invalid JSON"));
        assert!(kind("{} x").starts_with("error Parse error: invalid JSON"));
        assert!(matches!(
            parse_line(b"{\"x\":\"\xff\xfe\"}"),
            Err(e) if e.starts_with("Parse error: input is not valid UTF-8")
        ));
    }

    #[test]
    fn ids_keep_their_digits_and_escapes_decode() {
        let big = "123456789012345678901234567890";
        let line = format!(r#"{{"jsonrpc":"2.0","id":{big},"method":"ping"}}"#);
        let Ok(Line::Single(raw)) = parse_line(line.as_bytes()) else {
            panic!("not one message")
        };
        let IncomingRaw::Request { id, .. } = classify_raw(raw) else {
            panic!("not a request")
        };
        assert_eq!(
            to_line(&response(&id, json!({}))),
            format!(r#"{{"id":{big},"jsonrpc":"2.0","result":{{}}}}"#).into_bytes()
        );
        // Escaped keys and names, the last duplicate wins.
        let line = r#"{"jsonrpc":"2.0","id":"a","m\u0065thod":"pi\u006eg","method":"ping","params":{"x":1}}"#;
        assert_eq!(kind(line), "request \"a\" ping {\"x\":1}");
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping","params":{"x":"a\udc00b\ud83d\ude00\\ud800"}}"#;
        let Ok(Line::Single(raw)) = parse_line(line.as_bytes()) else {
            panic!("not one message")
        };
        let IncomingRaw::Request { id, params, .. } = classify_raw(raw) else {
            panic!("not a request")
        };
        assert_eq!(id, json!("\u{fffd}"));
        let map = params_map(params, &["x"]).unwrap();
        assert_eq!(map["x"], json!("a\u{fffd}b😀\\ud800"));
        assert_eq!(string_lenient(r#""\udbff""#).as_deref(), Some("\u{fffd}"));
        assert_eq!(string_lenient("12"), None);
    }

    #[test]
    fn only_named_members_are_read_and_big_values_are_refused() {
        let zeros = vec!["0"; 10_000].join(",");
        let text =
            format!(r#"{{"junk":[{zeros}],"name":"exec","arguments":{{"a":1}},"list":[{zeros}]}}"#);
        let raw: &RawValue = serde_json::from_str(&text).unwrap();
        let [name, arguments, missing] = fields(raw, ["name", "arguments", "nothing"]);
        assert_eq!(name.map(RawValue::get), Some("\"exec\""));
        assert_eq!(arguments.map(RawValue::get), Some("{\"a\":1}"));
        assert!(missing.is_none());
        let map = params_map(Some(raw), &["name", "arguments"]).unwrap();
        assert_eq!(map.len(), 2);
        let err = params_map(Some(raw), &["list"]).unwrap_err();
        assert!(err.starts_with("list holds more than 4096 values"), "{err}");
        assert!(count_nodes(r#"["a,b,[{", "\"", [1, 2]]"#) == 6);
        assert_eq!(
            show_raw(serde_json::from_str::<&RawValue>(&format!("[{zeros}]")).unwrap()).len(),
            80
        );
    }

    #[test]
    fn batches_are_capped() {
        let line = format!("[{}]", vec!["1"; MAX_BATCH + 1].join(","));
        assert!(
            matches!(parse_line(line.as_bytes()), Err(e) if e.contains("at most 10000 messages"))
        );
    }
}

#[cfg(test)]
mod differential {
    use super::*;

    /// The classification of `line` by the tree parser, in a comparable form.
    fn by_tree(line: &str) -> String {
        let value: Value = serde_json::from_str(line).expect("generated JSON");
        match classify(value) {
            Incoming::Request { id, method, params } => {
                format!("request {id} {method} {}", Value::Object(params))
            }
            Incoming::Notification { method, params } => {
                format!("notification {method} {}", Value::Object(params))
            }
            Incoming::Response => "response".into(),
            Incoming::Invalid { id, message } => format!("invalid {id:?} {message}"),
        }
    }

    /// The same by the raw parser (params turned into a tree here only to compare).
    fn by_raw(line: &str) -> String {
        let Ok(Line::Single(raw)) = parse_line(line.as_bytes()) else {
            panic!("not one message: {line}")
        };
        let tree = |p: Option<&RawValue>| {
            p.map_or(Value::Object(Map::new()), |p| {
                serde_json::from_str(p.get()).expect("params")
            })
        };
        match classify_raw(raw) {
            IncomingRaw::Request { id, method, params } => {
                format!("request {id} {method} {}", tree(params))
            }
            IncomingRaw::Notification { method, params } => {
                format!("notification {method} {}", tree(params))
            }
            IncomingRaw::Response => "response".into(),
            IncomingRaw::Invalid { id, message } => format!("invalid {id:?} {message}"),
            IncomingRaw::Unparsable(message) => format!("unparsable {message}"),
        }
    }

    #[test]
    fn raw_and_tree_parsers_agree_on_random_messages() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let values = [
            "null",
            "true",
            "0",
            "-7",
            "1.5",
            "123456789012345678901234567890",
            "\"2.0\"",
            "\"1.0\"",
            "\"ping\"",
            "\"tools/call\"",
            "\"a\\u0041\\n\"",
            "[]",
            "[1,{\"a\":[2]}]",
            "{}",
            "{\"name\":\"ps\",\"arguments\":{\"limit\":1}}",
            "{\"k\":{\"deep\":[null,true,\"x\"]}}",
        ];
        let keys = [
            "jsonrpc", "id", "method", "params", "result", "error", "extra", "jsonrpc", "method",
        ];
        for _ in 0..5000 {
            let mut members = Vec::new();
            for _ in 0..next(7) {
                let key = keys[next(keys.len())];
                // Mostly the right shape, so that requests are common.
                let value = match (key, next(3)) {
                    ("jsonrpc", 0 | 1) => "\"2.0\"",
                    ("method", 0 | 1) => "\"ping\"",
                    _ => values[next(values.len())],
                };
                let space = [" ", ""][next(2)];
                members.push(format!("\"{key}\":{space}{value}"));
            }
            let line = format!("{{{}}}", members.join(","));
            assert_eq!(by_raw(&line), by_tree(&line), "{line}");
        }
    }
}
