//! The shell-mode tools: `exec`, `read`, `write`, `wait`, `stop`, `ps`, `cleanup`.
//!
//! Requests arrive here already typed (the serde boundary is `mcp`); results leave as JSON
//! objects with an error flag. Spawning lives in `spawn`, waiting in `wait`, the checks
//! of shell mode in `policy`, and `shell_execute` in `trusted::execute`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use regex_lite::Regex;
use serde_json::{Map, Value};

use crate::audit::Audit;
use crate::config::{self, Config, Mode, TRANSPORT_CEILING_MS};
use crate::pool::Pool;
use crate::process::{EndReason, Proc, Status};
use crate::reaper::{Cmd, Reaper};
use crate::redact::Secrets;
use crate::ring::{ReadOut, ReadReq, Streams, STDERR, STDOUT};
use crate::stamp::{rfc3339, IdGen};
use crate::sys;
use crate::table::Table;
use crate::trusted::{tokenize, Policy};
use crate::wait::{Check, Outcome, UntilWatch, WaitMode, Waits, Watch};

pub use crate::policy::check_side_effects;
pub use crate::spawn::{Launch, StdinSource};
pub use crate::stamp::new_marker_prefix;
pub use crate::trusted::execute::ShellExecArgs;

/// A tool's answer: the result object and whether it reports a failure.
#[derive(Debug)]
pub struct Reply {
    /// The result object.
    pub value: Map<String, Value>,
    /// True when the tool could not do what was asked.
    pub is_error: bool,
    /// Text blocks to send instead of the object's JSON (`shell_execute`).
    pub texts: Option<Vec<String>>,
}

impl Reply {
    pub(crate) fn ok(value: Map<String, Value>) -> Reply {
        Reply {
            value,
            is_error: false,
            texts: None,
        }
    }

    pub(crate) fn err(value: Map<String, Value>) -> Reply {
        Reply {
            value,
            is_error: true,
            texts: None,
        }
    }

    /// `{"error": message}` with `isError`.
    pub fn error(message: impl Into<String>) -> Reply {
        let mut m = Map::new();
        m.insert("error".into(), Value::from(message.into()));
        Reply::err(m)
    }
}

/// Cancellation of one in-flight request.
#[derive(Default)]
pub struct Cancel {
    flag: AtomicBool,
    proc: Mutex<Option<Arc<Proc>>>,
}

impl Cancel {
    /// Cancels: the waiter wakes and gives up.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(p) = self.proc.lock().as_ref() {
            p.notify();
        }
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    pub(crate) fn attach(&self, proc: &Arc<Proc>) {
        *self.proc.lock() = Some(proc.clone());
    }
}

/// Sends a progress notification: (elapsed ms, bytes of output so far).
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How a call ended, as handed to its responder.
pub enum Done {
    /// The tool's answer.
    Reply(Reply),
    /// The call was cancelled: nothing is sent.
    Cancelled,
    /// The call ended without an answer (a panic while it ran): an internal error.
    Lost,
}

/// Sends a call's answer, exactly once: dropping an unused responder answers `Lost`.
pub struct Responder(Option<Box<dyn FnOnce(Done) + Send>>);

impl Responder {
    /// A responder that hands the end of the call to `f`.
    pub fn new(f: impl FnOnce(Done) + Send + 'static) -> Responder {
        Responder(Some(Box::new(f)))
    }

    /// Answers with `reply`, or sends nothing for a cancelled call (`None`).
    pub fn send(mut self, reply: Option<Reply>) {
        if let Some(f) = self.0.take() {
            f(reply.map_or(Done::Cancelled, Done::Reply));
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(Done::Lost);
        }
    }
}

/// One call: its cancellation, its progress callback and where its answer goes. A tool
/// that waits parks these (see `wait`) and answers later.
pub struct Call {
    /// Set when the client cancels the request.
    pub cancel: Arc<Cancel>,
    /// Progress callback when the client asked for progress.
    pub progress: Option<Progress>,
    /// Where the answer goes.
    pub respond: Responder,
}

