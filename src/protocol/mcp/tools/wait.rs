//! The `wait` tool whole: its registry entry, arguments, schemas, the call it makes and
//! its result object. The wait itself is parked by `Engine::wait`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::Args;
use super::super::params::{InForce, Kind, Param};
use super::super::schema::{object_schema, process_output_props};
use super::super::snapshot::snapshot;
use super::{no_error_fields, read, Parsed, ToolDef};
use crate::base::config::{Tool, TRANSPORT_CEILING_MS};
use crate::tools::call::Call;
use crate::tools::engine::{Engine, WaitFor};
use crate::tools::results::WaitResult;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Wait,
    title: "Wait for a process",
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
    "Block until the process exits, its new output matches until, it \
     waits for input (until_input) or timeout_ms passes; wait_result says which. \
     process_ids: the first of several to end, or all (all=true); statuses gives each. \
     Returns output like read."
        .into()
}

/// `read`'s arguments, one or several ids, and what ends the wait.
const PARAMS: &[Param] = &[
    Param::new("process_id", Kind::Str),
    read::OUTPUT_PARAMS[0],
    read::OUTPUT_PARAMS[1],
    read::OUTPUT_PARAMS[2],
    read::OUTPUT_PARAMS[3],
    read::OUTPUT_PARAMS[4],
    Param::new("timeout_ms", Kind::Int)
        .default_in_force(transport_ceiling)
        .max(transport_ceiling),
    Param::new("until", Kind::Str).doc("Regex on new output."),
    Param::new("until_input", Kind::Bool).default_bool(false),
    Param::new(
        "process_ids",
        Kind::Strings {
            min: None,
            max: Some(64),
        },
    ),
    Param::new("all", Kind::Bool)
        .default_bool(false)
        .doc("Wait for all process_ids to end."),
];

/// A wait ends before the transport's ceiling, whatever the call asks.
fn transport_ceiling(_: &InForce) -> u64 {
    TRANSPORT_CEILING_MS
}

fn output() -> Value {
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

fn run(a: &Args<'_>) -> Parsed {
    let ids = wait_ids(a.get("process_id"), a.get("process_ids"))?;
    let wait_for = WaitFor {
        input: a.boolean("until_input")?.unwrap_or(false),
        all: a.boolean("all")?.unwrap_or(false),
    };
    let args = read::args(a)?;
    let timeout = a.uint("timeout_ms")?;
    let until = match a.string("until")? {
        Some(pattern) => Some(
            crate::base::pattern::compile(&pattern, crate::base::pattern::UNTIL_LIMIT).map_err(
                |e| {
                    format!(
                        "invalid argument until: {pattern:?}: {}; use Rust regex syntax, e.g. \"ready|listening on\"",
                        e.describe()
                    )
                },
            )?,
        ),
        None => None,
    };
    let timeout = timeout.map(|t| t.min(TRANSPORT_CEILING_MS));
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.wait(&ids, timeout, until, wait_for, args, call)
    }))
}

/// The result object: the snapshot, why the wait ended, and with several ids each one's state.
pub(in crate::protocol::mcp) fn result(w: WaitResult) -> Map<String, Value> {
    let mut m = snapshot(w.snapshot);
    m.insert("wait_result".into(), Value::from(w.end.as_str()));
    m.insert("waited_ms".into(), Value::from(w.waited_ms));
    if let Some(statuses) = w.statuses {
        let all = statuses.into_vec().into_iter().map(|(id, s)| {
            let mut one = Map::new();
            one.insert("status".into(), Value::from(s.status.as_str()));
            if let Some(code) = s.exit_code {
                one.insert("exit_code".into(), Value::from(code));
            }
            if let Some(at) = s.ended_at {
                one.insert("ended_at".into(), Value::from(at));
            }
            (id, Value::Object(one))
        });
        m.insert("statuses".into(), Value::Object(all.collect()));
    }
    m
}

/// The ids a `wait` is about: `process_id`, or `process_ids` (a non-empty array of
/// strings, at most 64), not both.
fn wait_ids(one: Option<&Value>, many: Option<&Value>) -> Result<Vec<String>, String> {
    let accepted = "process_id (a string such as proc_0123456789ab) or process_ids (an array of 1 to 64 such strings)";
    match (one, many) {
        (Some(_), Some(_)) => Err(format!(
            "invalid arguments: give process_id or process_ids, not both; expected {accepted}"
        )),
        (None, None) => Err(format!("missing argument: expected {accepted}")),
        (Some(Value::String(s)), None) => Ok(vec![s.clone()]),
        (Some(other), None) => Err(format!(
            "invalid argument process_id: got {other}; expected {accepted}"
        )),
        (None, Some(Value::Array(items))) if (1..=64).contains(&items.len()) => {
            let mut ids: Vec<String> = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) if !ids.contains(s) => ids.push(s.clone()),
                    Value::String(_) => (),
                    other => {
                        return Err(format!(
                            "invalid argument process_ids: element {other} is not a string; expected {accepted}"
                        ))
                    }
                }
            }
            Ok(ids)
        }
        (None, Some(other)) => Err(format!(
            "invalid argument process_ids: got {other}; expected {accepted}"
        )),
    }
}
