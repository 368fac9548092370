//! The shell-mode tools: `exec`, `read`, `write`, `wait`, `stop`, `ps`, `cleanup`.
//!
//! Requests arrive here already typed (the serde boundary is `mcp`); answers leave as
//! typed results or a `ToolError` (see `results`), through the call's responder. Spawning
//! lives in `spawn`, waiting in `wait`, the checks of shell mode in `policy`, and
//! `shell_execute` in `trusted::execute`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex_lite::Regex;

use crate::base::config::{Config, Mode, TRANSPORT_CEILING_MS};
use crate::base::json;
use crate::base::pool::Pool;
use crate::base::ring::{ReadReq, Streams, STDERR, STDOUT};
use crate::base::stamp::IdGen;
use crate::base::sys;
use crate::policy::audit::{self, Audit, Record, Redirections};
use crate::policy::redact::Secrets;
use crate::policy::trusted::{tokenize, Policy};
use crate::process::reaper::{Cmd, Reaper};
use crate::process::record::{EndReason, Proc, Status};
use crate::process::table::Table;
use crate::tools::call::{Call, Cancel, Progress};
use crate::tools::policy::resolve_dir;
use crate::tools::results::{
    Answer, ErrorKind, ExecResult, KilledFor, Output, Snapshot, StopResult, ToolError, WaitEnd,
    WaitResult, WriteResult,
};
use crate::tools::wait::{park_write, Outcome, UntilWatch, WaitMode, Waits, Watch};

/// The `command` argument of a call refused for malformed arguments, for its audit line.
pub enum BadCommand<'a> {
    /// A string (`exec`'s form).
    Text(&'a str),
    /// An array of strings (`shell_execute`'s form).
    Argv(Vec<String>),
    /// Absent.
    Missing,
}

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
    pub agent: crate::process::agents::ExecExtras,
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
    /// The kernel sandbox every call's processes start in.
    pub sandbox: crate::policy::sandbox::Sandbox,
    /// The output reader.
    #[cfg(target_os = "linux")]
    pub(crate) ingest: crate::process::ingest::Ingest,
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

/// Receives the end of an `exec` (its answer, or `None` when cancelled) and the record it
/// started, if any.
type ExecDone = Box<dyn FnOnce(Option<Answer>, Option<&Proc>) + Send>;

fn refused(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::Refused, message)
}

