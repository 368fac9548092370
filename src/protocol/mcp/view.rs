//! What a model reads of a shell-mode tool's answer in the default profile: the result
//! object without the fields at their defaults (each default is stated in `outputSchema`,
//! see `schema::with_defaults`), and a text written for reading: a one-line header of the
//! fields that are set, then the output as plain text (stdout, then stderr under a
//! `[stderr]` line), then the sentences (`error`, `message`).
//!
//! Clients differ in which of the two they show the model (see `base/clients`), so both stay
//! small, and each holds every value a caller needs to go on (`process_id`, `next_seq` while
//! there is more to read, the exit code, the omitted ranges' `since_seq` in the marker lines).

use serde_json::{Map, Value};

use super::Reply;

/// Fields left out of a result object when they hold this value (`null` fields are always
/// left out). `latest_seq` is left out when it is `next_seq - 1` (the answer reached the
/// newest byte).
pub(super) const DEFAULTS: &[(&str, DefaultValue)] = &[
    ("truncated", DefaultValue::False),
    ("capped", DefaultValue::False),
    ("awaiting_input", DefaultValue::False),
    ("stdout", DefaultValue::Empty),
    ("stderr", DefaultValue::Empty),
    ("start_seq", DefaultValue::One),
    ("next_seq", DefaultValue::One),
    // `write` wrote, `stop` stopped: said only when not (then with `error`).
    ("ok", DefaultValue::True),
    ("stopped", DefaultValue::True),
    ("duration_ms", DefaultValue::Zero),
    ("waited_ms", DefaultValue::Zero),
    ("stdout_bytes", DefaultValue::Zero),
    ("stderr_bytes", DefaultValue::Zero),
];

/// A default value of [`DEFAULTS`].
#[derive(Clone, Copy, Debug)]
pub(super) enum DefaultValue {
    False,
    True,
    Empty,
    Zero,
    One,
}

impl DefaultValue {
    pub(super) fn json(self) -> Value {
        match self {
            DefaultValue::False => Value::Bool(false),
            DefaultValue::True => Value::Bool(true),
            DefaultValue::Empty => Value::from(""),
            DefaultValue::Zero => Value::from(0),
            DefaultValue::One => Value::from(1),
        }
    }
}

/// The reply as the default profile sends it: compact object, designed text. A reply that
/// brings its own text blocks (`shell_execute`, laid out as MCP Shell Server laid it out)
/// is left as it is.
pub(crate) fn compact(mut r: Reply) -> Reply {
    if r.texts.is_some() {
        return r;
    }
    strip(&mut r.value);
    if let Some(Value::Object(all)) = r.value.get_mut("statuses") {
        // Each one's status is "completed" unless it says otherwise.
        for one in all.values_mut() {
            if let Value::Object(m) = one {
                let completed = |k: &String, v: &Value| k == "status" && v == "completed";
                m.retain(|k, v| !(v.is_null() || completed(k, v)));
            }
        }
    }
    if let Some(Value::Array(list)) = r.value.get_mut("processes") {
        for entry in list.iter_mut() {
            if let Value::Object(m) = entry {
                strip(m);
            }
        }
    }
    r.texts = Some(vec![text(&r.value)]);
    r
}

/// `r` with `note` (arguments the call gave that the tool does not know) as its `warning`,
/// and as a text block of its own after a reply's own text blocks.
pub(crate) fn with_note(mut r: Reply, note: Option<&str>) -> Reply {
    if let Some(note) = note {
        r.value.insert("warning".into(), Value::from(note));
        if let Some(texts) = r.texts.as_mut() {
            texts.push(note.to_string());
        }
    }
    r
}

/// Removes the fields at their defaults.
fn strip(m: &mut Map<String, Value>) {
    let next = m.get("next_seq").and_then(Value::as_u64);
    let latest = m.get("latest_seq").and_then(Value::as_u64);
    if next.is_some() && latest == next.map(|n| n.saturating_sub(1)) {
        m.remove("latest_seq");
    }
    // `stop`: what ended the process is named only when it is not the signal sent.
    if m.contains_key("exit_signal") && m.get("exit_signal") == m.get("signal") {
        m.remove("exit_signal");
    }
    m.retain(|key, v| {
        !v.is_null()
            && !DEFAULTS
                .iter()
                .any(|(k, d)| *k == key.as_str() && *v == d.json())
    });
}

/// Fields that never go into the header: the output and sentences (written below it), and
/// what a reader of the text has no use for (`pid`, `start_seq`, `latest_seq`).
const NOT_IN_HEADER: &[&str] = &[
    "stdout",
    "stderr",
    "error",
    "message",
    "prompt",
    "stdin_error",
    "warning",
    "pid",
    "start_seq",
    "latest_seq",
    "omitted",
    "killed_for",
];

/// The header's first fields, in this order; the other scalar fields follow.
const HEADER_FIRST: &[&str] = &[
    "status",
    "wait_result",
    "exit_code",
    "signal",
    "process_id",
    "duration_ms",
    "waited_ms",
];

