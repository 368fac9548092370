//! The main loop: input lines in, responses out, requests to the pool, shutdown.
//!
//! Threads: the main thread reads stdin (`transport::Lines`) and dispatches each line;
//! `rpc-out` writes stdout (`transport`); `signals` turns SIGTERM, SIGINT and SIGHUP into
//! shutdown; `worker-N` run `tools/call` (and batches) so that `ping` and `tools/list` are
//! answered at once while tools work.
//!
//! Cancellation: every `tools/call` in flight has a `Cancel` in `inflight`, keyed by the
//! JSON text of its id. `notifications/cancelled` flips it; the waiting tool wakes, stops
//! its process group (for `exec`), and the worker sends nothing.
//!
//! Invariant: a call leaves `inflight` only after its answer is queued on the outbox.
//!
//! Shutdown (stdin EOF, a signal, or stdout gone) runs once, on its own thread: in-flight
//! calls get a moment to finish (so that `cmd | yieldshell` answers fast commands), then
//! every group gets SIGTERM, SIGKILL after 1 s; once `inflight` is empty the outbox is
//! closed, the writer drains it and ends, and the process exits 0 within 2 s.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::base::config::{Config, Tool};
use crate::base::pool::Pool;
use crate::process::reaper::Reaper;
use crate::protocol::budget::Budget;
use crate::protocol::jsonrpc::{self, IncomingRaw, RequestId};
use crate::protocol::mcp::modern::{self, Era};
use crate::protocol::mcp::{self, ProtocolVersion};
use crate::protocol::transport::{self, Input, IoThreads, Outbox, MAX_LINE};
use crate::tools::call::Cancel;
use crate::tools::engine::Engine;

mod approvals;
mod debug_log;
mod inproc;
mod tools_call;

pub(crate) use inproc::call_once;
pub use inproc::serve_in_memory;

struct Server {
    engine: Arc<Engine>,
    out: Outbox,
    version: Mutex<Option<ProtocolVersion>>,
    /// `clientInfo.name` from `initialize`.
    client: Mutex<Option<Arc<str>>>,
    inflight: Mutex<HashMap<String, Arc<Cancel>>>,
    idle: Condvar,
    batches: std::sync::atomic::AtomicU64,
    /// Bytes of jobs waiting for a worker (`budget`).
    queued: Arc<Budget>,
    /// Questions put to the person, and what they approved (`approvals`).
    approvals: approvals::Approvals,
}

/// The era a request is served in: its protocol version, the client's name, and whether
/// it is a stateless 2026-07-28 request.
struct CallEra {
    version: ProtocolVersion,
    client: Option<Arc<str>>,
    modern: bool,
    /// A 2026-07-28 request's client capabilities (from its `_meta`).
    capabilities: Option<Value>,
}

/// A call's arguments: the members its tool reads, or why they cannot be read (answered
/// as the tool's invalid-argument error, not as a protocol error).
type Arguments = Result<Map<String, Value>, String>;

/// What answering a call needs (and, for a call a person may be asked about, running it
/// again once they approve it).
struct CallCtx {
    tool: Tool,
    id: RequestId,
    /// The id's JSON text: the call's key in the in-flight set.
    key: String,
    cancel: Arc<Cancel>,
    /// Under 1.1, what the answer needs of the call.
    asked: Option<mcp::compat::Asked>,
    reply_to: ReplyTo,
    version: ProtocolVersion,
    /// `_meta.progressToken`.
    token: Option<Value>,
    client: Option<Arc<str>>,
    /// The arguments, kept to run the call again after an approval (only with
    /// `YIELDSHELL_APPROVALS=ask`, for the tools that run commands).
    rerun_args: Option<Map<String, Value>>,
    /// A refusal the person may approve is put to them (else it is answered as it is).
    may_ask: bool,
    /// A 2026-07-28 request whose client declared form elicitation.
    modern_form: bool,
    /// Whether results carry `structuredContent` (`mcp::structured_for`).
    structured: bool,
    /// The sentence naming arguments the tool does not know (the call ran without them).
    note: Option<String>,
}

struct Shutdown {
    started: AtomicBool,
    engine: Arc<Engine>,
    server: Mutex<Option<std::sync::Weak<Server>>>,
    io: Mutex<Option<IoThreads>>,
}

