//! The harness: runs the `yieldshell` binary as a black box over stdio.
//!
//! `Server` spawns the binary with piped stdin, stdout and stderr. A reader thread parses every
//! stdout line as JSON (anything else on stdout is recorded as a protocol violation and fails the
//! test), routes responses by id to waiters and keeps every message, notifications included, in
//! arrival order. A second thread buffers stderr, which is printed when a test fails. Dropping a
//! `Server` closes its stdin, waits up to 5 s and then kills it.
//!
//! The free functions at the bottom look at `/proc` to prove that processes are gone, and
//! `wait_until` is the only allowed form of waiting: tests never sleep to synchronise.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

/// The newest protocol version the server supports.
pub const LATEST: &str = "2025-11-25";

/// Every protocol version the server negotiates, newest first.
pub const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How long a request may take before the test fails.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(20);

/// The tools listed in shell mode.
pub const SHELL_TOOLS: [&str; 7] = ["exec", "read", "write", "wait", "stop", "ps", "cleanup"];

/// Variable names (or prefixes, ending in `_`) that must not leak from the developer's
/// environment into the server under test.
const SCRUBBED_PREFIXES: [&str; 3] = ["YIELDSHELL_", "MCP_YIELDSHELL_", "MCP_SHELL_"];
const SCRUBBED_NAMES: [&str; 3] = ["ALLOW_COMMANDS", "ALLOWED_COMMANDS", "ALLOW_PATTERNS"];

/// A running `yieldshell` process and the threads that talk to it.
pub struct Server {
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    inner: Arc<Inner>,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<thread::JoinHandle<()>>,
    stderr_reader: Option<thread::JoinHandle<()>>,
    next_id: AtomicI64,
    version: Mutex<Option<String>>,
    /// Output schemas from `tools/list`, fetched at the first tool call that needs them.
    output_schemas: Mutex<Option<HashMap<String, Value>>>,
    /// The tool of the last call (whose `outputSchema` fills in a result's defaults).
    last_tool: Mutex<Option<String>>,
    pid: u32,
    exit: Mutex<Option<ExitStatus>>,
}

struct Inner {
    state: Mutex<State>,
    cond: Condvar,
}

#[derive(Default)]
struct State {
    /// Every message from stdout, in arrival order.
    log: Vec<Value>,
    /// Index into `log` of the next message `recv_any` returns.
    cursor: usize,
    /// Responses not yet taken by a waiter, keyed by the id's JSON text.
    responses: HashMap<String, Value>,
    /// Where in `log` each response arrived, keyed like `responses`.
    response_index: HashMap<String, usize>,
    /// Lines on stdout that are not well-formed protocol messages.
    violations: Vec<String>,
    /// Stdout reached EOF.
    eof: bool,
}

impl Server {
    /// Starts the server with a scrubbed environment.
    pub fn start() -> Server {
        Server::spawn(&[], &[])
    }

    /// Starts the server with extra environment variables.
    pub fn with_env(env: &[(&str, &str)]) -> Server {
        Server::spawn(env, &[])
    }

    /// Starts the server and performs the handshake at the latest version.
    pub fn ready() -> Server {
        let server = Server::start();
        server.initialize(LATEST);
        server
    }

    /// Starts the server with extra environment variables and performs the handshake.
    pub fn ready_with_env(env: &[(&str, &str)]) -> Server {
        let server = Server::with_env(env);
        server.initialize(LATEST);
        server
    }

    /// Starts the binary with the given environment additions and arguments.
    pub fn spawn(env: &[(&str, &str)], args: &[&str]) -> Server {
        Server::spawn_command(piped_command(env, args))
    }

