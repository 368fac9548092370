//! The `exec` tool whole: its registry entry, arguments, schemas, the call it makes and
//! its result object. The command is started by `Engine::exec`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::{missing, Args};
use super::super::describe::{allowed_sentence, protected_sentence};
use super::super::params::{in_force, InForce, Kind, Param};
use super::super::schema::{object_schema, process_output_props};
use super::super::snapshot::snapshot;
use super::{no_error_fields, Parsed, ToolDef};
use crate::base::config::{Config, Mode, Tool, SIDE_EFFECTS};
use crate::process::pty::{DEFAULT_COLS, DEFAULT_ROWS};
use crate::tools::call::Call;
use crate::tools::engine::{Engine, ExecArgs};
use crate::tools::results::ExecResult;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::Exec,
    title: "Run a shell command",
    description,
    params: PARAMS,
    output,
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
    run,
    starts_process: true,
    on_error: no_error_fields,
};

/// `yield_ms`: named by the description too.
const YIELD_MS: Param = Param::new("yield_ms", Kind::Int)
    .doc("Wait before backgrounding")
    .default_in_force(in_force::yield_ms)
    .max(in_force::max_yield_ms);

// Descriptions say what the name and the schema do not: the tool's description and the
// server's instructions carry the rest, once. Trusted mode runs no shell and no terminal:
// its command is a line it parses, and `env` only names the variables it passes on.
const PARAMS: &[Param] = &[
    Param::new("command", Kind::Str)
        .required()
        .doc("Run as <shell> -c <command>.")
        .shell_only(),
    Param::new("command", Kind::Str)
        .required()
        .doc(
            "One command line: words, 'single' or \"double\" quotes, | < > >> (see the \
             description).",
        )
        .trusted_only(),
    Param::new("side_effects", Kind::SetOf(SIDE_EFFECTS)).required(),
    Param::new("cwd", Kind::Str),
    Param::new("env", Kind::StrMap).shell_only(),
    Param::new("env", Kind::StrMap)
        .doc_in_force(env_names)
        .offered_if(env_passed_on),
    Param::new("shell", Kind::Str)
        .default_text(in_force::shell)
        .shell_only(),
    Param::new("stdin", Kind::Str),
    Param::new("close_stdin", Kind::Bool)
        .default_bool(true)
        .doc("false: keep stdin open for write."),
    Param::new("name", Kind::Str),
    YIELD_MS,
    Param::new("timeout_ms", Kind::Int)
        .doc("Runtime limit, 0 = none")
        .default_in_force(in_force::timeout_ms),
    Param::new("max_output_bytes", Kind::Int)
        .doc("Output budget of the answer")
        .default_in_force(in_force::max_output_bytes),
    Param::new("tail_lines", Kind::Int).doc("Only the newest N lines; for builds and tests."),
    Param::new("tty", Kind::Bool)
        .default_bool(false)
        .doc("Run on a terminal (REPLs); stderr joins stdout.")
        .shell_only(),
    Param::new("rows", Kind::Int)
        .default_int(DEFAULT_ROWS as u64)
        .shell_only(),
    Param::new("cols", Kind::Int)
        .default_int(DEFAULT_COLS as u64)
        .shell_only(),
    Param::new("raw", Kind::Bool)
        .default_bool(false)
        .doc("Keep escape sequences.")
        .shell_only(),
];

/// Trusted mode passes `env` on only for the names it allows.
fn env_passed_on(config: &Config) -> bool {
    config.mode == Mode::Trusted && !config.child_env_allowlist.is_empty()
}

fn env_names(f: &InForce) -> String {
    format!(
        "Variables to set; only these names: {}.",
        f.config.child_env_allowlist.join(", ")
    )
}

/// In shell mode a command line for the shell; in trusted mode the command language it
/// parses and what it allows. Either way the default yield in force, and what the kernel
/// sandbox keeps read-only.
fn description(f: &InForce) -> String {
    let yield_default = YIELD_MS.default_in_words(f).unwrap_or_default();
    let text = if f.config.mode == Mode::Trusted {
        format!(
            "Run an allowlisted command line, without a shell, and return its output. The \
             line is split into words (quotes group, nothing is expanded: no variables, globs \
             or ~); | builds a pipeline, < > >> redirect to files inside the working \
             directory. ; && || & $( ) backticks and newlines are refused. Every stage must be \
             allowed; shells and interpreters never are, and dangerous options are refused. {} \
             A command still running after yield_ms (default {yield_default}) returns status \
             \"backgrounded\" with a process_id: use read, wait, write and stop with it. Output \
             beyond max_output_bytes stays readable with read from next_seq. side_effects is \
             required ([\"NONE\"] for read-only commands).",
            allowed_sentence(f.config),
        )
    } else {
        format!(
            "Run a shell command. Returns when it ends, or after yield_ms \
             (default {yield_default}) as \"backgrounded\" with a process_id. side_effects: \
             every category it may have, [\"NONE\"] if read-only. A command waiting for input \
             returns awaiting_input and its prompt: answer with write."
        )
    };
    text + &protected_sentence(f.config)
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
