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

use crate::base::config::Tool;
use crate::tools::call::Call;
use crate::tools::engine::{BadCommand, Engine};
use crate::tools::results::{ErrorKind, ToolError};

mod args;
pub(crate) use args::unknown_arguments;
pub(crate) mod client;
pub(crate) mod compat;
mod describe;
mod fields;
pub(crate) mod modern;
mod params;
mod render;
mod schema;
mod snapshot;
mod tools;
pub(crate) mod view;

use tools::TOOLS;

pub(crate) use describe::{default_yield, instructions_for};

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

/// Whether results to `client` carry `structuredContent` (and its tools `outputSchema`)
/// under `config`, when the protocol version has them (`YIELDSHELL_STRUCTURED`). Under
/// `YIELDSHELL_API=1.1`, `auto` keeps 1.1.2's results.
pub fn structured_for(config: &crate::base::config::Config, client: Option<&str>) -> bool {
    use crate::base::config::{Api, Structured};
    match config.structured {
        Structured::On => true,
        Structured::Off => false,
        Structured::Auto => {
            config.api == Api::V1_1 || !crate::base::clients::shows_structured(client)
        }
    }
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
         with wait (optionally until a regex matches, or for all of several processes), send \
         input with write, and end it with stop. ps lists processes; cleanup forgets finished \
         ones. Output beyond max_output_bytes shows its start and end around a marker line \
         naming the since_seq that reads the rest; lines that look like errors and were left \
         out are listed after the output with their since_seq. A side-effect category the \
         server blocks is refused before anything runs."
    )
}

/// The tool list of `config` for a client named `client` (when known).
pub(crate) fn tools_list_for(
    config: &crate::base::config::Config,
    client: Option<&str>,
    version: ProtocolVersion,
) -> Value {
    let structured = structured_for(config, client);
    tools_list(config, default_yield(config, client), version, structured)
}

