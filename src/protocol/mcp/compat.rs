//! `YIELDSHELL_API=1.1` (`--api 1.1`): mcp-yieldshell 1.1.2's names on the wire (SPEC
//! section 14), for its users to switch without touching their prompts or clients.
//!
//! The engine is the same; only the names change, at the edge:
//! - the tool `exec` is listed and called as `execute`;
//! - the handle `process_id` is `execution_id` (in arguments, results, schemas and texts), and
//!   the OS pid, `pid` here, is `process_id` there;
//! - `truncated` (output dropped before this read) is `evicted`; `ps` lists `executions`;
//! - a result that is `capped` or `evicted` carries 1.1.2's `hint` sentence;
//! - an unknown id is a normal result (not `isError`) with `error: "Unknown execution_id: ID"`.
//!
//! The environment values 1.1.2 accepted (an empty or unparsable integer means the default,
//! an empty blocked list means the default list, a default cwd that does not exist is refused
//! per call) are read by `config` under the same setting.

use serde_json::{Map, Value};

use super::Reply;

/// The 1.1.2 name of tool `name` (ours).
pub(crate) fn wire_tool(name: &str) -> &str {
    match name {
        "exec" => "execute",
        other => other,
    }
}

/// Our name of the tool the client called `wire` under 1.1; `None` for a name 1.1 does not
/// have (`exec`).
pub(crate) fn our_tool(wire: &str) -> Option<&str> {
    match wire {
        "execute" => Some("exec"),
        "exec" => None,
        other => Some(other),
    }
}

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

/// Renames a call's 1.1 arguments to ours.
pub(crate) fn arguments_in(args: &mut Map<String, Value>) {
    for (wire, ours) in ARGUMENTS {
        if let Some(v) = args.remove(*wire) {
            args.insert((*ours).to_string(), v);
        }
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

/// A tool's reply under 1.1's names.
pub(crate) fn reply(mut r: Reply) -> Reply {
    let map = &mut r.value;
    rename(map);
    if let Some(Value::Array(list)) = map.remove("processes") {
        let list = list
            .into_iter()
            .map(|mut e| {
                if let Value::Object(m) = &mut e {
                    rename(m);
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
    // 1.1.2 answered an unknown id as a normal result that says so.
    if map
        .get("error")
        .and_then(Value::as_str)
        .is_some_and(|e| e.starts_with("Unknown execution_id"))
    {
        r.is_error = false;
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
        tool["name"] = Value::from(wire_tool(&name));
        if let Some(Value::String(d)) = tool.get("description") {
            let d = text(d);
            tool["description"] = Value::from(d);
        }
        if let Some(input) = tool.get_mut("inputSchema") {
            rename_property(input, "process_ids", "execution_ids");
            rename_property(input, "process_id", "execution_id");
        }
        if let Some(output) = tool.get_mut("outputSchema") {
            rename_property(output, "process_id", "execution_id");
            rename_property(output, "pid", "process_id");
            rename_property(output, "truncated", "evicted");
            rename_property(output, "processes", "executions");
            if let Some(Value::Object(props)) = output.get_mut("properties") {
                if props.contains_key("capped") {
                    props.insert("hint".into(), serde_json::json!({"type": "string"}));
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
        let value = json!({"process_id": "proc_0123456789ab", "pid": 42, "truncated": true,
            "capped": true, "next_seq": 7, "status": "running"});
        let Value::Object(value) = value else {
            unreachable!()
        };
        let r = reply(Reply {
            value,
            is_error: false,
            texts: None,
        });
        assert_eq!(r.value["execution_id"], "proc_0123456789ab");
        assert_eq!(r.value["process_id"], 42);
        assert_eq!(r.value["evicted"], true);
        assert!(r.value.get("truncated").is_none());
        let hint = r.value["hint"].as_str().unwrap();
        assert!(hint.contains("since_seq=7"), "{hint}");
        assert!(hint.contains("cannot be recovered"), "{hint}");
        let Value::Object(unknown) =
            json!({"process_id": "proc_x", "error": "Unknown process_id: proc_x"})
        else {
            unreachable!()
        };
        let r = reply(Reply {
            value: unknown,
            is_error: true,
            texts: None,
        });
        assert!(!r.is_error);
        assert_eq!(r.value["error"], "Unknown execution_id: proc_x");
    }
}
