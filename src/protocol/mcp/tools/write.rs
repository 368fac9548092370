//! The `write` tool whole: its registry entry, arguments, schemas, the call it makes and
//! its result object. The bytes are written by `Engine::write`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::{missing, Args};
use super::super::params::{InForce, Kind, Param};
use super::{no_error_fields, process_id, Parsed, ToolDef, PROCESS_ID};
use crate::base::config::Tool;
use crate::tools::call::Call;
use crate::tools::engine::Engine;
use crate::tools::results::WriteResult;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Write,
    title: "Write to process stdin",
    description,
    params: PARAMS,
    output,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    run,
    starts_process: false,
    on_error: no_error_fields,
};

fn description(_: &InForce) -> String {
    "Write input to a running process's stdin (exec with close_stdin=false \
     or tty=true). On a tty it is typed: \"\\u0003\" is Ctrl-C."
        .into()
}

const PARAMS: &[Param] = &[
    PROCESS_ID,
    Param::new("input", Kind::Str).required(),
    Param::new("newline", Kind::Bool)
        .default_bool(false)
        .doc("Append a newline."),
    Param::new("close_stdin", Kind::Bool)
        .default_bool(false)
        .doc("Then close stdin (end of file)."),
];

fn output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"}, "ok": {"type": "boolean"}, "error": {"type": "string"}
    }, "required": []})
}

fn run(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let input = a
        .string("input")?
        .ok_or_else(|| missing("input", "the text to write"))?;
    let newline = a.boolean("newline")?.unwrap_or(false);
    let close = a.boolean("close_stdin")?.unwrap_or(false);
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.write(&id, &input, newline, close, call)
    }))
}

/// The result object: `ok`, and the error when the write failed.
pub(in crate::protocol::mcp) fn result(w: WriteResult) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("process_id".into(), Value::from(w.process_id));
    m.insert("ok".into(), Value::Bool(w.error.is_none()));
    if let Some(e) = w.error {
        m.insert("error".into(), Value::from(e));
    }
    m
}