impl Engine {
    /// A service over `config`, using the started reaper; calls and the looks of parked
    /// waits run on `pool`.
    pub fn new(
        config: Arc<Config>,
        reaper: Reaper,
        marker_prefix: String,
        pool: Pool,
    ) -> Result<Engine, String> {
        crate::process::agents::init(&config);
        let trusted = match config.mode {
            Mode::Trusted => Some(Policy::new(&config)?),
            Mode::Shell => None,
        };
        let secrets = Arc::new(match &config.redact_regex {
            Some(re) => {
                use std::os::unix::ffi::OsStrExt;
                let pairs: Vec<(&str, &[u8])> = config
                    .env
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_str()?, v.as_bytes())))
                    .filter(|(k, _)| re.is_match(k))
                    .collect();
                Secrets::new(pairs)
            }
            None => Secrets::default(),
        });
        let audit = Audit::open(
            config.audit_log.as_deref(),
            config.audit_to_stderr,
            secrets.clone(),
        )?;
        let (sandbox, warning) = crate::policy::sandbox::Sandbox::new(&config)?;
        if let Some(w) = warning {
            crate::base::log::warn!("{w}");
        }
        sandbox.filter_server()?;
        crate::base::log::info!("{}", sandbox.status());
        let waits = Waits::start(pool.clone())
            .map_err(|e| format!("cannot start the waits thread: {e}"))?;
        #[cfg(target_os = "linux")]
        let ingest = crate::process::ingest::Ingest::start()
            .map_err(|e| format!("cannot start the output reader: {e}"))?;
        Ok(Engine {
            audit,
            sandbox,
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

    /// Refuses new work from now on (shutdown).
    pub fn close(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    pub(crate) fn budget(&self, requested: Option<u64>) -> usize {
        let cap = self.config.max_output_bytes;
        requested.map_or(cap, |r| (r.min(cap as u64)) as usize)
    }

    /// Writes the audit line of an `exec` or `shell_execute` call refused because its
    /// arguments were malformed (the tool never saw typed arguments). `command` is the
    /// `command` argument as sent: a string (`exec`), an array of strings (`shell_execute`),
    /// or anything else, shown as its JSON text.
    pub fn audit_bad_arguments(&self, tool: &'static str, command: BadCommand<'_>, reason: &str) {
        let mut record = Record {
            tool,
            mode: self.mode_name(),
            result_type: "rejected",
            rejection_reason: Some(reason.to_string()),
            ..Record::default()
        };
        match command {
            BadCommand::Text(text) => {
                record.command = Some(audit::redact_command(text, &self.secrets));
            }
            BadCommand::Argv(argv) => {
                record.argv = Some(audit::redact_argv(&argv, &self.secrets));
            }
            BadCommand::Missing => (),
        }
        self.audit.record(&record);
    }

    pub(crate) fn mode_name(&self) -> &'static str {
        if self.trusted.is_some() {
            "trusted"
        } else {
            "shell"
        }
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
        crate::process::tree::signal_all(&self.marker_prefix, libc::SIGTERM);
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
        crate::process::tree::signal_all(&self.marker_prefix, libc::SIGKILL);
        all_done(start + limit);
    }
}

/// Most bytes that a result's output may take as JSON text, leaving room for its other
/// fields under 64 KiB.
const RESULT_TEXT_MAX: usize = 56 * 1024;

/// The refusal of a call whose processes do not fit under `YIELDSHELL_MAX_PROCESSES`.
pub(crate) fn limit_message(limit: usize, processes: usize) -> String {
    if processes > 1 {
        format!(
            "Maximum process limit ({limit}) reached: this pipeline runs {processes} processes \
             (one per stage); stop or wait for running processes first (see ps), or use fewer stages"
        )
    } else {
        format!(
            "Maximum process limit ({limit}) reached: stop or wait for a running process first (see ps)"
        )
    }
}

/// The tools.
impl Engine {
    /// `exec`: answers through `call` once the command ended or its yield passed (nothing
    /// when the call was cancelled). Every attempt is audited.
    pub fn exec(self: &Arc<Self>, args: ExecArgs, call: Call) {
        let started = Instant::now();
        let cwd = resolve_dir(&self.config, args.cwd.as_deref(), "cwd");
        let mut record = Record {
            tool: "exec",
            mode: self.mode_name(),
            command: Some(audit::redact_command(&args.command, &self.secrets)),
            directory: Some(match &cwd {
                Ok(dir) => dir.display().to_string(),
                Err(_) => args.cwd.clone().unwrap_or_default(),
            }),
            timeout_ms: Some(args.timeout_ms.unwrap_or(self.config.default_timeout_ms)),
            redirections: self.trusted.as_ref().and_then(|_| {
                let p = tokenize::parse(&args.command).ok()?;
                Some(Redirections {
                    stdin: p.stdin_path.is_some(),
                    stdout: p.stdout.as_ref().is_some_and(|r| !r.append),
                    stdout_append: p.stdout.as_ref().is_some_and(|r| r.append),
                })
            }),
            ..Record::default()
        };
        let Call {
            cancel,
            progress,
            respond,
            client,
        } = call;
        let default_yield_ms = crate::base::clients::default_yield_ms(
            self.config.default_yield_ms,
            self.config.default_yield_explicit,
            client.as_deref(),
        );
        let engine = self.clone();
        let finish = move |answer: Option<Answer>, proc: Option<&Proc>| {
            record.duration_ms = started.elapsed().as_millis() as u64;
            audit_exec(&mut record, answer.as_ref(), proc);
            engine.audit.record(&record);
            respond.send(answer);
        };
        let waiting = (cancel, progress, default_yield_ms);
        self.exec_start(args, cwd, waiting, started, Box::new(finish));
    }

    fn exec_start(
        self: &Arc<Self>,
        args: ExecArgs,
        cwd: Result<PathBuf, String>,
        (cancel, progress, default_yield_ms): (Arc<Cancel>, Option<Progress>, u64),
        started: Instant,
        finish: ExecDone,
    ) {
        if let Err(message) = self.check_policy(&args) {
            return finish(Some(Err(refused(message))), None);
        }
        let limit = self.config.max_processes;
        // A trusted-mode pipeline runs one process per stage; a shell is one process.
        let processes = match &self.trusted {
            Some(_) => tokenize::parse(&args.command).map_or(1, |p| p.stages.len()),
            None => 1,
        };
        let Some(slot) = self.table.reserve(limit, processes) else {
            let message = limit_message(limit, processes);
            return finish(Some(Err(refused(message))), None);
        };
        let cwd = match cwd {
            Ok(c) => c,
            Err(e) => return finish(Some(Err(refused(e))), None),
        };
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = match self.exec_launch(&args, cwd) {
            Ok(l) => l,
            Err(e) => return finish(Some(Err(refused(e))), None),
        };
        let proc = match self.launch(launch, slot) {
            Ok(p) => p,
            Err(e) => {
                let error = ToolError::new(ErrorKind::StartFailed, e);
                return finish(Some(Err(error)), None);
            }
        };
        cancel.attach(&proc);
        let yield_ms = args
            .yield_ms
            .unwrap_or(default_yield_ms)
            .min(self.config.max_yield_ms);
        let deadline = started + Duration::from_millis(yield_ms);
        // The output goes on from the cursor (the start, for a new record).
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
                    return finish(None, Some(&proc));
                }
                let snapshot = engine.snapshot(&proc, read, true);
                let result = ExecResult {
                    backgrounded: snapshot.status == Status::Running,
                    snapshot,
                    pid: proc.info.pid,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                finish(Some(Ok(Output::Exec(result))), Some(&proc));
            }),
        );
    }

    /// Sends SIGTERM, then SIGKILL after `grace`, without waiting.
    pub(crate) fn stop_quietly(&self, proc: &Arc<Proc>, grace: Duration) {
        proc.set_reason(EndReason::Stopped);
        if proc.signal(libc::SIGTERM) {
            self.reaper
                .send(Cmd::Kill(proc.clone(), Instant::now() + grace));
        }
    }

    /// `read`.
    pub fn read(&self, id: &str, args: ReadArgs) -> Answer {
        let proc = self.table.get(id).ok_or_else(|| ToolError::unknown(id))?;
        Ok(Output::Read(self.snapshot(&proc, args, false)))
    }

    /// The record's state and a slice of its output. Without `since_seq` (and
    /// `tail_lines`) the read goes on from the cursor of its `streams` choice; every answer
    /// moves that cursor forward to its `next_seq` (SPEC section 14). With `ends`, an answer
    /// about a finished record shows each long stream as head, marker and tail.
    fn snapshot(&self, proc: &Proc, args: ReadArgs, ends: bool) -> Snapshot {
        let slot = match args.streams {
            Streams::Both => 0,
            Streams::Stdout => 1,
            Streams::Stderr => 2,
        };
        let mut st = proc.lock();
        let since = match (args.since_seq, args.tail_lines) {
            (None, None) => Some(st.cursors[slot]).filter(|&c| c > 0),
            (since, _) => since,
        };
        let req = ReadReq {
            since,
            tail_lines: args.tail_lines.map(|n| n as usize),
            streams: args.streams,
            max_bytes: self.budget(args.max_output_bytes),
        };
        let ends = ends && st.ended.is_some() && args.tail_lines.is_none();
        let read = |req: &ReadReq| {
            if ends {
                st.output.read_ends(req, None)
            } else {
                st.output.read_marked(req)
            }
        };
        let mut output = read(&req);
        // Escaped as JSON, a control character takes six bytes: a smaller budget keeps the
        // result's text under 64 KiB whatever the bytes are (SPEC section 14).
        // An operator who raised `YIELDSHELL_MAX_OUTPUT_BYTES` past it gets that much text.
        let text_max = RESULT_TEXT_MAX.max(self.config.max_output_bytes);
        let mut budget = req.max_bytes;
        for _ in 0..3 {
            let cost = json::text_cost(&output.stdout) + json::text_cost(&output.stderr);
            if cost <= text_max || budget <= 1 {
                break;
            }
            budget = (budget as u128 * text_max as u128 / cost as u128) as usize;
            budget = budget.max(1);
            output = read(&ReadReq {
                max_bytes: budget,
                ..req
            });
        }
        let status = st.status();
        let (exit_code, signal) = st.exit();
        let stdin_error = st.stdin_error.clone();
        let killed_for = KilledFor::from_state(st.killed_for_output(proc.info.output_cap));
        let running = status == Status::Running;
        crate::process::agents::shape_read(proc, &mut output, args.raw, running);
        // A `both` answer has shown each stream up to its end too.
        let moved = if slot == 0 { 0..3 } else { slot..slot + 1 };
        for k in moved {
            st.cursors[k] = st.cursors[k].max(output.next_seq);
        }
        drop(st);
        Snapshot {
            process_id: proc.info.id.clone(),
            status,
            exit_code,
            signal,
            output,
            streams: args.streams,
            stdin_error,
            input: crate::process::agents::input_state(proc, running),
            killed_for,
        }
    }

    /// `write`: answers once the input was written (or could not be).
    pub fn write(self: &Arc<Self>, id: &str, input: &str, newline: bool, close: bool, call: Call) {
        let Some(proc) = self.table.get(id) else {
            return call.answer(Err(ToolError::unknown(id)));
        };
        let process_id = id.to_string();
        let answer = move |result: Result<(), String>| {
            Ok(Output::Write(WriteResult {
                process_id,
                error: result.err(),
            }))
        };
        if proc.is_finished() {
            let status = proc.lock().status();
            let e = format!("process {id} is not running ({})", status.as_str());
            return call.answer(answer(Err(e)));
        }
        let mut data = input.as_bytes().to_vec();
        if newline {
            data.push(b'\n');
        }
        // A terminal is never closed: end of input there is Ctrl-D.
        let close = crate::process::agents::close_input(&proc, close, &mut data);
        let deadline = Instant::now() + Duration::from_millis(TRANSPORT_CEILING_MS);
        let respond = call.respond;
        park_write(
            &self.waits,
            proc,
            data,
            close,
            deadline,
            Box::new(move |result| respond.send(Some(answer(result)))),
        );
    }

    /// `wait`: answers when a record finished, its output matched `until`, it waits for
    /// input (`until_input`), or the timeout passed (nothing when the call was cancelled).
    /// With several ids, the first record to do so ends the wait and is the one reported,
    /// with the status of every listed record in `statuses`.
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
                None => return call.answer(Err(ToolError::unknown(id))),
            }
        }
        if procs.is_empty() {
            let message = "wait needs process_id, or process_ids with at least one id";
            return call.answer(Err(ToolError::new(ErrorKind::InvalidArgument, message)));
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
                let watch_until = UntilWatch::new(re.clone(), proc, args.since_seq, args.streams);
                watch = watch.until(i, watch_until);
            }
        }
        if until_input {
            watch = watch.until_input();
        }
        let many = procs.len() > 1;
        let engine = self.clone();
        let respond = call.respond;
        self.waits.park(
            watch,
            Box::new(move |outcome, index| {
                let end = match outcome {
                    Outcome::Cancelled => return respond.send(None),
                    Outcome::Finished => WaitEnd::Exited,
                    Outcome::Matched => WaitEnd::Matched,
                    Outcome::AwaitingInput => WaitEnd::AwaitingInput,
                    Outcome::Deadline | Outcome::LeaderGone => WaitEnd::DeadlineReached,
                };
                let proc = procs.get(index).unwrap_or(&procs[0]);
                let statuses = many.then(|| {
                    procs
                        .iter()
                        .map(|p| (p.info.id.clone(), p.lock().status()))
                        .collect::<Vec<_>>()
                        .into_boxed_slice()
                });
                let result = WaitResult {
                    snapshot: engine.snapshot(proc, args, end == WaitEnd::Exited),
                    end,
                    waited_ms: started.elapsed().as_millis() as u64,
                    statuses,
                };
                respond.send(Some(Ok(Output::Wait(result))));
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
            return call.answer(Err(ToolError::unknown(id)));
        };
        let (signum, name) = match signal {
            None => (libc::SIGTERM, "SIGTERM"),
            Some(s) => match sys::signal_from_name(s) {
                Some(found) => found,
                None => {
                    let names: Vec<&str> = sys::signal_names().collect();
                    let message = format!(
                        "invalid signal {s:?}: nothing was sent; expected a name such as SIGTERM, TERM or a number; known: {}",
                        names.join(", ")
                    );
                    let error = ToolError::new(ErrorKind::InvalidSignal, message).about(id);
                    return call.answer(Err(error));
                }
            },
        };
        let grace = force_after_ms
            .unwrap_or(STOP_GRACE_MS)
            .min(STOP_GRACE_MAX_MS);
        if proc.is_finished() {
            return call.answer(Ok(Output::Stop(stop_result(&proc, name, false))));
        }
        proc.set_reason(EndReason::Stopped);
        proc.signal(signum);
        if signum != libc::SIGKILL {
            self.reaper.send(Cmd::Kill(
                proc.clone(),
                Instant::now() + Duration::from_millis(grace),
            ));
        }
        // The reaper escalates; wait for the group to be gone, with room for the kill and
        // the final drain.
        let deadline = Instant::now() + Duration::from_millis(grace) + Duration::from_secs(4);
        let watch =
            Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).progress(call.progress);
        let respond = call.respond;
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                let stopped = outcome == Outcome::Finished;
                let result = stop_result(&proc, name, stopped);
                respond.send(Some(Ok(Output::Stop(result))));
            }),
        );
    }
}