impl Call {
    /// A call with no cancellation from outside and no progress.
    pub fn quiet(respond: Responder) -> Call {
        Call {
            cancel: Arc::new(Cancel::default()),
            progress: None,
            respond,
        }
    }
}

/// Receives the end of a call whose answer is built in steps (exec, shell_execute).
pub(crate) type Finish = Box<dyn FnOnce(Option<Reply>) + Send>;

/// `exec` arguments.
#[derive(Debug, Default)]
pub struct ExecArgs {
    /// The command string.
    pub command: String,
    /// Declared side effects (already checked against the enum).
    pub side_effects: Vec<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Environment overlay.
    pub env: Vec<(String, String)>,
    /// Shell override.
    pub shell: Option<String>,
    /// Initial stdin.
    pub stdin: Option<String>,
    /// Close stdin after the initial input.
    pub close_stdin: bool,
    /// Label.
    pub name: Option<String>,
    /// Yield.
    pub yield_ms: Option<u64>,
    /// Runtime limit.
    pub timeout_ms: Option<u64>,
    /// Response budget.
    pub max_output_bytes: Option<u64>,
    /// Tail instead of head.
    pub tail_lines: Option<u64>,
    /// Terminal and raw output (SPEC section 13).
    pub agent: crate::agents::ExecExtras,
}

/// Output selection shared by `read` and `wait`.
#[derive(Debug, Clone, Copy)]
pub struct ReadArgs {
    /// Cursor.
    pub since_seq: Option<u64>,
    /// Budget.
    pub max_output_bytes: Option<u64>,
    /// Streams.
    pub streams: Streams,
    /// Tail.
    pub tail_lines: Option<u64>,
    /// Terminal output with its escape sequences (SPEC section 13).
    pub raw: bool,
}

/// The shell-mode service.
pub struct Engine {
    /// Configuration.
    pub config: Arc<Config>,
    /// Records.
    pub table: Table,
    /// The reaper.
    pub reaper: Reaper,
    pub(crate) secrets: Arc<Secrets>,
    /// The trusted-mode policy (`None` in shell mode).
    pub trusted: Option<Policy>,
    /// The audit log.
    pub audit: Audit,
    /// The output reader.
    #[cfg(target_os = "linux")]
    pub(crate) ingest: crate::ingest::Ingest,
    /// Prefix of every marker of this server (`<pid>.<nonce>/`).
    pub marker_prefix: String,
    pub(crate) ids: IdGen,
    /// Parked waits.
    pub(crate) waits: Arc<Waits>,
    /// The workers that run calls and the looks of parked waits.
    pub pool: Pool,
    pub(crate) shutting_down: AtomicBool,
}

/// Grace before SIGKILL when a call is cancelled.
pub(crate) const CANCEL_GRACE: Duration = Duration::from_millis(2000);
/// Default `stop` grace.
const STOP_GRACE_MS: u64 = 10_000;
/// Ceiling of `stop`'s grace.
const STOP_GRACE_MAX_MS: u64 = 50_000;

