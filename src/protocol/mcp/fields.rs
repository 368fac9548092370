//! Small pieces of result objects shared by the renderer and the tools' own files: an
//! optional value, and whether a process waits for input.

use serde_json::{Map, Value};

/// `v`, or `null`.
pub(super) fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

/// `awaiting_input`, and `prompt` when it is true.
pub(super) fn input_fields(m: &mut Map<String, Value>, input: crate::process::agents::InputState) {
    m.insert("awaiting_input".into(), Value::Bool(input.awaiting()));
    if let Some(p) = input.0 {
        m.insert("prompt".into(), Value::from(String::from(p)));
    }
}
