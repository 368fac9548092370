//! The MCP layer: handshake, tool list, and `tools/call` arguments to typed calls.
//!
//! This is the serde boundary of the tools: arguments are checked here, leniently where
//! the Python servers were lenient (integers as numeric strings or integral floats,
//! booleans as "true"/"false", `null` for an optional field, unknown fields ignored), and
//! a broken argument becomes a tool result with `isError: true` that names the field, the
//! value received and what is accepted. Fields newer than the negotiated protocol version
//! (`title`, `outputSchema`, `structuredContent`, annotations) are left out.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::tools::call::Call;
use crate::tools::engine::{BadCommand, Engine};
use crate::tools::results::{ErrorKind, ToolError};

mod args;
pub(crate) mod client;
pub(crate) mod compat;
mod describe;
pub(crate) mod modern;
mod render;
mod schema;
mod tools;

use tools::TOOLS;

pub(crate) use describe::{default_yield, instructions_for, tools_list_for};

/// A tool's answer as JSON: the result object, whether it reports a failure, and the text
/// blocks to send instead of the object's JSON (`shell_execute`).
#[derive(Debug)]
pub struct Reply {
    /// The result object.
    pub value: Map<String, Value>,
    /// True when the tool could not do what was asked.
    pub is_error: bool,
    /// Text blocks to send instead of the object's JSON.
    pub texts: Option<Vec<String>>,
}

/// A protocol version this server speaks. Later versions compare greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26: tool annotations, batches.
    V2025_03_26,
    /// 2025-06-18: titles, `outputSchema`, `structuredContent`; no batches.
    V2025_06_18,
    /// 2025-11-25.
    V2025_11_25,
    /// 2026-07-28: stateless, served per request (`modern`), never through `initialize`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// The version's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The legacy version named `name`, if we speak it (the ones `initialize` negotiates).
    pub fn parse(name: &str) -> Option<ProtocolVersion> {
        VERSIONS.iter().copied().find(|v| v.as_str() == name)
    }

    /// Whether this is the stateless era (2026-07-28), whose results carry `resultType`.
    pub fn is_modern(self) -> bool {
        self == ProtocolVersion::V2026_07_28
    }

    /// Whether JSON-RPC batches are accepted (2025-03-26 only).
    pub fn accepts_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }
}

/// The legacy protocol versions we speak (negotiated by `initialize`), newest first. The
/// modern one, [`ProtocolVersion::V2026_07_28`], is served statelessly (`modern`).
pub const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2024_11_05,
];

/// The version answered when the client asks for one we do not know.
pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// Picks the version to answer `initialize` with.
pub fn negotiate(requested: Option<&str>) -> ProtocolVersion {
    requested.and_then(ProtocolVersion::parse).unwrap_or(LATEST)
}

/// Whether `version` has the fields introduced in 2025-06-18 (title, outputSchema,
/// structuredContent).
pub fn has_structured(version: ProtocolVersion) -> bool {
    version >= ProtocolVersion::V2025_06_18
}

/// Whether `version` has tool annotations (2025-03-26).
pub fn has_annotations(version: ProtocolVersion) -> bool {
    version >= ProtocolVersion::V2025_03_26
}

/// The `initialize` result; `yield_ms` is the default yield for this client.
pub fn initialize_result(version: ProtocolVersion, yield_ms: u64) -> Value {
    let mut info = json!({"name": "yieldshell", "version": env!("CARGO_PKG_VERSION")});
    if has_structured(version) {
        info["title"] = Value::from("yieldshell: shell with auto-yield");
    }
    json!({
        "protocolVersion": version.as_str(),
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": info,
        "instructions": instructions(yield_ms),
    })
}
/// How to use the tools, in three sentences; `yield_ms` is the default yield.
pub fn instructions(yield_ms: u64) -> String {
    let after = if yield_ms.is_multiple_of(1000) {
        format!("{} s", yield_ms / 1000)
    } else {
        format!("{yield_ms} ms")
    };
    format!(
        "Run shell commands with exec. A command still running after {after} (or the call's \
         yield_ms) keeps running in the background and exec returns its process_id: follow \
         its output with read (pass next_seq back as since_seq to get only new output), block \
         with wait (optionally until a regex matches), send input with write, and end it with \
         stop. ps lists processes; cleanup forgets finished ones."
    )
}