impl Engine {
    /// A service over `config`, using the started reaper.
    pub fn new(
        config: Arc<Config>,
        reaper: Reaper,
        marker_prefix: String,
        pool: Pool,
    ) -> Result<Engine, String> {
        crate::agents::init(&config);
        let trusted = match config.mode {
            Mode::Trusted => Some(Policy::new(&config)?),
            Mode::Shell => None,
        };
        let secrets = Arc::new(match &config.redact_regex {
            Some(re) => {
                let pairs: Vec<(&str, &str)> = config
                    .env
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_str()?, v.to_str()?)))
                    .filter(|(k, _)| re.is_match(k))
                    .collect();
                Secrets::new(pairs)
            }
            None => Secrets::default(),
        });
        let audit = Audit::open(config.audit_log.as_deref())?;
        let waits = Waits::start(pool.clone())
            .map_err(|e| format!("cannot start the waits thread: {e}"))?;
        #[cfg(target_os = "linux")]
        let ingest = crate::ingest::Ingest::start()
            .map_err(|e| format!("cannot start the output reader: {e}"))?;
        Ok(Engine {
            audit,
            #[cfg(target_os = "linux")]
            ingest,
            config,
            table: Table::default(),
            reaper,
            secrets,
            trusted,
            marker_prefix,
            ids: IdGen::default(),
            waits,
            pool,
            shutting_down: AtomicBool::new(false),
        })
    }

    /// The redaction set built from the server's environment.
    pub fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    /// Refuses new work from now on (shutdown).
    pub fn close(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    fn budget(&self, requested: Option<u64>) -> usize {
        let cap = self.config.max_output_bytes;
        requested.map_or(cap, |r| (r.min(cap as u64)) as usize)
    }

    /// `exec`: answers through `call` once the command ended or its yield passed (nothing
    /// when the call was cancelled).
    pub fn exec(self: &Arc<Self>, args: ExecArgs, call: Call) {
        let started = Instant::now();
        let command = self.secrets.redact_str(&args.command);
        let cwd = config::resolve_cwd(&self.config, args.cwd.as_deref());
        let directory = match &cwd {
            Ok(dir) => dir.display().to_string(),
            Err(_) => args.cwd.clone().unwrap_or_default(),
        };
        let timeout_ms = args.timeout_ms.unwrap_or(self.config.default_timeout_ms);
        let redirections = match self.trusted {
            Some(_) => tokenize::parse(&args.command).ok().map(|p| {
                serde_json::json!({
                    "stdin": p.stdin_path.is_some(),
                    "stdout": p.stdout.as_ref().is_some_and(|r| !r.append),
                    "stdout_append": p.stdout.as_ref().is_some_and(|r| r.append),
                })
            }),
            None => None,
        };
        let mut a = Map::new();
        a.insert("tool".into(), Value::from("exec"));
        a.insert("mode".into(), Value::from(self.mode_name()));
        a.insert("command".into(), Value::from(command));
        a.insert("directory".into(), Value::from(directory));
        a.insert("timeout_ms".into(), Value::from(timeout_ms));
        if let Some(r) = redirections {
            a.insert("redirections".into(), r);
        }
        let Call {
            cancel,
            progress,
            respond,
        } = call;
        let engine = self.clone();
        let finish = move |reply: Option<Reply>| {
            engine.audit_exec(a, &reply, started);
            respond.send(reply);
        };
        self.exec_inner(args, cwd, (cancel, progress), started, Box::new(finish));
    }

    /// Completes the audit record of an `exec` call from its answer, and writes it.
    fn audit_exec(&self, mut a: Map<String, Value>, reply: &Option<Reply>, started: Instant) {
        a.insert(
            "duration_ms".into(),
            Value::from(started.elapsed().as_millis() as u64),
        );
        match reply {
            None => {
                a.insert("result_type".into(), Value::from("cancelled"));
            }
            Some(r) => {
                let status = r.value.get("status").and_then(Value::as_str).unwrap_or("");
                let result_type = match status {
                    "failed_to_start" => "rejected",
                    "completed" => "success",
                    "backgrounded" => "backgrounded",
                    "timed_out" => "timeout",
                    _ => "process_error",
                };
                a.insert("result_type".into(), Value::from(result_type));
                for key in ["process_id", "exit_code", "signal"] {
                    if let Some(v) = r.value.get(key) {
                        a.insert(key.into(), v.clone());
                    }
                }
                let record = r
                    .value
                    .get("process_id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.table.get(id));
                if let Some(proc) = record {
                    // The record's command is redacted with the call's `env` secrets too.
                    a.insert("command".into(), Value::from(proc.info.command.clone()));
                    put_byte_counts(&mut a, &proc.lock().output);
                    if let Some(cap) = proc.info.output_cap {
                        a.insert("output_limit".into(), Value::from(cap));
                    }
                }
                if status == "failed_to_start" {
                    a.insert(
                        "rejection_reason".into(),
                        r.value.get("error").cloned().unwrap_or(Value::Null),
                    );
                }
            }
        }
        self.audit.record(a);
    }

    pub(crate) fn mode_name(&self) -> &'static str {
        if self.trusted.is_some() {
            "trusted"
        } else {
            "shell"
        }
    }

    fn exec_inner(
        self: &Arc<Self>,
        args: ExecArgs,
        cwd: Result<PathBuf, String>,
        (cancel, progress): (Arc<Cancel>, Option<Progress>),
        started: Instant,
        finish: Finish,
    ) {
        if let Err(message) = self.check_policy(&args) {
            return finish(Some(failed_to_start(message)));
        }
        let limit = self.config.max_processes;
        let Some(slot) = self.table.reserve(limit) else {
            return finish(Some(failed_to_start(format!(
                "Maximum process limit ({limit}) reached: stop or wait for a running process first (see ps)"
            ))));
        };
        let cwd = match cwd {
            Ok(c) => c,
            Err(e) => return finish(Some(failed_to_start(e))),
        };
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = match self.exec_launch(&args, cwd) {
            Ok(l) => l,
            Err(e) => return finish(Some(failed_to_start(e))),
        };
        let proc = match self.launch(launch, slot) {
            Ok(p) => p,
            Err(e) => return finish(Some(failed_to_start(e))),
        };
        cancel.attach(&proc);

        let yield_ms = args
            .yield_ms
            .unwrap_or(self.config.default_yield_ms)
            .min(self.config.max_yield_ms);
        let deadline = started + Duration::from_millis(yield_ms);
        // The output part is what `read` from the oldest byte would return.
        let read = ReadArgs {
            since_seq: None,
            max_output_bytes: args.max_output_bytes,
            streams: Streams::Both,
            tail_lines: args.tail_lines,
            raw: args.agent.raw,
        };
        // A command that stops to ask something returns at once (awaiting_input), instead
        // of at yield_ms. Costs nothing for a command whose stdin is closed.
        let watch = Watch::new(vec![proc.clone()], WaitMode::Exec, deadline)
            .cancel(&cancel)
            .progress(progress)
            .until_input();
        let engine = self.clone();
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                if outcome == Outcome::Cancelled {
                    engine.stop_quietly(&proc, CANCEL_GRACE);
                    return finish(None);
                }
                finish(Some(engine.exec_result(&proc, read, started)));
            }),
        );
    }

    /// The answer of an `exec` whose wait ended.
    fn exec_result(&self, proc: &Proc, read: ReadArgs, started: Instant) -> Reply {
        let mut m = self.snapshot(proc, read);
        let running = m.get("status").and_then(Value::as_str) == Some(Status::Running.as_str());
        if running {
            m.insert("status".into(), Value::from("backgrounded"));
            let next_seq = m.get("next_seq").cloned().unwrap_or(Value::Null);
            let asks = if m.get("awaiting_input") == Some(&Value::Bool(true)) {
                " It is waiting for input now (see prompt): answer with write."
            } else {
                ""
            };
            m.insert(
                "message".into(),
                Value::from(format!(
                    "The command is still running in the background as {id}.{asks} Use read with \
                     process_id {id} and since_seq {next_seq} for new output, wait to block until it \
                     exits or prints something (until) or asks for input (until_input), write to \
                     send input, and stop to end it.",
                    id = proc.info.id,
                )),
            );
        }
        m.insert("pid".into(), Value::from(proc.info.pid));
        m.insert(
            "duration_ms".into(),
            Value::from(started.elapsed().as_millis() as u64),
        );
        // exec names stdin_error only when writing the initial stdin failed.
        if m.get("stdin_error").is_some_and(Value::is_null) {
            m.remove("stdin_error");
        }
        Reply::ok(m)
    }

    /// Sends SIGTERM, then SIGKILL after `grace`, without waiting.
    pub(crate) fn stop_quietly(&self, proc: &Arc<Proc>, grace: Duration) {
        proc.set_reason(EndReason::Stopped);
        if proc.signal(libc::SIGTERM) {
            self.reaper
                .send(Cmd::Kill(proc.clone(), Instant::now() + grace));
        }
    }

    fn unknown(id: &str) -> Reply {
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(id));
        m.insert(
            "error".into(),
            Value::from(format!("Unknown process_id: {id}")),
        );
        Reply::err(m)
    }

    /// `read`.
    pub fn read(&self, id: &str, args: ReadArgs) -> Reply {
        let Some(proc) = self.table.get(id) else {
            return Self::unknown(id);
        };
        Reply::ok(self.snapshot(&proc, args))
    }

    fn snapshot(&self, proc: &Proc, args: ReadArgs) -> Map<String, Value> {
        let req = ReadReq {
            since: args.since_seq,
            tail_lines: args.tail_lines.map(|n| n as usize),
            streams: args.streams,
            max_bytes: self.budget(args.max_output_bytes),
        };
        let st = proc.lock();
        let mut out = st.output.read(&req);
        let status = st.status();
        let (exit_code, signal) = st.exit();
        let stdin_error = st.stdin_error.clone();
        drop(st);
        crate::agents::shape_read(proc, &mut out, args.raw, status == Status::Running);
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(proc.info.id.clone()));
        m.insert("status".into(), Value::from(status.as_str()));
        m.insert(
            "exit_code".into(),
            exit_code.map_or(Value::Null, Value::from),
        );
        m.insert("signal".into(), signal.map_or(Value::Null, Value::from));
        crate::agents::put_gap(&mut m, &out);
        put_output(&mut m, out, args.streams);
        m.insert(
            "stdin_error".into(),
            stdin_error.map_or(Value::Null, Value::from),
        );
        if status == Status::Running {
            crate::agents::put_awaiting(&mut m, proc);
        } else {
            m.insert("awaiting_input".into(), Value::Bool(false));
        }
        m
    }

    /// `write`.
    pub fn write(self: &Arc<Self>, id: &str, input: &str, newline: bool, close: bool, call: Call) {
        let Some(proc) = self.table.get(id) else {
            return call.respond.send(Some(Self::unknown(id)));
        };
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(id));
        let answer = move |mut m: Map<String, Value>, result: Result<(), String>| match result {
            Ok(()) => {
                m.insert("ok".into(), Value::Bool(true));
                Reply::ok(m)
            }
            Err(e) => {
                m.insert("ok".into(), Value::Bool(false));
                m.insert("error".into(), Value::from(e));
                Reply::err(m)
            }
        };
        if proc.is_finished() {
            let status = proc.lock().status();
            let e = format!("process {id} is not running ({})", status.as_str());
            return call.respond.send(Some(answer(m, Err(e))));
        }
        let mut data = input.as_bytes().to_vec();
        if newline {
            data.push(b'\n');
        }
        // A terminal is never closed: end of input there is Ctrl-D.
        let close = crate::agents::close_input(&proc, close, &mut data);
        let deadline = Instant::now() + Duration::from_millis(TRANSPORT_CEILING_MS);
        let respond = call.respond;
        self.write_parked(
            proc,
            data,
            close,
            deadline,
            Box::new(move |result| respond.send(Some(answer(m, result)))),
        );
    }

    /// Writes `data` to a record's stdin without holding a thread: the write is parked
    /// until the pipe took every byte (after any earlier write), the record finished, or
    /// `deadline`; then `then` gets the result.
    pub(crate) fn write_parked(
        &self,
        proc: Arc<Proc>,
        data: Vec<u8>,
        close: bool,
        deadline: Instant,
        then: Box<dyn FnOnce(Result<(), String>) + Send>,
    ) {
        let ticket = proc.stdin_enqueue();
        let len = data.len();
        let state: Arc<Mutex<WriteState>> = Arc::default();
        let (writer, shared) = (proc.clone(), state.clone());
        let watch = Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).check(move || {
            if !writer.stdin_turn(ticket) {
                return Check::Idle;
            }
            let mut st = shared.lock();
            st.had_turn = true;
            let before = st.written;
            match writer.write_now(&data, &mut st.written, close) {
                Ok(true) => {
                    st.result = Some(Ok(()));
                    Check::Done
                }
                Err(e) => {
                    st.result = Some(Err(e));
                    Check::Done
                }
                Ok(false) if st.written > before => Check::Moved,
                Ok(false) => Check::Idle,
            }
        });
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                proc.stdin_leave(ticket);
                let mut st = state.lock();
                let result = match (st.result.take(), outcome) {
                    (Some(r), _) => r,
                    (None, Outcome::Finished) => {
                        Err("the process finished before reading all of its stdin".into())
                    }
                    (None, _) if !st.had_turn => Err(
                        "stdin is busy with an earlier write that the process has not accepted yet"
                            .into(),
                    ),
                    (None, _) => Err(format!(
                        "the process did not read its stdin in time ({} bytes not written)",
                        len - st.written
                    )),
                };
                drop(st);
                then(result);
            }),
        );
    }

    /// `wait`: answers when a record finished, its output matched `until`, it waits for
    /// input (`until_input`), or the timeout passed (nothing when the call was cancelled).
    /// With several ids, the first record to do so ends the wait and is the one reported
    /// (`process_id`), with the status of every listed record in `statuses`.
    pub fn wait(
        self: &Arc<Self>,
        ids: &[String],
        timeout_ms: Option<u64>,
        until: Option<Regex>,
        until_input: bool,
        args: ReadArgs,
        call: Call,
    ) {
        let mut procs = Vec::with_capacity(ids.len());
        for id in ids {
            match self.table.get(id) {
                Some(p) => procs.push(p),
                None => return call.respond.send(Some(Self::unknown(id))),
            }
        }
        if procs.is_empty() {
            return call.respond.send(Some(Reply::error(
                "wait needs process_id, or process_ids with at least one id",
            )));
        }
        for proc in &procs {
            call.cancel.attach(proc);
        }
        let started = Instant::now();
        let timeout = timeout_ms
            .unwrap_or(TRANSPORT_CEILING_MS)
            .min(TRANSPORT_CEILING_MS);
        let deadline = started + Duration::from_millis(timeout);
        let mut watch = Watch::new(procs.clone(), WaitMode::Wait, deadline)
            .cancel(&call.cancel)
            .progress(call.progress);
        if let Some(re) = until {
            for (i, proc) in procs.iter().enumerate() {
                watch = watch.until(i, UntilWatch::new(re.clone(), proc, args));
            }
        }
        if until_input {
            watch = watch.until_input();
        }
        let many = ids.len() > 1;
        let engine = self.clone();
        let respond = call.respond;
        self.waits.park(
            watch,
            Box::new(move |outcome, index| {
                let result = match outcome {
                    Outcome::Cancelled => return respond.send(None),
                    Outcome::Finished => "exited",
                    Outcome::Matched => "matched",
                    Outcome::AwaitingInput => "awaiting_input",
                    Outcome::Deadline | Outcome::LeaderGone => "deadline_reached",
                };
                let proc = procs.get(index).unwrap_or(&procs[0]);
                let mut m = engine.snapshot(proc, args);
                m.insert("wait_result".into(), Value::from(result));
                m.insert(
                    "waited_ms".into(),
                    Value::from(started.elapsed().as_millis() as u64),
                );
                if many {
                    crate::agents::put_statuses(&mut m, &procs);
                }
                respond.send(Some(Reply::ok(m)));
            }),
        );
    }

    /// `stop`: signals the group, then answers once it is gone (or the grace and the
    /// SIGKILL that follows it did not end it).
    pub fn stop(
        self: &Arc<Self>,
        id: &str,
        signal: Option<&str>,
        force_after_ms: Option<u64>,
        call: Call,
    ) {
        let Some(proc) = self.table.get(id) else {
            return call.respond.send(Some(Self::unknown(id)));
        };
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(id));
        let (signum, name) = match signal {
            None => (libc::SIGTERM, "SIGTERM"),
            Some(s) => match sys::signal_from_name(s) {
                Some(found) => found,
                None => {
                    let names: Vec<&str> = sys::signal_names().collect();
                    m.insert("stopped".into(), Value::Bool(false));
                    m.insert(
                        "error".into(),
                        Value::from(format!(
                            "invalid signal {s:?}: nothing was sent; expected a name such as SIGTERM, TERM or a number; known: {}",
                            names.join(", ")
                        )),
                    );
                    return call.respond.send(Some(Reply::err(m)));
                }
            },
        };
        m.insert("signal".into(), Value::from(name));
        let grace = force_after_ms
            .unwrap_or(STOP_GRACE_MS)
            .min(STOP_GRACE_MAX_MS);
        if proc.is_finished() {
            return call.respond.send(Some(stop_result(&proc, m, false)));
        }
        {
            proc.set_reason(EndReason::Stopped);
            proc.signal(signum);
            if signum != libc::SIGKILL {
                self.reaper.send(Cmd::Kill(
                    proc.clone(),
                    Instant::now() + Duration::from_millis(grace),
                ));
            }
            // The reaper escalates; wait for the group to be gone, with room for the kill
            // and the final drain.
            let deadline = Instant::now() + Duration::from_millis(grace) + Duration::from_secs(4);
            let watch =
                Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).progress(call.progress);
            let respond = call.respond;
            self.waits.park(
                watch,
                Box::new(move |outcome, _| {
                    let stopped = outcome == Outcome::Finished;
                    respond.send(Some(stop_result(&proc, m, stopped)));
                }),
            );
        }
    }
}

