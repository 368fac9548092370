//! `YIELDSHELL_API=1.1` (`--api 1.1`): mcp-yieldshell 1.1.2's names on the wire, for
//! its users to switch without touching their prompts or clients.
//!
//! The engine is the same; only the names change, at the edge:
//! - the tool `exec` is listed and called as `execute`;
//! - the handle `process_id` is `execution_id` (in arguments, results, schemas and texts), and
//!   the OS pid, `pid` here, is `process_id` there;
//! - `truncated` (output dropped before this read) is `evicted`; `ps` lists `executions`;
//! - a result that is `capped` or `evicted` carries 1.1.2's `hint` sentence;
//! - an unknown id is a normal result (not `isError`) with `error: "Unknown execution_id: ID"`.
//!
//! And the fields keep 1.1.2's types and meanings, as its clients parse them: handles are
//! the 12 hex digits alone, `latest_seq` is one past the newest byte, `exit_code` of a
//! process ended by a signal is minus the signal, `ps` times are epoch seconds (with
//! `last_output_at`), `wait` reports `max_wait_ms`, `write` and `stop` always carry `ok` and
//! `stopped`, and only arguments 1.1.2's schema refuses make `isError` true: every other
//! failure is a result with `error`. The engine reads output as 1.1.2 did (no head and
//! tail, no marker lines, its cursor rules: see `tools/engine`).
//!
//! The environment values 1.1.2 accepted (an empty or unparsable integer means the default,
//! an empty blocked list means the default list, a default cwd that does not exist is refused
//! per call) are read by `config` under the same setting.

use serde_json::{Map, Value};

use super::Reply;
use crate::base::config::{Api, Tool};

/// Argument names as 1.1 spells them, and ours.
const ARGUMENTS: &[(&str, &str)] = &[
    ("execution_id", "process_id"),
    ("execution_ids", "process_ids"),
];

/// The 1.1 spellings of the arguments in `ours` (so that the raw arguments parse them).
pub(crate) fn wire_arguments(ours: &[String]) -> Vec<String> {
    ours.iter()
        .map(|n| {
            ARGUMENTS
                .iter()
                .find(|(_, o)| o == n)
                .map_or(n.clone(), |(w, _)| w.to_string())
        })
        .collect()
}

/// Renames a call's 1.1 arguments to ours, and its handles (12 hex digits) to ours.
pub(crate) fn arguments_in(args: &mut Map<String, Value>) {
    for (wire, ours) in ARGUMENTS {
        if let Some(mut v) = args.remove(*wire) {
            match &mut v {
                Value::Array(list) => list.iter_mut().for_each(handle_in),
                one => handle_in(one),
            }
            args.insert((*ours).to_string(), v);
        }
    }
    numbers_in(args);
}

/// The numbers 1.1.2's schema let through, read as 1.1.2 read them: negative times and
/// limits as 0, an output budget of 0 or less as the default, a cursor below 1 as 1.
fn numbers_in(args: &mut Map<String, Value>) {
    for key in ["timeout_ms", "yield_ms", "force_after_ms", "limit"] {
        if int_arg(args, key).is_some_and(|n| n < 0) {
            args.insert(key.into(), Value::from(0));
        }
    }
    if int_arg(args, "max_output_bytes").is_some_and(|n| n <= 0) {
        args.remove("max_output_bytes");
    }
    if int_arg(args, "since_seq").is_some_and(|n| n < 1) {
        args.insert("since_seq".into(), Value::from(1));
    }
}

/// A text (description, instructions, message) with 1.1's names: the handle and the tool.
pub(crate) fn text(s: &str) -> String {
    rename_words(s, true)
}

/// An error text with 1.1's name of the handle (a refusal may quote `find -exec` or a
/// program called `exec`, which must stay as they are).
fn error_text(s: &str) -> String {
    rename_words(s, false)
}

