//! The tool registry: one `ToolDef` per tool (name, schemas, annotations, and the function
//! that checks its arguments and makes the call), used by `tools/list`, `tools/call` and
//! the check of a tool's name.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::args::{missing, show, Args};
use super::schema::*;
use crate::base::config::{Tool, TRANSPORT_CEILING_MS};
use crate::base::ring::Streams;
use crate::tools::call::Call;
use crate::tools::engine::{Engine, ExecArgs, ReadArgs, WaitFor};
use crate::tools::results::Answer;
use crate::tools::shell_execute::ShellExecArgs;

pub(super) struct ToolDef {
    pub(super) name: Tool,
    pub(super) title: &'static str,
    pub(super) description: &'static str,
    pub(super) input: fn() -> Value,
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

/// For a tool whose errors have no fields of their own.
pub(super) fn no_error_fields(_: &mut Map<String, Value>) {}

/// The registry, in the order of `Tool::ALL` (a test checks): `def` finds a tool's entry.
pub(super) const TOOLS: [ToolDef; Tool::ALL.len()] = [
    ToolDef {
        name: Tool::ShellExecute,
        title: "Run an allowed command",
        description: "Run an allowlisted command without a shell and return its output when it \
            finishes. command is an argv array such as [\"ls\", \"-l\"]; elements that are exactly \
            \"|\", \"<\", \">\" or \">>\" build a pipeline and redirections relative to directory \
            (e.g. [\"grep\", \"x\", \"in.txt\", \"|\", \"wc\", \"-l\"]). No shell syntax, globbing or \
            variables. Every stage must be allowlisted; dangerous options are refused. A non-zero \
            exit, a timeout or too much output is an error that still returns the output so far.",
        input: shell_execute_input,
        output: shell_execute_output,
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
        run: shell_execute,
        starts_process: false,
        on_error: no_error_fields,
    },
    ToolDef {
        name: Tool::Exec,
        title: "Run a shell command",
        description: "Run a shell command. Returns when it ends, or after yield_ms \
            (default 30000) as \"backgrounded\" with a process_id. side_effects: every category \
            it may have, [\"NONE\"] if read-only. A command waiting for input returns \
            awaiting_input and its prompt: answer with write.",
        input: exec_input,
        output: exec_output,
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
        run: exec,
        starts_process: true,
        on_error: no_error_fields,
    },
    ToolDef {
        name: Tool::Read,
        title: "Read process output",
        description: "Output of a process, from where the last answer stopped, from \
            since_seq (a next_seq) or the newest tail_lines. truncated: older output was \
            evicted; capped: more is available.",
        input: read_input,
        output: read_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: read,
        starts_process: false,
        on_error: no_error_fields,
    },
    write::DEF,
    ToolDef {
        name: Tool::Wait,
        title: "Wait for a process",
        description: "Block until the process exits, its new output matches until, it \
            waits for input (until_input) or timeout_ms passes; wait_result says which. \
            process_ids: the first of several to end, or all (all=true); statuses gives each. \
            Returns output like read.",
        input: wait_input,
        output: wait_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: wait,
        starts_process: false,
        on_error: no_error_fields,
    },
    stop::DEF,
    ps::DEF,
    cleanup::DEF,
];

/// The registry entry of `tool`.
pub(super) fn def(tool: Tool) -> &'static ToolDef {
    &TOOLS[tool as usize]
}

/// The registry's description of `tool`.
pub(super) fn description(tool: Tool) -> &'static str {
    def(tool).description
}

pub(super) mod cleanup;
pub(super) mod ps;
pub(super) mod stop;
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

fn exec(a: &Args<'_>) -> Parsed {
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

fn shell_execute(a: &Args<'_>) -> Parsed {
    let command = match a.get("command") {
        Some(Value::Array(items)) => {
            let mut argv = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => argv.push(s.clone()),
                    other => return Err(format!("invalid argument command: every element must be a string, got {}", show(other))),
                }
            }
            argv
        }
        Some(other) => return Err(format!("invalid argument command: expected an array of strings such as [\"ls\", \"-l\"], got {}", show(other))),
        None => return Err(missing("command", "an array of strings such as [\"ls\", \"-l\"]")),
    };
    let timeout = a.uint("timeout")?;
    let args = ShellExecArgs {
        command,
        stdin: a.string("stdin")?,
        directory: a.string("directory")?,
        timeout,
        max_output_bytes: a.uint("max_output_bytes")?,
    };
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.shell_execute(args, call)
    }))
}

fn read_args(a: &Args<'_>) -> Result<ReadArgs, String> {
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

fn process_id(a: &Args<'_>) -> Result<String, String> {
    a.string("process_id")?.ok_or_else(|| {
        missing(
            "process_id",
            "the process_id returned by exec, such as proc_0123456789ab",
        )
    })
}

fn read(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let args = read_args(a)?;
    if args.since_seq.is_some() && args.tail_lines.is_some() {
        return Err("since_seq and tail_lines cannot be combined: give since_seq to continue a read, or tail_lines for the newest lines".into());
    }
    now(move |engine| engine.read(&id, args))
}

fn wait(a: &Args<'_>) -> Parsed {
    let ids = wait_ids(a.get("process_id"), a.get("process_ids"))?;
    let wait_for = WaitFor {
        input: a.boolean("until_input")?.unwrap_or(false),
        all: a.boolean("all")?.unwrap_or(false),
    };
    let args = read_args(a)?;
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
