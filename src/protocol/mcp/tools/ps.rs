//! The `ps` tool whole: its registry entry, arguments, schemas, the call it makes and its
//! result object. The list itself is made by `Engine::ps`.

use serde_json::{json, Map, Value};

use super::super::args::Args;
use super::super::fields::{input_fields, opt};
use super::super::params::{InForce, Kind, Param};
use super::{no_error_fields, now, Parsed, ToolDef};
use crate::base::config::Tool;
use crate::tools::results::PsEntry;

/// How many entries a call gets when it does not say.
const DEFAULT_LIMIT: u64 = 50;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Ps,
    title: "List processes",
    description,
    params: PARAMS,
    output,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    run,
    starts_process: false,
    on_error: no_error_fields,
};

fn description(_: &InForce) -> String {
    "List the processes started by exec, newest first.".into()
}

const PARAMS: &[Param] = &[
    Param::new("include_completed", Kind::Bool).default_bool(true),
    Param::new("limit", Kind::Int).default_int(DEFAULT_LIMIT),
];

fn output() -> Value {
    let entry = json!({"type": "object", "properties": {
        "process_id": {"type": "string"},
        "pid": {"type": "integer"},
        "name": {"type": ["string", "null"]},
        "command": {"type": "string"},
        "cwd": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "signal": {"type": ["string", "null"]},
        "started_at": {"type": "string"},
        "ended_at": {"type": ["string", "null"]},
        "duration_ms": {"type": "integer"},
        "stdout_bytes": {"type": "integer"},
        "stderr_bytes": {"type": "integer"},
        "idle_ms": {"type": "integer"},
        "latest_seq": {"type": "integer"},
        "stdin_error": {"type": ["string", "null"]},
        "processes": {"type": ["integer", "null"], "description": "Processes of the command still alive."},
        "awaiting_input": {"type": "boolean"},
        "prompt": {"type": "string"}
    }});
    json!({"type": "object", "properties": {"processes": {"type": "array", "items": entry}, "error": {"type": "string"}}})
}

fn run(a: &Args<'_>) -> Parsed {
    let include = a.boolean("include_completed")?.unwrap_or(true);
    let limit = a.uint("limit")?.unwrap_or(DEFAULT_LIMIT);
    now(move |engine| engine.ps(include, limit.min(usize::MAX as u64) as usize))
}

/// The result object: one entry per record.
pub(in crate::protocol::mcp) fn result(list: Vec<PsEntry>) -> Map<String, Value> {
    let mut m = Map::new();
    let list = list.into_iter().map(|e| Value::Object(entry(e)));
    m.insert("processes".into(), Value::Array(list.collect()));
    m
}

fn entry(e: PsEntry) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("process_id".into(), Value::from(e.process_id));
    m.insert("pid".into(), Value::from(e.pid));
    m.insert("name".into(), opt(e.name));
    m.insert("command".into(), Value::from(clip(e.command)));
    m.insert("cwd".into(), Value::from(clip(e.cwd)));
    m.insert("status".into(), Value::from(e.status.as_str()));
    m.insert("exit_code".into(), opt(e.exit_code));
    m.insert("signal".into(), opt(e.signal));
    m.insert("started_at".into(), Value::from(e.started_at));
    m.insert("ended_at".into(), opt(e.ended_at));
    m.insert("duration_ms".into(), Value::from(e.duration_ms));
    m.insert("stdout_bytes".into(), Value::from(e.stdout_bytes));
    m.insert("stderr_bytes".into(), Value::from(e.stderr_bytes));
    m.insert("idle_ms".into(), Value::from(e.idle_ms));
    m.insert("latest_seq".into(), Value::from(e.latest_seq));
    m.insert("stdin_error".into(), opt(e.stdin_error));
    m.insert("processes".into(), opt(e.processes.map(|n| n as u64)));
    input_fields(&mut m, e.input);
    if let Some(Value::String(p)) = m.get_mut("prompt") {
        *p = clip(std::mem::take(p));
    }
    m
}

/// Most bytes of a `ps` entry's command or directory, so that 50 entries fit well under
/// 64 KiB.
const PS_TEXT_MAX: usize = 256;

/// `text` cut to `PS_TEXT_MAX` bytes on a character, marked with an ellipsis.
fn clip(mut text: String) -> String {
    if text.len() > PS_TEXT_MAX {
        let mut cut = PS_TEXT_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let left = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!("… [{left} more bytes]"));
    }
    text
}
