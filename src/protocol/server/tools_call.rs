//! `tools/call`: from the request to a queued job: the tool's name and arguments (only the
//! members its schema declares are parsed), the in-flight entry for cancellation, progress,
//! and the `Responder` that turns the typed answer into the response line.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::approvals::Redeemed;
use super::{Arguments, CallCtx, CallEra, ReplyTo, Server, BIG_LINE};
use crate::base::config::{Api, Tool};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::{self, ProtocolVersion};
use crate::tools::call::{Call, Cancel, Done, Progress, Responder};
use crate::tools::engine::BadCommand;
use crate::tools::results::{ErrorKind, ToolError};

impl Server {
    /// The steps, in order: the tool, its arguments, what a 1.1 answer needs, the request
    /// id, a 2026-07-28 approval state (checked), the in-flight entry, progress, the
    /// responder, and the job that runs the tool.
    /// Every `Err` is the protocol error answered at once.
    pub(super) fn tools_call(
        self: &Arc<Self>,
        id: Value,
        params: Map<String, Value>,
        arguments: Option<&RawValue>,
        to: &ReplyTo,
        era: CallEra,
    ) -> Result<Option<(usize, crate::base::pool::Job)>, Value> {
        let tool = self.called_tool(&id, &params)?;
        let args = self.arguments(&id, tool, arguments)?;
        // Under 1.1, what the answer needs of the call (1.1.2's `max_wait_ms`).
        let asked = (self.engine.config.api == Api::V1_1).then(|| match &args {
            Ok(args) => mcp::compat::asked(tool, args),
            Err(_) => mcp::compat::asked(tool, &Map::new()),
        });
        let note = match arguments {
            Some(raw) if self.engine.config.api == Api::Current => {
                let known = mcp::tool_arguments(tool);
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                mcp::unknown_arguments(&jsonrpc::other_keys(raw, &names), &known)
            }
            _ => None,
        };
        let bytes = arguments.map_or(0, |a| a.get().len());
        let token = progress_token(&params);
        let Some(id) = RequestId::new(id) else {
            let msg = "Invalid Request: id must be a string or a number";
            return Err(jsonrpc::error(None, jsonrpc::INVALID_REQUEST, msg));
        };
        // A 2026-07-28 retry that carries an approval state: checked before anything runs.
        let redeeming = self.engine.config.approvals && params.contains_key("requestState");
        let redeemed = match era.modern && redeeming {
            true => Some(
                self.approvals
                    .redeem(&self.engine, tool, &args, &params, &id)?,
            ),
            false => None,
        };
        let key = id.key().to_string();
        let cancel = self.enter_inflight(&id, &key)?;
        // Only a client that can ask is asked (and only then are the arguments kept).
        let modern_form = era.modern && super::approvals::can_ask_form(era.capabilities.as_ref());
        let can_ask = modern_form || (!era.modern && self.approvals.can_ask_legacy());
        let may_ask = self.engine.config.approvals && tool.runs_a_command() && can_ask;
        let ctx = CallCtx {
            tool,
            key: key.clone(),
            id,
            cancel: cancel.clone(),
            asked,
            reply_to: to.clone(),
            version: era.version,
            token: token.clone(),
            client: era.client.clone(),
            // What a question needs to run the call again once the person approves it.
            rerun_args: match (&args, may_ask) {
                (Ok(args), true) => Some(args.clone()),
                _ => None,
            },
            may_ask,
            modern_form,
            structured: mcp::structured_for(&self.engine.config, era.client.as_deref()),
            note,
        };
        let (approved, refused) = match redeemed {
            Some(Redeemed::Run(approved)) => (approved, None),
            Some(Redeemed::Refuse(message)) => (None, Some(message)),
            None => (None, None),
        };
        let call = Call {
            cancel,
            progress: token.map(|token| self.progress(token, key, era.version, 0)),
            respond: self.responder(ctx),
            client: era.client,
            approved,
        };
        if let Some(message) = refused {
            let run = move || call.answer(Err(ToolError::new(ErrorKind::Refused, message)));
            return match to {
                ReplyTo::Batch(..) => {
                    run();
                    Ok(None)
                }
                ReplyTo::Out => Ok(Some((0, Box::new(run)))),
            };
        }
        let run = self.job(tool, args, call, bytes >= BIG_LINE);
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

    /// The tool `params.name` names, under the API in force, among the enabled tools.
    fn called_tool(&self, id: &Value, params: &Map<String, Value>) -> Result<Tool, Value> {
        let api = self.engine.config.api;
        let name = match params.get("name") {
            Some(Value::String(n)) => n.as_str(),
            Some(other) => {
                let msg = format!(
                    "tools/call: name must be a string, got {}",
                    jsonrpc::type_name(other)
                );
                return Err(jsonrpc::error(Some(id), jsonrpc::INVALID_PARAMS, &msg));
            }
            None => {
                return Err(jsonrpc::error(
                    Some(id),
                    jsonrpc::INVALID_PARAMS,
                    "tools/call: missing tool name",
                ))
            }
        };
        let tools = &self.engine.config.tools;
        if let Some(tool) = Tool::from_wire(name, api).filter(|t| tools.contains(t)) {
            return Ok(tool);
        }
        let shown = match Tool::from_wire(name, api) {
            Some(tool) => tool.name().to_string(),
            // 1.1 names `exec` `execute` (and has no `exec`).
            None if Tool::from_name(name).is_some() => format!("{name} (API 1.1)"),
            None => name.to_string(),
        };
        let msg = format!(
            "Unknown tool: {shown}; available tools: {}",
            Tool::joined(tools, api, ", ")
        );
        Err(jsonrpc::error(Some(id), jsonrpc::INVALID_PARAMS, &msg))
    }

    /// The arguments of a call of `tool`: only the members the tool reads become values;
    /// the rest is skipped unparsed. Under 1.1, read by 1.1's names and made ours.
    fn arguments(
        &self,
        id: &Value,
        tool: Tool,
        arguments: Option<&RawValue>,
    ) -> Result<Arguments, Value> {
        let compat = self.engine.config.api == Api::V1_1;
        match arguments {
            None => Ok(Ok(Map::new())),
            Some(raw) if jsonrpc::is_null(raw) => Ok(Ok(Map::new())),
            Some(raw) if jsonrpc::raw_type_name(raw) == "object" => {
                let mut names: Vec<String> = mcp::tool_arguments(tool);
                if compat {
                    names = mcp::compat::wire_arguments(&names);
                }
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                Ok(jsonrpc::params_map(Some(raw), &names)
                    .map(|mut args| {
                        if compat {
                            mcp::compat::arguments_in(&mut args);
                        }
                        args
                    })
                    .map_err(|e| format!("invalid argument {e}")))
            }
            Some(other) => {
                let msg = format!(
                    "tools/call: arguments must be an object, got {}",
                    jsonrpc::raw_type_name(other)
                );
                Err(jsonrpc::error(Some(id), jsonrpc::INVALID_PARAMS, &msg))
            }
        }
    }

    /// The call's entry in the in-flight set, where a cancel finds it. Checked and entered
    /// under one lock: of two calls with one id, the second is refused and the first keeps
    /// its entry (a cancel for the id still reaches it).
    fn enter_inflight(&self, id: &RequestId, key: &str) -> Result<Arc<Cancel>, Value> {
        let cancel = Arc::new(Cancel::default());
        let mut inflight = self.inflight.lock();
        if inflight.contains_key(key) {
            return Err(super::id_in_use(id.value()));
        }
        inflight.insert(key.to_string(), cancel.clone());
        Ok(cancel)
    }

    /// Sends `notifications/progress` with `token` for the call `key`; `offset` ms are added
    /// to the elapsed time (a call approved after a question goes on counting from where
    /// the question's progress stopped, so `progress` never goes back).
    pub(super) fn progress(
        self: &Arc<Self>,
        token: Value,
        key: String,
        version: ProtocolVersion,
        offset: u64,
    ) -> Progress {
        let this = self.clone();
        Arc::new(move |elapsed: u64, bytes: u64| {
            let mut p = json!({"progressToken": token, "progress": offset + elapsed});
            if mcp::has_annotations(version) {
                p["message"] = Value::from(format!(
                    "running {:.1}s, {bytes} bytes of output",
                    elapsed as f64 / 1000.0
                ));
            }
            let note = jsonrpc::notification("notifications/progress", p);
            this.send_for(&key, note);
        })
    }

    /// Turns the end of the call into its one answer (none when it was cancelled), then
    /// takes the call out of the in-flight set. A refusal the person may approve goes to
    /// `approvals`, which asks them when it can (the call stays in flight meanwhile).
    pub(super) fn responder(self: &Arc<Self>, ctx: CallCtx) -> Responder {
        let this = self.clone();
        Responder::new(move |done| {
            let done = match done {
                Done::Ask(refusal, what) if ctx.may_ask && !ctx.cancel.is_cancelled() => {
                    match this.approvable(ctx, *refusal, *what) {
                        // Asked, or answered by the approval's path.
                        None => return,
                        Some((ctx, refusal)) => {
                            return this.answer_call(ctx, Done::Answer(Box::new(refusal)))
                        }
                    }
                }
                Done::Ask(refusal, _) => Done::Answer(refusal),
                other => other,
            };
            this.answer_call(ctx, done);
        })
    }

    /// Sends the call's answer, then takes it out of the in-flight set.
    fn answer_call(self: &Arc<Self>, ctx: CallCtx, done: Done) {
        let CallCtx {
            tool,
            id,
            key,
            cancel,
            asked,
            reply_to,
            version,
            structured,
            note,
            ..
        } = ctx;
        match done {
            Done::Answer(answer) if !cancel.is_cancelled() => {
                let invalid = matches!(&*answer, Err(e) if e.kind == ErrorKind::InvalidArgument);
                let mut r = mcp::reply(tool, *answer);
                r = match &asked {
                    Some(asked) => mcp::compat::reply(asked, r, invalid),
                    None => mcp::view::compact(mcp::view::with_note(r, note.as_deref())),
                };
                match &reply_to {
                    // Large outputs: serialise once, straight into the line that goes out.
                    ReplyTo::Out => {
                        let line = mcp::call_response_line(id.value(), r, version, structured);
                        let bytes = line.len();
                        // Tagged with its id: a cancel that comes while it still waits
                        // for stdout drops it.
                        self.out.send_for(&key, line);
                        crate::base::log::debug!(
                            "-> answer to request {key} queued: {bytes} bytes"
                        );
                    }
                    batch => {
                        let response =
                            jsonrpc::response(id.value(), mcp::call_result(r, version, structured));
                        self.answer(batch, Some(response));
                    }
                }
            }
            Done::Answer(_) | Done::Ask(..) | Done::Cancelled => self.answer(&reply_to, None),
            // A panic in a tool is that request's internal error; the server lives on,
            // and the request still gets exactly one answer.
            Done::Lost => {
                let msg = "Internal error while running the tool (logged on stderr); the server is still running";
                let error = jsonrpc::error(Some(id.value()), jsonrpc::INTERNAL_ERROR, msg);
                self.answer(&reply_to, Some(error));
            }
        }
        // Only now, with its answer queued, does the call leave the in-flight set:
        // shutdown waits for that set to empty before it closes the outbox.
        self.leave(&key);
    }

    /// The job that runs `tool` with `args` and answers through `call`; after a big
    /// request it gives the freed memory back.
    pub(super) fn job(&self, tool: Tool, args: Arguments, call: Call, big: bool) -> impl FnOnce() {
        let engine = self.engine.clone();
        let compat = engine.config.api == Api::V1_1;
        move || {
            let refused = match &args {
                Ok(args) if compat => mcp::compat::refusal(tool, args).map(|message| {
                    let id = args.get("process_id").and_then(Value::as_str);
                    (message, id.unwrap_or_default().to_string())
                }),
                _ => None,
            };
            match args {
                Ok(_) if refused.is_some() => {
                    // 1.1.2 answered these as results: a refusal, not a schema error.
                    let (message, id) = refused.unwrap_or_default();
                    let e = ToolError::new(ErrorKind::Refused, message);
                    call.answer(Err(if id.is_empty() { e } else { e.about(&id) }))
                }
                Ok(args) => mcp::call_tool(&engine, tool, args, call),
                Err(message) => {
                    if tool.runs_a_command() {
                        // Refused before the tool saw it: still an attempt, still audited.
                        engine.audit_bad_arguments(tool, BadCommand::Missing, &message, &[]);
                    }
                    call.answer(Err(ToolError::new(ErrorKind::InvalidArgument, message)))
                }
            }
            if big {
                crate::base::sys::release_free_memory();
            }
        }
    }
}

/// The call's progress token (`_meta.progressToken`), when it is a string or a number.
fn progress_token(params: &Map<String, Value>) -> Option<Value> {
    params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}