/// The `tools/list` result for the tools `config` enables, its defaults (`yield_ms`: the
/// default yield for the client) and the negotiated version; `structured`: whether results
/// carry `structuredContent` (then tools declare `outputSchema`).
pub fn tools_list(
    config: &crate::base::config::Config,
    yield_ms: u64,
    version: ProtocolVersion,
    structured: bool,
) -> Value {
    let f = params::InForce { config, yield_ms };
    let mut tools = Vec::new();
    for def in TOOLS.iter().filter(|d| config.tools.contains(&d.name)) {
        let mut t = Map::new();
        t.insert("name".into(), Value::from(def.name.name()));
        t.insert("description".into(), Value::from((def.description)(&f)));
        t.insert("inputSchema".into(), params::input_schema(def.params, &f));
        if has_structured(version) {
            t.insert("title".into(), Value::from(def.title));
            if structured {
                let mut output = schema::with_defaults((def.output)());
                if let Some(Value::Object(props)) = output.get_mut("properties") {
                    props.insert(
                        "warning".into(),
                        json!({"type": "string", "description": "Arguments the tool does not know, ignored."}),
                    );
                }
                t.insert("outputSchema".into(), output);
            }
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

/// The argument names of `tool` (its parameters, in every mode): the only members of
/// `arguments` that are parsed.
pub fn tool_arguments(tool: Tool) -> Vec<String> {
    params::names(tools::def(tool).params)
}

/// Wraps a tool reply as a `CallToolResult`; `structured`: see [`structured_for`].
pub fn call_result(reply: Reply, version: ProtocolVersion, structured: bool) -> Value {
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
    if has_structured(version) && structured {
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
pub fn call_response_line(
    id: &Value,
    reply: Reply,
    version: ProtocolVersion,
    structured: bool,
) -> Vec<u8> {
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
    if has_structured(version) && structured {
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
/// argument is never held twice while the tool runs (memory stays bounded by the largest argument).
pub fn call_tool(engine: &Arc<Engine>, tool: Tool, args: Map<String, Value>, call: Call) {
    // The texts the server makes (errors, ps's fields) hide the secrets in force at the
    // time of the answer, like the output does.
    let secrets = engine.secrets.clone();
    let call = call.map_answer(move |answer| {
        crate::tools::results::redact_made_texts(answer, &secrets.current());
    });
    match (tools::def(tool).run)(&args::Args { map: &args }) {
        Ok(run) => {
            drop(args);
            run(engine, call)
        }
        Err(message) => {
            if tool.runs_a_command() {
                // A malformed attempt is still an attempt: it gets its audit line.
                engine.audit_bad_arguments(tool, bad_command(&args), &message, &env_strings(&args));
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

/// The string values of a malformed call's `env` object, whose secrets its audit line hides.
fn env_strings(args: &Map<String, Value>) -> Vec<(String, String)> {
    match args.get("env") {
        Some(Value::Object(env)) => env
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
        _ => Vec::new(),
    }
}

/// The result object of a typed answer of tool `name`.
pub fn reply(tool: Tool, answer: crate::tools::results::Answer) -> Reply {
    render::render(tools::def(tool), answer)
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
                for structured in [true, false] {
                    let line = call_response_line(&id, reply(), version, structured);
                    let parsed: Value = serde_json::from_slice(&line).unwrap();
                    let tree = crate::protocol::jsonrpc::response(
                        &id,
                        call_result(reply(), version, structured),
                    );
                    assert_eq!(parsed, tree, "{version:?}");
                    assert!(!line.contains(&b'\n'));
                    let sent = parsed["result"].get("structuredContent").is_some();
                    assert_eq!(sent, structured && has_structured(version));
                }
            }
        }
    }

    #[test]
    fn the_registry_has_every_configurable_tool() {
        let names: Vec<Tool> = TOOLS.iter().map(|d| d.name).collect();
        assert_eq!(names, crate::base::config::ALL_TOOLS);
        for tool in Tool::ALL {
            assert_eq!(tools::def(tool).name, tool);
        }
    }

    fn config(env: &[(&str, &str)]) -> crate::base::config::Config {
        let env = env.iter().map(|(k, v)| (k.into(), v.into())).collect();
        match crate::protocol::options::parse(&[], env) {
            Ok(crate::protocol::options::Parsed::Run(c)) => *c,
            _ => panic!("no configuration"),
        }
    }

    #[test]
    fn the_defaults_listed_are_those_in_force() {
        let config = config(&[
            ("YIELDSHELL_SHELL", "/bin/bash"),
            ("YIELDSHELL_DEFAULT_TIMEOUT_MS", "60000"),
            ("YIELDSHELL_MAX_OUTPUT_BYTES", "12345"),
            ("YIELDSHELL_MAX_YIELD_MS", "40000"),
        ]);
        let list = tools_list(&config, 7000, LATEST, false);
        let exec = &list["tools"][0];
        assert_eq!(exec["name"], "exec");
        let props = &exec["inputSchema"]["properties"];
        assert_eq!(props["shell"]["description"], "Default /bin/bash.");
        assert_eq!(
            props["yield_ms"]["description"],
            "Wait before backgrounding (default 7000, at most 40000)."
        );
        assert_eq!(
            props["timeout_ms"]["description"],
            "Runtime limit, 0 = none (default 60000)."
        );
        assert_eq!(
            props["max_output_bytes"]["description"],
            "Output budget of the answer (default 12345)."
        );
        let description = exec["description"].as_str().unwrap_or_default();
        assert!(description.contains("(default 7000)"), "{description}");
    }

    #[test]
    fn tool_fields_follow_the_version() {
        let config = config(&[]);
        assert_eq!(config.tools, &Tool::ALL[1..]);
        let all = &config;
        let old = tools_list(all, 30_000, ProtocolVersion::V2024_11_05, true);
        assert!(old["tools"][0].get("annotations").is_none());
        assert!(old["tools"][0].get("title").is_none());
        let mid = tools_list(all, 30_000, ProtocolVersion::V2025_03_26, true);
        assert!(mid["tools"][0].get("annotations").is_some());
        assert!(mid["tools"][0].get("outputSchema").is_none());
        let new = tools_list(all, 30_000, ProtocolVersion::V2025_11_25, true);
        let text_only = tools_list(all, 30_000, ProtocolVersion::V2025_11_25, false);
        assert!(text_only["tools"][0].get("outputSchema").is_none());
        assert_eq!(new["tools"].as_array().map(Vec::len), Some(7));
        assert!(new["tools"][0].get("outputSchema").is_some());
        assert_eq!(new["tools"][4]["annotations"]["destructiveHint"], true);
        assert_eq!(new["tools"][1]["annotations"]["readOnlyHint"], true);
    }
}
