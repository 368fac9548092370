//! The tool registry: one `ToolDef` per tool (name, description, parameters, output schema,
//! annotations, and the function that checks its arguments and makes the call), used by
//! `tools/list`, `tools/call` and the check of a tool's name. Each tool is a file of its
//! own under `tools/` and one line of `TOOLS`.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::args::{missing, Args};
use super::params::{InForce, Kind, Param};
use crate::base::config::Tool;
use crate::tools::call::Call;
use crate::tools::engine::Engine;
use crate::tools::results::Answer;

pub(super) struct ToolDef {
    pub(super) name: Tool,
    pub(super) title: &'static str,
    /// The description under the configuration in force.
    pub(super) description: fn(&InForce) -> String,
    /// The arguments, from which the input schema is built.
    pub(super) params: &'static [Param],
    pub(super) output: fn() -> Value,
    pub(super) read_only: bool,
    pub(super) destructive: bool,
    pub(super) idempotent: bool,
    pub(super) open_world: bool,
    /// Checks the arguments and makes the call.
    pub(super) run: fn(&Args<'_>) -> Parsed,
    /// The tool starts a process: an error before that answers `failed_to_start`.
    pub(super) starts_process: bool,
    /// Adds the tool's own fields to an error's result object.
    pub(super) on_error: fn(&mut Map<String, Value>),
}

/// `process_id`, as the tools that act on one process take it.
pub(super) const PROCESS_ID: Param = Param::new("process_id", Kind::Str).required();

/// For a tool whose errors have no fields of their own.
pub(super) fn no_error_fields(_: &mut Map<String, Value>) {}

/// The registry, in the order of `Tool::ALL` (a test checks): `def` finds a tool's entry.
pub(super) const TOOLS: [ToolDef; Tool::ALL.len()] = [
    shell_execute::DEF,
    exec::DEF,
    read::DEF,
    write::DEF,
    wait::DEF,
    stop::DEF,
    ps::DEF,
    cleanup::DEF,
];

/// The registry entry of `tool`.
pub(super) fn def(tool: Tool) -> &'static ToolDef {
    &TOOLS[tool as usize]
}

pub(super) mod cleanup;
pub(super) mod exec;
pub(super) mod ps;
pub(super) mod read;
pub(super) mod shell_execute;
pub(super) mod stop;
pub(super) mod wait;
pub(super) mod write;

/// A tool call with valid arguments, ready to run.
pub(super) type Run = Box<dyn FnOnce(&Arc<Engine>, Call)>;

pub(super) type Parsed = Result<Run, String>;

/// A tool that answers at once.
fn now(f: impl FnOnce(&Engine) -> Answer + 'static) -> Parsed {
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        call.answer(f(engine))
    }))
}

fn process_id(a: &Args<'_>) -> Result<String, String> {
    a.string("process_id")?.ok_or_else(|| {
        missing(
            "process_id",
            "the process_id returned by exec, such as proc_0123456789ab",
        )
    })
}