/// The designed text of a compact result object.
pub(super) fn text(m: &Map<String, Value>) -> String {
    let mut out = String::new();
    header(m, &mut out);
    let mut body = |label: Option<&str>, text: &str| {
        if text.is_empty() {
            return;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if let Some(label) = label {
            out.push_str(label);
            out.push('\n');
        }
        out.push_str(text);
    };
    body(None, str_of(m, "stdout"));
    body(Some("[stderr]"), str_of(m, "stderr"));
    for (key, v) in m {
        match (key.as_str(), v) {
            ("statuses", Value::Object(all)) => {
                for (id, s) in all {
                    line(&mut out, &format!("{id}: {}", fields_line(s)));
                }
            }
            ("processes", Value::Array(list)) => {
                if list.is_empty() {
                    line(&mut out, "no processes");
                }
                for p in list {
                    line(&mut out, &fields_line(p));
                }
            }
            ("highlights", Value::Array(list)) => {
                line(&mut out, "[left out above, looks like an error]");
                for h in list {
                    let seq = h.get("seq").map(Value::to_string).unwrap_or_default();
                    let text = h.get("line").and_then(Value::as_str).unwrap_or_default();
                    line(&mut out, &format!("since_seq={seq}: {text}"));
                }
            }
            ("omitted" | "killed_for", _) => (),
            (_, Value::Object(_) | Value::Array(_)) => line(&mut out, &format!("{key}: {v}")),
            _ => (),
        }
    }
    // The prompt is the output's last line: shown again only when the output does not end
    // with it.
    if let Some(p) = m.get("prompt") {
        let shown = p
            .as_str()
            .is_some_and(|p| str_of(m, "stdout").ends_with(p) || str_of(m, "stderr").ends_with(p));
        if !shown {
            line(&mut out, &format!("prompt: {p}"));
        }
    }
    for key in ["stdin_error", "error", "message", "warning"] {
        let s = str_of(m, key);
        if !s.is_empty() {
            line(
                &mut out,
                &if key == "message" {
                    s.to_string()
                } else {
                    format!("{key}: {s}")
                },
            );
        }
    }
    out
}

/// `text` on a line of its own.
fn line(out: &mut String, text: &str) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(text);
}

fn str_of<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The scalar fields of `m` as `key=value` words, the first ones in `HEADER_FIRST`'s order.
fn header(m: &Map<String, Value>, out: &mut String) {
    let mut words: Vec<String> = Vec::new();
    let ended = m
        .get("status")
        .and_then(Value::as_str)
        .is_some_and(|s| !matches!(s, "running" | "backgrounded"));
    // A finished answer with nothing more to page needs no cursor.
    let cursor_needed = !ended || m.get("capped") == Some(&Value::Bool(true));
    let shown = |key: &str, v: &Value| {
        !NOT_IN_HEADER.contains(&key)
            && !matches!(v, Value::Object(_) | Value::Array(_))
            && (key != "next_seq" || cursor_needed)
    };
    for key in HEADER_FIRST {
        if let Some(v) = m.get(*key).filter(|v| shown(key, v)) {
            words.push(word(key, v));
        }
    }
    for (key, v) in m {
        if !HEADER_FIRST.contains(&key.as_str()) && shown(key, v) {
            words.push(word(key, v));
        }
    }
    out.push_str(&words.join(" "));
}

/// `key=value`: a string without spaces or quotes bare, any other value as JSON.
fn word(key: &str, v: &Value) -> String {
    match v {
        Value::String(s) if !s.is_empty() && !s.contains([' ', '"', '\n', '=']) => {
            format!("{key}={s}")
        }
        other => format!("{key}={other}"),
    }
}

/// An object's fields as one line of `key=value` words (a ps entry, a wait status).
fn fields_line(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut first: Vec<String> = HEADER_FIRST
                .iter()
                .filter_map(|k| m.get(*k).map(|v| word(k, v)))
                .collect();
            first.extend(
                m.iter()
                    .filter(|(k, _)| !HEADER_FIRST.contains(&k.as_str()))
                    .map(|(k, v)| word(k, v)),
            );
            first.join(" ")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn defaults_are_left_out_and_the_output_is_plain_text() {
        let r = compact(Reply {
            value: object(json!({
                "status": "completed", "exit_code": 0, "signal": null, "process_id": "proc_0123456789ab",
                "pid": 7, "duration_ms": 3, "stdout": "hi\n", "stderr": "", "start_seq": 1,
                "next_seq": 4, "latest_seq": 3, "truncated": false, "capped": false,
                "awaiting_input": false
            })),
            is_error: false,
            texts: None,
        });
        assert_eq!(
            Value::Object(r.value),
            json!({"status": "completed", "exit_code": 0, "process_id": "proc_0123456789ab",
                   "pid": 7, "duration_ms": 3, "stdout": "hi\n", "next_seq": 4})
        );
        assert_eq!(
            r.texts,
            Some(vec![
                "status=completed exit_code=0 process_id=proc_0123456789ab duration_ms=3\nhi\n"
                    .to_string()
            ])
        );
    }

    #[test]
    fn a_running_process_names_its_cursor_and_stderr_is_labelled() {
        let m = object(json!({
            "status": "backgrounded", "process_id": "proc_0123456789ab", "next_seq": 9,
            "stdout": "a", "stderr": "b\n", "message": "Still running."
        }));
        assert_eq!(
            text(&m),
            "status=backgrounded process_id=proc_0123456789ab next_seq=9\na\n[stderr]\nb\nStill running."
        );
    }

    #[test]
    fn a_reply_with_its_own_texts_is_kept() {
        let r = compact(Reply {
            value: object(json!({"stdout": "", "status": 0})),
            is_error: false,
            texts: Some(vec!["x".into()]),
        });
        assert_eq!(r.value.len(), 2);
    }
}
