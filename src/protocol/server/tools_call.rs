//! `tools/call`: from the request to a queued job: the tool's name and arguments (only the
//! members its schema declares are parsed), the in-flight entry for cancellation, progress,
//! and the `Responder` that turns the typed answer into the response line.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::{CallEra, ReplyTo, Server, BIG_LINE};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp;
use crate::tools::call::{Call, Cancel, Done, Progress, Responder};
use crate::tools::engine::BadCommand;

impl Server {
    pub(super) fn tools_call(
        self: &Arc<Self>,
        id: Value,
        params: Map<String, Value>,
        arguments: Option<&RawValue>,
        to: &ReplyTo,
        era: CallEra,
    ) -> Result<Option<(usize, crate::base::pool::Job)>, Value> {
        let compat = self.engine.config.api == crate::base::config::Api::V1_1;
        let name = match params.get("name") {
            // 1.1 names `exec` `execute` (and has no `exec`).
            Some(Value::String(n)) if compat => match mcp::compat::our_tool(n) {
                Some(ours) => ours.to_string(),
                None => format!("{n} (API 1.1)"),
            },
            Some(Value::String(n)) => n.clone(),
            Some(other) => {
                let msg = format!(
                    "tools/call: name must be a string, got {}",
                    jsonrpc::type_name(other)
                );
                return Err(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
            }
            None => {
                return Err(jsonrpc::error(
                    Some(&id),
                    jsonrpc::INVALID_PARAMS,
                    "tools/call: missing tool name",
                ))
            }
        };
        if !self.engine.config.tools.contains(&name.as_str()) || !mcp::is_known_tool(&name) {
            let available: Vec<&str> = match compat {
                true => self
                    .engine
                    .config
                    .tools
                    .iter()
                    .map(|t| mcp::compat::wire_tool(t))
                    .collect(),
                false => self.engine.config.tools.clone(),
            };
            let msg = format!(
                "Unknown tool: {name}; available tools: {}",
                available.join(", ")
            );
            return Err(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
        }
        // Only the members the tool reads become values; the rest is skipped unparsed.
        let args = match arguments {
            None => Ok(Map::new()),
            Some(raw) if jsonrpc::is_null(raw) => Ok(Map::new()),
            Some(raw) if jsonrpc::raw_type_name(raw) == "object" => {
                let mut names: Vec<String> = tool_arguments(&name).to_vec();
                if compat {
                    names = mcp::compat::wire_arguments(&names);
                }
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                jsonrpc::params_map(Some(raw), &names)
                    .map(|mut args| {
                        if compat {
                            mcp::compat::arguments_in(&mut args);
                        }
                        args
                    })
                    .map_err(|e| format!("invalid argument {e}"))
            }
            Some(other) => {
                let msg = format!(
                    "tools/call: arguments must be an object, got {}",
                    jsonrpc::raw_type_name(other)
                );
                return Err(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
            }
        };
        let bytes = arguments.map_or(0, |a| a.get().len());
        let big = bytes >= BIG_LINE;
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_number())
            .cloned();
        let Some(id) = RequestId::new(id) else {
            let msg = "Invalid Request: id must be a string or a number";
            return Err(jsonrpc::error(None, jsonrpc::INVALID_REQUEST, msg));
        };
        let key = id.key().to_string();
        let cancel = Arc::new(Cancel::default());
        {
            // Checked and entered under one lock: of two calls with one id, the second is
            // refused and the first keeps its entry (a cancel for the id still reaches it).
            let mut inflight = self.inflight.lock();
            if inflight.contains_key(&key) {
                return Err(super::id_in_use(id.value()));
            }
            inflight.insert(key.clone(), cancel.clone());
        }
        let version = era.version;
        let progress = token.map(|token| {
            let this = self.clone();
            let progress_key = key.clone();
            let send: Progress = Arc::new(move |elapsed: u64, bytes: u64| {
                let mut p = json!({"progressToken": token, "progress": elapsed});
                if mcp::has_annotations(version) {
                    p["message"] = Value::from(format!(
                        "running {:.1}s, {bytes} bytes of output",
                        elapsed as f64 / 1000.0
                    ));
                }
                let note = jsonrpc::notification("notifications/progress", p);
                this.send_for(&progress_key, note);
            });
            send
        });
        let this = self.clone();
        let flag = cancel.clone();
        let tool = name.clone();
        let reply_to = to.clone();
        let respond = Responder::new(move |done| {
            match done {
                Done::Answer(answer) if !flag.is_cancelled() => {
                    let mut r = mcp::reply(&tool, *answer);
                    if compat {
                        r = mcp::compat::reply(r);
                    }
                    match &reply_to {
                        // Large outputs: serialise once, straight into the line that goes out.
                        ReplyTo::Out => {
                            let line = mcp::call_response_line(id.value(), r, version);
                            let bytes = line.len();
                            // Tagged with its id: a cancel that comes while it still waits
                            // for stdout drops it.
                            this.out.send_for(&key, line);
                            crate::base::log::debug!(
                                "-> answer to request {key} queued: {bytes} bytes"
                            );
                        }
                        batch => {
                            let response =
                                jsonrpc::response(id.value(), mcp::call_result(r, version));
                            this.answer(batch, Some(response));
                        }
                    }
                }
                Done::Answer(_) | Done::Cancelled => this.answer(&reply_to, None),
                // A panic in a tool is that request's internal error; the server lives on,
                // and the request still gets exactly one answer.
                Done::Lost => {
                    let msg = "Internal error while running the tool (logged on stderr); the server is still running";
                    let error = jsonrpc::error(Some(id.value()), jsonrpc::INTERNAL_ERROR, msg);
                    this.answer(&reply_to, Some(error));
                }
            }
            // Only now, with its answer queued, does the call leave the in-flight set:
            // shutdown waits for that set to empty before it closes the outbox.
            this.leave(&key);
        });
        let call = Call {
            cancel,
            progress,
            respond,
            client: era.client,
        };
        let engine = self.engine.clone();
        let run = move || {
            match args {
                Ok(args) => mcp::call_tool(&engine, &name, args, call),
                Err(message) => {
                    let tool = match name.as_str() {
                        "exec" => Some("exec"),
                        "shell_execute" => Some("shell_execute"),
                        _ => None,
                    };
                    if let Some(tool) = tool {
                        // Refused before the tool saw it: still an attempt, still audited.
                        engine.audit_bad_arguments(tool, BadCommand::Missing, &message);
                    }
                    call.answer(Err(crate::tools::results::ToolError::new(
                        crate::tools::results::ErrorKind::InvalidArgument,
                        message,
                    )))
                }
            }
            if big {
                crate::base::sys::release_free_memory();
            }
        };
        match to {
            // A batch already runs on a worker.
            ReplyTo::Batch(..) => {
                run();
                Ok(None)
            }
            // Queued by `dispatch_line`, after it dropped the input line.
            ReplyTo::Out => Ok(Some((bytes, Box::new(run)))),
        }
    }
}

/// The argument names of tool `name` (the properties of its input schema): the only
/// members of `arguments` that are parsed. Read from the schemas once.
fn tool_arguments(name: &str) -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    let all = NAMES.get_or_init(|| {
        let list = mcp::tools_list(crate::base::config::ALL_TOOLS, mcp::LATEST);
        list["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or_default().to_string();
                let props = tool["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (name, props)
            })
            .collect()
    });
    all.iter()
        .find(|(n, _)| n == name)
        .map_or(&[], |(_, props)| props.as_slice())
}
