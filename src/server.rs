//! The main loop: stdin lines in, responses out, requests to the pool, shutdown.
//!
//! Threads: the main thread reads stdin and dispatches; `rpc-out` is the only writer of
//! stdout (one line per message, written whole); `signals` forwards SIGCHLD to the reaper
//! and turns SIGTERM, SIGINT and SIGHUP into shutdown; `worker-N` run `tools/call` (and
//! batches) so that `ping` and `tools/list` are answered at once while tools block.
//!
//! Cancellation: every `tools/call` in flight has a `Cancel` in `inflight`, keyed by the
//! JSON text of its id. `notifications/cancelled` flips it; the waiting tool wakes, stops
//! its process group (for `exec`), and the worker sends nothing.
//!
//! Shutdown (stdin EOF, a signal, or stdout gone) runs once, on its own thread: in-flight
//! calls get a moment to finish (so that `cmd | yieldshell` answers fast commands), then
//! every group gets SIGTERM, SIGKILL after 1 s, and the process exits 0 within 2 s.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::os::fd::AsFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Condvar, Mutex};
use serde_json::{json, Map, Value};

use crate::config::Config;
use crate::engine::{CallCtx, Cancel, Engine, Reply};
use crate::jsonrpc::{self, Incoming};
use crate::mcp;
use crate::pool::Pool;
use crate::reaper::Reaper;

/// Longest accepted input line.
const MAX_LINE: usize = 64 * 1024 * 1024;

struct Server {
    engine: Arc<Engine>,
    out: Sender<Vec<u8>>,
    version: Mutex<Option<&'static str>>,
    inflight: Mutex<HashMap<String, Arc<Cancel>>>,
    idle: Condvar,
    pool: Pool,
}

struct Shutdown {
    started: AtomicBool,
    engine: Arc<Engine>,
    server: Mutex<Option<std::sync::Weak<Server>>>,
}

impl Shutdown {
    /// Starts the shutdown once; later calls do nothing.
    fn trigger(self: &Arc<Self>, why: &str, wait_for_calls: bool) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        crate::info!("shutting down: {why}");
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
            Duration::from_millis(1700).saturating_sub(start.elapsed()),
        );
        if let Some(s) = &server {
            // Let answers of calls that ended during shutdown reach the client.
            s.wait_idle(Instant::now() + Duration::from_millis(100));
            s.flush_out(Instant::now() + Duration::from_millis(100));
        }
        std::process::exit(0);
    }
}