    /// Starts `command` (the binary, or a program that executes it, such as `setpriv`),
    /// whose three standard streams are piped.
    pub fn spawn_command(mut command: Command) -> Server {
        let mut child = command.spawn().expect("spawn the yieldshell binary");
        let pid = child.id();
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");

        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
        });
        let reader = {
            let inner = Arc::clone(&inner);
            thread::Builder::new()
                .name("test-stdout".into())
                .spawn(move || read_stdout(stdout, &inner))
                .expect("spawn the stdout reader")
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_reader = {
            let stderr = Arc::clone(&stderr);
            thread::Builder::new()
                .name("test-stderr".into())
                .spawn(move || {
                    let mut buf = [0u8; 8192];
                    loop {
                        match stderr_pipe.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => stderr.lock().extend_from_slice(&buf[..n]),
                        }
                    }
                })
                .expect("spawn the stderr reader")
        };
        Server {
            child: Mutex::new(child),
            stdin: Mutex::new(Some(stdin)),
            inner,
            stderr,
            reader: Some(reader),
            stderr_reader: Some(stderr_reader),
            next_id: AtomicI64::new(1),
            version: Mutex::new(None),
            output_schemas: Mutex::new(None),
            last_tool: Mutex::new(None),
            pid,
            exit: Mutex::new(None),
        }
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Everything the server wrote to stderr so far, lossily decoded.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock()).into_owned()
    }

    /// The protocol version negotiated by `initialize`, if any.
    pub fn version(&self) -> Option<String> {
        self.version.lock().clone()
    }

    /// Sends `initialize` with `version`, then `notifications/initialized`; returns the result.
    pub fn initialize(&self, version: &str) -> Value {
        self.initialize_full(version, "yieldshell-tests", json!({}))
    }

    /// `initialize` declaring the client `capabilities` (for example `elicitation`).
    pub fn initialize_with(&self, version: &str, capabilities: Value) -> Value {
        self.initialize_full(version, "yieldshell-tests", capabilities)
    }

    /// `initialize` as the client named `client` (`clientInfo.name`).
    pub fn initialize_as(&self, version: &str, client: &str) -> Value {
        self.initialize_full(version, client, json!({}))
    }

    /// `initialize` as `client`, declaring `capabilities`.
    pub fn initialize_full(&self, version: &str, client: &str, capabilities: Value) -> Value {
        let result = self.result(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": client, "version": "0.0.0"},
            }),
        );
        let negotiated = result["protocolVersion"]
            .as_str()
            .unwrap_or_else(|| self.fail(&format!("initialize result without version: {result}")))
            .to_owned();
        *self.version.lock() = Some(negotiated);
        self.notify("notifications/initialized", json!({}));
        result
    }

    /// Writes one line (a newline is appended) to the server's stdin.
    pub fn send_raw(&self, line: &str) {
        self.send_raw_bytes(line.as_bytes());
    }

    /// Writes raw bytes followed by a newline to the server's stdin.
    pub fn send_raw_bytes(&self, bytes: &[u8]) {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        let mut stdin = self.stdin.lock();
        let Some(pipe) = stdin.as_mut() else {
            drop(stdin);
            self.fail("send after stdin was closed");
        };
        if let Err(e) = pipe.write_all(&line).and_then(|()| pipe.flush()) {
            drop(stdin);
            self.fail(&format!("writing to the server's stdin failed: {e}"));
        }
    }

    /// Sends a JSON message as one line.
    pub fn send(&self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// Sends a request without waiting for the answer; returns its id.
    pub fn send_request(&self, method: &str, params: Value) -> Value {
        if let Some(tool) = params["name"].as_str().filter(|_| method == "tools/call") {
            *self.last_tool.lock() = Some(tool.to_string());
        }
        let id = json!(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Waits for the response to `id`; `None` at the deadline.
    pub fn try_response(&self, id: &Value, timeout: Duration) -> Option<Value> {
        let key = id.to_string();
        let deadline = Instant::now() + timeout;
        let mut state = self.inner.state.lock();
        loop {
            if let Some(response) = state.responses.remove(&key) {
                return Some(response);
            }
            if state.eof || self.inner.cond.wait_until(&mut state, deadline).timed_out() {
                return state.responses.remove(&key);
            }
        }
    }

    /// Waits for the response to `id`, failing the test at the deadline.
    pub fn response(&self, id: &Value, timeout: Duration) -> Value {
        match self.try_response(id, timeout) {
            Some(response) => response,
            None => self.fail(&format!("no response to id {id} within {timeout:?}")),
        }
    }

    /// Where in the message log the response to `id` arrived.
    pub fn response_position(&self, id: &Value) -> Option<usize> {
        self.inner
            .state
            .lock()
            .response_index
            .get(&id.to_string())
            .copied()
    }

    /// Sends a request and returns the whole response message.
    pub fn request(&self, method: &str, params: Value) -> Value {
        self.request_with_deadline(method, params, DEFAULT_DEADLINE)
    }

    /// Sends a request and returns the whole response message, with a custom deadline.
    pub fn request_with_deadline(&self, method: &str, params: Value, timeout: Duration) -> Value {
        let id = self.send_request(method, params);
        let response = self.response(&id, timeout);
        self.check_violations();
        response
    }

    /// Sends a request and returns its `result`, failing the test on an error response.
    pub fn result(&self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("result") {
            Some(result) => result.clone(),
            None => self.fail(&format!("{method} failed: {response}")),
        }
    }

    /// Sends a request and returns its `error` object, failing the test on a result.
    pub fn rpc_error(&self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("error") {
            Some(error) => error.clone(),
            None => self.fail(&format!("{method} was expected to fail: {response}")),
        }
    }

    /// Returns the next message in arrival order (any kind), or `None` at the deadline.
    pub fn recv_any(&self, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        let mut state = self.inner.state.lock();
        loop {
            if state.cursor < state.log.len() {
                let message = state.log[state.cursor].clone();
                state.cursor += 1;
                return Some(message);
            }
            if state.eof || self.inner.cond.wait_until(&mut state, deadline).timed_out() {
                return None;
            }
        }
    }

    /// Makes `recv_any` skip every message received so far.
    pub fn skip_received(&self) {
        let mut state = self.inner.state.lock();
        state.cursor = state.log.len();
    }

    /// Collects messages in arrival order up to and including the response to `id`.
    pub fn collect_until_response(&self, id: &Value, timeout: Duration) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv_any(left) else {
                self.fail(&format!(
                    "no response to id {id} within {timeout:?}; received {seen:?}"
                ));
            };
            let done = message.get("id") == Some(id) && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// Sends a ping and asserts that its answer is the next message on stdout.
    pub fn assert_ping_is_next(&self) {
        let id = self.send_request("ping", json!({}));
        let next = self.recv_any(DEFAULT_DEADLINE);
        let expected = json!({"jsonrpc": "2.0", "id": id, "result": {}});
        if next.as_ref() != Some(&expected) {
            self.fail(&format!(
                "expected the ping answer {expected} as the next message, got {next:?}"
            ));
        }
        self.try_response(&id, Duration::ZERO);
    }

    /// Sends a ping and asserts the answer is `{}`.
    pub fn assert_alive(&self) {
        let response = self.request("ping", json!({}));
        assert_eq!(
            response["result"],
            json!({}),
            "ping after the test: {response}"
        );
    }

    /// Waits for the next request the server sends (a question: `elicitation/create`),
    /// skipping other messages; `None` at the deadline.
    pub fn next_server_request(&self, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.recv_any(left)?;
            if message.get("method").is_some() && message.get("id").is_some() {
                return Some(message);
            }
        }
    }

    /// Every request the server sent so far.
    pub fn server_requests(&self) -> Vec<Value> {
        let state = self.inner.state.lock();
        state
            .log
            .iter()
            .filter(|m| m.get("method").is_some() && m.get("id").is_some())
            .cloned()
            .collect()
    }

    /// Every notification received so far, in arrival order, with its position in the log.
    pub fn notifications(&self) -> Vec<(usize, Value)> {
        let state = self.inner.state.lock();
        state
            .log
            .iter()
            .enumerate()
            .filter(|(_, m)| m.get("method").is_some())
            .map(|(i, m)| (i, m.clone()))
            .collect()
    }

    /// Calls a tool and returns the CallToolResult (fails on a JSON-RPC error).
    pub fn call(&self, tool: &str, args: Value) -> Value {
        self.call_with_deadline(tool, args, DEFAULT_DEADLINE)
    }

    /// Calls a tool with a custom deadline and returns the CallToolResult.
    pub fn call_with_deadline(&self, tool: &str, args: Value, timeout: Duration) -> Value {
        *self.last_tool.lock() = Some(tool.to_string());
        let response = self.request_with_deadline(
            "tools/call",
            json!({"name": tool, "arguments": args}),
            timeout,
        );
        let Some(result) = response.get("result") else {
            self.fail(&format!(
                "tools/call {tool} got a JSON-RPC error: {response}"
            ));
        };
        let content = result["content"].as_array();
        if content.is_none_or(|c| c.is_empty()) {
            self.fail(&format!("tools/call {tool}: no content blocks: {result}"));
        }
        if let Some(flag) = result.get("isError") {
            if !flag.is_boolean() {
                self.fail(&format!(
                    "tools/call {tool}: isError is not a boolean: {result}"
                ));
            }
        }
        // Error results are checked by a dedicated test, so that an argument test fails for
        // its own reason.
        if let (Some(structured), false) = (result.get("structuredContent"), is_error(result)) {
            self.check_output_schema(tool, structured);
        }
        result.clone()
    }

    /// Checks `structuredContent` against the tool's `outputSchema` (MCP: it MUST match).
    pub fn check_output_schema(&self, tool: &str, structured: &Value) {
        let Some(schema) = self.output_schema(tool) else {
            return;
        };
        let mut problems = Vec::new();
        schema_problems(&schema, structured, "$", &mut problems);
        if !problems.is_empty() {
            self.fail(&format!(
                "structuredContent of {tool} breaks its outputSchema: {problems:?}\n{structured}"
            ));
        }
    }

    /// The `outputSchema` of `tool` in `tools/list` (listed once per server).
    pub fn output_schema(&self, tool: &str) -> Option<Value> {
        let mut schemas = self.output_schemas.lock();
        if schemas.is_none() {
            let listed = self.result("tools/list", json!({}));
            let map = listed["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| {
                    let name = t["name"].as_str()?.to_owned();
                    Some((name, t.get("outputSchema")?.clone()))
                })
                .collect();
            *schemas = Some(map);
        }
        schemas.as_ref().and_then(|m| m.get(tool).cloned())
    }

    /// Calls a tool, asserts `isError` is not true and returns the parsed result object.
    pub fn call_ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args.clone());
        if is_error(&result) {
            self.fail(&format!("{tool} {args} returned isError: {result}"));
        }
        self.result_object(&result)
    }

    /// Calls a tool, asserts `isError` is true and returns the CallToolResult.
    pub fn call_err(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args.clone());
        if !is_error(&result) {
            self.fail(&format!(
                "{tool} {args} was expected to set isError: {result}"
            ));
        }
        result
    }

    /// The result object of a shell-mode tool, as a machine reads it: `structuredContent`
    /// with the fields left out at their defaults filled in from the tool's `outputSchema`.
    /// Checks the text block too: one block, with the status, `process_id` and output the
    /// object holds (a model that is shown only the text reads them there).
    pub fn result_object(&self, result: &Value) -> Value {
        let content = result["content"].as_array().cloned().unwrap_or_default();
        if content.len() != 1 || content[0]["type"] != "text" {
            self.fail(&format!("expected exactly one text block: {result}"));
        }
        let text = content[0]["text"].as_str().unwrap_or_default();
        if self.version().as_deref().is_some_and(|v| v < "2025-06-18")
            && result.get("structuredContent").is_some()
        {
            self.fail(&format!(
                "structuredContent must be absent before 2025-06-18: {result}"
            ));
        }
        // Under YIELDSHELL_API=1.1 the text is 1.1.2's: the object as JSON, the same object
        // as structuredContent.
        if let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
            if result
                .get("structuredContent")
                .is_some_and(|s| *s != parsed)
            {
                self.fail(&format!(
                    "structuredContent must equal the text block's object: {result}"
                ));
            }
            return parsed;
        }
        let Some(structured) = result.get("structuredContent") else {
            self.fail(&format!(
                "result_object needs structuredContent (protocol 2025-06-18 or later, YIELDSHELL_STRUCTURED not off): {result}"
            ));
        };
        check_text_view(text, structured)
            .unwrap_or_else(|problem| self.fail(&format!("{problem}: {result}")));
        let tool = self.last_tool.lock().clone();
        let mut object = structured.clone();
        // An error's object is its own (status, error, process_id): nothing is left out.
        if !is_error(result) {
            if let Some(schema) = tool.and_then(|t| self.output_schema(&t)) {
                fill_defaults(&schema, &mut object);
            }
        }
        object
    }

    /// `exec` with `side_effects: ["NONE"]` added unless given; returns the result object.
    pub fn exec(&self, mut args: Value) -> Value {
        if args.get("side_effects").is_none() {
            args["side_effects"] = json!(["NONE"]);
        }
        self.call_ok("exec", args)
    }

    /// Runs `command` to completion (default yield) and returns the result object.
    pub fn sh(&self, command: &str) -> Value {
        self.exec(json!({"command": command}))
    }

    /// Starts `command` in the background (`yield_ms: 0`) and returns its `process_id`.
    pub fn spawn_bg(&self, command: &str) -> String {
        self.spawn_bg_with(json!({"command": command}))
    }

    /// Starts a command in the background (`yield_ms: 0`) and returns its `process_id`.
    pub fn spawn_bg_with(&self, mut args: Value) -> String {
        args["yield_ms"] = json!(0);
        let result = self.exec(args);
        assert_eq!(
            result["status"], "backgrounded",
            "exec yield_ms 0: {result}"
        );
        process_id(&result)
    }

    /// `wait` with an `until` regex; fails the test unless it matched.
    pub fn wait_for_output(&self, process_id: &str, until: &str) -> Value {
        let result = self.call_ok(
            "wait",
            json!({"process_id": process_id, "until": until, "timeout_ms": 15000}),
        );
        if result["wait_result"] != "matched" {
            self.fail(&format!("waiting for /{until}/ in {process_id}: {result}"));
        }
        result
    }

    /// `wait` until the process exits; fails the test otherwise.
    pub fn wait_exit_of(&self, process_id: &str) -> Value {
        let result = self.call_ok(
            "wait",
            json!({"process_id": process_id, "timeout_ms": 15000}),
        );
        if result["wait_result"] != "exited" {
            self.fail(&format!("waiting for {process_id} to exit: {result}"));
        }
        result
    }

    /// Reads the whole retained output of a process by chaining `since_seq = next_seq`.
    pub fn read_all(&self, process_id: &str) -> (String, String) {
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let mut since = 1;
        for _ in 0..10_000 {
            let r = self.call_ok(
                "read",
                json!({"process_id": process_id, "since_seq": since, "max_output_bytes": 20000}),
            );
            stdout.push_str(r["stdout"].as_str().unwrap_or_default());
            stderr.push_str(r["stderr"].as_str().unwrap_or_default());
            since = r["next_seq"].as_u64().expect("next_seq");
            if r["capped"] != true {
                return (stdout, stderr);
            }
        }
        self.fail("read_all did not finish in 10000 reads");
    }

    /// The record of `process_id` in `ps`, if listed.
    pub fn ps_entry(&self, process_id: &str) -> Option<Value> {
        let ps = self.call_ok("ps", json!({"limit": 1000}));
        ps["processes"]
            .as_array()
            .expect("ps processes")
            .iter()
            .find(|p| p["process_id"] == process_id)
            .cloned()
    }

    /// Closes the server's stdin (EOF).
    pub fn close_stdin(&self) {
        self.stdin.lock().take();
    }

    /// Sends a signal to the server process.
    pub fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.pid).expect("pid fits pid_t");
        send_signal(pid, signal);
    }

    /// Waits until the server exits; `None` at the deadline.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = *self.exit.lock() {
                return Some(status);
            }
            let polled = self
                .child
                .lock()
                .try_wait()
                .expect("try_wait on the server");
            if let Some(status) = polled {
                *self.exit.lock() = Some(status);
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Fails if a line on stdout was not a well-formed protocol message.
    pub fn check_violations(&self) {
        let violations = self.inner.state.lock().violations.clone();
        if !violations.is_empty() {
            self.fail(&format!(
                "stdout carried non-protocol output: {violations:?}"
            ));
        }
    }

    /// Fails the test with `message` and the server's stderr.
    pub fn fail(&self, message: &str) -> ! {
        let exited = match *self.exit.lock() {
            Some(status) => Some(status),
            None => self
                .child
                .try_lock()
                .and_then(|mut c| c.try_wait().ok().flatten()),
        };
        let state = match exited {
            Some(status) => format!("the server has exited ({status})"),
            None => "the server is running".to_owned(),
        };
        let stderr = self.stderr_text();
        let tail = tail_chars(&stderr, 8000);
        panic!(
            "{message}\n({state})\n--- yieldshell stderr (last 8000 chars) ---\n{tail}\n--- end ---"
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close_stdin();
        if self.wait_exit(Duration::from_secs(5)).is_none() {
            let mut child = self.child.lock();
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("yieldshell did not exit within 5 s of stdin EOF; killed it");
        }
        // A descendant that inherited the protocol pipes would keep them open after the
        // server exited: do not hang on it, report it.
        let mut stdout_held = false;
        if let Some(reader) = self.reader.take() {
            if wait_until(Duration::from_secs(2), || reader.is_finished()) {
                let _ = reader.join();
            } else {
                stdout_held = true;
            }
        }
        if let Some(reader) = self.stderr_reader.take() {
            if wait_until(Duration::from_secs(2), || reader.is_finished()) {
                let _ = reader.join();
            }
        }
        if thread::panicking() {
            eprintln!(
                "--- yieldshell stderr ---\n{}\n--- end ---",
                tail_chars(&self.stderr_text(), 20000)
            );
            return;
        }
        self.check_violations();
        if stdout_held {
            self.fail("the server's stdout stayed open after it exited: a process holds it");
        }
    }
}

fn read_stdout(stdout: std::process::ChildStdout, inner: &Inner) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => (),
        }
        let complete = line.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&line).into_owned();
        let mut state = inner.state.lock();
        if !complete {
            state
                .violations
                .push(format!("line without a final newline: {text:?}"));
        }
        match serde_json::from_slice::<Value>(&line) {
            Ok(message) => {
                if let Some(problem) = protocol_problem(&message) {
                    state.violations.push(format!("{problem}: {text:?}"));
                }
                let index = state.log.len();
                if message.get("method").is_none() {
                    if let Some(id) = message.get("id") {
                        let key = id.to_string();
                        state.response_index.insert(key.clone(), index);
                        state.responses.insert(key, message.clone());
                    }
                }
                state.log.push(message);
            }
            Err(e) => state.violations.push(format!("not JSON ({e}): {text:?}")),
        }
        inner.cond.notify_all();
    }
    inner.state.lock().eof = true;
    inner.cond.notify_all();
}