/// A parked write: bytes written so far, whether it was ever this writer's turn, and the
/// result once known.
#[derive(Default)]
struct WriteState {
    written: usize,
    had_turn: bool,
    result: Option<Result<(), String>>,
}

/// The answer of `stop` once its wait ended.
fn stop_result(proc: &Proc, mut m: Map<String, Value>, stopped: bool) -> Reply {
    {
        let st = proc.lock();
        let (exit_code, sig) = st.exit();
        m.insert("stopped".into(), Value::Bool(stopped));
        m.insert("status".into(), Value::from(st.status().as_str()));
        m.insert(
            "exit_code".into(),
            exit_code.map_or(Value::Null, Value::from),
        );
        m.insert("exit_signal".into(), sig.map_or(Value::Null, Value::from));
        let was_running = st.ended.is_none();
        drop(st);
        if !stopped {
            let msg = if was_running {
                "the process group did not end within the grace period after SIGKILL"
            } else {
                "the process had already finished; nothing was sent"
            };
            m.insert("error".into(), Value::from(msg));
            return Reply {
                value: m,
                is_error: was_running,
                texts: None,
            };
        }
        m.insert("error".into(), Value::Null);
        Reply::ok(m)
    }
}

impl Engine {
    /// `ps`.
    pub fn ps(&self, include_completed: bool, limit: usize) -> Reply {
        let now = Instant::now();
        let mut list = Vec::new();
        for proc in self.table.newest_first() {
            if list.len() >= limit {
                break;
            }
            let st = proc.lock();
            let status = st.status();
            if !include_completed && status != Status::Running {
                continue;
            }
            let (exit_code, signal) = st.exit();
            let mut m = Map::new();
            m.insert("process_id".into(), Value::from(proc.info.id.clone()));
            m.insert("pid".into(), Value::from(proc.info.pid));
            m.insert(
                "name".into(),
                proc.info.name.clone().map_or(Value::Null, Value::from),
            );
            m.insert("command".into(), Value::from(proc.info.command.clone()));
            m.insert("cwd".into(), Value::from(proc.info.cwd.clone()));
            m.insert("status".into(), Value::from(status.as_str()));
            m.insert(
                "exit_code".into(),
                exit_code.map_or(Value::Null, Value::from),
            );
            m.insert("signal".into(), signal.map_or(Value::Null, Value::from));
            m.insert(
                "started_at".into(),
                Value::from(rfc3339(proc.info.started_wall)),
            );
            let (ended_at, duration) = match st.ended {
                Some((at, wall)) => (
                    Value::from(rfc3339(wall)),
                    at.saturating_duration_since(proc.info.started),
                ),
                None => (
                    Value::Null,
                    now.saturating_duration_since(proc.info.started),
                ),
            };
            m.insert("ended_at".into(), ended_at);
            m.insert(
                "duration_ms".into(),
                Value::from(duration.as_millis() as u64),
            );
            put_byte_counts(&mut m, &st.output);
            m.insert(
                "idle_ms".into(),
                Value::from(now.saturating_duration_since(st.last_output).as_millis() as u64),
            );
            m.insert("latest_seq".into(), Value::from(st.output.latest_seq()));
            m.insert(
                "stdin_error".into(),
                st.stdin_error.clone().map_or(Value::Null, Value::from),
            );
            drop(st);
            if status == Status::Running {
                crate::agents::put_awaiting(&mut m, &proc);
            } else {
                m.insert("awaiting_input".into(), Value::Bool(false));
            }
            list.push(Value::Object(m));
        }
        let mut m = Map::new();
        m.insert("processes".into(), Value::Array(list));
        Reply::ok(m)
    }

