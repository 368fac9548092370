//! Approvals (`YIELDSHELL_APPROVALS=ask`): a call refused by a rule the person may waive
//! (`policy::approval::Rule`) is put to them through the client, and run if they accept.
//!
//! Legacy eras: the server sends `elicitation/create` (form mode) with an id of its own
//! (`ys-ask-N`), only to a client that declared form elicitation at `initialize`, and the
//! call stays in flight. No thread waits: the question is parked on the `waits` timer
//! (its timeout, and a progress notification every 10 s when the call carries a
//! `progressToken`), and the client's response, read on stdin like any message, is routed
//! here by that id (`answered`). Accept runs the call again from the start with the
//! approval (every rule but the waived ones checked again; nothing had started, so its
//! timeout and yield clocks start only then); decline, cancel and no answer in time refuse
//! it; `notifications/cancelled` of the call ends the question with nothing run.
//!
//! 2026-07-28: a stdio server sends no requests, so the call answers `input_required`
//! with the question and a `requestState`: the question's facts and an expiry, encrypted
//! and signed with keys made from one made at startup and never sent (`base/mac`: HMAC-SHA-256
//! in counter mode, then HMAC-SHA-256 over it), bound to the tool, a digest of its
//! arguments and the directory. The client carries it and reads nothing in it: not the
//! command, the directory, nor a secret they hold. The retry carries the state back
//! (`redeem`): one that does not verify, has expired, was used already or belongs to other
//! arguments is refused, and nothing runs.
//!
//! `remember` (accepted with the box ticked): later calls of the same tool with the same
//! command in the same directory, with the same shell, env and stdin (`Approvable::key`),
//! run without asking, for as long as the process runs.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::{Arguments, CallCtx, Server};
use crate::base::config::Tool;
use crate::base::mac;
use crate::policy::audit::ApprovalStep;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::ProtocolVersion;
use crate::tools::call::{Approvable, Approved, Call, Cancel};
use crate::tools::results::{Answer, ErrorKind, ToolError};
use crate::tools::wait::{Outcome, WaitMode, Watch};
use parking_lot::Mutex;

/// The prefix of the ids of the server's questions (a space of its own: the client's ids
/// are for its requests, these for ours).
const ASK_PREFIX: &str = "ys-ask-";
/// How often a question that waits sends progress, when the call carries a token.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// The key of the one input request of an `input_required` answer.
const INPUT_KEY: &str = "approve";
/// The bytes of a state's nonce, at its start.
const NONCE_BYTES: usize = 16;
/// What the two keys of states are made for, from the server's one key: one encrypts,
/// the other signs (a key is never used for both).
const ENCRYPTION: &[u8] = b"yieldshell approval state: encryption";
const SIGNATURE: &[u8] = b"yieldshell approval state: signature";

/// The key for `purpose`, made from the server's key.
fn subkey(key: &[u8; 32], purpose: &[u8]) -> [u8; 32] {
    mac::hmac_sha256(key, purpose)
}

/// The approvals of one server: its key, the questions waiting, what was remembered and
/// the 2026-07-28 states already used.
pub(super) struct Approvals {
    key: Option<[u8; 32]>,
    born: Instant,
    next: AtomicU64,
    /// Questions waiting for an answer, by their id (`ys-ask-N`).
    pending: Mutex<HashMap<String, Pending>>,
    /// (tool, `Approvable::key`) approved with `remember`: the key covers the command, the
    /// directory and every other argument that changes what runs.
    remembered: Mutex<HashSet<(Tool, String)>>,
    /// The nonces of the states accepted, with their expiry (ms since `born`), kept until
    /// they expire.
    used: Mutex<HashMap<String, u64>>,
    /// The client declared form elicitation at `initialize`, under a version that has it.
    legacy_form: AtomicBool,
}

/// A question waiting for the person.
struct Pending {
    ctx: CallCtx,
    what: Approvable,
    /// Ends the question's timer (the answer came, or the call was cancelled).
    done: Arc<Cancel>,
    asked_at: Instant,
}

/// What a 2026-07-28 retry's state allows.
pub(super) enum Redeemed {
    /// Run the call (with the approval, when the person accepted).
    Run(Option<Approved>),
    /// Answer this refusal; nothing runs.
    Refuse(String),
}

