//! Typed answers to result objects: each tool's `result` makes its own (`read`'s is the
//! snapshot), this module the error object; where `isError` is decided, and where
//! `exec`'s `failed_to_start` comes from.

use serde_json::{Map, Value};

use super::tools::ToolDef;
use super::Reply;
use crate::base::config::Tool;
use crate::tools::results::{Answer, ErrorKind, Output, ToolError};

/// The result object of the answer of tool `def`. An error of a tool that starts a process
/// before it started answers `status: failed_to_start`.
pub(super) fn render(def: &ToolDef, answer: Answer) -> Reply {
    match answer {
        Err(e) => error(def, e),
        Ok(output) => {
            let is_error = output.is_error();
            match output {
                Output::Shell(r) => super::tools::shell_execute::result(r),
                other => Reply {
                    value: object(other),
                    is_error,
                    texts: None,
                },
            }
        }
    }
}

fn error(def: &ToolDef, e: ToolError) -> Reply {
    let tool = def.name;
    let mut m = Map::new();
    if def.starts_process && e.started_nothing() {
        m.insert("status".into(), Value::from("failed_to_start"));
    }
    if let Some(id) = e.process_id {
        m.insert("process_id".into(), Value::from(id));
    }
    if e.kind == ErrorKind::InvalidSignal {
        m.insert("stopped".into(), Value::Bool(false));
    }
    (def.on_error)(&mut m);
    // shell_execute's clients read text: MCP Shell Server's first words, then ours.
    let texts = (tool == Tool::ShellExecute).then(|| {
        let first = match e.kind {
            ErrorKind::InvalidArgument => "Input validation error",
            _ => "Error executing command",
        };
        vec![format!("{first}: {}", e.message)]
    });
    m.insert("error".into(), Value::from(e.message));
    Reply {
        value: m,
        is_error: true,
        texts,
    }
}

fn object(output: Output) -> Map<String, Value> {
    match output {
        Output::Exec(r) => super::tools::exec::result(r),
        Output::Read(s) => super::snapshot::snapshot(s),
        Output::Wait(w) => super::tools::wait::result(w),
        Output::Write(w) => super::tools::write::result(w),
        Output::Stop(s) => super::tools::stop::result(s),
        Output::Ps(list) => super::tools::ps::result(list),
        Output::Cleanup(removed) => super::tools::cleanup::result(removed),
        Output::Shell(r) => super::tools::shell_execute::result(r).value,
    }
}
