//! JSON-RPC 2.0 messages as they cross the stdio boundary.
//!
//! Incoming lines are classified into requests, notifications, responses (which a
//! tools-only server never expects, so they are dropped) and invalid messages. Ids are kept
//! as raw JSON values and echoed back exactly (`1` and `"1"` stay different). Outgoing
//! messages are serialized compactly, so a message never contains a raw newline.

use serde_json::{json, Map, Value};

mod raw;
mod scan;

pub use crate::base::json::{json_len_estimate, write_str, write_value, write_value_in_string};
pub use raw::*;
pub use scan::IdScan;

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

/// An error response; `id` is `null` when it could not be read (JSON-RPC 2.0 section 5:
/// a parse error or an invalid request without a usable id).
pub fn error(id: Option<&Value>, code: i64, message: &str) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    obj.insert("id".into(), id.cloned().unwrap_or(Value::Null));
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
    fn error_without_id_has_a_null_id() {
        let line = String::from_utf8(to_line(&error(None, PARSE_ERROR, "bad"))).unwrap();
        assert_eq!(
            line,
            r#"{"error":{"code":-32700,"message":"bad"},"id":null,"jsonrpc":"2.0"}"#
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
    use super::raw::count_nodes;
    use super::*;
    use serde_json::value::RawValue;

    fn kind(line: &str) -> String {
        match parse_line(line.as_bytes()) {
            Err(e) => format!("error {e}"),
            Ok(Line::Batch(items)) => format!("batch {}", items.len()),
            Ok(Line::Single(raw)) => match classify_raw(raw) {
                IncomingRaw::Request { id, method, params } => {
                    format!("request {id} {method} {}", params.map_or("-", |p| p.get()))
                }
                IncomingRaw::Notification { method, .. } => format!("notification {method}"),
                IncomingRaw::Response { .. } => "response".into(),
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
            Err(e) if e.message.starts_with("Parse error: input is not valid UTF-8")
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
        assert_eq!(
            scan::string_lenient(r#""\udbff""#).as_deref(),
            Some("\u{fffd}")
        );
        assert_eq!(scan::string_lenient("12"), None);
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
    fn a_line_refused_for_its_depth_keeps_its_id() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"deep","method":"ping","params":{{"x":{}1{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let Err(refused) = parse_line(deep.as_bytes()) else {
            panic!("a 100,000-deep line was accepted")
        };
        assert!(
            refused.message.contains("nesting deeper than 128"),
            "{refused}"
        );
        assert_eq!(refused.id, Some(json!("deep")));
        // A syntax error has no id to give.
        let broken = parse_line(br#"{"id":1,"method":"#).expect_err("invalid JSON");
        assert_eq!(broken.id, None);
    }

    #[test]
    fn batches_are_capped() {
        let line = format!("[{}]", vec!["1"; MAX_BATCH + 1].join(","));
        assert!(
            matches!(parse_line(line.as_bytes()), Err(e) if e.message.contains("at most 10000 messages"))
        );
    }
}

#[cfg(test)]
mod differential {
    use super::*;
    use serde_json::value::RawValue;

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
            IncomingRaw::Response { .. } => "response".into(),
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