/// What is wrong with a message the server wrote, if anything.
fn protocol_problem(message: &Value) -> Option<String> {
    if let Some(batch) = message.as_array() {
        return batch.iter().find_map(protocol_problem);
    }
    let Some(object) = message.as_object() else {
        return Some("not a JSON object".into());
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Some("jsonrpc is not \"2.0\"".into());
    }
    if object.contains_key("method") {
        // The one request the server makes: a question put to the person (approvals), in
        // an id space of its own.
        let question = object.get("method") == Some(&json!("elicitation/create"))
            && object
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| id.starts_with("ys-ask-"));
        if object.contains_key("id") && !question {
            return Some("the server sent a request".into());
        }
        return None;
    }
    if object.contains_key("result") == object.contains_key("error") {
        return Some("a response needs exactly one of result and error".into());
    }
    if !object.contains_key("id") && !object.contains_key("error") {
        return Some("a result without id".into());
    }
    None
}

/// A small JSON Schema checker: `type`, `enum`, `required`, `properties`,
/// `additionalProperties`, `items` and `minimum`, which is what tool schemas use.
pub fn schema_problems(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fits = |t: &str| match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => true,
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| fits(t)) {
            problems.push(format!("{path}: {value} is not of type {types}"));
            return;
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        if !choices.contains(value) {
            problems.push(format!("{path}: {value} is not one of {choices:?}"));
        }
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if n < min {
            problems.push(format!("{path}: {n} is below the minimum {min}"));
        }
    }
    if let Some(object) = value.as_object() {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str() {
                if !object.contains_key(name) {
                    problems.push(format!("{path}: required property {name} is missing"));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, item) in object {
            let sub = format!("{path}.{name}");
            match (
                properties.and_then(|p| p.get(name)),
                schema.get("additionalProperties"),
            ) {
                (Some(s), _) => schema_problems(s, item, &sub, problems),
                (None, Some(Value::Bool(false))) => {
                    problems.push(format!("{sub}: property not allowed"));
                }
                (None, Some(s @ Value::Object(_))) => schema_problems(s, item, &sub, problems),
                (None, _) => (),
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            schema_problems(items, item, &format!("{path}[{i}]"), problems);
        }
    }
}

fn tail_chars(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    if count <= n {
        return text;
    }
    let skip = text.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    &text[skip..]
}

/// Runs the binary to completion with a scrubbed environment (for `--help`, `--version` and
/// startup errors); stdin is `/dev/null`.
pub fn run_binary(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = scrubbed_command();
    command.args(args).stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run the yieldshell binary")
}

/// A command for the binary under test, with the developer's configuration variables
/// removed from its environment (for tests that drive stdio themselves).
pub fn scrubbed_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_yieldshell"));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) || SCRUBBED_NAMES.contains(&name) {
            command.env_remove(name);
        }
    }
    command
}