    /// `cleanup`.
    pub fn cleanup(&self, completed_older_than_ms: u64, stopped_older_than_ms: u64) -> Reply {
        let removed = self.table.cleanup(
            Duration::from_millis(completed_older_than_ms),
            Duration::from_millis(stopped_older_than_ms),
        );
        let mut m = Map::new();
        m.insert("removed".into(), Value::from(removed));
        Reply::ok(m)
    }

    /// Shutdown: SIGTERM to everything, SIGKILL after `grace`, wait at most `limit` overall.
    pub fn shutdown(&self, grace: Duration, limit: Duration) {
        self.close();
        let start = Instant::now();
        let live = self.table.live();
        for p in &live {
            p.set_reason(EndReason::Stopped);
            p.signal_group(libc::SIGTERM);
        }
        crate::tree::signal_all(&self.marker_prefix, libc::SIGTERM);
        let all_done = |until: Instant| {
            for p in &live {
                let mut st = p.lock();
                while st.ended.is_none() && Instant::now() < until {
                    p.wait_until(&mut st, until);
                }
            }
        };
        all_done(start + grace);
        for p in &live {
            if !p.is_finished() {
                p.signal_group(libc::SIGKILL);
            }
        }
        crate::tree::signal_all(&self.marker_prefix, libc::SIGKILL);
        all_done(start + limit);
    }
}

