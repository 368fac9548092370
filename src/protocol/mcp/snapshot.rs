//! The result object of a snapshot of a process's output, which `exec`, `read` and `wait`
//! answer with, and its `omitted` and `killed_for` fields, which `shell_execute` shares.

use serde_json::{Map, Value};

use super::fields::{input_fields, opt};
use crate::base::ring::{Omitted, Streams};
use crate::tools::results::{KilledFor, Snapshot};

/// The snapshot's fields: the process's state, the output read and where it stopped.
pub(super) fn snapshot(s: Snapshot) -> Map<String, Value> {
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
pub(super) fn omitted_field(m: &mut Map<String, Value>, omitted: &[Option<Omitted>; 2]) {
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

pub(super) fn killed_for(k: KilledFor) -> Value {
    let mut r = Map::new();
    r.insert("reason".into(), Value::from("output_cap"));
    r.insert("stream".into(), Value::from(k.stream));
    r.insert("limit".into(), Value::from(k.limit));
    r.insert("bytes".into(), Value::from(k.bytes));
    r.insert("setting".into(), Value::from(k.setting));
    Value::Object(r)
}

/// Bytes as text without a copy when they are valid UTF-8; U+FFFD for invalid sequences.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