/// The binary under test with `args`, `env` added to its scrubbed environment, and its three
/// standard streams piped.
pub fn piped_command(env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut command = scrubbed_command();
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// True when a CallToolResult has `isError: true`.
/// Fills in, from `schema`, the properties `object` leaves out at their defaults (in nested
/// objects and arrays too); `latest_seq` left out is `next_seq - 1`.
pub fn fill_defaults(schema: &Value, object: &mut Value) {
    match object {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (name, prop) in props {
                    if let Some(v) = m.get_mut(name) {
                        fill_defaults(prop, v);
                    } else if let Some(d) = prop.get("default") {
                        m.insert(name.clone(), d.clone());
                    }
                }
                if !m.contains_key("latest_seq") && props.contains_key("latest_seq") {
                    if let Some(next) = m.get("next_seq").and_then(Value::as_u64) {
                        m.insert("latest_seq".into(), json!(next.saturating_sub(1)));
                    }
                }
            }
            if let Some(inner) = schema.get("additionalProperties") {
                for v in m.values_mut() {
                    fill_defaults(inner, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(inner) = schema.get("items") {
                for v in items {
                    fill_defaults(inner, v);
                }
            }
        }
        _ => (),
    }
}

/// What a model shown only the text must find there of the result object: the status,
/// exit code and `process_id` in the header (`key=value`), the output, the error.
pub fn check_text_view(text: &str, object: &Value) -> Result<(), String> {
    let header = text.lines().next().unwrap_or_default();
    for key in ["status", "exit_code", "process_id", "wait_result"] {
        if let Some(v) = object.get(key).filter(|v| !v.is_null()) {
            let word = match v {
                Value::String(s) => format!("{key}={s}"),
                other => format!("{key}={other}"),
            };
            if !header.split(' ').any(|w| w == word) {
                return Err(format!("the text's header lacks {word}"));
            }
        }
    }
    for key in ["stdout", "stderr", "error"] {
        if let Some(s) = object.get(key).and_then(Value::as_str) {
            if !text.contains(s) {
                return Err(format!("the text lacks {key} {s:?}"));
            }
        }
    }
    Ok(())
}

pub fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&json!(true))
}

