//! Typed answers to result objects: the only place where a tool's answer becomes JSON,
//! where `isError` is decided, and where `exec`'s `failed_to_start` comes from.

use serde_json::{Map, Value};

use super::Reply;
use crate::base::ring::{Omitted, Streams};
use crate::tools::results::{
    Answer, ErrorKind, ExecResult, KilledFor, Output, PsEntry, ShellResult, Snapshot, StopResult,
    ToolError,
};

/// The result object of `tool`'s answer. `starts_process` is the tool's registry flag: an
/// error before its process started answers `status: failed_to_start`.
pub(super) fn render(tool: &str, starts_process: bool, answer: Answer) -> Reply {
    match answer {
        Err(e) => error(tool, starts_process, e),
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

fn error(tool: &str, starts_process: bool, e: ToolError) -> Reply {
    let mut m = Map::new();
    if starts_process && e.started_nothing() {
        m.insert("status".into(), Value::from("failed_to_start"));
    }
    if let Some(id) = e.process_id {
        m.insert("process_id".into(), Value::from(id));
    }
    if e.kind == ErrorKind::InvalidSignal {
        m.insert("stopped".into(), Value::Bool(false));
    }
    if tool == "cleanup" {
        m.insert("removed".into(), Value::from(0));
    }
    m.insert("error".into(), Value::from(e.message));
    Reply {
        value: m,
        is_error: true,
        texts: None,
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
                let all = statuses
                    .into_vec()
                    .into_iter()
                    .map(|(id, s)| (id, Value::from(s.as_str())));
                m.insert("statuses".into(), Value::Object(all.collect()));
            }
            m
        }
        Output::Write(w) => {
            let mut m = Map::new();
            m.insert("process_id".into(), Value::from(w.process_id));
            m.insert("ok".into(), Value::Bool(w.error.is_none()));
            if let Some(e) = w.error {
                m.insert("error".into(), Value::from(e));
            }
            m
        }
        Output::Stop(s) => stop(s),
        Output::Ps(list) => {
            let mut m = Map::new();
            let list = list.into_iter().map(|e| Value::Object(ps_entry(e)));
            m.insert("processes".into(), Value::Array(list.collect()));
            m
        }
        Output::Cleanup(removed) => {
            let mut m = Map::new();
            m.insert("removed".into(), Value::from(removed));
            m
        }
        Output::Shell(r) => shell(r).value,
    }
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
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
    input_fields(&mut m, s.input);
    m
}

/// `omitted`, per stream, when an answer left part of its output out (SPEC section 14).
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

/// `awaiting_input`, and `prompt` when it is true (SPEC section 13).
fn input_fields(m: &mut Map<String, Value>, input: crate::process::agents::InputState) {
    m.insert("awaiting_input".into(), Value::Bool(input.awaiting()));
    if let Some(p) = input.0 {
        m.insert("prompt".into(), Value::from(String::from(p)));
    }
}

fn exec(r: ExecResult) -> Map<String, Value> {
    let next_seq = r.snapshot.output.next_seq;
    let id = r.snapshot.process_id.clone();
    // exec names stdin_error only when writing the initial stdin failed.
    let stdin_failed = r.snapshot.stdin_error.is_some();
    let asks = if r.snapshot.input.awaiting() {
        " It is waiting for input now (see prompt): answer with write."
    } else {
        ""
    };
    let mut m = snapshot(r.snapshot);
    if !stdin_failed {
        m.remove("stdin_error");
    }
    if r.backgrounded {
        m.insert("status".into(), Value::from("backgrounded"));
        m.insert(
            "message".into(),
            Value::from(format!(
                "The command is still running in the background as {id}.{asks} Use read with \
                 process_id {id} and since_seq {next_seq} for new output, wait to block until it \
                 exits or prints something (until) or asks for input (until_input), write to \
                 send input, and stop to end it."
            )),
        );
    }
    m.insert("pid".into(), Value::from(r.pid));
    m.insert("duration_ms".into(), Value::from(r.duration_ms));
    m
}

fn stop(s: StopResult) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("process_id".into(), Value::from(s.process_id));
    m.insert("signal".into(), Value::from(s.signal));
    m.insert("stopped".into(), Value::Bool(s.stopped));
    m.insert("status".into(), Value::from(s.status.as_str()));
    m.insert("exit_code".into(), opt(s.exit_code));
    m.insert("exit_signal".into(), opt(s.exit_signal));
    m.insert("error".into(), opt(s.error));
    m
}

/// Most bytes of a `ps` entry's command or directory, so that 50 entries fit well under
/// 64 KiB (SPEC section 14).
const PS_TEXT_MAX: usize = 256;

/// `text` cut to `PS_TEXT_MAX` bytes on a character, marked with an ellipsis.
fn clip(mut text: String) -> String {
    if text.len() > PS_TEXT_MAX {
        let mut cut = PS_TEXT_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let left = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!("… [{left} more bytes]"));
    }
    text
}

fn ps_entry(e: PsEntry) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("process_id".into(), Value::from(e.process_id));
    m.insert("pid".into(), Value::from(e.pid));
    m.insert("name".into(), opt(e.name));
    m.insert("command".into(), Value::from(clip(e.command)));
    m.insert("cwd".into(), Value::from(clip(e.cwd)));
    m.insert("status".into(), Value::from(e.status.as_str()));
    m.insert("exit_code".into(), opt(e.exit_code));
    m.insert("signal".into(), opt(e.signal));
    m.insert("started_at".into(), Value::from(e.started_at));
    m.insert("ended_at".into(), opt(e.ended_at));
    m.insert("duration_ms".into(), Value::from(e.duration_ms));
    m.insert("stdout_bytes".into(), Value::from(e.stdout_bytes));
    m.insert("stderr_bytes".into(), Value::from(e.stderr_bytes));
    m.insert("idle_ms".into(), Value::from(e.idle_ms));
    m.insert("latest_seq".into(), Value::from(e.latest_seq));
    m.insert("stdin_error".into(), opt(e.stdin_error));
    m.insert("processes".into(), opt(e.processes.map(|n| n as u64)));
    input_fields(&mut m, e.input);
    if let Some(Value::String(p)) = m.get_mut("prompt") {
        *p = clip(std::mem::take(p));
    }
    m
}

/// `shell_execute` answers with text blocks: the output, or the reason first and then the
/// output captured before the failure. A long stream shows its first and last part around a
/// marker line; `process_id` (when `read` is listed) pages the rest.
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
    let killed = r.killed_for.as_ref().map(|k| k.sentence());
    if let Some(k) = r.killed_for {
        m.insert("killed_for".into(), killed_for(*k));
    }
    let texts = match &r.error {
        Some(reason) => {
            m.insert("error".into(), Value::from(reason.clone()));
            let mut texts = vec![format!("Error executing command: {reason}")];
            let when = match killed {
                Some(sentence) => {
                    texts.push(sentence);
                    "up to the kill"
                }
                None => "before the error",
            };
            if !r.stdout.is_empty() {
                texts.push(format!("stdout (captured {when}):\n{}", r.stdout));
            }
            if !r.stderr.is_empty() {
                texts.push(format!("stderr (captured {when}):\n{}", r.stderr));
            }
            texts
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