/// Runs the server until shutdown. Returns only on a startup failure.
pub fn run(config: Config) -> std::process::ExitCode {
    crate::log::set_level(config.log_level);
    // Non-dumpable before anything forks: no process of the same user without
    // CAP_SYS_PTRACE can trace the server or read its /proc environ and memory (SPEC 12).
    if let Err(e) = crate::sys::set_dumpable(false) {
        crate::warn!("cannot mark the server non-dumpable: {e}");
    }
    crate::sys::cloexec_from(3);
    // Fork the guardian first, while this process has a single thread.
    let marker_prefix = crate::engine::new_marker_prefix();
    crate::guardian::start(marker_prefix.clone());
    if let Err(e) = crate::sys::set_child_subreaper() {
        crate::warn!(
            "cannot become a child subreaper ({e}); orphaned descendants are reaped by init"
        );
    }
    let reaper = match Reaper::start() {
        Ok(r) => r,
        Err(e) => {
            crate::error!("cannot start the reaper thread: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let config = Arc::new(config);
    let engine = match Engine::new(config.clone(), reaper.clone(), marker_prefix) {
        Ok(e) => Arc::new(e),
        Err(message) => {
            let _ = writeln!(io::stderr().lock(), "yieldshell: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    let shutdown = Arc::new(Shutdown {
        started: AtomicBool::new(false),
        engine: engine.clone(),
        server: Mutex::new(None),
    });

    // Unbounded: a slow client must not block workers; each message is one allocation.
    let (out_tx, out_rx) = crossbeam_channel::unbounded::<Vec<u8>>();
    let server = Arc::new(Server {
        engine,
        out: out_tx,
        version: Mutex::new(None),
        inflight: Mutex::new(HashMap::new()),
        idle: Condvar::new(),
        pool: Pool::new(2, 1024),
    });
    *shutdown.server.lock() = Some(Arc::downgrade(&server));

    let writer_shutdown = shutdown.clone();
    let started = std::thread::Builder::new()
        .name("rpc-out".into())
        .spawn(move || write_loop(out_rx, writer_shutdown));
    if let Err(e) = started {
        crate::error!("cannot start the stdout writer: {e}");
        return std::process::ExitCode::from(1);
    }
    if let Err(e) = start_signals(shutdown.clone()) {
        crate::error!("cannot install signal handlers: {e}");
        return std::process::ExitCode::from(1);
    }
    crate::info!(
        "yieldshell {} ready ({:?} mode)",
        env!("CARGO_PKG_VERSION"),
        config.mode
    );
    read_loop(&server);
    shutdown.trigger("stdin closed", true);
    // The shutdown thread exits the process.
    loop {
        std::thread::park();
    }
}

/// Turns SIGTERM, SIGINT and SIGHUP into shutdown. (SIGCHLD goes straight to the reaper.)
fn start_signals(shutdown: Arc<Shutdown>) -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            for signal in signals.forever() {
                let why = format!("signal {}", crate::sys::signal_name(signal));
                shutdown.trigger(&why, false);
            }
        })?;
    Ok(())
}

fn write_loop(rx: Receiver<Vec<u8>>, shutdown: Arc<Shutdown>) {
    // Large responses cross a pipe with fewer wake-ups on both sides when the pipe is
    // larger (a no-op when stdout is not a pipe).
    if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
        crate::sys::grow_pipe(&std::fs::File::from(fd), 1024 * 1024);
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for mut line in rx {
        // Lines are built with room for this byte, so it does not copy them.
        line.push(b'\n');
        let result = out.write_all(&line).and_then(|()| out.flush());
        if let Err(e) = result {
            crate::info!("stdout is gone ({e})");
            shutdown.trigger("stdout closed", false);
            return;
        }
    }
}

enum Line {
    Eof,
    Data,
    TooLong,
}

/// Reads one line into `buf` (without the newline), refusing lines over `MAX_LINE`.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Data
            });
        }
        let (used, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let piece = if done { &chunk[..used - 1] } else { chunk };
        if !too_long {
            if buf.len() + piece.len() > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(piece);
            }
        }
        input.consume(used);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Data });
        }
    }
}

fn read_loop(server: &Arc<Server>) {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    loop {
        match read_line(&mut input, &mut buf) {
            Ok(Line::Eof) => return,
            Ok(Line::TooLong) => {
                crate::warn!("input line longer than {MAX_LINE} bytes dropped");
                server.send(jsonrpc::error(
                    None,
                    jsonrpc::INVALID_REQUEST,
                    &format!("message too long: a line may hold at most {MAX_LINE} bytes"),
                ));
            }
            Ok(Line::Data) => {
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                server.dispatch_line(&buf);
            }
            Err(e) => {
                crate::warn!("reading stdin failed: {e}");
                return;
            }
        }
    }
}

impl Server {
    fn send(&self, message: Value) {
        let line = jsonrpc::to_line(&message);
        if crate::log::enabled(crate::log::Level::Debug) {
            crate::debug!(
                "-> {}",
                String::from_utf8_lossy(&line[..line.len().min(500)])
            );
        }
        let _ = self.out.send(line);
    }

    fn version(&self) -> &'static str {
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