/// Whether client capabilities (`initialize`'s, or a 2026-07-28 request's) declare form
/// elicitation: `elicitation: {}` (form, the only mode before URL mode existed) or with
/// `form`.
pub(super) fn can_ask_form(capabilities: Option<&Value>) -> bool {
    match capabilities.and_then(|c| c.get("elicitation")) {
        Some(Value::Object(e)) => e.is_empty() || e.contains_key("form"),
        _ => false,
    }
}

impl Approvals {
    pub(super) fn new() -> Approvals {
        Approvals {
            key: mac::random_key(),
            born: Instant::now(),
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            remembered: Mutex::new(HashSet::new()),
            used: Mutex::new(HashMap::new()),
            legacy_form: AtomicBool::new(false),
        }
    }

    /// Records what `initialize` declared.
    pub(super) fn initialized(&self, version: ProtocolVersion, capabilities: Option<&Value>) {
        let form = version >= ProtocolVersion::V2025_06_18 && can_ask_form(capabilities);
        self.legacy_form.store(form, Ordering::SeqCst);
    }

    /// Whether the client declared form elicitation at `initialize`.
    pub(super) fn can_ask_legacy(&self) -> bool {
        self.legacy_form.load(Ordering::SeqCst)
    }

    fn now_ms(&self) -> u64 {
        self.born.elapsed().as_millis() as u64
    }

    /// A sealed state for `what`, a call of `tool` with arguments of digest `digest`: the
    /// facts encrypted (the client reads nothing of the command, the directory or a secret
    /// in them), then signed. Its nonce is the state's, used once: it is both the
    /// encryption's and what a replay is told by.
    fn state(&self, tool: Tool, digest: &str, what: &Approvable, ttl_ms: u64) -> Option<String> {
        let key = self.key.as_ref()?;
        let random = mac::random_key()?;
        let nonce = &random[..NONCE_BYTES];
        let payload = json!({
            "t": tool.name(),
            "a": digest,
            "d": what.cwd.display().to_string(),
            "c": what.command,
            "k": what.key,
            "r": what.rule_name(),
            "w": what.describe(),
            "x": self.now_ms() + ttl_ms,
            "n": mac::hex(nonce),
        });
        let mut sealed = nonce.to_vec();
        let start = sealed.len();
        sealed.extend_from_slice(payload.to_string().as_bytes());
        mac::keystream_xor(&subkey(key, ENCRYPTION), nonce, &mut sealed[start..]);
        let body = mac::hex(&sealed);
        let tag = mac::hex(&mac::hmac_sha256(&subkey(key, SIGNATURE), body.as_bytes()));
        Some(format!("{body}.{tag}"))
    }

