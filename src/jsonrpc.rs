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
    fn error_without_id_omits_it() {
        let line = String::from_utf8(to_line(&error(None, PARSE_ERROR, "bad"))).unwrap();
        assert_eq!(
            line,
            r#"{"error":{"code":-32700,"message":"bad"},"jsonrpc":"2.0"}"#
        );
    }
}
