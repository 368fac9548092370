//! The JSON schemas of the tools' arguments and results (`inputSchema`, `outputSchema`).

use serde_json::{json, Map, Value};

use crate::base::config::SIDE_EFFECTS;

pub(super) fn int_prop(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

pub(super) fn exec_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command line, run as <shell> -c <command>."},
            "side_effects": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": {"type": "string", "enum": SIDE_EFFECTS},
                "description": "Every side effect the command may plausibly have; [\"NONE\"] alone for none."
            },
            "cwd": {"type": "string", "description": "Working directory (relative paths resolve against the default)."},
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Variables added to the environment."},
            "shell": {"type": "string", "description": "Shell to run the command with (default /bin/sh)."},
            "stdin": {"type": "string", "description": "Text written to stdin right after start."},
            "close_stdin": {"type": "boolean", "default": true, "description": "Close stdin after `stdin`; false keeps it open for write."},
            "name": {"type": "string", "description": "Label shown by ps."},
            "yield_ms": int_prop("How long to wait before returning with the command still running (default 30000, at most 55000)."),
            "timeout_ms": int_prop("Total runtime limit; then the process group is stopped. 0 = unlimited (default 3600000)."),
            "max_output_bytes": int_prop("Most bytes of output in this response, both streams together (default 20000)."),
            "tail_lines": int_prop("Return only the newest N lines of each stream."),
            "tty": {"type": "boolean", "default": false, "description": "Run on a pseudo-terminal (shell mode): for REPLs and tools that need a terminal. stderr joins stdout; stdin stays open for write."},
            "rows": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 40, "description": "Terminal rows (with tty)."},
            "cols": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200, "description": "Terminal columns (with tty)."},
            "raw": {"type": "boolean", "default": false, "description": "Keep terminal escape sequences in the output (tty)."}
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
        "killed_for": killed_for_schema()
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
    json!({"type": "string", "description": "The process_id returned by exec."})
}

pub(super) fn read_props() -> Value {
    json!({
        "process_id": id_prop(),
        "since_seq": int_prop("Continue from this position (the next_seq of the previous read)."),
        "max_output_bytes": int_prop("Most bytes to return, both streams together."),
        "streams": {"type": "string", "enum": ["both", "stdout", "stderr"], "default": "both"},
        "tail_lines": int_prop("Return only the newest N lines of each stream."),
        "raw": {"type": "boolean", "default": false, "description": "Keep terminal escape sequences (tty processes)."}
    })
}

pub(super) fn read_input() -> Value {
    json!({"type": "object", "properties": read_props(), "required": ["process_id"]})
}

pub(super) fn read_output() -> Value {
    object_schema(process_output_props(), &[])
}

pub(super) fn write_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "process_id": id_prop(),
            "input": {"type": "string", "description": "Text to write."},
            "newline": {"type": "boolean", "default": false, "description": "Append a newline."},
            "close_stdin": {"type": "boolean", "default": false, "description": "Close stdin after writing (end of file)."}
        },
        "required": ["process_id", "input"]
    })
}

pub(super) fn write_output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"}, "ok": {"type": "boolean"}, "error": {"type": "string"}
    }, "required": []})
}

pub(super) fn wait_input() -> Value {
    let mut props = read_props();
    props["timeout_ms"] = int_prop("Longest wait (default and maximum 55000).");
    props["until"] = json!({"type": "string", "description": "Also return as soon as new output (after since_seq) matches this regex."});
    props["until_input"] = json!({"type": "boolean", "default": false, "description": "Also return as soon as the process waits for input (wait_result awaiting_input)."});
    props["process_ids"] = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 64, "description": "Wait for the first of these processes instead of process_id."});
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
        json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "With process_ids: the status of each."}),
    );
    object_schema(p, &[])
}

pub(super) fn stop_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "process_id": id_prop(),
            "signal": {"type": "string", "default": "SIGTERM", "description": "Signal name such as SIGTERM, SIGINT, SIGKILL (case-insensitive, SIG optional), or its number (\"9\")."},
            "force_after_ms": int_prop("Grace before SIGKILL (default 10000, at most 50000).")
        },
        "required": ["process_id"]
    })
}

pub(super) fn stop_output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"},
        "stopped": {"type": "boolean"},
        "signal": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "exit_signal": {"type": ["string", "null"]},
        "error": {"type": ["string", "null"]}
    }, "required": []})
}

pub(super) fn ps_input() -> Value {
    json!({"type": "object", "properties": {
        "include_completed": {"type": "boolean", "default": true, "description": "Include finished processes."},
        "limit": int_prop("Most entries to return (default 50).")
    }})
}

pub(super) fn ps_output() -> Value {
    json!({"type": "object", "properties": {"processes": {"type": "array", "items": {"type": "object"}}, "error": {"type": "string"}}})
}

pub(super) fn cleanup_input() -> Value {
    json!({"type": "object", "properties": {
        "completed_older_than_ms": int_prop("Remove completed records that ended longer ago than this (default 3600000)."),
        "stopped_older_than_ms": int_prop("Remove stopped, timed-out and failed records that ended longer ago than this (default 3600000).")
    }})
}

pub(super) fn cleanup_output() -> Value {
    json!({"type": "object", "properties": {"removed": {"type": "integer"}, "error": {"type": "string"}}})
}