impl Shutdown {
    /// Starts the shutdown once; later calls do nothing.
    fn trigger(self: &Arc<Self>, why: &str, wait_for_calls: bool) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        crate::base::log::info!("shutting down: {why}");
        let this = self.clone();
        let spawned = std::thread::Builder::new()
            .name("shutdown".into())
            .spawn(move || this.run(wait_for_calls));
        if spawned.is_err() {
            // No thread to spare: do it here.
            self.run(wait_for_calls);
        }
    }

    fn run(&self, wait_for_calls: bool) {
        let start = Instant::now();
        let server = self.server.lock().as_ref().and_then(|w| w.upgrade());
        if wait_for_calls {
            if let Some(s) = &server {
                s.wait_idle(start + Duration::from_millis(200));
            }
        }
        self.engine.shutdown(
            Duration::from_millis(1000),
            Duration::from_millis(1600).saturating_sub(start.elapsed()),
        );
        if let Some(s) = &server {
            // Calls that ended during shutdown answer before they leave the in-flight set,
            // so once it is empty every answer is queued.
            s.wait_idle(Instant::now() + Duration::from_millis(100));
            s.out.close();
        }
        drop(server);
        // Closing dropped the only sender: the writer ends after the last queued line.
        if let Some(io) = self.io.lock().as_ref() {
            let deadline = (start + Duration::from_millis(1950)).max(Instant::now());
            if !io.join_writer(deadline) {
                crate::base::log::warn!("stdout did not take every answer in time; exiting anyway");
            }
        }
        self.engine.audit.flush(Duration::from_millis(100));
        // `exit` skips `main`'s own removal: the calls' temporary directories went with
        // their records, and their parent goes here.
        crate::process::tmpdir::remove_base();
        crate::base::log::flush(Duration::from_millis(300));
        std::process::exit(0);
    }
}

