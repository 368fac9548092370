//! JSON-RPC 2.0 messages as they cross the stdio boundary.
//!
//! Incoming lines are classified into requests, notifications, responses (which a
//! tools-only server never expects, so they are dropped) and invalid messages. Ids are kept
//! as raw JSON values and echoed back exactly (`1` and `"1"` stay different). Outgoing
//! messages are serialized compactly, so a message never contains a raw newline.

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