/// Completes an `exec` audit record from the call's answer and the record it started.
fn audit_exec(record: &mut Record, answer: Option<&Answer>, proc: Option<&Proc>) {
    record.result_type = match answer {
        None => "cancelled",
        Some(Err(e)) => {
            record.rejection_reason = Some(e.message.clone());
            "rejected"
        }
        Some(Ok(Output::Exec(r))) => {
            record.process_id = Some(r.snapshot.process_id.clone());
            record.exit_code = Some(r.snapshot.exit_code);
            record.signal = Some(r.snapshot.signal.clone());
            match (r.backgrounded, r.snapshot.status) {
                (true, _) => "backgrounded",
                (false, Status::Completed) => "success",
                (false, Status::TimedOut) => "timeout",
                _ => "process_error",
            }
        }
        Some(Ok(_)) => "process_error",
    };
    if let Some(proc) = proc {
        record.process_id = Some(proc.info.id.clone());
        // The record's command is redacted with the call's `env` secrets too.
        record.command = Some(audit::redact_command(
            &proc.info.command,
            &Secrets::default(),
        ));
        let st = proc.lock();
        record.stdout_bytes = Some(st.output.bytes_total(STDOUT));
        record.stderr_bytes = Some(st.output.bytes_total(STDERR));
        record.output_limit = proc.info.output_cap;
    }
}

/// The answer of `stop` once its wait ended.
fn stop_result(proc: &Proc, signal: &'static str, stopped: bool) -> StopResult {
    let st = proc.lock();
    let (exit_code, exit_signal) = st.exit();
    let was_running = st.ended.is_none();
    let error = match (stopped, was_running) {
        (true, _) => None,
        (false, true) => {
            Some("the process group did not end within the grace period after SIGKILL")
        }
        (false, false) => Some("the process had already finished; nothing was sent"),
    };
    StopResult {
        process_id: proc.info.id.clone(),
        signal,
        stopped,
        status: st.status(),
        exit_code,
        exit_signal,
        error,
        failed: !stopped && was_running,
    }
}