    /// Checks a retry's `requestState` and `inputResponses`. `Err` is the JSON-RPC error
    /// of malformed `inputResponses`.
    pub(super) fn redeem(
        &self,
        engine: &crate::tools::engine::Engine,
        tool: Tool,
        args: &Arguments,
        params: &Map<String, Value>,
        id: &RequestId,
    ) -> Result<Redeemed, Value> {
        let refuse = |why: &str, facts: Option<&Map<String, Value>>| {
            let text = |k: &str| {
                facts
                    .and_then(|f| f.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            engine.audit.approval(&ApprovalStep {
                tool: tool.name(),
                step: "refused_state",
                via: "input_required",
                command: &text("c"),
                directory: &text("d"),
                rule: "-",
                detail: Some(why),
                ..ApprovalStep::default()
            });
            Ok(Redeemed::Refuse(format!(
                "Refused: the approval state (requestState) {why}; nothing was run. Call \
                 again without requestState and inputResponses to be asked again."
            )))
        };
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => Some(r),
            Some(other) => {
                let msg = format!(
                    "Invalid params: inputResponses must be an object of answers by key, got {}",
                    jsonrpc::type_name(other)
                );
                return Err(jsonrpc::error(
                    Some(id.value()),
                    jsonrpc::INVALID_PARAMS,
                    &msg,
                ));
            }
        };
        let Some(Value::String(state)) = params.get("requestState") else {
            return refuse("is not a string this server made", None);
        };
        let Some(facts) = self.verify(state) else {
            return refuse(
                "is not one this server made, or was changed (its signature does not verify)",
                None,
            );
        };
        let f = |k: &str| facts.get(k).and_then(Value::as_str).unwrap_or("");
        let expires = facts.get("x").and_then(Value::as_u64).unwrap_or(0);
        if self.now_ms() > expires {
            return refuse(
                &format!(
                    "has expired (an approval state lasts {} ms, YIELDSHELL_APPROVAL_TIMEOUT_MS)",
                    engine.config.approval_timeout_ms
                ),
                Some(&facts),
            );
        }
        let digest = match args {
            Ok(args) => args_digest(args),
            Err(_) => String::new(),
        };
        if f("t") != tool.name() || f("a") != digest {
            return refuse(
                "belongs to another call (a different tool or other arguments)",
                Some(&facts),
            );
        }
        {
            let mut used = self.used.lock();
            let now = self.now_ms();
            used.retain(|_, until| *until >= now);
            if used.insert(f("n").to_string(), expires).is_some() {
                drop(used);
                return refuse(
                    "was used already (each state is good for one call)",
                    Some(&facts),
                );
            }
        }
        let answer = match responses.and_then(|r| r.get(INPUT_KEY)) {
            None => return Ok(Redeemed::Run(None)),
            Some(a) => a,
        };
        let Some((action, remember)) = read_answer(answer) else {
            let msg = format!(
                "Invalid params: inputResponses.{INPUT_KEY} must be an elicitation result \
                 {{\"action\": \"accept\" | \"decline\" | \"cancel\", \"content\"?: {{\"remember\"?: boolean}}}}"
            );
            return Err(jsonrpc::error(
                Some(id.value()),
                jsonrpc::INVALID_PARAMS,
                &msg,
            ));
        };
        let cwd = PathBuf::from(f("d"));
        engine.audit.approval(&ApprovalStep {
            tool: tool.name(),
            step: "answered",
            via: "input_required",
            command: f("c"),
            directory: f("d"),
            rule: rule_name(f("r")),
            answer: Some(action),
            remember,
            ..ApprovalStep::default()
        });
        if action != "accept" {
            return Ok(Redeemed::Refuse(refusal_text(action, f("w"))));
        }
        if remember {
            let entry = (tool, f("k").to_string());
            self.remembered.lock().insert(entry);
        }
        Ok(Redeemed::Run(Some(Approved {
            cwd,
            remembered: false,
        })))
    }

    /// The facts of a state this server sealed, or `None`. The signature is checked before
    /// anything is decrypted.
    fn verify(&self, state: &str) -> Option<Map<String, Value>> {
        let key = self.key.as_ref()?;
        let (body, tag) = state.split_once('.')?;
        let expected = mac::hex(&mac::hmac_sha256(&subkey(key, SIGNATURE), body.as_bytes()));
        if !mac::equal_in_constant_time(expected.as_bytes(), tag.as_bytes()) {
            return None;
        }
        let bytes = unhex(body)?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let mut plain = sealed.to_vec();
        mac::keystream_xor(&subkey(key, ENCRYPTION), nonce, &mut plain);
        match serde_json::from_slice(&plain).ok()? {
            Value::Object(facts) => Some(facts),
            _ => None,
        }
    }
}

impl Server {
    /// A refusal the person may approve: run the call again at once when an earlier answer
    /// remembered it, ask (legacy: `elicitation/create`; 2026-07-28: `input_required`),
    /// or hand it back (`Some`) to be answered as it is when the client cannot ask.
    pub(super) fn approvable(
        self: &Arc<Self>,
        ctx: CallCtx,
        refusal: Answer,
        what: Approvable,
    ) -> Option<(CallCtx, Answer)> {
        let remembered = self
            .approvals
            .remembered
            .lock()
            .contains(&(ctx.tool, what.key.clone()));
        let via = if ctx.modern_form {
            "input_required"
        } else {
            "elicitation"
        };
        if remembered && ctx.rerun_args.is_some() {
            self.audit_step(&ctx, &what, "remembered", via, None, false);
            let approved = Approved {
                cwd: what.cwd,
                remembered: true,
            };
            self.rerun(ctx, approved, 0);
            return None;
        }
        if ctx.modern_form {
            return self.input_required(ctx, refusal, what);
        }
        let legacy = !ctx.version.is_modern()
            && self.approvals.legacy_form.load(Ordering::SeqCst)
            && matches!(ctx.reply_to, super::ReplyTo::Out);
        if !legacy || ctx.rerun_args.is_none() {
            return Some((ctx, refusal));
        }
        self.ask(ctx, what);
        None
    }