/// The text of a CallToolResult's first content block.
/// Every text block of a result, joined (a `shell_execute` failure can be more than one).
#[cfg(target_os = "linux")] // its users are the Linux-only sandbox tests
pub fn all_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

pub fn tool_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {result}"))
        .to_owned()
}

/// The `process_id` of a result object, checked against `^proc_[0-9a-f]{12}$`.
pub fn process_id(result: &Value) -> String {
    let id = result["process_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no process_id: {result}"));
    let re = regex_lite::Regex::new("^proc_[0-9a-f]{12}$").expect("regex");
    assert!(re.is_match(id), "process_id {id:?} is malformed: {result}");
    id.to_owned()
}

/// The `pid` of a result object.
pub fn pid_of(result: &Value) -> u32 {
    let pid = result["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("no pid: {result}"));
    u32::try_from(pid).expect("pid fits u32")
}

/// Polls `cond` every 10 ms until it holds (true) or `timeout` passes (false).
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// A string unique to this test run, to find the processes a test started.
pub fn unique_marker(label: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "ysmark-{label}-{}-{}-{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`...), `None` when the pid is absent.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().next()?.chars().next()
}

/// The parent pid of `pid`, from `/proc/<pid>/stat`.
pub fn proc_ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Pids of processes (zombies included) whose last argument is `tag`: a stray started as
/// `sleep <tag>`, not the shell that started it.
pub fn tagged(tag: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                c.split(|&b| b == 0).rev().find(|a| !a.is_empty()) == Some(tag.as_bytes())
            })
        })
        .collect()
}

