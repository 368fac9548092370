//! Reading a line without building what a method ignores.
//!
//! `parse_line` checks the whole line (UTF-8, JSON syntax) without allocating, and returns
//! borrowed raw slices: the top level, then the envelope's fields, then any fields of
//! `params` a method asks for. A field nobody asked for is skipped with `IgnoredAny`, so a
//! hostile line costs its own bytes and little more, whatever its shape. Only the values a
//! method reads become `Value`s, and those are bounded (`MAX_NODES`).

use std::fmt;

use super::scan::{replace_lone_surrogates, string_lenient};
use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

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

/// What was wrong with a line refused before routing (the answer's error code follows
/// from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Not JSON (or JSON nested too deep): a parse error.
    NotJson,
    /// JSON, but not a request (a batch too long): an invalid request.
    NotRequest,
}

/// Why a line was refused before routing: what was wrong, the text of the error answer,
/// and the id of the message when it could still be read.
#[derive(Debug)]
pub struct Refused {
    /// What was wrong.
    pub fault: Fault,
    /// The error message (`Parse error: ...` or `Invalid Request: ...`).
    pub message: String,
    /// The message's id: set for a valid line refused for its depth, so the client can
    /// match the answer.
    pub id: Option<Value>,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Refused {
    /// A line that is not JSON.
    fn from(message: String) -> Refused {
        Refused {
            fault: Fault::NotJson,
            message,
            id: None,
        }
    }
}

/// Parses one input line as far as routing needs. `Err` is the text of a `-32700` (or
/// `-32600`) answer, with the id when the line is valid JSON refused for its depth.
pub fn parse_line(line: &[u8]) -> Result<Line<'_>, Refused> {
    let text = std::str::from_utf8(line)
        .map_err(|e| format!("Parse error: input is not valid UTF-8 ({e})"))?;
    let raw: &RawValue =
        serde_json::from_str(text).map_err(|e| format!("Parse error: invalid JSON ({e})"))?;
    // Skipping a value has no depth limit; parsing one into a `Value` has (128). Refuse
    // deeper lines here, as a whole-line parse did, so no later step meets them. The line
    // is valid JSON: its top-level id is read by a scan that does not recurse.
    if let Some(column) = too_deep(text, MAX_DEPTH) {
        return Err(Refused {
            fault: Fault::NotJson,
            message: format!(
                "Parse error: invalid JSON (nesting deeper than {MAX_DEPTH} at column {column})"
            ),
            id: super::scan::scan_id(line),
        });
    }
    if raw.get().starts_with('[') {
        let items = batch_items(raw).map_err(|e| Refused {
            fault: Fault::NotRequest,
            message: format!("Invalid Request: {e}"),
            id: None,
        })?;
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
pub(super) fn count_nodes(text: &str) -> usize {
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
                return IncomingRaw::Response {
                    id: readable_id,
                    result: result.filter(|_| error.is_none()),
                };
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
    /// A response sent to the server: the answer to one of its own requests (a question
    /// put to the person), routed by id; any other is dropped.
    Response {
        /// The id, when it was a string or a number.
        id: Option<Value>,
        /// `result`, raw (`None` for an error response).
        result: Option<&'a RawValue>,
    },
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

/// Most names [`other_keys`] returns, and the most bytes of each.
const OTHER_KEYS_MAX: usize = 8;
const OTHER_KEY_BYTES: usize = 64;

/// The member names of a raw object that are not in `names` (at most 8, each cut to 64
/// bytes on a character), in their order: the arguments a call gave that its tool does
/// not know.
pub fn other_keys(raw: &RawValue, names: &[&str]) -> Vec<String> {
    struct Others<'s, 'n>(&'s [&'n str]);
    impl<'de> Visitor<'de> for Others<'_, '_> {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut others = Vec::new();
            while let Some(key) = map.next_key::<&'de RawValue>()? {
                map.next_value::<IgnoredAny>()?;
                let key = key.get();
                let bare = string_lenient(key).unwrap_or_default();
                if others.len() < OTHER_KEYS_MAX && !self.0.contains(&bare.as_str()) {
                    let mut cut = bare.len().min(OTHER_KEY_BYTES);
                    while !bare.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    others.push(bare[..cut].to_string());
                }
            }
            Ok(others)
        }
    }
    if !raw.get().starts_with('{') {
        return Vec::new();
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_map(Others(names)).unwrap_or_default()
}