    /// 2026-07-28: answers the call with the question and a signed state.
    fn input_required(
        self: &Arc<Self>,
        ctx: CallCtx,
        refusal: Answer,
        what: Approvable,
    ) -> Option<(CallCtx, Answer)> {
        let digest = ctx.rerun_args.as_ref().map(args_digest).unwrap_or_default();
        let ttl = self.engine.config.approval_timeout_ms;
        let Some(state) = self.approvals.state(ctx.tool, &digest, &what, ttl) else {
            crate::base::log::warn!(
                "cannot make an approval state (no random key from the kernel): the call is refused as it is"
            );
            return Some((ctx, refusal));
        };
        self.audit_step(&ctx, &what, "asked", "input_required", None, false);
        let params = self.question(&what, ctx.version, "for as long as this server runs");
        let result = json!({
            "resultType": "input_required",
            "inputRequests": {INPUT_KEY: {"method": "elicitation/create", "params": params}},
            "requestState": state,
        });
        self.send_for(&ctx.key, jsonrpc::response(ctx.id.value(), result));
        self.leave(&ctx.key);
        None
    }

    /// Legacy eras: sends `elicitation/create` and parks the question on the timer.
    fn ask(self: &Arc<Self>, ctx: CallCtx, what: Approvable) {
        let n = self.approvals.next.fetch_add(1, Ordering::Relaxed);
        let ask_id = format!("{ASK_PREFIX}{n}");
        let params = self.question(&what, ctx.version, "for the rest of the session");
        let request = json!({
            "jsonrpc": "2.0",
            "id": ask_id,
            "method": "elicitation/create",
            "params": params,
        });
        self.audit_step(&ctx, &what, "asked", "elicitation", None, false);
        let done = Arc::new(Cancel::default());
        let timeout = Duration::from_millis(self.engine.config.approval_timeout_ms);
        let progress = ctx.token.clone().map(|token| {
            let this = self.clone();
            let key = ctx.key.clone();
            let annotated = crate::protocol::mcp::has_annotations(ctx.version);
            Arc::new(move |elapsed: u64, _bytes: u64| {
                let mut p = json!({"progressToken": token, "progress": elapsed});
                if annotated {
                    p["message"] = Value::from("waiting for approval");
                }
                this.send_for(&key, jsonrpc::notification("notifications/progress", p));
            }) as crate::tools::call::Progress
        });
        let key = ctx.key.clone();
        let call_cancel = ctx.cancel.clone();
        let pending = Pending {
            ctx,
            what,
            done: done.clone(),
            asked_at: Instant::now(),
        };
        self.approvals
            .pending
            .lock()
            .insert(ask_id.clone(), pending);
        // A cancel that came after the tool answered and before the question was entered
        // found no question to end: the call ends here, and the question is never sent.
        if call_cancel.is_cancelled() {
            let taken = self.approvals.pending.lock().remove(&ask_id);
            if let Some(p) = taken {
                self.responder(p.ctx).send(None);
            }
            return;
        }
        // The question goes out tagged with the call: a cancel before the client read it
        // drops it.
        self.send_for(&key, request);
        let watch = Watch::new(Vec::new(), WaitMode::Wait, Instant::now() + timeout)
            .cancel(&done)
            .progress(progress)
            .progress_every(PROGRESS_EVERY);
        let this = Arc::downgrade(self);
        let id = ask_id.clone();
        let waker = self.engine.waits.park(
            watch,
            Box::new(move |outcome, _| {
                if outcome == Outcome::Deadline {
                    if let Some(this) = this.upgrade() {
                        this.timed_out(&id);
                    }
                }
            }),
        );
        done.wake(waker);
        // An answer that came before the waker was named ended the question already.
        if done.is_cancelled() {
            done.cancel();
        }
    }