/// True when `pid` no longer runs: absent from `/proc` or a zombie.
pub fn pid_gone(pid: u32) -> bool {
    matches!(proc_state(pid), None | Some('Z') | Some('X'))
}

/// True when the process group `pgid` has no member left (`kill(-pgid, 0)` gives ESRCH).
pub fn pgid_gone(pgid: u32) -> bool {
    let pgid = libc::pid_t::try_from(pgid).expect("pgid fits pid_t");
    assert!(pgid > 1, "refusing to probe process group {pgid}");
    signal_result(-pgid, 0) == Err(libc::ESRCH)
}

/// Pids of zombie processes whose parent is `ppid`.
pub fn zombie_children(ppid: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&pid| proc_state(pid) == Some('Z') && proc_ppid(pid) == Some(ppid))
        .collect()
}

/// Pids of live processes whose command line or environment contains `marker`.
pub fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = marker.as_bytes();
    let own = std::process::id();
    all_pids()
        .into_iter()
        .filter(|&pid| pid != own)
        .filter(|&pid| {
            ["cmdline", "environ"].iter().any(|file| {
                std::fs::read(format!("/proc/{pid}/{file}"))
                    .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
            })
        })
        .filter(|&pid| !pid_gone(pid))
        .collect()
}

/// Number of open descriptors of `pid`.
pub fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

