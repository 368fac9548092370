//! The `shell_execute` tool whole: its registry entry, arguments, schemas, the call it
//! makes and its reply (text blocks as MCP Shell Server laid them out, and the result
//! object). The command is run by `Engine::shell_execute`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::args::{missing, show, Args};
use super::super::describe::{allowed_sentence, protected_sentence};
use super::super::fields::opt;
use super::super::params::{in_force, InForce, Kind, Param};
use super::super::schema::{killed_for_schema, omitted_schema};
use super::super::snapshot::{killed_for, omitted_field};
use super::super::Reply;
use super::{no_error_fields, Parsed, ToolDef};
use crate::base::config::Tool;
use crate::tools::call::Call;
use crate::tools::engine::Engine;
use crate::tools::results::ShellResult;
use crate::tools::shell_execute::ShellExecArgs;

pub(in crate::protocol::mcp) const DEF: ToolDef = ToolDef {
    name: Tool::ShellExecute,
    title: "Run an allowed command",
    description,
    params: PARAMS,
    output,
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
    run,
    starts_process: false,
    on_error: no_error_fields,
};

/// `timeout`: named by the description too.
const TIMEOUT: Param = Param::new("timeout", Kind::IntFrom(1))
    .doc("Seconds before the command is killed")
    .default_in_force(in_force::shell_timeout_s)
    .max(in_force::shell_max_timeout_s);

const PARAMS: &[Param] = &[
    Param::new(
        "command",
        Kind::Strings {
            min: Some(1),
            max: None,
        },
    )
    .required()
    .doc("Program and arguments; \"|\", \"<\", \">\", \">>\" elements are operators."),
    Param::new("stdin", Kind::Str).doc("Input for the first stage."),
    Param::new("directory", Kind::Str).doc("Working directory (relative to the server's)."),
    TIMEOUT,
    Param::new("max_output_bytes", Kind::IntFrom(0)).doc(
        "Most bytes of output shown, both streams together; a longer stream shows its start \
         and end around a marker (the rest stays readable with read).",
    ),
];

/// What runs and how, what is allowed, the timeout and the output cap in force, and what
/// the kernel sandbox keeps read-only.
fn description(f: &InForce) -> String {
    format!(
        "{} {} Timeout: default {} s, at most {} s. Output cap: {} bytes per stream (the \
         command is stopped beyond it).{}",
        "Run an allowlisted command without a shell and return its output when it \
         finishes. command is an argv array such as [\"ls\", \"-l\"]; elements that are exactly \
         \"|\", \"<\", \">\" or \">>\" build a pipeline and redirections relative to directory \
         (e.g. [\"grep\", \"x\", \"in.txt\", \"|\", \"wc\", \"-l\"]). No shell syntax, globbing or \
         variables. Every stage must be allowlisted; dangerous options are refused. A non-zero \
         exit, a timeout or too much output is an error that still returns the output so far.",
        allowed_sentence(f.config),
        TIMEOUT.default_in_words(f).unwrap_or_default(),
        TIMEOUT.max_value(f).unwrap_or_default(),
        f.config.shell_output_limit,
        protected_sentence(f.config)
    )
}

fn output() -> Value {
    json!({"type": "object", "properties": {
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "status": {"type": "integer"},
        "execution_time": {"type": "number"},
        "stage_status": {"type": "array", "items": {"type": ["integer", "null"]}},
        "error": {"type": "string"},
        "capped": {"type": "boolean", "description": "The output limit was hit and the command killed for it (see killed_for)."},
        "killed_for": killed_for_schema(),
        "process_id": {"type": "string", "description": "The record: read pages the whole capture."},
        "omitted": omitted_schema()
    }, "required": ["stdout", "stderr", "status", "execution_time"]})
}

fn run(a: &Args<'_>) -> Parsed {
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

/// `shell_execute` answers with text blocks, laid out as MCP Shell Server laid them out: the
/// output (stdout, then stderr), or one block with the reason first and then the output
/// captured before the failure (`stdout:` and `stderr:` sections). A long stream shows its
/// first and last part around a marker line; `process_id` (when `read` is listed) pages the
/// rest.
pub(in crate::protocol::mcp) fn result(r: ShellResult) -> Reply {
    let mut m = Map::new();
    m.insert("stdout".into(), Value::from(r.stdout.clone()));
    m.insert("stderr".into(), Value::from(r.stderr.clone()));
    m.insert("status".into(), Value::from(r.status));
    m.insert("execution_time".into(), Value::from(r.execution_time));
    if let Some(stages) = r.stage_status {
        let stages = stages.into_iter().map(opt).collect();
        m.insert("stage_status".into(), Value::Array(stages));
    }
    if r.capped {
        m.insert("capped".into(), Value::Bool(true));
    }
    if let Some(id) = &r.process_id {
        m.insert("process_id".into(), Value::from(id.clone()));
    }
    omitted_field(&mut m, &r.omitted);
    if let Some(p) = &r.protected {
        m.insert("protected".into(), Value::from(p.clone()));
    }
    let killed = r.killed_for.as_ref().map(|k| k.sentence());
    if let Some(k) = r.killed_for {
        m.insert("killed_for".into(), killed_for(*k));
    }
    let texts = match &r.error {
        Some(reason) => {
            m.insert("error".into(), Value::from(reason.clone()));
            let mut text = format!("Error executing command: {reason}");
            if let Some(sentence) = killed {
                text.push('\n');
                text.push_str(&sentence);
            }
            let mut section = |name: &str, body: &str| {
                if !body.is_empty() {
                    text.push_str(&format!("\n{name}:\n{body}"));
                }
            };
            section("stdout", &r.stdout);
            if !r.stderr_in_error {
                section("stderr", &r.stderr);
            }
            vec![text]
        }
        None => {
            let mut texts: Vec<String> = [r.stdout, r.stderr]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect();
            if texts.is_empty() {
                // Some clients refuse an empty content list.
                texts.push(String::new());
            }
            texts
        }
    };
    Reply {
        value: m,
        is_error: r.error.is_some(),
        texts: Some(texts),
    }
}
