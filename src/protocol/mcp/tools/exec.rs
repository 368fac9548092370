//! The `exec` tool whole: its registry entry, arguments, schemas, the call it makes and
//! its result object. The command is started by `Engine::exec`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::{missing, Args};
use super::super::schema::{bool_prop, int_prop, object_schema, process_output_props, str_prop};
use super::super::snapshot::snapshot;
use super::{no_error_fields, Parsed, ToolDef};
use crate::base::config::{Tool, SIDE_EFFECTS};
use crate::tools::call::Call;
use crate::tools::engine::{Engine, ExecArgs};
use crate::tools::results::ExecResult;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Exec,
    title: "Run a shell command",
    description: "Run a shell command. Returns when it ends, or after yield_ms \
        (default 30000) as \"backgrounded\" with a process_id. side_effects: every category \
        it may have, [\"NONE\"] if read-only. A command waiting for input returns \
        awaiting_input and its prompt: answer with write.",
    input,
    output,
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
    run,
    starts_process: true,
    on_error: no_error_fields,
};

fn input() -> Value {
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

fn output() -> Value {
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

fn run(a: &Args<'_>) -> Parsed {
    let args = ExecArgs {
        command: a
            .string("command")?
            .ok_or_else(|| missing("command", "a shell command line"))?,
        side_effects: a.side_effects()?,
        cwd: a.string("cwd")?,
        env: a.string_map("env")?,
        shell: a.string("shell")?,
        stdin: a.string("stdin")?,
        close_stdin: a.boolean("close_stdin")?.unwrap_or(true),
        name: a.string("name")?,
        yield_ms: a.uint("yield_ms")?,
        timeout_ms: a.uint("timeout_ms")?,
        max_output_bytes: a.uint("max_output_bytes")?,
        tail_lines: a.uint("tail_lines")?,
        agent: crate::process::agents::ExecExtras {
            tty: a.boolean("tty")?.unwrap_or(false),
            rows: a.uint("rows")?,
            cols: a.uint("cols")?,
            raw: a.boolean("raw")?.unwrap_or(false),
        },
    };
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.exec(args, call)
    }))
}

/// The result object: the snapshot, the backgrounding and the process's pid and duration.
pub(in crate::protocol::mcp) fn result(r: ExecResult) -> Map<String, Value> {
    // exec names stdin_error only when writing the initial stdin failed.
    let stdin_failed = r.snapshot.stdin_error.is_some();
    let mut m = snapshot(r.snapshot);
    if !stdin_failed {
        m.remove("stdin_error");
    }
    if r.backgrounded {
        m.insert("status".into(), Value::from("backgrounded"));
        // How to go on with a process in the background is said once, in the
        // instructions (and `awaiting_input` with its `prompt` in exec's description).
    }
    m.insert("pid".into(), Value::from(r.pid));
    m.insert("duration_ms".into(), Value::from(r.duration_ms));
    m
}