fn all_pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Sends `signal` to `pid` (a negative pid means a process group), ignoring errors.
pub fn send_signal(pid: libc::pid_t, signal: i32) {
    let _ = signal_result(pid, signal);
}

fn signal_result(pid: libc::pid_t, signal: i32) -> Result<(), i32> {
    // Through the server's own `sys` module: tests hold no `unsafe` either.
    let result = if pid < 0 {
        yieldshell::internals::sys::killpg(pid.unsigned_abs(), signal)
    } else {
        yieldshell::internals::sys::kill(pid as u32, signal)
    };
    result.map_err(|e| e.raw_os_error().unwrap_or(0))
}

/// A directory under the system temp dir, removed on drop. Its path is canonical.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        let path = std::env::temp_dir().join(unique_marker(label));
        std::fs::create_dir_all(&path).expect("create a temp dir");
        let path = path.canonicalize().expect("canonicalize the temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates `rel` (and parents) under the directory and returns its path.
    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.path.join(rel);
        std::fs::create_dir_all(&path).expect("create a directory");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A path as `&str` (test paths are UTF-8).
pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

static LOAD: parking_lot::RwLock<()> = parking_lot::const_rwlock(());

/// Held by a test that loads the machine on purpose (floods, thousands of calls), so that
/// tests with a time bound never run beside it on a small machine.
pub fn heavy_load() -> parking_lot::RwLockWriteGuard<'static, ()> {
    LOAD.write()
}