    /// No answer within the approval timeout: the call is refused, and the client is told
    /// it may close the question.
    fn timed_out(self: &Arc<Self>, ask_id: &str) {
        let Some(p) = self.approvals.pending.lock().remove(ask_id) else {
            return;
        };
        self.audit_step(&p.ctx, &p.what, "timed_out", "elicitation", None, false);
        self.close_question(ask_id, "no answer in time");
        let message = format!(
            "No answer from the person within {} ms (YIELDSHELL_APPROVAL_TIMEOUT_MS): {}, so it \
             was refused and nothing was run.",
            self.engine.config.approval_timeout_ms,
            capitalised_rule(&p.what)
        );
        self.refuse(p.ctx, message);
    }

    /// `notifications/cancelled` of a call whose question is open: the question ends, the
    /// call sends nothing, nothing runs. Returns whether there was one.
    pub(super) fn cancel_question(self: &Arc<Self>, call_key: &str) -> bool {
        let found = {
            let mut pending = self.approvals.pending.lock();
            let id = pending
                .iter()
                .find(|(_, p)| p.ctx.key == call_key)
                .map(|(id, _)| id.clone());
            id.and_then(|id| pending.remove(&id).map(|p| (id, p)))
        };
        let Some((ask_id, p)) = found else {
            return false;
        };
        p.done.cancel();
        self.audit_step(&p.ctx, &p.what, "cancelled", "elicitation", None, false);
        self.close_question(&ask_id, "the call was cancelled");
        self.responder(p.ctx).send(None);
        true
    }

    /// A response to one of the server's requests (`id`, `result` or `None` for an error).
    pub(super) fn answered(self: &Arc<Self>, id: Option<&Value>, result: Option<&RawValue>) {
        let pending = match id.and_then(Value::as_str) {
            Some(id) if id.starts_with(ASK_PREFIX) => self.approvals.pending.lock().remove(id),
            _ => None,
        };
        let Some(p) = pending else {
            let shown = id.map_or("none".to_string(), Value::to_string);
            crate::base::log::warn!(
                "dropped a response with id {shown}: it answers no question this server has open"
            );
            return;
        };
        p.done.cancel();
        let waited = p.asked_at.elapsed().as_millis() as u64;
        let answer = result
            .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
            .and_then(|v| read_answer(&v).map(|(a, r)| (a.to_string(), r)));
        let Some((action, remember)) = answer else {
            // An error response, or a result that is no elicitation result: this client
            // cannot ask after all; the refusal stands as it was.
            let detail = match result {
                None => "the client answered the question with an error",
                Some(_) => "the client's answer is not an elicitation result",
            };
            self.audit_step(
                &p.ctx,
                &p.what,
                "client_error",
                "elicitation",
                Some(detail),
                false,
            );
            let message = format!(
                "Refused: {}; the person could not be asked ({detail}). Nothing was run.",
                p.what.describe()
            );
            return self.refuse(p.ctx, message);
        };
        self.audit_answer(&p, &action, remember);
        if action != "accept" {
            let message = refusal_text(&action, &p.what.describe());
            return self.refuse(p.ctx, message);
        }
        if remember {
            let entry = (p.ctx.tool, p.what.key.clone());
            self.approvals.remembered.lock().insert(entry);
        }
        let approved = Approved {
            cwd: p.what.cwd,
            remembered: false,
        };
        self.rerun(p.ctx, approved, waited);
    }

    fn audit_answer(&self, p: &Pending, action: &str, remember: bool) {
        self.engine.audit.approval(&ApprovalStep {
            tool: p.ctx.tool.name(),
            step: "answered",
            via: "elicitation",
            command: &p.what.command,
            directory: &p.what.cwd.display().to_string(),
            rule: p.what.rule_name(),
            answer: Some(action),
            remember,
            detail: None,
        });
    }

    fn audit_step(
        &self,
        ctx: &CallCtx,
        what: &Approvable,
        step: &'static str,
        via: &'static str,
        detail: Option<&str>,
        remember: bool,
    ) {
        self.engine.audit.approval(&ApprovalStep {
            tool: ctx.tool.name(),
            step,
            via,
            command: &what.command,
            directory: &what.cwd.display().to_string(),
            rule: what.rule_name(),
            answer: None,
            remember,
            detail,
        });
    }

