//! The `stop` tool whole: its registry entry, arguments, schemas, the call it makes and
//! its result object. The process group is stopped by `Engine::stop`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::Args;
use super::super::fields::opt;
use super::super::params::{InForce, Kind, Param};
use super::{no_error_fields, process_id, Parsed, ToolDef, PROCESS_ID};
use crate::base::config::Tool;
use crate::tools::call::Call;
use crate::tools::engine::{Engine, STOP_GRACE_MAX_MS, STOP_GRACE_MS};
use crate::tools::results::StopResult;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Stop,
    title: "Stop a process",
    description,
    params: PARAMS,
    output,
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: true,
    run,
    starts_process: false,
    on_error: no_error_fields,
};

fn description(f: &InForce) -> String {
    format!(
        "Stop a process and all it started: signal, then SIGKILL after force_after_ms ({}); \
         returns once all of it is gone.",
        FORCE_AFTER_MS.limits(f).unwrap_or_default()
    )
}

/// `force_after_ms`: its default and ceiling are said in the description.
const FORCE_AFTER_MS: Param = Param::new("force_after_ms", Kind::Int)
    .default_in_force(stop_grace)
    .max(stop_grace_max)
    .limits_in_tool();

const PARAMS: &[Param] = &[
    PROCESS_ID,
    Param::new("signal", Kind::Str)
        .default_str("SIGTERM")
        .doc("Name or number."),
    FORCE_AFTER_MS,
];

fn stop_grace(_: &InForce) -> u64 {
    STOP_GRACE_MS
}

fn stop_grace_max(_: &InForce) -> u64 {
    STOP_GRACE_MAX_MS
}

fn output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"},
        "stopped": {"type": "boolean"},
        "signal": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "exit_signal": {"type": ["string", "null"], "description": "The signal that ended the process; absent when it is signal."},
        "error": {"type": ["string", "null"]}
    }, "required": []})
}

fn run(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let signal = a.signal("signal")?;
    let force = a.uint("force_after_ms")?;
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.stop(&id, signal.as_deref(), force, call)
    }))
}

/// The result object: what was sent and what was observed.
pub(in crate::protocol::mcp) fn result(s: StopResult) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("process_id".into(), Value::from(s.process_id));
    m.insert("signal".into(), Value::from(s.signal));
    m.insert("stopped".into(), Value::Bool(s.stopped));
    m.insert("status".into(), Value::from(s.status.as_str()));
    m.insert("exit_code".into(), opt(s.exit_code));
    m.insert("exit_signal".into(), opt(s.exit_signal));
    m.insert("error".into(), opt(s.error));
    m
}
