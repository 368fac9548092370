//! The engine and the shell-mode tools `exec`, `write`, `wait` and `stop` (`read` is in
//! `tools/read`, `ps` and `cleanup` in `tools/ps`).
//!
//! Requests arrive here already typed (the serde boundary is `mcp`); answers leave as
//! typed results or a `ToolError` (see `results`), through the call's responder. A launch
//! is made in `tools/launch` (processes in `process/spawn`), waiting in `wait`, the checks
//! of shell mode in `policy`, and `shell_execute` in `tools/shell_execute`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex_lite::Regex;

use crate::base::config::{Config, Mode, TRANSPORT_CEILING_MS};
use crate::base::log;
use crate::base::pool::Pool;
use crate::base::ring::{Streams, STDERR, STDOUT};
use crate::base::stamp::IdGen;
use crate::base::sys;
use crate::base::sys::libc;
use crate::policy::audit::{self, Audit, Record, Redirections};
use crate::policy::redact::Secrets;
use crate::policy::secrets::LiveSecrets;
use crate::policy::trusted::{tokenize, Policy};
use crate::process::reaper::{Cmd, Reaper};
use crate::process::record::{EndReason, Proc, Status};
use crate::process::table::Table;
use crate::tools::call::{Approvable, Approved, Call, Cancel, Progress, RunsWith};
use crate::tools::policy::{resolve_dir, Refusal};
use crate::tools::results::{
    Answer, ErrorKind, ExecResult, Output, ProcStatus, StopResult, ToolError, WaitEnd, WaitResult,
    WriteResult,
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
    /// Terminal and raw output.
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
    /// Terminal output with its escape sequences.
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
    /// The secrets in force: the server's and every kept record's (`policy::secrets`).
    pub(crate) secrets: Arc<LiveSecrets>,
    /// The trusted-mode policy (`None` in shell mode).
    pub trusted: Option<Policy>,
    /// The audit log.
    pub audit: Audit,
    /// Per-command limits and cgroups, this engine's own.
    pub(crate) commands: crate::process::agents::CommandSetup,
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
/// How long `stop` waits after SIGKILL before it reports that the record outlived it.
const KILL_ROOM: Duration = Duration::from_secs(4);
/// Default `stop` grace.
pub(crate) const STOP_GRACE_MS: u64 = 10_000;
/// Ceiling of `stop`'s grace.
pub(crate) const STOP_GRACE_MAX_MS: u64 = 50_000;

/// Receives the end of an `exec` (its answer, or `None` when cancelled) and the record it
/// started, if any.
/// With a refusal a person may approve, what to ask them.
type ExecDone = Box<dyn FnOnce(Option<Answer>, Option<&Proc>, Option<Approvable>) + Send>;

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
        let commands = crate::process::agents::CommandSetup::new(&config);
        reaper
            .guardian
            .configure(marker_prefix.clone(), commands.cgroup_prefix());
        let trusted = match config.mode {
            Mode::Trusted => Some(Policy::new(&config)?),
            Mode::Shell => None,
        };
        let secrets = LiveSecrets::new(
            crate::policy::secrets::server_pairs(&config),
            config.redact_regex.clone(),
        );
        let audit = Audit::open(
            config.audit_log.as_deref(),
            config.audit_to_stderr,
            secrets.clone(),
        )?;
        let (sandbox, warnings) = crate::policy::sandbox::Sandbox::new(&config)?;
        for w in warnings {
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
            commands,
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
    /// or anything else, shown as its JSON text; `env` the string values of its `env`, whose
    /// secrets the line hides too.
    pub fn audit_bad_arguments(
        &self,
        tool: crate::base::config::Tool,
        command: BadCommand<'_>,
        reason: &str,
        env: &[(String, String)],
    ) {
        let secrets = self.secrets.with_overlay(env);
        let mut record = Record {
            tool: tool.name(),
            mode: self.mode_name(),
            result_type: "rejected",
            rejection_reason: Some(secrets.redact_str(reason)),
            ..Record::default()
        };
        match command {
            BadCommand::Text(text) => {
                record.command = Some(audit::redact_command(text, &secrets));
            }
            BadCommand::Argv(argv) => {
                record.argv = Some(audit::redact_argv(&argv, &secrets));
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
pub(crate) const RESULT_TEXT_MAX: usize = 56 * 1024;

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
        // The call's own `env` secrets hide what it sent in its audit line too, also when
        // it is refused (then they never join the set in force).
        let secrets = self.secrets.with_overlay(&args.env);
        // Trusted mode reads the command line once, here: the audit record, the process
        // count and the launch all take this reading.
        let parsed = self
            .trusted
            .as_ref()
            .map(|_| tokenize::parse(&args.command));
        let mut record = Record {
            tool: crate::base::config::Tool::Exec.name(),
            mode: self.mode_name(),
            command: Some(audit::redact_command(&args.command, &secrets)),
            directory: Some(secrets.redact_str(&match &cwd {
                Ok(dir) => dir.display().to_string(),
                Err(_) => args.cwd.clone().unwrap_or_default(),
            })),
            timeout_ms: Some(args.timeout_ms.unwrap_or(self.config.default_timeout_ms)),
            redirections: parsed.as_ref().and_then(|p| {
                let p = p.as_ref().ok()?;
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
            approved,
        } = call;
        record.approval = approved.as_ref().map(Approved::audit_name);
        let default_yield_ms = crate::base::clients::default_yield_ms(
            self.config.default_yield_ms,
            self.config.default_yield_explicit,
            client.as_deref(),
        );
        let engine = self.clone();
        let finish = move |answer: Option<Answer>, proc: Option<&Proc>, ask: Option<Approvable>| {
            let t = Instant::now();
            record.duration_ms = started.elapsed().as_millis() as u64;
            audit_exec(&mut record, answer.as_ref(), proc);
            for text in [&mut record.rejection_reason, &mut record.error] {
                if let Some(t) = text.as_mut() {
                    *t = secrets.redact_str(t);
                }
            }
            engine.audit.record(&record);
            let (audit_us, t) = (t.elapsed().as_micros(), Instant::now());
            match (answer, ask) {
                (Some(refusal), Some(what)) => respond.ask(refusal, what),
                (answer, _) => respond.send(answer),
            }
            let id = proc.map_or("-", |p| p.info.id.as_str());
            let render_us = t.elapsed().as_micros();
            log::debug!("{id} answer steps (µs): audit {audit_us}, render and queue {render_us}");
        };
        let waiting = (cancel, progress, default_yield_ms);
        let command = (args, parsed);
        self.exec_start(command, cwd, waiting, approved, started, Box::new(finish));
    }

    fn exec_start(
        self: &Arc<Self>,
        (args, parsed): (ExecArgs, Option<Result<tokenize::Pipeline, String>>),
        cwd: Result<PathBuf, String>,
        (cancel, progress, default_yield_ms): (Arc<Cancel>, Option<Progress>, u64),
        approved: Option<Approved>,
        started: Instant,
        finish: ExecDone,
    ) {
        let held = match self.check_policy(&args, approved.is_some()) {
            Ok(held) => held,
            Err(message) => return finish(Some(Err(refused(message))), None, None),
        };
        let limit = self.config.max_processes;
        // A trusted-mode pipeline runs one process per stage; a shell is one process.
        let processes = match &parsed {
            Some(Ok(p)) => p.stages.len(),
            _ => 1,
        };
        let Some(slot) = self.table.reserve(limit, processes) else {
            let message = limit_message(limit, processes);
            return finish(Some(Err(refused(message))), None, None);
        };
        let cwd = match cwd {
            Ok(c) => c,
            Err(e) => return finish(Some(Err(refused(e))), None, None),
        };
        if let Some(Err(e)) = approved.as_ref().map(|a| a.check_dir(&cwd)) {
            return finish(Some(Err(refused(e))), None, None);
        }
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = match self.exec_launch(&args, parsed, cwd.clone(), held, approved.is_some()) {
            Ok(l) => l,
            Err(Refusal::Final(e)) => return finish(Some(Err(refused(e))), None, None),
            Err(Refusal::Approvable(e, rules)) => {
                let with = RunsWith {
                    shell: args.shell.as_deref(),
                    env: &args.env,
                    stdin: args.stdin.as_deref(),
                };
                let what = Approvable::new(rules, args.command.clone(), cwd, with, &self.secrets);
                return finish(Some(Err(refused(e))), None, Some(what));
            }
        };
        let proc = match self.launch(launch, slot) {
            Ok(p) => p,
            Err(e) => {
                let error = ToolError::new(ErrorKind::StartFailed, e);
                return finish(Some(Err(error)), None, None);
            }
        };
        cancel.attach(&proc);
        let yield_ms = args
            .yield_ms
            .unwrap_or(default_yield_ms)
            .min(self.config.max_yield_ms);
        // The yield counts from the start of the process: the checks before it (a command
        // regex over a long command) do not eat into it.
        let deadline = proc.info.started + Duration::from_millis(yield_ms);
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
                    return finish(None, Some(&proc), None);
                }
                let t = Instant::now();
                let snapshot = engine.snapshot(&proc, read, true);
                let (id, us) = (&proc.info.id, t.elapsed().as_micros());
                log::debug!("{id} answer steps (µs): snapshot {us}");
                let result = ExecResult {
                    backgrounded: snapshot.status == Status::Running,
                    snapshot,
                    pid: proc.info.pid,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                finish(Some(Ok(Output::Exec(result))), Some(&proc), None);
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
        wait_for: WaitFor,
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
                let watch_until =
                    UntilWatch::new(re.clone(), proc, args.since_seq, args.streams, deadline);
                watch = watch.until(i, watch_until);
            }
        }
        if wait_for.input {
            watch = watch.until_input();
        }
        if wait_for.all {
            watch = watch.all();
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
                        .map(|p| (p.info.id.clone(), proc_status(p)))
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
        let deadline = Instant::now() + Duration::from_millis(grace) + KILL_ROOM;
        self.park_stop(proc, name, deadline, call.progress, call.respond);
    }

    /// Waits for a stopped record to end, then answers what was observed, in order: at the
    /// deadline, a record that was not sent SIGKILL yet (the server itself was frozen past
    /// the grace, so the reaper's escalation and this deadline came due together) is sent
    /// it now and given [`KILL_ROOM`] before `stop` reports that it outlived SIGKILL.
    fn park_stop(
        self: &Arc<Self>,
        proc: Arc<Proc>,
        name: &'static str,
        deadline: Instant,
        progress: Option<crate::tools::call::Progress>,
        respond: crate::tools::call::Responder,
    ) {
        let watch =
            Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).progress(progress.clone());
        let engine = self.clone();
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                let stopped = outcome == Outcome::Finished;
                if !stopped && outcome != Outcome::Cancelled {
                    let killed = proc.lock().sigkill_at;
                    let due = match killed {
                        Some(at) => at + KILL_ROOM,
                        None => {
                            proc.signal(libc::SIGKILL);
                            Instant::now() + KILL_ROOM
                        }
                    };
                    if due > Instant::now() + Duration::from_millis(5) && !proc.is_finished() {
                        return engine.park_stop(proc, name, due, progress, respond);
                    }
                }
                let result = stop_result(&proc, name, stopped || proc.is_finished());
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
        // The answer's line, or, for an answer without one, the names created by now.
        record.protected = match answer {
            Some(Ok(Output::Exec(r))) => r.snapshot.protected.clone(),
            _ => proc.info.agent.protected_line(&[]),
        };
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

/// Which stage of a finished pipeline failed and how, in a sentence: `stage 1 of 2 (sort)
/// failed with exit status 2`, or `... was killed by SIGKILL`.
pub(crate) fn stage_failure(
    info: &crate::process::record::Info,
    st: &crate::process::record::State,
) -> Option<String> {
    let (i, exit) = st.failed_stage()?;
    let name = info.stage_names.get(i).map_or("?", String::as_str);
    let how = match exit {
        crate::base::sys::WaitStatus::Exited(code) => format!("failed with exit status {code}"),
        crate::base::sys::WaitStatus::Signaled(n) => {
            format!("was killed by {}", crate::base::sys::signal_name(n))
        }
    };
    let of = st.stage_exits.len();
    Some(format!("stage {} of {of} ({name}) {how}", i + 1))
}

/// What `wait` also waits for besides the first process to end.
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitFor {
    /// A process waits for input (`until_input`).
    pub input: bool,
    /// Every process to end, not the first (`all`).
    pub all: bool,
}

/// A record's state for `wait`'s `statuses`.
fn proc_status(p: &Proc) -> ProcStatus {
    let st = p.lock();
    ProcStatus {
        status: st.status(),
        exit_code: st.exit().0,
        ended_at: st.ended.map(|(_, wall)| crate::base::stamp::rfc3339(wall)),
    }
}