    /// Tells the client it may close question `ask_id` (the server gave up on it).
    fn close_question(&self, ask_id: &str, reason: &str) {
        let note = jsonrpc::notification(
            "notifications/cancelled",
            json!({"requestId": ask_id, "reason": reason}),
        );
        self.send(note);
    }

    /// Answers the call with a refusal (nothing ran).
    fn refuse(self: &Arc<Self>, ctx: CallCtx, message: String) {
        let mut answer = Err(ToolError::new(ErrorKind::Refused, message));
        // Like every text the server makes, it hides the secrets in force.
        crate::tools::results::redact_made_texts(&mut answer, &self.engine.secrets.current());
        self.responder(ctx).send(Some(answer));
    }

    /// The `elicitation/create` params of a question, its text hiding the secrets in force
    /// and showing every character a person could not see as an escape (`\u{202e}`), so
    /// that the text they read is the text that runs.
    fn question(&self, what: &Approvable, version: ProtocolVersion, remember_for: &str) -> Value {
        let mut params = question(what, version, remember_for);
        if let Some(Value::String(m)) = params.get_mut("message") {
            let redacted = self.engine.secrets.current().redact_str(m);
            *m = crate::base::visible::visible(&redacted).into_owned();
        }
        params
    }

    /// Runs the call again, approved: on a worker, from the start; its progress goes on
    /// from `offset` ms.
    fn rerun(self: &Arc<Self>, mut ctx: CallCtx, approved: Approved, offset: u64) {
        let Some(args) = ctx.rerun_args.take() else {
            return self.refuse(
                ctx,
                "Internal error: the call's arguments were not kept".into(),
            );
        };
        // Asked once: a refusal of the approved call is answered as it is.
        ctx.may_ask = false;
        let progress = ctx
            .token
            .clone()
            .map(|t| self.progress(t, ctx.key.clone(), ctx.version, offset + 1));
        let (tool, client) = (ctx.tool, ctx.client.clone());
        let call = Call {
            cancel: ctx.cancel.clone(),
            progress,
            respond: self.responder(ctx),
            client,
            approved: Some(approved),
        };
        let job = self.job(tool, Ok(args), call, false);
        self.engine.pool.execute(Box::new(job));
    }
}

/// The `elicitation/create` params of a question: the exact command, the directory, what
/// else changes what runs (shell, env, stdin) and the rule in two sentences, and a form
/// whose only field, `remember`, is optional.
fn question(what: &Approvable, version: ProtocolVersion, remember_for: &str) -> Value {
    let with = match what.runs_with.as_slice() {
        [] => String::new(),
        more => format!(" with {}", more.join(", ")),
    };
    let message = format!(
        "Run {} in {}{with}? yieldshell refused it because {}; accept to run it this once.",
        what.command,
        what.cwd.display(),
        what.describe()
    );
    let mut params = json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "remember": {
                    "type": "boolean",
                    "title": "Remember",
                    "description": format!("allow this exact call (command, directory, shell, env and stdin) {remember_for}"),
                    "default": false,
                },
            },
        },
    });
    // `mode` exists from 2025-11-25 on.
    if version >= ProtocolVersion::V2025_11_25 {
        params["mode"] = Value::from("form");
    }
    params
}

/// An elicitation result's action and whether `remember` was ticked, or `None` when it is
/// not one.
fn read_answer(answer: &Value) -> Option<(&str, bool)> {
    let action = answer.get("action")?.as_str()?;
    if !matches!(action, "accept" | "decline" | "cancel") {
        return None;
    }
    let remember = action == "accept"
        && answer
            .get("content")
            .and_then(|c| c.get("remember"))
            .is_some_and(|r| r.as_bool() == Some(true) || r.as_str() == Some("true"));
    Some((action, remember))
}

/// The answer of a call the person declined or dismissed.
fn refusal_text(action: &str, rule: &str) -> String {
    let who = match action {
        "decline" => "Declined by the person: asked through the client, they declined to run it",
        _ => "Cancelled by the person: asked through the client, they dismissed the question without approving it",
    };
    format!(
        "{who}. It was refused because {rule}; nothing was run. Do not retry the same call: \
         choose another way, or ask the person what they want."
    )
}

fn capitalised_rule(what: &Approvable) -> String {
    let rule = what.describe();
    let mut chars = rule.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => rule,
    }
}

