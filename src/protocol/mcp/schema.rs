//! The JSON schemas of the tools' arguments and results (`inputSchema`, `outputSchema`).

use serde_json::{json, Map, Value};

use crate::base::config::SIDE_EFFECTS;

/// An integer argument; the server checks the range and says what it accepts.
pub(super) fn int_prop(description: &str) -> Value {
    if description.is_empty() {
        json!({"type": "integer"})
    } else {
        json!({"type": "integer", "description": description})
    }
}

/// A string argument, described in a few words (or not at all where the name says it).
fn str_prop(description: &str) -> Value {
    if description.is_empty() {
        json!({"type": "string"})
    } else {
        json!({"type": "string", "description": description})
    }
}

/// A boolean argument with its default.
fn bool_prop(default: bool, description: &str) -> Value {
    json!({"type": "boolean", "default": default, "description": description})
}

// Descriptions say what the name and the schema do not: the tool's description and the
// server's instructions carry the rest, once.
pub(super) fn exec_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": str_prop("Run as <shell> -c <command>."),
            "side_effects": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": {"type": "string", "enum": SIDE_EFFECTS}
            },
            "cwd": str_prop(""),
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "shell": str_prop("Default /bin/sh."),
            "stdin": str_prop(""),
            "close_stdin": bool_prop(true, "false: keep stdin open for write."),
            "name": str_prop(""),
            "yield_ms": int_prop("Wait before backgrounding (default 30000, at most 55000)."),
            "timeout_ms": int_prop("Runtime limit, 0 = none (default 3600000)."),
            "max_output_bytes": int_prop("Output budget of the answer (default 20000)."),
            "tail_lines": int_prop("Only the newest N lines."),
            "tty": bool_prop(false, "Run on a terminal (REPLs); stderr joins stdout."),
            "rows": {"type": "integer", "default": 40},
            "cols": {"type": "integer", "default": 200},
            "raw": bool_prop(false, "Keep escape sequences.")
        },
        "required": ["command", "side_effects"]
    })
}

pub(super) fn shell_execute_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Program and arguments; \"|\", \"<\", \">\", \">>\" elements are operators."},
            "stdin": {"type": "string", "description": "Input for the first stage."},
            "directory": {"type": "string", "description": "Working directory (relative to the server's)."},
            "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is killed (default 30, at most 300)."},
            "max_output_bytes": {"type": "integer", "minimum": 0, "description": "Most bytes of output shown, both streams together; a longer stream shows its start and end around a marker (the rest stays readable with read)."}
        },
        "required": ["command"]
    })
}

pub(super) fn shell_execute_output() -> Value {
    json!({"type": "object", "properties": {
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "status": {"type": "integer"},
        "execution_time": {"type": "number"},
        "stage_status": {"type": "array", "items": {"type": ["integer", "null"]}},
        "error": {"type": "string"},
        "capped": {"type": "boolean", "description": "The output limit was hit and the command killed for it (see killed_for)."},
        "killed_for": killed_for_schema(),
        "process_id": {"type": "string", "description": "The record: read pages the whole capture."},
        "omitted": omitted_schema()
    }, "required": ["stdout", "stderr", "status", "execution_time"]})
}

/// `killed_for`: the process was killed for its output.
fn killed_for_schema() -> Value {
    json!({"type": "object", "description": "The command was killed for its output.", "properties": {
        "reason": {"type": "string", "enum": ["output_cap"]},
        "stream": {"type": "string"},
        "limit": {"type": "integer"},
        "bytes": {"type": "integer", "description": "Bytes the stream printed."},
        "setting": {"type": "string"}
    }})
}

/// `omitted`: per stream, what an answer left out between its first and last part.
fn omitted_schema() -> Value {
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

pub(super) fn exec_output() -> Value {
    let mut p = process_output_props();
    p.insert("pid".into(), json!({"type": "integer"}));
    p.insert("duration_ms".into(), json!({"type": "integer"}));
    p.insert("message".into(), json!({"type": "string"}));
    p.insert(
        "status".into(),
        json!({"type": "string", "enum": ["completed", "backgrounded", "timed_out", "stopped", "failed", "failed_to_start"]}),
    );
    object_schema(p, &["status"])
}

pub(super) fn id_prop() -> Value {
    str_prop("")
}

pub(super) fn read_props() -> Value {
    json!({
        "process_id": id_prop(),
        "since_seq": int_prop(""),
        "max_output_bytes": int_prop(""),
        "streams": {"type": "string", "enum": ["both", "stdout", "stderr"], "default": "both"},
        "tail_lines": int_prop(""),
        "raw": bool_prop(false, "Keep escape sequences.")
    })
}

pub(super) fn read_input() -> Value {
    json!({"type": "object", "properties": read_props(), "required": ["process_id"]})
}

pub(super) fn read_output() -> Value {
    object_schema(process_output_props(), &[])
}

pub(super) fn wait_input() -> Value {
    let mut props = read_props();
    props["timeout_ms"] = int_prop("Default and at most 55000.");
    props["until"] = str_prop("Regex on new output.");
    props["until_input"] = json!({"type": "boolean", "default": false});
    props["process_ids"] = json!({"type": "array", "items": {"type": "string"}, "maxItems": 64});
    props["all"] = bool_prop(false, "Wait for all process_ids to end.");
    json!({"type": "object", "properties": props, "required": []})
}

pub(super) fn wait_output() -> Value {
    let mut p = process_output_props();
    p.insert(
        "wait_result".into(),
        json!({"type": "string", "enum": ["exited", "matched", "awaiting_input", "deadline_reached"]}),
    );
    p.insert("waited_ms".into(), json!({"type": "integer"}));
    p.insert(
        "statuses".into(),
        json!({"type": "object", "additionalProperties": {"type": "object", "properties": {
            "status": {"type": "string", "default": "completed"},
            "exit_code": {"type": ["integer", "null"]},
            "ended_at": {"type": ["string", "null"], "description": "RFC 3339 UTC."}
        }}, "description": "With process_ids: the state of each."}),
    );
    object_schema(p, &[])
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