    fn flush_out(&self, deadline: Instant) {
        while !self.out.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn dispatch_line(self: &Arc<Self>, line: &[u8]) {
        if crate::log::enabled(crate::log::Level::Debug) {
            crate::debug!(
                "<- {}",
                String::from_utf8_lossy(&line[..line.len().min(500)])
            );
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let what = if std::str::from_utf8(line).is_err() {
                    "input is not valid UTF-8"
                } else {
                    "invalid JSON"
                };
                self.send(jsonrpc::error(
                    None,
                    jsonrpc::PARSE_ERROR,
                    &format!("Parse error: {what} ({e})"),
                ));
                return;
            }
        };
        match value {
            Value::Array(items) => self.batch(items),
            single => {
                if let Some(response) = self.handle(single, false) {
                    self.send(response);
                }
            }
        }
    }

    fn batch(self: &Arc<Self>, items: Vec<Value>) {
        if self.version() != "2025-03-26" {
            self.send(jsonrpc::error(
                None,
                jsonrpc::INVALID_REQUEST,
                "batches (JSON arrays) are only accepted under protocol version 2025-03-26; send one message per line",
            ));
            return;
        }
        if items.is_empty() {
            self.send(jsonrpc::error(
                None,
                jsonrpc::INVALID_REQUEST,
                "empty batch",
            ));
            return;
        }
        let this = self.clone();
        self.pool.execute(Box::new(move || {
            let responses: Vec<Value> = items
                .into_iter()
                .filter_map(|item| {
                    if item.get("method").and_then(Value::as_str) == Some("initialize") {
                        let id = item.get("id").filter(|v| v.is_string() || v.is_number());
                        return id.map(|id| {
                            jsonrpc::error(
                                Some(id),
                                jsonrpc::INVALID_REQUEST,
                                "initialize cannot be part of a batch",
                            )
                        });
                    }
                    this.handle(item, true)
                })
                .collect();
            if !responses.is_empty() {
                this.send(Value::Array(responses));
            }
        }));
    }