fn failed_to_start(message: String) -> Reply {
    let mut m = Map::new();
    m.insert("status".into(), Value::from("failed_to_start"));
    m.insert("error".into(), Value::from(message));
    Reply::err(m)
}

fn put_output(m: &mut Map<String, Value>, out: ReadOut, streams: Streams) {
    m.insert("start_seq".into(), Value::from(out.start_seq));
    m.insert("next_seq".into(), Value::from(out.next_seq));
    m.insert("latest_seq".into(), Value::from(out.latest_seq));
    m.insert("truncated".into(), Value::Bool(out.truncated));
    m.insert("capped".into(), Value::Bool(out.capped));
    if streams != Streams::Stderr {
        m.insert("stdout".into(), Value::from(into_text(out.stdout)));
    }
    if streams != Streams::Stdout {
        m.insert("stderr".into(), Value::from(into_text(out.stderr)));
    }
}

/// `stdout_bytes` and `stderr_bytes`: bytes ever written to each stream (after redaction).
pub(crate) fn put_byte_counts(m: &mut Map<String, Value>, output: &crate::ring::Output) {
    m.insert(
        "stdout_bytes".into(),
        Value::from(output.bytes_total(STDOUT)),
    );
    m.insert(
        "stderr_bytes".into(),
        Value::from(output.bytes_total(STDERR)),
    );
}

/// Bytes as text without a copy when they are valid UTF-8; U+FFFD for invalid sequences.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