/// The `tools/list` result for the enabled tools and the negotiated version.
pub fn tools_list(enabled: &[&str], version: ProtocolVersion) -> Value {
    let mut tools = Vec::new();
    for def in TOOLS.iter().filter(|d| enabled.contains(&d.name)) {
        let mut t = Map::new();
        t.insert("name".into(), Value::from(def.name));
        t.insert("description".into(), Value::from(def.description));
        t.insert("inputSchema".into(), (def.input)());
        if has_structured(version) {
            t.insert("title".into(), Value::from(def.title));
            t.insert("outputSchema".into(), (def.output)());
        }
        if has_annotations(version) {
            t.insert(
                "annotations".into(),
                json!({
                    "title": def.title,
                    "readOnlyHint": def.read_only,
                    "destructiveHint": def.destructive,
                    "idempotentHint": def.idempotent,
                    "openWorldHint": def.open_world,
                }),
            );
        }
        tools.push(Value::Object(t));
    }
    json!({ "tools": tools })
}

/// Whether `name` is a tool this build implements.
pub fn is_known_tool(name: &str) -> bool {
    TOOLS.iter().any(|d| d.name == name)
}

/// Wraps a tool reply as a `CallToolResult`.
pub fn call_result(reply: Reply, version: ProtocolVersion) -> Value {
    let object = Value::Object(reply.value);
    let content: Vec<Value> = match reply.texts {
        Some(texts) => texts
            .into_iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect(),
        None => vec![
            json!({"type": "text", "text": serde_json::to_string(&object).unwrap_or_default()}),
        ],
    };
    let mut r = Map::new();
    r.insert("content".into(), Value::Array(content));
    if has_structured(version) {
        r.insert("structuredContent".into(), object);
    }
    r.insert("isError".into(), Value::Bool(reply.is_error));
    if version.is_modern() {
        r.insert("resultType".into(), Value::from("complete"));
    }
    Value::Object(r)
}

/// The whole response line of a `tools/call` (without the newline), built directly: the
/// result object is serialised once, and that text escaped once more for the text block,
/// instead of building and serialising a tree that holds the output three times.
pub fn call_response_line(id: &Value, reply: Reply, version: ProtocolVersion) -> Vec<u8> {
    use crate::protocol::jsonrpc::{
        json_len_estimate, write_str, write_value, write_value_in_string,
    };
    let object = Value::Object(reply.value);
    let size = json_len_estimate(&object);
    let texts_size: usize = reply
        .texts
        .iter()
        .flatten()
        .map(|t| t.len() + t.len() / 8 + 40)
        .sum();
    let mut line = Vec::with_capacity(size * 2 + size / 4 + texts_size + 200);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_value(&mut line, id);
    line.extend_from_slice(b",\"result\":{");
    // The structured object first (key order is free in JSON), then the text block that
    // holds the same object as JSON text, escaped straight from the tree.
    if has_structured(version) {
        line.extend_from_slice(b"\"structuredContent\":");
        write_value(&mut line, &object);
        line.push(b',');
    }
    line.extend_from_slice(b"\"content\":[");
    match &reply.texts {
        Some(texts) => {
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                write_str(&mut line, t);
                line.push(b'}');
            }
        }
        None => {
            line.extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
            write_value_in_string(&mut line, &object);
            line.extend_from_slice(b"\"}");
        }
    }
    line.push(b']');
    if version.is_modern() {
        line.extend_from_slice(b",\"resultType\":\"complete\"");
    }
    line.extend_from_slice(if reply.is_error {
        b",\"isError\":true}}"
    } else {
        b",\"isError\":false}}"
    });
    line
}
/// Runs a tool; its typed answer goes through `call` (now, or later for a tool that
/// waits). Arguments that do not check answer at once with the error.
///
/// Takes the arguments by value and drops them once they are typed, so that a large
/// argument is never held twice while the tool runs (issue 12: bounded memory).
pub fn call_tool(engine: &Arc<Engine>, name: &str, args: Map<String, Value>, call: Call) {
    let Some(def) = TOOLS.iter().find(|d| d.name == name) else {
        let error = ToolError::new(ErrorKind::InvalidArgument, format!("unknown tool {name:?}"));
        return call.answer(Err(error));
    };
    match (def.run)(&args::Args { map: &args }) {
        Ok(run) => {
            drop(args);
            run(engine, call)
        }
        Err(message) => {
            if matches!(def.name, "exec" | "shell_execute") {
                // A malformed attempt is still an attempt: it gets its audit line.
                engine.audit_bad_arguments(def.name, bad_command(&args), &message);
            }
            let mut error = ToolError::new(ErrorKind::InvalidArgument, message);
            if let Some(Value::String(id)) = args.get("process_id") {
                error = error.about(id);
            }
            call.answer(Err(error));
        }
    }
}

