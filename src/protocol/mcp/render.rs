//! Typed answers to result objects: the only place where a tool's answer becomes JSON,
//! where `isError` is decided, and where `exec`'s `failed_to_start` comes from.

use serde_json::{Map, Value};

use super::fields::{input_fields, opt};
use super::tools::ToolDef;
use super::Reply;
use crate::base::config::Tool;
use crate::base::ring::{Omitted, Streams};
use crate::tools::results::{
    Answer, ErrorKind, ExecResult, KilledFor, Output, ShellResult, Snapshot, ToolError,
};

/// The result object of the answer of tool `def`. An error of a tool that starts a process
/// before it started answers `status: failed_to_start`.
pub(super) fn render(def: &ToolDef, answer: Answer) -> Reply {
    match answer {
        Err(e) => error(def, e),
        Ok(output) => {
            let is_error = output.is_error();
            match output {
                Output::Shell(r) => shell(r),
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
        Output::Exec(r) => exec(r),
        Output::Read(s) => snapshot(s),
        Output::Wait(w) => {
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
        Output::Write(w) => super::tools::write::result(w),
        Output::Stop(s) => super::tools::stop::result(s),
        Output::Ps(list) => super::tools::ps::result(list),
        Output::Cleanup(removed) => super::tools::cleanup::result(removed),
        Output::Shell(r) => shell(r).value,
    }
}

fn snapshot(s: Snapshot) -> Map<String, Value> {
    let mut m = Map::new();
    let out = s.output;
    m.insert("process_id".into(), Value::from(s.process_id));
    m.insert("status".into(), Value::from(s.status.as_str()));
    m.insert("exit_code".into(), opt(s.exit_code));
    m.insert("signal".into(), opt(s.signal));
    m.insert("start_seq".into(), Value::from(out.start_seq));
    m.insert("next_seq".into(), Value::from(out.next_seq));
    m.insert("latest_seq".into(), Value::from(out.latest_seq));
    m.insert("truncated".into(), Value::Bool(out.truncated));
    m.insert("capped".into(), Value::Bool(out.capped));
    if let Some((from, to)) = out.gap {
        m.insert("gap_from".into(), Value::from(from));
        m.insert("gap_to".into(), Value::from(to));
    }
    if s.streams != Streams::Stderr {
        m.insert("stdout".into(), Value::from(into_text(out.stdout)));
    }
    if s.streams != Streams::Stdout {
        m.insert("stderr".into(), Value::from(into_text(out.stderr)));
    }
    m.insert("stdin_error".into(), opt(s.stdin_error));
    omitted_field(&mut m, &out.omitted);
    if out.capped {
        m.insert(
            "message".into(),
            Value::from(format!(
                "More output follows: read again (without since_seq, or with since_seq={}) for the next page.",
                out.next_seq
            )),
        );
    }
    if let Some(k) = s.killed_for {
        m.insert("message".into(), Value::from(k.sentence()));
        m.insert("killed_for".into(), killed_for(k));
    }
    if let Some(f) = s.failed_stage {
        m.insert("failed_stage".into(), Value::from(f));
    }
    if let Some(p) = s.protected {
        m.insert("protected".into(), Value::from(p));
    }
    if !s.highlights.is_empty() {
        let list = s.highlights.into_iter().map(|h| {
            let mut one = Map::new();
            one.insert("seq".into(), Value::from(h.seq));
            let stream = if h.stream == 0 { "stdout" } else { "stderr" };
            one.insert("stream".into(), Value::from(stream));
            one.insert("line".into(), Value::from(h.text));
            Value::Object(one)
        });
        m.insert("highlights".into(), Value::Array(list.collect()));
    }
    input_fields(&mut m, s.input);
    m
}

/// `omitted`, per stream, when an answer left part of its output out.
fn omitted_field(m: &mut Map<String, Value>, omitted: &[Option<Omitted>; 2]) {
    let mut per = Map::new();
    for (name, o) in ["stdout", "stderr"].into_iter().zip(omitted) {
        if let Some(o) = o {
            let mut r = Map::new();
            r.insert("from_seq".into(), Value::from(o.from_seq));
            r.insert("to_seq".into(), Value::from(o.to_seq));
            r.insert("bytes".into(), Value::from(o.bytes));
            r.insert("evicted_bytes".into(), Value::from(o.evicted));
            if let Some(seq) = o.since_seq {
                r.insert("since_seq".into(), Value::from(seq));
            }
            per.insert(name.into(), Value::Object(r));
        }
    }
    if !per.is_empty() {
        m.insert("omitted".into(), Value::Object(per));
    }
}

fn killed_for(k: KilledFor) -> Value {
    let mut r = Map::new();
    r.insert("reason".into(), Value::from("output_cap"));
    r.insert("stream".into(), Value::from(k.stream));
    r.insert("limit".into(), Value::from(k.limit));
    r.insert("bytes".into(), Value::from(k.bytes));
    r.insert("setting".into(), Value::from(k.setting));
    Value::Object(r)
}

fn exec(r: ExecResult) -> Map<String, Value> {
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

/// `shell_execute` answers with text blocks, laid out as MCP Shell Server laid them out: the
/// output (stdout, then stderr), or one block with the reason first and then the output
/// captured before the failure (`stdout:` and `stderr:` sections). A long stream shows its
/// first and last part around a marker line; `process_id` (when `read` is listed) pages the
/// rest.
fn shell(r: ShellResult) -> Reply {
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

/// Bytes as text without a copy when they are valid UTF-8; U+FFFD for invalid sequences.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
