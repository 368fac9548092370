//! The `cleanup` tool whole: its registry entry, arguments, schemas, the call it makes
//! and its result object. The records themselves are forgotten by `Engine::cleanup`.

use serde_json::{json, Map, Value};

use super::super::args::Args;
use super::super::params::{InForce, Kind, Param};
use super::{now, Parsed, ToolDef};
use crate::base::config::Tool;
use crate::tools::results::{ErrorKind, ToolError};

/// How old a finished record must be to go when the call does not say (one hour).
const DEFAULT_AGE_MS: i64 = 3_600_000;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Cleanup,
    title: "Forget finished processes",
    description,
    params: PARAMS,
    output,
    read_only: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    run,
    starts_process: false,
    on_error,
};

fn description(_: &InForce) -> String {
    "Forget finished processes that ended longer ago than these ages \
     (completed; stopped, timed out or failed). Running ones stay."
        .into()
}

const PARAMS: &[Param] = &[
    Param::new("completed_older_than_ms", Kind::Int).default_int(DEFAULT_AGE_MS.unsigned_abs()),
    Param::new("stopped_older_than_ms", Kind::Int).default_int(DEFAULT_AGE_MS.unsigned_abs()),
];

fn output() -> Value {
    json!({"type": "object", "properties": {"removed": {"type": "integer"}, "error": {"type": "string"}}})
}

fn run(a: &Args<'_>) -> Parsed {
    let completed = a.int("completed_older_than_ms")?.unwrap_or(DEFAULT_AGE_MS);
    let stopped = a.int("stopped_older_than_ms")?.unwrap_or(DEFAULT_AGE_MS);
    if completed < 0 || stopped < 0 {
        let error = ToolError::new(ErrorKind::InvalidArgument, format!(
            "thresholds must be non-negative milliseconds (got completed_older_than_ms={completed}, stopped_older_than_ms={stopped}); nothing was removed"
        ));
        return now(move |_| Err(error));
    }
    now(move |engine| engine.cleanup(completed as u64, stopped as u64))
}

/// The result object: how many records were removed.
pub(in crate::protocol::mcp) fn result(removed: usize) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("removed".into(), Value::from(removed));
    m
}

/// An error still says how many records were removed: none.
fn on_error(m: &mut Map<String, Value>) {
    m.insert("removed".into(), Value::from(0));
}