/// The `command` argument of a malformed call, as its audit line shows it.
fn bad_command(args: &Map<String, Value>) -> BadCommand<'_> {
    match args.get("command") {
        Some(Value::String(text)) => BadCommand::Text(text),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => BadCommand::Argv(
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        ),
        Some(other) => BadCommand::Argv(vec![other.to_string()]),
        None => BadCommand::Missing,
    }
}

/// The result object of a typed answer of tool `name`.
pub fn reply(name: &str, answer: crate::tools::results::Answer) -> Reply {
    let starts_process = TOOLS.iter().any(|d| d.name == name && d.starts_process);
    render::render(name, starts_process, answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(Some("2025-03-26")).as_str(), "2025-03-26");
        assert_eq!(negotiate(Some("2099-01-01")), LATEST);
        assert_eq!(negotiate(None), LATEST);
    }

    #[test]
    fn response_line_equals_the_tree_form() {
        let mut value = Map::new();
        value.insert("stdout".into(), Value::from("a\"b\n\u{1}é"));
        value.insert("status".into(), Value::from("completed"));
        for &version in VERSIONS {
            for texts in [None, Some(vec!["one".to_string(), "two\n".to_string()])] {
                let reply = || Reply {
                    value: value.clone(),
                    is_error: texts.is_some(),
                    texts: texts.clone(),
                };
                let id = json!("x1");
                let line = call_response_line(&id, reply(), version);
                let parsed: Value = serde_json::from_slice(&line).unwrap();
                let tree = crate::protocol::jsonrpc::response(&id, call_result(reply(), version));
                assert_eq!(parsed, tree, "{version:?}");
                assert!(!line.contains(&b'\n'));
            }
        }
    }

    #[test]
    fn the_registry_has_every_configurable_tool() {
        let names: Vec<&str> = TOOLS.iter().map(|d| d.name).collect();
        let mut configurable = crate::base::config::ALL_TOOLS.to_vec();
        configurable.sort_unstable();
        let mut registered = names.clone();
        registered.sort_unstable();
        assert_eq!(registered, configurable);
    }

    #[test]
    fn tool_fields_follow_the_version() {
        let all = ["exec", "read", "write", "wait", "stop", "ps", "cleanup"];
        let old = tools_list(&all, ProtocolVersion::V2024_11_05);
        assert!(old["tools"][0].get("annotations").is_none());
        assert!(old["tools"][0].get("title").is_none());
        let mid = tools_list(&all, ProtocolVersion::V2025_03_26);
        assert!(mid["tools"][0].get("annotations").is_some());
        assert!(mid["tools"][0].get("outputSchema").is_none());
        let new = tools_list(&all, ProtocolVersion::V2025_11_25);
        assert_eq!(new["tools"].as_array().map(Vec::len), Some(7));
        assert!(new["tools"][0].get("outputSchema").is_some());
        assert_eq!(new["tools"][4]["annotations"]["destructiveHint"], true);
        assert_eq!(new["tools"][1]["annotations"]["readOnlyHint"], true);
    }
}