fn rename_words(s: &str, tool: bool) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let bytes = s.as_bytes();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < s.len() {
        let before_ok = i == 0 || !(word(bytes[i - 1]) || bytes[i - 1] == b'-');
        let rest = &s[i..];
        let mut replaced = false;
        if before_ok {
            for (from, to) in [
                ("process_ids", "execution_ids"),
                ("process_id", "execution_id"),
                ("exec", "execute"),
            ] {
                if from == "exec" && !tool {
                    continue;
                }
                if rest.starts_with(from)
                    && rest.as_bytes().get(from.len()).is_none_or(|c| !word(*c))
                {
                    out.push_str(to);
                    i += from.len();
                    replaced = true;
                    break;
                }
            }
        }
        if !replaced {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Renames the keys of one result object (or `ps` entry): `process_id` → `execution_id`,
/// `pid` → `process_id`, `truncated` → `evicted`.
fn rename(map: &mut Map<String, Value>) {
    let handle = map.remove("process_id");
    let pid = map.remove("pid");
    let truncated = map.remove("truncated");
    let mut out = Map::with_capacity(map.len() + 3);
    if let Some(v) = handle {
        out.insert("execution_id".into(), v);
    }
    if let Some(v) = pid {
        out.insert("process_id".into(), v);
    }
    for (k, v) in std::mem::take(map) {
        out.insert(k, v);
    }
    if let Some(v) = truncated {
        out.insert("evicted".into(), v);
    }
    *map = out;
}

/// What a 1.1 answer needs to know of its call besides the reply.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    /// The tool called (`None` only in `Default`).
    tool: Option<Tool>,
    /// `wait`'s effective deadline as 1.1.2 reports it (`max_wait_ms`).
    max_wait_ms: Option<u64>,
}

/// Most milliseconds a 1.1.2 `wait` waits.
const MAX_WAIT_MS: i64 = 55_000;

/// An integer argument as 1.1.2's schema took it (a JSON integer; lenient like ours).
fn int_arg(args: &Map<String, Value>, name: &str) -> Option<i64> {
    match args.get(name)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// What `reply` will need of the call of our tool `tool` with `args` (already renamed).
pub(crate) fn asked(tool: Tool, args: &Map<String, Value>) -> Asked {
    let max_wait_ms = (tool == Tool::Wait).then(|| {
        int_arg(args, "timeout_ms")
            .unwrap_or(MAX_WAIT_MS)
            .clamp(0, MAX_WAIT_MS) as u64
    });
    Asked {
        tool: Some(tool),
        max_wait_ms,
    }
}

/// A refusal 1.1.2 answers as a result with `error` (not as a schema error) where our
/// schema refuses the arguments: `tail_lines` below 1, or with `since_seq`, in `read` and
/// `wait`; a `streams` value other than the three; a negative `cleanup` threshold. The call
/// is then answered with this text, as a refusal, before the tool runs.
pub(crate) fn refusal(tool: Tool, args: &Map<String, Value>) -> Option<String> {
    let given = |k: &str| args.get(k).is_some_and(|v| !v.is_null());
    match tool {
        Tool::Read | Tool::Wait if given("since_seq") && given("tail_lines") => Some(
            "since_seq and tail_lines cannot be combined: give since_seq to continue a read, \
             or tail_lines for the newest lines"
                .into(),
        ),
        Tool::Read | Tool::Wait if int_arg(args, "tail_lines").is_some_and(|n| n <= 0) => {
            let n = int_arg(args, "tail_lines").unwrap_or_default();
            Some(format!("tail_lines must be positive, got {n}"))
        }
        Tool::Read => match args.get("streams") {
            Some(Value::String(s)) if !matches!(s.as_str(), "both" | "stdout" | "stderr") => Some(
                format!("Invalid streams: {s:?}; expected \"both\", \"stdout\" or \"stderr\""),
            ),
            _ => None,
        },
        Tool::Cleanup => {
            let completed = int_arg(args, "completed_older_than_ms").unwrap_or(3_600_000);
            let stopped = int_arg(args, "stopped_older_than_ms").unwrap_or(3_600_000);
            (completed < 0 || stopped < 0).then(|| {
                format!(
                    "thresholds must be non-negative milliseconds (got \
                     completed_older_than_ms={completed}, stopped_older_than_ms={stopped}); \
                     nothing was removed"
                )
            })
        }
        _ => None,
    }
}

/// Our handle prefix; 1.1.2's handles are the 12 hex digits alone.
const HANDLE_PREFIX: &str = "proc_";

/// Whether `s` is 12 lowercase hex digits: a 1.1.2 handle.
fn is_short_handle(s: &str) -> bool {
    s.len() == 12
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Our handle for a handle a 1.1 client sends (anything else is left as it is, and is
/// then unknown).
fn handle_in(v: &mut Value) {
    if let Value::String(s) = v {
        if is_short_handle(s) {
            *s = format!("{HANDLE_PREFIX}{s}");
        }
    }
}

/// `text` with each of our handles (`proc_` and 12 hex digits) written as 1.1.2's.
fn handles_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(HANDLE_PREFIX) {
        let after = &rest[i + HANDLE_PREFIX.len()..];
        let handle = after.get(..12).is_some_and(is_short_handle)
            && !after[12..].starts_with(|c: char| c.is_ascii_alphanumeric());
        out.push_str(&rest[..i]);
        if !handle {
            out.push_str(HANDLE_PREFIX);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// 1.1.2's `exit_code` of a process ended by signal `name`: minus its number.
fn exit_code_of(name: &Value) -> Value {
    name.as_str()
        .and_then(crate::base::sys::signal_from_name)
        .map_or(Value::Null, |(n, _)| Value::from(-i64::from(n)))
}

/// The fields of one result object (or `ps` entry) as 1.1.2 sends them: `latest_seq` one
/// past the newest byte, `exit_code` of a signalled process as minus the signal.
fn fields_out(map: &mut Map<String, Value>) {
    if let Some(Value::Number(n)) = map.get("latest_seq") {
        if let Some(n) = n.as_u64() {
            map.insert("latest_seq".into(), Value::from(n + 1));
        }
    }
    if map.get("exit_code") == Some(&Value::Null) {
        // A stop result names the signal it sent in `signal`, and the one that ended the
        // process in `exit_signal`.
        let ended_by = map.get("exit_signal").or_else(|| map.get("signal"));
        if let Some(code) = ended_by.map(exit_code_of) {
            map.insert("exit_code".into(), code);
        }
    }
    for key in ["execution_id", "error", "message"] {
        if let Some(Value::String(s)) = map.get(key) {
            let s = handles_out(s);
            map.insert(key.into(), Value::from(s));
        }
    }
}

/// A `ps` entry's times as 1.1.2 sends them: epoch seconds, and `last_output_at` (with
/// `idle_ms`) null while the process has printed nothing.
fn times_out(map: &mut Map<String, Value>, now: f64) {
    for key in ["started_at", "ended_at"] {
        if let Some(Value::String(s)) = map.get(key) {
            let t = crate::base::stamp::epoch_seconds(s).map_or(Value::Null, Value::from);
            map.insert(key.into(), t);
        }
    }
    let bytes = |k: &str| map.get(k).and_then(Value::as_u64).unwrap_or(0);
    let printed = bytes("stdout_bytes") + bytes("stderr_bytes") > 0;
    let idle = map
        .get("idle_ms")
        .and_then(Value::as_f64)
        .filter(|_| printed);
    let last = idle.map(|ms| ((now - ms / 1000.0) * 1000.0).round() / 1000.0);
    map.insert(
        "last_output_at".into(),
        last.map_or(Value::Null, Value::from),
    );
    map.insert("idle_ms".into(), idle.map_or(Value::Null, Value::from));
}

/// 1.1.2's sentence for a command still running when `execute` returns.
const BACKGROUNDED: &str =
    "Execution is running in the background. Use read, wait, or stop with execution_id.";

/// A tool's reply under 1.1's names and with 1.1.2's fields, types and `isError`.
/// `invalid_arguments`: the call was refused for arguments that break the input schema,
/// the one failure 1.1.2 answers with `isError: true` (its `refusal`s are answered apart).
pub(crate) fn reply(asked: &Asked, mut r: Reply, invalid_arguments: bool) -> Reply {
    let map = &mut r.value;
    rename(map);
    if asked.tool == Some(Tool::ShellExecute) {
        return r;
    }
    // The text is 1.1.2's: the result object as JSON, whatever the default profile shows.
    r.texts = None;
    map.remove("highlights");
    if let Some(Value::Array(list)) = map.remove("processes") {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let list = list
            .into_iter()
            .map(|mut e| {
                if let Value::Object(m) = &mut e {
                    rename(m);
                    fields_out(m);
                    times_out(m, now);
                }
                e
            })
            .collect();
        map.insert("executions".into(), Value::Array(list));
    }
    if let Some(Value::String(s)) = map.get("error") {
        let renamed = error_text(s);
        map.insert("error".into(), Value::from(renamed));
    }
    if let Some(Value::String(s)) = map.get("message") {
        let renamed = text(s);
        map.insert("message".into(), Value::from(renamed));
    }
    if let Some(Value::Object(statuses)) = map.remove("statuses") {
        let renamed = statuses.into_iter().map(|(k, v)| (handles_out(&k), v));
        map.insert("statuses".into(), Value::Object(renamed.collect()));
    }
    fields_out(map);
    if map.get("status").and_then(Value::as_str) == Some("backgrounded") {
        map.insert("message".into(), Value::from(BACKGROUNDED));
    }
    if let Some(ms) = asked.max_wait_ms {
        if map.contains_key("wait_result") {
            map.insert("max_wait_ms".into(), Value::from(ms));
        }
    }
    // 1.1.2 answers with a result whatever went wrong, except arguments its schema refuses.
    r.is_error = r.is_error && invalid_arguments;
    match asked.tool {
        Some(Tool::Write) if !map.contains_key("ok") => {
            map.insert("ok".into(), Value::Bool(false));
        }
        Some(Tool::Stop) if !map.contains_key("stopped") => {
            map.insert("stopped".into(), Value::Bool(false));
        }
        _ => {}
    }
    let capped = map.get("capped") == Some(&Value::Bool(true));
    let evicted = map.get("evicted") == Some(&Value::Bool(true));
    let mut hints = Vec::new();
    if capped {
        let next = map.get("next_seq").cloned().unwrap_or(Value::Null);
        let id = map
            .get("execution_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        hints.push(format!(
            "More output is available; read again to continue, or pass since_seq={next} \
             explicitly (execution_id='{id}')."
        ));
    }
    if evicted {
        hints.push(
            "Older execution output was dropped before this read and cannot be recovered; \
             poll more often or raise YIELDSHELL_MAX_BUFFER_BYTES."
                .to_string(),
        );
    }
    if !hints.is_empty() {
        map.insert("hint".into(), Value::from(hints.join(" ")));
    }
    r
}

/// Renames the property `from` of a schema's `properties` (and in `required`) to `to`.
fn rename_property(schema: &mut Value, from: &str, to: &str) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        if let Some(mut v) = props.remove(from) {
            if let Some(Value::String(d)) = v.get("description") {
                let d = text(d);
                v["description"] = Value::from(d);
            }
            props.insert(to.to_string(), v);
        }
        for v in props.values_mut() {
            if let Some(Value::String(d)) = v.get("description") {
                let d = text(d);
                v["description"] = Value::from(d);
            }
        }
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        for r in required.iter_mut() {
            if r.as_str() == Some(from) {
                *r = Value::from(to);
            }
        }
    }
}

/// A `tools/list` result under 1.1's names.
pub(crate) fn tools_list(mut list: Value) -> Value {
    let Some(tools) = list.get_mut("tools").and_then(Value::as_array_mut) else {
        return list;
    };
    for tool in tools.iter_mut() {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        if let Some(ours) = Tool::from_name(&name) {
            tool["name"] = Value::from(ours.wire_name(Api::V1_1));
        }
        let takes_handle = tool["inputSchema"]["properties"]
            .get("process_id")
            .is_some();
        if let Some(Value::String(d)) = tool.get("description") {
            let mut d = text(d);
            // 1.1.2's words, which its clients (and its own tests) look for.
            if takes_handle {
                d.push_str(" execution_id is opaque and must be passed through unchanged from execute's answer (never the numeric process_id).");
            }
            tool["description"] = Value::from(d);
        }
        if let Some(input) = tool.get_mut("inputSchema") {
            rename_property(input, "process_ids", "execution_ids");
            rename_property(input, "process_id", "execution_id");
            // 1.1.2's `wait` takes one execution and requires it (`execution_ids` is ours).
            if name == "wait" {
                input["required"] = serde_json::json!(["execution_id"]);
            }
        }
        if let Some(output) = tool.get_mut("outputSchema") {
            rename_property(output, "process_id", "execution_id");
            rename_property(output, "pid", "process_id");
            rename_property(output, "truncated", "evicted");
            rename_property(output, "processes", "executions");
            if let Some(Value::Object(props)) = output.get_mut("properties") {
                // 1.1.2's entries have its own names and types (epoch times, the OS pid).
                if let Some(list) = props.get_mut("executions") {
                    list["items"] = serde_json::json!({"type": "object"});
                }
                if props.contains_key("capped") {
                    props.insert("hint".into(), serde_json::json!({"type": "string"}));
                }
                if name == "wait" {
                    let deadline = serde_json::json!({"type": "integer",
                        "description": "The wait's deadline in force (timeout_ms, at most 55000)."});
                    props.insert("max_wait_ms".into(), deadline);
                }
            }
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_rename_whole_words_only() {
        assert_eq!(
            text("use read with the process_id from exec; shell_execute, execs, process_ids"),
            "use read with the execution_id from execute; shell_execute, execs, execution_ids"
        );
        assert_eq!(
            error_text("process_id: find -exec is refused; exec too"),
            "execution_id: find -exec is refused; exec too"
        );
        assert_eq!(text("find -exec"), "find -exec");
    }

    #[test]
    fn replies_use_the_old_names() {
        let value = object(json!({"process_id": "proc_0123456789ab", "pid": 42,
            "truncated": true, "capped": true, "next_seq": 7, "status": "running"}));
        let r = answer(&asked(Tool::Read, &Map::new()), value, false, false);
        assert_eq!(r.value["execution_id"], "0123456789ab");
        assert_eq!(r.value["process_id"], 42);
        assert_eq!(r.value["evicted"], true);
        assert!(r.value.get("truncated").is_none());
        let hint = r.value["hint"].as_str().unwrap();
        assert!(hint.contains("since_seq=7"), "{hint}");
        assert!(hint.contains("cannot be recovered"), "{hint}");
        let unknown =
            object(json!({"process_id": "proc_x", "error": "Unknown process_id: proc_x"}));
        let r = answer(&asked(Tool::Write, &Map::new()), unknown, true, false);
        assert!(!r.is_error);
        assert_eq!(r.value["error"], "Unknown execution_id: proc_x");
        assert_eq!(r.value["ok"], false);
    }

    /// What `reply` makes of a result object (with no text blocks of its own).
    fn answer(asked: &Asked, value: Map<String, Value>, is_error: bool, invalid: bool) -> Reply {
        reply(
            asked,
            Reply {
                value,
                is_error,
                texts: None,
            },
            invalid,
        )
    }

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn fields_have_the_types_and_meanings_of_1_1_2() {
        let args = object(json!({"execution_id": "0123456789ab", "timeout_ms": 90000}));
        let mut renamed = args.clone();
        arguments_in(&mut renamed);
        assert_eq!(renamed["process_id"], "proc_0123456789ab");
        let wait = asked(Tool::Wait, &renamed);
        let value = object(json!({"process_id": "proc_0123456789ab", "latest_seq": 3,
            "exit_code": null, "signal": "SIGTERM", "status": "stopped",
            "wait_result": "exited"}));
        let r = answer(&wait, value, false, false);
        assert_eq!(r.value["latest_seq"], 4, "one past the newest byte");
        assert_eq!(r.value["exit_code"], -15);
        assert_eq!(r.value["max_wait_ms"], 55_000);
        let value = object(json!({"processes": [{"process_id": "proc_00000000000a",
            "pid": 7, "started_at": "1970-01-01T00:00:10.500Z", "ended_at": null,
            "stdout_bytes": 0, "stderr_bytes": 0, "idle_ms": 40, "latest_seq": 0,
            "exit_code": null, "signal": null}]}));
        let r = answer(&asked(Tool::Ps, &Map::new()), value, false, false);
        let e = &r.value["executions"][0];
        assert_eq!(e["execution_id"], "00000000000a");
        assert_eq!(e["started_at"], 10.5);
        assert_eq!(e["last_output_at"], Value::Null);
        assert_eq!(e["idle_ms"], Value::Null);
        assert_eq!(e["latest_seq"], 1);
        assert_eq!(e["exit_code"], Value::Null);
        // A refusal is a result; arguments the schema refuses stay an error.
        let value =
            object(json!({"status": "failed_to_start", "error": "cwd x is not a directory"}));
        let r = answer(&asked(Tool::Exec, &Map::new()), value, true, false);
        assert!(!r.is_error);
        let value =
            object(json!({"error": "missing required argument command: expected a string"}));
        let r = answer(&asked(Tool::Exec, &Map::new()), value, true, true);
        assert!(r.is_error);
        let stop = object(json!({"error": "Unknown process_id: proc_0123456789ab"}));
        let r = answer(&asked(Tool::Stop, &Map::new()), stop, true, false);
        assert_eq!(r.value["stopped"], false);
        assert_eq!(r.value["error"], "Unknown execution_id: 0123456789ab");
        let mut lenient = object(json!({"timeout_ms": -5, "yield_ms": "-1",
            "max_output_bytes": 0, "since_seq": -4, "limit": -1}));
        arguments_in(&mut lenient);
        assert_eq!(
            Value::Object(lenient),
            json!({"timeout_ms": 0, "yield_ms": 0, "since_seq": 1, "limit": 0})
        );
        let tail = object(json!({"tail_lines": 0}));
        assert_eq!(
            refusal(Tool::Read, &tail).as_deref(),
            Some("tail_lines must be positive, got 0")
        );
        assert_eq!(refusal(Tool::Ps, &tail), None);
        let both = object(json!({"tail_lines": 2, "since_seq": 3}));
        assert!(refusal(Tool::Wait, &both).is_some_and(|m| m.contains("cannot be combined")));
        let streams = object(json!({"streams": "all"}));
        assert!(refusal(Tool::Read, &streams).is_some_and(|m| m.starts_with("Invalid streams")));
        let cleanup = object(json!({"completed_older_than_ms": -1}));
        assert!(refusal(Tool::Cleanup, &cleanup).is_some());
        assert_eq!(refusal(Tool::Cleanup, &object(json!({}))), None);
    }
}
