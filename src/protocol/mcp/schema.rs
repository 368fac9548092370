//! The pieces of output schemas several tools share: the fields of a process's output,
//! `omitted` and `killed_for`, and the defaults `view` leaves out.

use serde_json::{json, Map, Value};

/// `killed_for`: the process was killed for its output.
pub(super) fn killed_for_schema() -> Value {
    json!({"type": "object", "description": "The command was killed for its output.", "properties": {
        "reason": {"type": "string", "enum": ["output_cap"]},
        "stream": {"type": "string"},
        "limit": {"type": "integer"},
        "bytes": {"type": "integer", "description": "Bytes the stream printed."},
        "setting": {"type": "string"}
    }})
}

/// `omitted`: per stream, what an answer left out between its first and last part.
pub(super) fn omitted_schema() -> Value {
    let range = json!({"type": "object", "properties": {
        "from_seq": {"type": "integer"},
        "to_seq": {"type": "integer"},
        "bytes": {"type": "integer"},
        "evicted_bytes": {"type": "integer"},
        "since_seq": {"type": "integer", "description": "Read from here to page the bytes still buffered."}
    }});
    json!({"type": "object", "description": "Output left out between each stream's first and last part (the marker line in the text).", "properties": {"stdout": range, "stderr": range}})
}

pub(super) fn process_output_props() -> Map<String, Value> {
    let props = json!({
        "process_id": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "signal": {"type": ["string", "null"]},
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "start_seq": {"type": "integer"},
        "next_seq": {"type": "integer"},
        "latest_seq": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "capped": {"type": "boolean"},
        "stdin_error": {"type": ["string", "null"]},
        "error": {"type": "string"},
        "awaiting_input": {"type": "boolean", "description": "A process of the command is blocked reading its input and printed nothing for 300 ms."},
        "prompt": {"type": "string", "description": "The last partial line of output, when awaiting_input."},
        "gap_from": {"type": "integer", "description": "First position dropped from the buffer inside this read's range."},
        "gap_to": {"type": "integer", "description": "Last position dropped (inclusive); the read continues after it."},
        "message": {"type": "string"},
        "omitted": omitted_schema(),
        "killed_for": killed_for_schema(),
        "protected": {"type": "string", "description": "Protected names this call created, and, when a write was refused, what is read-only (YIELDSHELL_PROTECTED_PATHS)."},
        "highlights": {"type": "array", "description": "Lines that look like errors which the answer leaves out, with their positions (read from seq to see them in place).", "items": {"type": "object", "properties": {
            "seq": {"type": "integer"},
            "stream": {"type": "string", "enum": ["stdout", "stderr"]},
            "line": {"type": "string"}
        }}}
    });
    match props {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

pub(super) fn object_schema(props: Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

/// `schema` with the default of every property a result leaves out at its default stated
/// (`view` leaves out `null` fields and those of `view::DEFAULTS`), in its properties and in
/// those of its nested objects and arrays.
pub(super) fn with_defaults(mut schema: Value) -> Value {
    add_defaults(&mut schema);
    schema
}

fn add_defaults(schema: &mut Value) {
    let Value::Object(s) = schema else { return };
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        let has_next = props.contains_key("next_seq");
        for (name, prop) in props.iter_mut() {
            let Value::Object(p) = prop else { continue };
            let nullable = match p.get("type") {
                Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                _ => false,
            };
            if let Some((_, d)) = super::view::DEFAULTS.iter().find(|(k, _)| k == name) {
                p.insert("default".into(), d.json());
            } else if nullable {
                p.insert("default".into(), Value::Null);
            } else if name == "latest_seq" && has_next {
                p.insert(
                    "description".into(),
                    Value::from(
                        "The newest position; absent when it is next_seq - 1 (the answer reached the newest byte).",
                    ),
                );
            }
            add_defaults(prop);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = s.get_mut(key) {
            add_defaults(inner);
        }
    }
}