/// `bound` stretched by how busy the machine is: times the 1-minute load average per CPU
/// when that is above 1 (at most 20 times). A promise such as "exits within 2 s" is checked
/// as written on a quiet machine; on a machine shared by parallel builds, where the server
/// waits for a CPU like everything else, it is checked against the time the machine gave.
pub fn loaded(bound: Duration) -> Duration {
    let load: f64 = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let cpus = thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    bound.mul_f64((load / cpus).clamp(1.0, 20.0))
}

/// Held by a test that asserts a time bound (shutdown within 2 s, ping within 100 ms).
pub fn time_bound() -> parking_lot::RwLockReadGuard<'static, ()> {
    LOAD.read()
}

/// git run by the test itself (the repository an attacker starts from), with no system or
/// global configuration and a fixed identity.
pub fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?} failed");
}

/// Starts `command` with `exec`, its stdin kept open so that it waits, and returns its id.
pub fn start_waiting(server: &Server, command: &str, directory: &str) -> String {
    let object = server.exec(json!({
        "command": command, "cwd": directory, "stdin": "", "close_stdin": false,
        "yield_ms": 50, "side_effects": ["MODIFIES_WORKSPACE_FILES"]
    }));
    assert_eq!(object["status"], "backgrounded", "{command}: {object}");
    object["process_id"]
        .as_str()
        .expect("process_id")
        .to_string()
}

/// Closes the stdin of `id` and waits for it to end.
pub fn finish(server: &Server, id: &str) {
    server.call_ok(
        "write",
        json!({ "process_id": id, "input": "", "close_stdin": true }),
    );
    let object = server
        .result_object(&server.call("wait", json!({ "process_id": id, "timeout_ms": 20000 })));
    assert!(object.to_string().contains("exited"), "{object}");
}