/// Runs the server until shutdown. Returns only on a startup failure.
pub fn run(config: Config) -> std::process::ExitCode {
    crate::base::log::set_level(config.log_level);
    for warning in crate::protocol::startup::warnings(&config) {
        crate::base::log::warn!("{warning}");
    }
    // Non-dumpable before anything starts (the guardian sets it for itself): no process of the same
    // user without CAP_SYS_PTRACE (or CAP_SYS_ADMIN, CAP_PERFMON, which also pass read-mode
    // checks) can trace the server or read its /proc environ and memory.
    if let Err(e) = crate::base::sys::set_dumpable(false) {
        crate::base::log::warn!("cannot mark the server non-dumpable: {e}");
    }
    crate::base::sys::tune_allocator();
    crate::base::sys::cloexec_from(3);
    // The guardian starts with the first command (`Guardian::ensure_started`).
    let marker_prefix = crate::base::stamp::new_marker_prefix();
    // Every child of this process is the server's: orphans re-parented to it are ours.
    crate::process::tree::claim_children();
    if let Err(e) = crate::base::sys::contain_server() {
        crate::base::log::warn!(
            "cannot put the server in a job of its own ({e}); each command's own job still \
             ends with the server"
        );
    }
    if let Err(e) = crate::base::sys::set_child_subreaper() {
        crate::base::log::warn!(
            "cannot become a child subreaper ({e}); orphaned descendants are reaped by init"
        );
    }
    let config = Arc::new(config);
    let engine = match start_engine(config.clone(), marker_prefix) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let shutdown = Arc::new(Shutdown {
        started: AtomicBool::new(false),
        engine: engine.clone(),
        server: Mutex::new(None),
        io: Mutex::new(None),
    });
    let on_gone = {
        let shutdown = shutdown.clone();
        move || shutdown.trigger("stdout closed", false)
    };
    let (outbox, io_threads) = match transport::stdio(config.max_queued_bytes, on_gone) {
        Ok(t) => t,
        Err(e) => {
            crate::base::log::error!("cannot start the stdio threads: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    *shutdown.io.lock() = Some(io_threads);
    let server = Server::new(engine, outbox);
    *shutdown.server.lock() = Some(Arc::downgrade(&server));
    if let Err(e) = start_signals(shutdown.clone()) {
        crate::base::log::error!("cannot install signal handlers: {e}");
        return std::process::ExitCode::from(1);
    }
    crate::base::log::info!(
        "yieldshell {} ready ({:?} mode)",
        env!("CARGO_PKG_VERSION"),
        config.mode
    );
    let stdin = std::io::stdin();
    let mut lines = transport::Lines::new(stdin.lock());
    server.serve(|| lines.next_input());
    shutdown.trigger("stdin closed", true);
    // The shutdown thread exits the process once the writer has written every answer.
    loop {
        std::thread::park();
    }
}

/// Starts the reaper and the engine; on failure, the exit code to return.
fn start_engine(
    config: Arc<Config>,
    marker_prefix: String,
) -> Result<Arc<Engine>, std::process::ExitCode> {
    let reaper = match Reaper::start() {
        Ok(r) => r,
        Err(e) => {
            crate::base::log::error!("cannot start the reaper thread: {e}");
            return Err(std::process::ExitCode::from(1));
        }
    };
    let pool = match Pool::new(Pool::default_size()) {
        Ok(p) => p,
        Err(e) => {
            crate::base::log::error!("cannot start the worker threads: {e}");
            return Err(std::process::ExitCode::from(1));
        }
    };
    match Engine::new(config, reaper, marker_prefix, pool) {
        Ok(e) => Ok(Arc::new(e)),
        Err(message) => {
            crate::base::log::flush(Duration::from_millis(300));
            let _ = writeln!(io::stderr().lock(), "yieldshell: {message}");
            Err(std::process::ExitCode::from(2))
        }
    }
}

/// Turns SIGTERM, SIGINT and SIGHUP into shutdown. (SIGCHLD goes straight to the reaper.)
fn start_signals(shutdown: Arc<Shutdown>) -> io::Result<()> {
    crate::base::sys::on_shutdown_signals(move |signal| {
        let why = format!("signal {}", crate::base::sys::signal_name(signal));
        shutdown.trigger(&why, false);
    })
}

impl Server {
    fn new(engine: Arc<Engine>, out: Outbox) -> Arc<Server> {
        Arc::new(Server {
            engine,
            out,
            version: Mutex::new(None),
            client: Mutex::new(None),
            inflight: Mutex::new(HashMap::new()),
            idle: Condvar::new(),
            batches: Default::default(),
            queued: Arc::new(Budget::new(
                crate::protocol::budget::QUEUED_BYTES,
                crate::protocol::budget::QUEUED_JOBS,
            )),
            approvals: approvals::Approvals::new(),
        })
    }

    /// Dispatches every input until the input ends. Before taking each line it waits while
    /// the answers queued for stdout pass their bound (`Outbox::wait_for_room`): a client
    /// that does not read stdout is not read either, so the queue cannot grow without end.
    /// Calls already taken still run and answer (a sender never waits).
    fn serve(self: &Arc<Self>, mut next: impl FnMut() -> Option<Input>) {
        loop {
            self.out.wait_for_room();
            let Some(item) = next() else {
                return;
            };
            match item {
                Input::TooLong { id } => {
                    crate::base::log::warn!("input line longer than {MAX_LINE} bytes dropped");
                    self.send(jsonrpc::error(
                        id.as_ref().map(RequestId::value),
                        jsonrpc::INVALID_REQUEST,
                        &format!("message too long: a line may hold at most {MAX_LINE} bytes; send large inputs in several calls (for example several write calls)"),
                    ));
                }
                Input::Line(line) => {
                    let big = line.len() >= BIG_LINE;
                    self.dispatch_line(line);
                    if big {
                        // The line is gone; give its pages back (a no-op on musl).
                        crate::base::sys::release_free_memory();
                    }
                }
            }
        }
    }

    fn send(&self, message: Value) {
        let line = jsonrpc::to_line(&message);
        if crate::base::log::enabled(crate::base::log::Level::Debug) {
            crate::base::log::debug!("-> {}", self.debug_text(&line));
        }
        self.out.send(line);
    }

    /// A message for the debug log (`debug_log`).
    fn debug_text(&self, line: &[u8]) -> String {
        debug_log::text(&self.engine.secrets, line)
    }

    /// Sends a message of the request whose id has the JSON text `key` (`Outbox::send_for`).
    fn send_for(&self, key: &str, message: Value) {
        let line = jsonrpc::to_line(&message);
        if crate::base::log::enabled(crate::base::log::Level::Debug) {
            crate::base::log::debug!("-> {}", self.debug_text(&line));
        }
        self.out.send_for(key, line);
    }

    fn version(&self) -> ProtocolVersion {
        self.version.lock().unwrap_or(mcp::LATEST)
    }

    fn wait_idle(&self, deadline: Instant) {
        let mut inflight = self.inflight.lock();
        while !inflight.is_empty() {
            if self.idle.wait_until(&mut inflight, deadline).timed_out() {
                return;
            }
        }
    }

    /// Handles one input line. Only the envelope is parsed; `params` stays a raw slice of
    /// the line, and only the members a method reads become values (`jsonrpc::parse_line`).
    fn dispatch_line(self: &Arc<Self>, line: Vec<u8>) {
        if crate::base::log::enabled(crate::base::log::Level::Debug) {
            crate::base::log::debug!("<- {}", self.debug_text(&line));
        }
        let answer = match jsonrpc::parse_line(&line) {
            Err(refused) => {
                let code = match refused.fault {
                    jsonrpc::Fault::NotJson => jsonrpc::PARSE_ERROR,
                    jsonrpc::Fault::NotRequest => jsonrpc::INVALID_REQUEST,
                };
                let id = refused.id.as_ref();
                Answer::Now(Some(jsonrpc::error(id, code, &refused.message)))
            }
            Ok(jsonrpc::Line::Single(raw)) => self.handle(raw, &ReplyTo::Out),
            Ok(jsonrpc::Line::Batch(items)) => {
                let count = items.len();
                drop(items);
                return self.batch(line, count);
            }
        };
        match answer {
            Answer::Now(Some(response)) => self.send(response),
            Answer::Now(None) | Answer::Later => (),
            Answer::Queue(bytes, job) => {
                // The call's arguments are its own values now: let the line go before the
                // tool turns them into typed arguments, so that the two never coexist.
                drop(line);
                // Waits here (and stops reading input) while queued jobs hold too much.
                self.queued.take(bytes);
                let queued = self.queued.clone();
                self.engine.pool.execute(Box::new(move || {
                    queued.give(bytes);
                    job();
                }));
            }
        }
    }

    /// A batch of `count` messages: answered by a worker, which parses the line again
    /// (the line moves to it; no copy is made).
    fn batch(self: &Arc<Self>, line: Vec<u8>, count: usize) {
        if !self.version().accepts_batches() {
            self.send(jsonrpc::error(
                None,
                jsonrpc::INVALID_REQUEST,
                "batches (JSON arrays) are only accepted under protocol version 2025-03-26; send one message per line",
            ));
            return;
        }
        if count == 0 {
            self.send(jsonrpc::error(
                None,
                jsonrpc::INVALID_REQUEST,
                "empty batch",
            ));
            return;
        }
        // The batch stays in flight until its answer is queued (ids of calls are JSON
        // texts, so this key cannot collide with one).
        let key = format!("batch {}", self.batches.fetch_add(1, Ordering::Relaxed));
        self.inflight
            .lock()
            .insert(key.clone(), Arc::new(Cancel::default()));
        let batch = Arc::new(Batch {
            slots: Mutex::new((vec![None; count], count)),
            key,
        });
        let this = self.clone();
        let bytes = line.len();
        self.queued.take(bytes);
        self.engine.pool.execute(Box::new(move || {
            this.queued.give(bytes);
            let items = match jsonrpc::parse_line(&line) {
                Ok(jsonrpc::Line::Batch(items)) => items,
                _ => Vec::new(), // Parsed once already: cannot happen.
            };
            for (i, item) in items.into_iter().enumerate() {
                let to = ReplyTo::Batch(batch.clone(), i);
                let [method, id] = jsonrpc::fields(item, ["method", "id"]);
                if method.is_some_and(|m| m.get() == "\"initialize\"") {
                    let id = id
                        .filter(|v| matches!(jsonrpc::raw_type_name(v), "string" | "number"))
                        .and_then(|v| jsonrpc::to_value(v).ok());
                    let error = id.map(|id| {
                        jsonrpc::error(
                            Some(&id),
                            jsonrpc::INVALID_REQUEST,
                            "initialize cannot be part of a batch",
                        )
                    });
                    this.answer(&to, error);
                    continue;
                }
                if let Answer::Now(answer) = this.handle(item, &to) {
                    this.answer(&to, answer);
                }
            }
        }));
    }

    /// Delivers the answer of one message (or its lack of one, `None`) to `to`. The
    /// answer of a batch goes out when its last item is answered.
    fn answer(&self, to: &ReplyTo, answer: Option<Value>) {
        match to {
            ReplyTo::Out => {
                if let Some(a) = answer {
                    self.send(a);
                }
            }
            ReplyTo::Batch(batch, i) => {
                let mut slots = batch.slots.lock();
                slots.0[*i] = answer;
                slots.1 -= 1;
                if slots.1 > 0 {
                    return;
                }
                let all: Vec<Value> = std::mem::take(&mut slots.0).into_iter().flatten().collect();
                drop(slots);
                if !all.is_empty() {
                    self.send(Value::Array(all));
                }
                self.leave(&batch.key);
            }
        }
    }

    /// Handles one message: its answer now, or `Later` for a tool call, which answers
    /// to `to` when it ends.
    fn handle(self: &Arc<Self>, raw: &RawValue, to: &ReplyTo) -> Answer {
        match jsonrpc::classify_raw(raw) {
            IncomingRaw::Request { id, method, params } => {
                if self.inflight.lock().contains_key(&id.to_string()) {
                    return Answer::Now(Some(id_in_use(&id)));
                }
                let map = match jsonrpc::params_map(params, PARAMS_READ) {
                    Ok(map) => map,
                    Err(e) => {
                        let msg = format!("Invalid params: params.{e}");
                        let error = jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg);
                        return Answer::Now(Some(error));
                    }
                };
                let era = match modern::era(&map) {
                    Ok(era) => era,
                    Err(e) => {
                        let mut error = jsonrpc::error(Some(&id), e.code, &e.message);
                        if let Some(data) = e.data {
                            error["error"]["data"] = data;
                        }
                        return Answer::Now(Some(error));
                    }
                };
                let era = match era {
                    Era::Legacy => CallEra {
                        version: self.version(),
                        client: self.client.lock().clone(),
                        modern: false,
                        capabilities: None,
                    },
                    Era::Modern { client } => CallEra {
                        version: ProtocolVersion::V2026_07_28,
                        client: client.map(Arc::from),
                        modern: true,
                        capabilities: map
                            .get("_meta")
                            .and_then(|m| m.get(modern::CLIENT_CAPABILITIES))
                            .cloned(),
                    },
                };
                if method == "tools/call" {
                    let [arguments] = params.map_or([None], |p| jsonrpc::fields(p, ["arguments"]));
                    return match self.tools_call(id, map, arguments, to, era) {
                        Err(error) => Answer::Now(Some(error)),
                        Ok(None) => Answer::Later,
                        Ok(Some((bytes, job))) => Answer::Queue(bytes, job),
                    };
                }
                self.request(id, &method, map, &era)
            }
            IncomingRaw::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    if let Ok(params) = jsonrpc::params_map(params, PARAMS_READ) {
                        self.cancel(&params);
                    }
                }
                Answer::Now(None)
            }
            IncomingRaw::Unparsable(message) => {
                Answer::Now(Some(jsonrpc::error(None, jsonrpc::PARSE_ERROR, &message)))
            }
            IncomingRaw::Response { id, result } => {
                self.answered(id.as_ref(), result);
                Answer::Now(None)
            }
            IncomingRaw::Invalid { id, message } => Answer::Now(Some(jsonrpc::error(
                id.as_ref(),
                jsonrpc::INVALID_REQUEST,
                &format!("Invalid Request: {message}"),
            ))),
        }
    }

    fn request(
        self: &Arc<Self>,
        id: Value,
        method: &str,
        params: Map<String, Value>,
        era: &CallEra,
    ) -> Answer {
        let config = &self.engine.config;
        let result = match method {
            // Answered in either era and in any state: a probe changes nothing.
            "server/discover" => {
                let yield_ms = mcp::default_yield(config, era.client.as_deref());
                modern::discover_result(instructions(config, yield_ms))
            }
            "ping" if !era.modern => json!({}),
            "initialize" if !era.modern => {
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                let version = mcp::negotiate(requested);
                *self.version.lock() = Some(version);
                self.approvals
                    .initialized(version, params.get("capabilities"));
                let client = params
                    .get("clientInfo")
                    .and_then(|c| c.get("name"))
                    .and_then(Value::as_str)
                    .map(Arc::<str>::from);
                let yield_ms = mcp::default_yield(config, client.as_deref());
                *self.client.lock() = client;
                let mut result = mcp::initialize_result(version, yield_ms);
                result["instructions"] = Value::from(instructions(config, yield_ms));
                result
            }
            "tools/list" => {
                if params.get("cursor").is_some_and(|c| !c.is_null()) {
                    let msg = "Invalid params: unknown cursor; tools/list returns every tool in one page, call it without a cursor";
                    let error = jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, msg);
                    return Answer::Now(Some(error));
                }
                let mut list = mcp::tools_list_for(config, era.client.as_deref(), era.version);
                if config.api == crate::base::config::Api::V1_1 {
                    list = mcp::compat::tools_list(list);
                }
                if era.modern {
                    modern::complete(list, true)
                } else {
                    list
                }
            }
            _ => {
                let why = if era.modern {
                    " (protocol 2026-07-28 has no ping or initialize: send requests with their _meta)"
                } else {
                    ""
                };
                return Answer::Now(Some(jsonrpc::error(
                    Some(&id),
                    jsonrpc::METHOD_NOT_FOUND,
                    &format!("Method not found: {method}{why}"),
                )));
            }
        };
        Answer::Now(Some(jsonrpc::response(&id, result)))
    }

    /// Removes a call from the in-flight set (after its answer was queued).
    fn leave(&self, key: &str) {
        let mut inflight = self.inflight.lock();
        inflight.remove(key);
        if inflight.is_empty() {
            self.idle.notify_all();
        }
    }

    /// `notifications/cancelled`: the call in flight stops and sends nothing; an answer
    /// (or progress) of the request still waiting for stdout is dropped.
    fn cancel(self: &Arc<Self>, params: &Map<String, Value>) {
        let Some(id) = params.get("requestId").cloned().and_then(RequestId::new) else {
            return;
        };
        let cancel = self.inflight.lock().get(id.key()).cloned();
        if let Some(c) = cancel {
            crate::base::log::info!("request {} cancelled by the client", id.key());
            c.cancel();
            // A call waiting for the person's answer ends here, with nothing run.
            self.cancel_question(id.key());
        }
        // A call that answered left the in-flight set once its answer was queued: if the
        // client has not read it yet, it does not get it.
        let dropped = self.out.discard(id.key());
        if dropped > 0 {
            crate::base::log::info!(
                "request {} cancelled by the client: dropped {dropped} bytes it had not read yet",
                id.key()
            );
        }
    }
}