    /// Handles one message. `inline` runs tools on this thread (batches); otherwise tool
    /// calls go to the pool and answer later (returning `None` here).
    fn handle(self: &Arc<Self>, value: Value, inline: bool) -> Option<Value> {
        match jsonrpc::classify(value) {
            Incoming::Request { id, method, params } => self.request(id, &method, params, inline),
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    self.cancel(&params);
                }
                None
            }
            Incoming::Response => {
                crate::warn!(
                    "dropped a response sent to the server: this server sends no requests"
                );
                None
            }
            Incoming::Invalid { id, message } => Some(jsonrpc::error(
                id.as_ref(),
                jsonrpc::INVALID_REQUEST,
                &format!("Invalid Request: {message}"),
            )),
        }
    }

    fn request(
        self: &Arc<Self>,
        id: Value,
        method: &str,
        params: Map<String, Value>,
        inline: bool,
    ) -> Option<Value> {
        let result = match method {
            "ping" => json!({}),
            "initialize" => {
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                let version = mcp::negotiate(requested);
                *self.version.lock() = Some(version);
                mcp::initialize_result(version)
            }
            "tools/list" => {
                if params.get("cursor").is_some_and(|c| !c.is_null()) {
                    let msg = "Invalid params: unknown cursor; tools/list returns every tool in one page, call it without a cursor";
                    return Some(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, msg));
                }
                mcp::tools_list(&self.engine.config.tools, self.version())
            }
            "tools/call" => return self.tools_call(id, params, inline),
            _ => {
                return Some(jsonrpc::error(
                    Some(&id),
                    jsonrpc::METHOD_NOT_FOUND,
                    &format!("Method not found: {method}"),
                ))
            }
        };
        Some(jsonrpc::response(&id, result))
    }

    fn tools_call(
        self: &Arc<Self>,
        id: Value,
        mut params: Map<String, Value>,
        inline: bool,
    ) -> Option<Value> {
        let name = match params.get("name") {
            Some(Value::String(n)) => n.clone(),
            Some(other) => {
                let msg = format!(
                    "tools/call: name must be a string, got {}",
                    jsonrpc::type_name(other)
                );
                return Some(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
            }
            None => {
                return Some(jsonrpc::error(
                    Some(&id),
                    jsonrpc::INVALID_PARAMS,
                    "tools/call: missing tool name",
                ))
            }
        };
        if !self.engine.config.tools.contains(&name.as_str()) || !mcp::is_known_tool(&name) {
            let msg = format!(
                "Unknown tool: {name}; available tools: {}",
                self.engine.config.tools.join(", ")
            );
            return Some(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
        }
        let args = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(other) => {
                let msg = format!(
                    "tools/call: arguments must be an object, got {}",
                    jsonrpc::type_name(&other)
                );
                return Some(jsonrpc::error(Some(&id), jsonrpc::INVALID_PARAMS, &msg));
            }
        };
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_number())
            .cloned();
        let key = id.to_string();
        let (panic_key, panic_id) = (key.clone(), id.clone());
        let cancel = Arc::new(Cancel::default());
        self.inflight.lock().insert(key.clone(), cancel.clone());
        let this = self.clone();
        let job = move || -> Option<(Value, Reply, &'static str)> {
            let version = this.version();
            let send_progress = |elapsed: u64, bytes: u64| {
                if let Some(token) = &token {
                    let mut p = json!({"progressToken": token, "progress": elapsed});
                    if mcp::has_annotations(version) {
                        p["message"] = Value::from(format!(
                            "running {:.1}s, {bytes} bytes of output",
                            elapsed as f64 / 1000.0
                        ));
                    }
                    this.send(jsonrpc::notification("notifications/progress", p));
                }
            };
            let progress: Option<&dyn Fn(u64, u64)> = if token.is_some() {
                Some(&send_progress)
            } else {
                None
            };
            let ctx = CallCtx {
                cancel: &cancel,
                progress,
            };
            let reply = mcp::call_tool(&this.engine, &name, &args, &ctx);
            let mut inflight = this.inflight.lock();
            inflight.remove(&key);
            if inflight.is_empty() {
                this.idle.notify_all();
            }
            drop(inflight);
            match reply {
                Some(r) if !cancel.is_cancelled() => Some((id, r, version)),
                _ => None,
            }
        };
        // A panic in a tool is that request's internal error; the server lives on, and the
        // request still gets exactly one answer.
        let this = self.clone();
        let guarded = move || match catch_unwind(AssertUnwindSafe(job)) {
            Ok(done) => Ok(done),
            Err(_) => {
                let mut inflight = this.inflight.lock();
                inflight.remove(&panic_key);
                if inflight.is_empty() {
                    this.idle.notify_all();
                }
                let msg = "Internal error while running the tool (logged on stderr); the server is still running";
                Err(jsonrpc::error(
                    Some(&panic_id),
                    jsonrpc::INTERNAL_ERROR,
                    msg,
                ))
            }
        };
        if inline {
            return match guarded() {
                Ok(done) => done
                    .map(|(id, r, version)| jsonrpc::response(&id, mcp::call_result(r, version))),
                Err(error) => Some(error),
            };
        }
        let this = self.clone();
        self.pool.execute(Box::new(move || match guarded() {
            // Large outputs: serialise once, straight into the line that goes out.
            Ok(Some((id, r, version))) => {
                let _ = this.out.send(mcp::call_response_line(&id, r, version));
            }
            Ok(None) => (),
            Err(error) => this.send(error),
        }));
        None
    }

    fn cancel(&self, params: &Map<String, Value>) {
        let Some(id) = params.get("requestId") else {
            return;
        };
        if let Some(c) = self.inflight.lock().get(&id.to_string()) {
            crate::info!("request {id} cancelled by the client");
            c.cancel();
        }
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send + Sync>() {}
    is_send::<Server>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_reader_limits_and_crlf() {
        let data = b"one\r\ntwo\n\nlast";
        let mut input: &[u8] = data;
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        loop {
            match read_line(&mut input, &mut buf).unwrap() {
                Line::Eof => break,
                Line::Data => lines.push(String::from_utf8(buf.clone()).unwrap()),
                Line::TooLong => lines.push("<too long>".into()),
            }
        }
        assert_eq!(lines, vec!["one\r", "two", "", "last"]);
    }
}
