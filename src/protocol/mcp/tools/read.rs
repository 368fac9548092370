//! The `read` tool whole: its registry entry, arguments, schemas and the call it makes;
//! its result object is the snapshot (`mcp/snapshot`). The output is read by `Engine::read`.

use serde_json::Value;

use super::super::args::Args;
use super::super::params::{InForce, Kind, Param};
use super::super::schema::{object_schema, process_output_props};
use super::{no_error_fields, now, process_id, Parsed, ToolDef, PROCESS_ID};
use crate::base::config::Tool;
use crate::base::ring::Streams;
use crate::tools::engine::ReadArgs;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Read,
    title: "Read process output",
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
    "Output of a process, from where the last answer stopped, from \
     since_seq (a next_seq) or the newest tail_lines. truncated: older output was \
     evicted; capped: more is available."
        .into()
}

/// The arguments of a read of output, which `wait` takes too.
pub(in crate::protocol::mcp) const OUTPUT_PARAMS: [Param; 5] = [
    Param::new("since_seq", Kind::Int),
    Param::new("max_output_bytes", Kind::Int),
    Param::new("streams", Kind::OneOf(&["both", "stdout", "stderr"])).default_str("both"),
    Param::new("tail_lines", Kind::Int),
    Param::new("raw", Kind::Bool)
        .default_bool(false)
        .doc("Keep escape sequences."),
];

const PARAMS: &[Param] = &[
    PROCESS_ID,
    OUTPUT_PARAMS[0],
    OUTPUT_PARAMS[1],
    OUTPUT_PARAMS[2],
    OUTPUT_PARAMS[3],
    OUTPUT_PARAMS[4],
];

fn output() -> Value {
    object_schema(process_output_props(), &[])
}

/// The arguments of a read of output, shared with `wait`.
pub(super) fn args(a: &Args<'_>) -> Result<ReadArgs, String> {
    let streams = match a.string("streams")?.as_deref() {
        None | Some("both") => Streams::Both,
        Some("stdout") => Streams::Stdout,
        Some("stderr") => Streams::Stderr,
        Some(other) => {
            return Err(format!(
            "invalid argument streams: got {other:?}; expected \"both\", \"stdout\" or \"stderr\""
        ))
        }
    };
    Ok(ReadArgs {
        since_seq: a.uint("since_seq")?,
        max_output_bytes: a.uint("max_output_bytes")?,
        streams,
        tail_lines: a.uint("tail_lines")?,
        raw: a.boolean("raw")?.unwrap_or(false),
    })
}

fn run(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let args = args(a)?;
    if args.since_seq.is_some() && args.tail_lines.is_some() {
        return Err("since_seq and tail_lines cannot be combined: give since_seq to continue a read, or tail_lines for the newest lines".into());
    }
    now(move |engine| engine.read(&id, args))
}