/// `instructions` for this configuration and default yield, in the names of its API.
fn instructions(config: &Config, yield_ms: u64) -> String {
    let text = mcp::instructions_for(config, yield_ms);
    match config.api {
        crate::base::config::Api::V1_1 => mcp::compat::text(&text),
        crate::base::config::Api::Current => text,
    }
}

/// The refusal of a request whose id is that of a request still in flight.
fn id_in_use(id: &Value) -> Value {
    let message = format!(
        "Invalid Request: id {id} is already in use by a request still in flight; give every request its own id (this one was not run; the first one goes on)"
    );
    jsonrpc::error(Some(id), jsonrpc::INVALID_REQUEST, &message)
}

/// Where the answer of a message goes.
#[derive(Clone)]
enum ReplyTo {
    /// Straight to the outbox.
    Out,
    /// Into slot `usize` of a batch.
    Batch(Arc<Batch>, usize),
}

/// A batch being answered: one slot per item and how many are still open.
struct Batch {
    slots: Mutex<(Vec<Option<Value>>, usize)>,
    /// Its in-flight key.
    key: String,
}

/// The answer of a message, when it is known at once.
enum Answer {
    /// This answer (or none, for a notification).
    Now(Option<Value>),
    /// A tool call: it answers when it ends.
    Later,
    /// A tool call to queue for a worker once the input line is dropped; it holds this
    /// many bytes of arguments.
    Queue(usize, crate::base::pool::Job),
}

/// Lines (and tool arguments) at least this long give their memory back to the kernel
/// once handled (`sys::release_free_memory`).
const BIG_LINE: usize = 1024 * 1024;

/// The members of `params` that some method reads; the others are never parsed. A method
/// that reads a new member must add it here.
const PARAMS_READ: &[&str] = &[
    "protocolVersion",
    "clientInfo",
    "capabilities",
    "cursor",
    "name",
    "_meta",
    "requestId",
    "reason",
    "requestState",
    "inputResponses",
];

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send + Sync>() {}
    is_send::<Server>();
}
