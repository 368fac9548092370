//! The JSON side of the built-in client (`cli`): a call's arguments from the command line,
//! and what is printed of its result and of `tools/list`.

use serde_json::{json, Map, Value};

use super::LATEST;
use crate::base::config::{Api, Config};

/// The arguments object of `yieldshell call TOOL 'JSON'`. For `exec`, a missing
/// `side_effects` becomes `["UNKNOWN"]`, and the second value says so.
pub(crate) fn call_arguments(
    tool: crate::base::config::Tool,
    text: &str,
) -> Result<(Value, Option<String>), String> {
    let mut arguments: Map<String, Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err(format!(
                "the arguments must be a JSON object such as '{{\"command\":\"ls\"}}', got {}",
                crate::protocol::jsonrpc::type_name(&other)
            ))
        }
        Err(e) => return Err(format!("the arguments are not valid JSON ({e}): {text}")),
    };
    let mut note = None;
    if tool == crate::base::config::Tool::Exec
        && arguments.get("side_effects").is_none_or(Value::is_null)
    {
        arguments.insert("side_effects".into(), json!(["UNKNOWN"]));
        note = Some(
            "exec: side_effects was not given, so it is [\"UNKNOWN\"]; declare it to be precise"
                .to_string(),
        );
    }
    Ok((Value::Object(arguments), note))
}

/// What `call` prints (the result object: `structuredContent`, or the whole result when
/// there is none), and whether the result is an error.
pub(crate) fn shown_result(result: &Value) -> (String, bool) {
    let shown = result.get("structuredContent").unwrap_or(result);
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    (format!("{shown}\n"), is_error)
}

/// What `tools` prints: one line per tool (name and title), or the whole `tools/list`
/// result as JSON.
pub(crate) fn tools_text(config: &Config, as_json: bool) -> String {
    let mut list = super::tools_list_for(config, None, LATEST);
    if config.api == Api::V1_1 {
        list = super::compat::tools_list(list);
    }
    if as_json {
        return format!("{list}\n");
    }
    let mut text = String::new();
    for tool in list["tools"].as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default();
        let summary = tool["title"]
            .as_str()
            .or(tool["description"].as_str())
            .unwrap_or_default();
        text.push_str(&format!("{name:<14} {summary}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_gets_unknown_side_effects_only_when_left_out() {
        let (args, note) =
            call_arguments(crate::base::config::Tool::Exec, r#"{"command":"ls"}"#).unwrap();
        assert_eq!(args["side_effects"], json!(["UNKNOWN"]));
        assert!(note.is_some());
        let (args, note) = call_arguments(
            crate::base::config::Tool::Exec,
            r#"{"command":"ls","side_effects":["NONE"]}"#,
        )
        .unwrap();
        assert_eq!(args["side_effects"], json!(["NONE"]));
        assert!(note.is_none());
        let (args, note) = call_arguments(crate::base::config::Tool::Ps, "{}").unwrap();
        assert_eq!(args, json!({}));
        assert!(note.is_none());
        assert!(call_arguments(crate::base::config::Tool::Exec, "[1]").is_err());
        assert!(call_arguments(crate::base::config::Tool::Exec, "{").is_err());
    }
}
