//! The tool registry: one `ToolDef` per tool (name, schemas, annotations, and the function
//! that checks its arguments and makes the call), used by `tools/list`, `tools/call` and
//! the check of a tool's name.

use std::sync::Arc;

use regex_lite::Regex;
use serde_json::Value;

use super::args::{missing, show, Args};
use super::schema::*;
use crate::base::config::TRANSPORT_CEILING_MS;
use crate::base::ring::Streams;
use crate::tools::call::Call;
use crate::tools::engine::{Engine, ExecArgs, ReadArgs};
use crate::tools::results::{Answer, ErrorKind, ToolError};
use crate::tools::shell_execute::ShellExecArgs;

pub(super) struct ToolDef {
    pub(super) name: &'static str,
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
}

pub(super) const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "shell_execute",
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
    },
    ToolDef {
        name: "exec",
        title: "Run a shell command",
        description: "Run a shell command and return its output. Fast commands return \
            status \"completed\" with exit_code, stdout and stderr. A command still running after \
            yield_ms (default 30000) returns status \"backgrounded\" with a process_id and keeps \
            running: use read, wait, write and stop with that id. A shell that exits while \
            something it started keeps running (e.g. `server &`) also returns \"backgrounded\". \
            Longer output than max_output_bytes shows its start and end around a marker line \
            naming the since_seq that reads the rest. side_effects is required: declare every plausible \
            category, or [\"NONE\"] for read-only commands; calls declaring a blocked category are \
            refused before anything runs (status failed_to_start). tty=true runs it on a terminal \
            (REPLs). A command that stops to ask for input returns at once with awaiting_input=true \
            and its prompt: answer with write.",
        input: exec_input,
        output: exec_output,
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
        run: exec,
        starts_process: true,
    },
    ToolDef {
        name: "read",
        title: "Read process output",
        description: "Read the output of a process started by exec. Every byte of stdout and \
            stderr has a position; pass the returned next_seq as since_seq next time to get only \
            new output, with no gap and no repeat. Without since_seq it goes on where the last \
            answer for this process stopped; tail_lines returns only the newest lines. truncated=true means older \
            output was dropped from the buffer; capped=true means more output is available now. \
            A read from the start still gets the first output, then gap_from/gap_to name what \
            was dropped. awaiting_input=true (with prompt) means \
            the process is blocked reading its input.",
        input: read_input,
        output: read_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: read,
        starts_process: false,
    },
    ToolDef {
        name: "write",
        title: "Write to process stdin",
        description: "Write text to the stdin of a running process (start it with exec \
            close_stdin=false, or tty=true). newline=true appends a newline; close_stdin=true sends \
            end of file after the text. On a tty the text is typed as is: \"\\u0003\" is Ctrl-C, \
            \"\\u0004\" (or close_stdin) ends the input.",
        input: write_input,
        output: write_output,
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
        run: write,
        starts_process: false,
    },
    ToolDef {
        name: "wait",
        title: "Wait for a process",
        description:
            "Block until a process exits, until its new output matches the regex \
            `until`, until it waits for input (until_input=true), or until timeout_ms (at most \
            55000) passes; wait_result says which (exited, matched, awaiting_input, \
            deadline_reached). process_ids waits for the first of several and names it \
            (process_id; statuses lists all). Never stops the process. Returns output like read.",
        input: wait_input,
        output: wait_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: wait,
        starts_process: false,
    },
    ToolDef {
        name: "stop",
        title: "Stop a process",
        description: "Stop a process and everything it started: sends signal (default SIGTERM) \
            to all of it (setsid daemons too), sends SIGKILL after force_after_ms (default 10000) if \
            anything is left, and returns once all of it is gone.",
        input: stop_input,
        output: stop_output,
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: true,
        run: stop,
        starts_process: false,
    },
    ToolDef {
        name: "ps",
        title: "List processes",
        description: "List the processes started by exec, newest first, with status, exit \
            code, output sizes, idle time and how many of their processes live.",
        input: ps_input,
        output: ps_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: ps,
        starts_process: false,
    },
    ToolDef {
        name: "cleanup",
        title: "Forget finished processes",
        description: "Remove records of finished processes older than the given ages (default \
            one hour) to free memory. Running processes are never removed.",
        input: cleanup_input,
        output: cleanup_output,
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
        run: cleanup,
        starts_process: false,
    },
];

/// The registry's description of tool `name` (empty for an unknown name).
pub(super) fn description(name: &str) -> &'static str {
    TOOLS
        .iter()
        .find(|d| d.name == name)
        .map_or("", |d| d.description)
}

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

fn write(a: &Args<'_>) -> Parsed {
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

fn wait(a: &Args<'_>) -> Parsed {
    let ids = wait_ids(a.get("process_id"), a.get("process_ids"))?;
    let until_input = a.boolean("until_input")?.unwrap_or(false);
    let args = read_args(a)?;
    let timeout = a.uint("timeout_ms")?;
    let until = match a.string("until")? {
        Some(pattern) => Some(Regex::new(&pattern).map_err(|e| {
            format!(
                "invalid argument until: {pattern:?} is not a valid regex ({}); use Rust regex syntax, e.g. \"ready|listening on\"",
                e.to_string().lines().last().unwrap_or("").trim()
            )
        })?),
        None => None,
    };
    let timeout = timeout.map(|t| t.min(TRANSPORT_CEILING_MS));
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.wait(&ids, timeout, until, until_input, args, call)
    }))
}

fn stop(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let signal = a.signal("signal")?;
    let force = a.uint("force_after_ms")?;
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.stop(&id, signal.as_deref(), force, call)
    }))
}

fn ps(a: &Args<'_>) -> Parsed {
    let include = a.boolean("include_completed")?.unwrap_or(true);
    let limit = a.uint("limit")?.unwrap_or(50);
    now(move |engine| engine.ps(include, limit.min(usize::MAX as u64) as usize))
}

fn cleanup(a: &Args<'_>) -> Parsed {
    let completed = a.int("completed_older_than_ms")?.unwrap_or(3_600_000);
    let stopped = a.int("stopped_older_than_ms")?.unwrap_or(3_600_000);
    if completed < 0 || stopped < 0 {
        let error = ToolError::new(ErrorKind::InvalidArgument, format!(
            "thresholds must be non-negative milliseconds (got completed_older_than_ms={completed}, stopped_older_than_ms={stopped}); nothing was removed"
        ));
        return now(move |_| Err(error));
    }
    now(move |engine| engine.cleanup(completed as u64, stopped as u64))
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
