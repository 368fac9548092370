//! Protocol 2026-07-28 beside the legacy versions, on the same process.
//!
//! The modern era is stateless: every request carries its version and the client's
//! capabilities in `params._meta` (`io.modelcontextprotocol/protocolVersion`, `…/clientCapabilities`,
//! optionally `…/clientInfo`), there is no `initialize` and no `ping`, and every result says
//! `resultType: "complete"`. `server/discover` tells a client what we support.
//!
//! The two eras share one process. `initialize` still selects a legacy version for the
//! requests that carry no modern `_meta`; answering `server/discover` changes nothing (a
//! client may probe, then initialize, on the same process). A request with modern `_meta`
//! is served on its own terms, whatever `initialize` said, and what it starts (a process
//! handle from `exec`) is the process's like everything else, so the next call, in either
//! era, can use it.

use serde_json::{json, Map, Value};

use super::{ProtocolVersion, VERSIONS};

/// The `_meta` key of the request's protocol version.
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities (required in the modern era).
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's name and version (optional).
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of `server/discover`'s server description.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC error code of an unsupported protocol version (2026-07-28).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// How long a client may cache `server/discover` and `tools/list`: the tools of a process
/// never change while it runs, but a restarted server may be configured differently.
pub(crate) const TTL_MS: u64 = 3_600_000;

/// What a request's `_meta` says about its era.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// No modern key: the process's legacy version applies.
    Legacy,
    /// A valid 2026-07-28 request; the client's name when it gave one.
    Modern { client: Option<String> },
}

/// Why a request that claims the modern era cannot be served: a JSON-RPC error code, its
/// message, and its `data`.
#[derive(Debug, PartialEq)]
pub(crate) struct EraError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// Every version we speak, modern first, as `server/discover` and `-32022` list them.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    let mut all = vec![ProtocolVersion::V2026_07_28.as_str()];
    all.extend(VERSIONS.iter().map(|v| v.as_str()));
    all
}

/// Reads the era of a request from its `params` (only `_meta` is looked at).
pub(crate) fn era(params: &Map<String, Value>) -> Result<Era, EraError> {
    let Some(Value::Object(meta)) = params.get("_meta") else {
        return Ok(Era::Legacy);
    };
    let keys = [PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO];
    if !keys.iter().any(|k| meta.contains_key(*k)) {
        return Ok(Era::Legacy);
    }
    let invalid = |message: String| EraError {
        code: crate::protocol::jsonrpc::INVALID_PARAMS,
        message,
        data: None,
    };
    let version = match meta.get(PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.as_str(),
        Some(other) => {
            return Err(invalid(format!(
                "Invalid params: _meta[\"{PROTOCOL_VERSION}\"] must be a version string such \
                 as \"2026-07-28\", got {}",
                crate::protocol::jsonrpc::type_name(other)
            )))
        }
        None => {
            return Err(invalid(format!(
                "Invalid params: _meta[\"{PROTOCOL_VERSION}\"] is required with the other \
                 io.modelcontextprotocol/ keys (the version of this request, such as \
                 \"2026-07-28\"); or send initialize first and leave these keys out"
            )))
        }
    };
    match meta.get(CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => (),
        Some(other) => {
            return Err(invalid(format!(
                "Invalid params: _meta[\"{CLIENT_CAPABILITIES}\"] must be an object (an empty \
                 one when the client supports no optional capability), got {}",
                crate::protocol::jsonrpc::type_name(other)
            )))
        }
        None => {
            return Err(invalid(format!(
                "Invalid params: _meta[\"{CLIENT_CAPABILITIES}\"] is required in protocol \
                 {version} (an object; {{}} when the client supports no optional capability)"
            )))
        }
    }
    if version != ProtocolVersion::V2026_07_28.as_str() {
        let hint = if ProtocolVersion::parse(version).is_some() {
            format!("; {version} is spoken after initialize, without these _meta keys")
        } else {
            String::new()
        };
        return Err(EraError {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: format!(
                "Unsupported protocol version {version:?} in _meta: per-request versions \
                 supported: 2026-07-28{hint}"
            ),
            data: Some(json!({"supported": supported_versions(), "requested": version})),
        });
    }
    let client = meta
        .get(CLIENT_INFO)
        .and_then(|info| info.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Era::Modern { client })
}

/// The `server/discover` result.
pub(crate) fn discover_result(instructions: String) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": supported_versions(),
        "capabilities": {"tools": {"listChanged": false}},
        "instructions": instructions,
        "ttlMs": TTL_MS,
        "cacheScope": "public",
        "_meta": {SERVER_INFO: {
            "name": "yieldshell",
            "title": "yieldshell: shell with auto-yield",
            "version": env!("CARGO_PKG_VERSION"),
        }},
    })
}

/// Marks a modern result: `resultType`, and for lists that may be cached, `ttlMs` and
/// `cacheScope`.
pub(crate) fn complete(mut result: Value, cacheable: bool) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("resultType".into(), Value::from("complete"));
        if cacheable {
            map.insert("ttlMs".into(), Value::from(TTL_MS));
            map.insert("cacheScope".into(), Value::from("public"));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("_meta".into(), meta);
        m
    }

    #[test]
    fn eras() {
        assert_eq!(era(&Map::new()), Ok(Era::Legacy));
        assert_eq!(era(&params(json!({"progressToken": 1}))), Ok(Era::Legacy));
        let modern = json!({PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {},
            CLIENT_INFO: {"name": "goose", "version": "1"}});
        assert_eq!(
            era(&params(modern)),
            Ok(Era::Modern {
                client: Some("goose".into())
            })
        );
        let missing = era(&params(json!({PROTOCOL_VERSION: "2026-07-28"}))).unwrap_err();
        assert_eq!(missing.code, -32602);
        assert!(missing.message.contains(CLIENT_CAPABILITIES), "{missing:?}");
        let missing = era(&params(json!({CLIENT_CAPABILITIES: {}}))).unwrap_err();
        assert_eq!(missing.code, -32602);
        let wrong = era(&params(
            json!({PROTOCOL_VERSION: "1900-01-01", CLIENT_CAPABILITIES: {}}),
        ))
        .unwrap_err();
        assert_eq!(wrong.code, -32022);
        assert_eq!(wrong.data.as_ref().unwrap()["requested"], "1900-01-01");
        let legacy = era(&params(
            json!({PROTOCOL_VERSION: "2025-06-18", CLIENT_CAPABILITIES: {}}),
        ))
        .unwrap_err();
        assert_eq!(legacy.code, -32022);
        assert!(legacy.message.contains("initialize"), "{legacy:?}");
    }

    #[test]
    fn supported_lists_modern_then_legacy() {
        assert_eq!(
            supported_versions(),
            [
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ]
        );
    }
}