/// A rule's name as a state carries it, as a `'static` audit field.
fn rule_name(name: &str) -> &'static str {
    match name {
        "blocked_side_effect" => "blocked_side_effect",
        "argument_rule" => "argument_rule",
        "blocked_side_effect+argument_rule" => "blocked_side_effect+argument_rule",
        _ => "-",
    }
}

/// The digest a state binds the arguments by: SHA-256 of their JSON text (keys sorted).
fn args_digest(args: &Map<String, Value>) -> String {
    let text = serde_json::to_vec(args).unwrap_or_default();
    mac::hex(&mac::sha256(&text))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_elicitation_is_read_from_capabilities() {
        assert!(can_ask_form(Some(&json!({"elicitation": {}}))));
        assert!(can_ask_form(Some(&json!({"elicitation": {"form": {}}}))));
        assert!(can_ask_form(Some(
            &json!({"elicitation": {"form": {}, "url": {}}})
        )));
        assert!(!can_ask_form(Some(&json!({"elicitation": {"url": {}}}))));
        assert!(!can_ask_form(Some(&json!({"roots": {}}))));
        assert!(!can_ask_form(None));
    }

    #[test]
    fn states_verify_only_unchanged() {
        let approvals = Approvals::new();
        let what = Approvable {
            rules: vec![crate::policy::approval::Rule::SideEffects(vec![
                "RUNS_INLINE_CODE".into(),
            ])],
            command: "python3 -c 'print(1)'".into(),
            cwd: PathBuf::from("/tmp"),
            runs_with: Vec::new(),
            key: "k".into(),
        };
        let state = approvals.state(Tool::Exec, "ab", &what, 1000).unwrap();
        // Sealed: neither the command nor the directory can be read in it.
        let body = unhex(state.split('.').next().unwrap()).unwrap();
        for plain in ["print(1)", "/tmp", "RUNS_INLINE_CODE"] {
            let found = body.windows(plain.len()).any(|w| w == plain.as_bytes());
            assert!(!found, "{plain}");
        }
        let facts = approvals.verify(&state).unwrap();
        assert_eq!(facts["c"], "python3 -c 'print(1)'");
        assert_eq!(facts["d"], "/tmp");
        // One changed character anywhere breaks it.
        for i in [0, state.len() / 2, state.len() - 1] {
            let mut bytes = state.clone().into_bytes();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            let changed = String::from_utf8(bytes).unwrap();
            assert!(approvals.verify(&changed).is_none(), "{i}");
        }
        // Another server's key does not verify it.
        assert!(Approvals::new().verify(&state).is_none());
    }

    #[test]
    fn answers_are_read_strictly() {
        assert_eq!(
            read_answer(&json!({"action": "accept"})),
            Some(("accept", false))
        );
        assert_eq!(
            read_answer(&json!({"action": "accept", "content": {"remember": true}})),
            Some(("accept", true))
        );
        assert_eq!(
            read_answer(&json!({"action": "decline", "content": {"remember": true}})),
            Some(("decline", false))
        );
        assert_eq!(read_answer(&json!({"action": "yes"})), None);
        assert_eq!(read_answer(&json!({})), None);
    }

    #[test]
    fn the_question_names_command_directory_and_rule_and_requires_nothing() {
        let what = Approvable {
            rules: vec![crate::policy::approval::Rule::SideEffects(vec![
                "DELETES_FILES".into(),
            ])],
            command: "rm -rf build".into(),
            cwd: PathBuf::from("/w"),
            runs_with: vec!["shell /bin/bash".into(), "stdin of 3 bytes \"yes\"".into()],
            key: "k".into(),
        };
        let q = question(
            &what,
            ProtocolVersion::V2025_11_25,
            "for the rest of the session",
        );
        let m = q["message"].as_str().unwrap();
        assert!(
            m.contains("rm -rf build in /w with shell /bin/bash, stdin of 3 bytes \"yes\"?")
                && m.contains("DELETES_FILES"),
            "{m}"
        );
        assert_eq!(q["mode"], "form");
        assert!(q["requestedSchema"].get("required").is_none());
        let old = question(
            &what,
            ProtocolVersion::V2025_06_18,
            "for the rest of the session",
        );
        assert!(old.get("mode").is_none());
    }
}
