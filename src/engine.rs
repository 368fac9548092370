//! The shell-mode tools: `exec`, `read`, `write`, `wait`, `stop`, `ps`, `cleanup`.
//!
//! Requests arrive here already typed (the serde boundary is `mcp`); results leave as JSON
//! objects with an error flag. Blocking tools (`exec` in its yield, `wait`, `stop`) sleep
//! on the record's condition variable with a deadline and wake on every change, on
//! cancellation, and once a second for progress notifications.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use regex_lite::Regex;
use serde_json::{Map, Value};

use crate::audit::{self, Audit};
use crate::config::{self, Config, Mode, SIDE_EFFECTS, TRANSPORT_CEILING_MS};
use crate::process::{self, EndReason, Info, Proc, Status};
use crate::reaper::{Cmd, Reaper};
use crate::redact::Secrets;
use crate::ring::{ReadOut, ReadReq, Streams, STDERR, STDOUT};
use crate::sys::{self, SpawnSpec};
use crate::table::Table;
use crate::tree::MARKER_VAR;
use crate::trusted::{tokenize, Policy, Stage};

/// Where a record's first stage reads from.
pub enum StdinSource {
    /// `/dev/null`.
    Null,
    /// A pipe kept by the server (for `stdin` and `write`).
    Pipe,
    /// A file opened by the server (trusted-mode `<`).
    File(std::fs::File),
}

/// Everything needed to start one record.
pub struct Launch {
    /// Stages, joined by pipes (one for a shell command).
    pub stages: Vec<Stage>,
    /// The complete environment (the marker is added).
    pub env: Vec<(OsString, OsString)>,
    /// Working directory (resolved).
    pub cwd: PathBuf,
    /// Source of the first stage's stdin.
    pub stdin: StdinSource,
    /// Target of the last stage's stdout, when redirected to a file.
    pub stdout_file: Option<std::fs::File>,
    /// The command as shown by `ps` (redacted on the way in).
    pub display: String,
    /// Label.
    pub name: Option<String>,
    /// Ring size per stream.
    pub ring_bytes: usize,
    /// Stop the group when a stream goes over this.
    pub output_cap: Option<u64>,
    /// Runtime limit (0 = none).
    pub timeout_ms: u64,
    /// The call's environment overlay (for redaction).
    pub overlay: Vec<(String, String)>,
    /// Initial stdin and whether to close it afterwards.
    pub initial_stdin: Option<(Vec<u8>, bool)>,
}

struct Started {
    pids: Vec<u32>,
    stdin: Option<std::fs::File>,
    stdout: Option<std::fs::File>,
    stderr: Option<std::fs::File>,
}

/// Spawns the stages with pipes between them and one shared stderr pipe; each stage leads
/// its own session and process group. On failure every stage already started is killed
/// (the reaper reaps it as an unknown child).
fn spawn_stages(
    stages: &[Stage],
    env: &[(OsString, OsString)],
    cwd: &std::path::Path,
    stdin: StdinSource,
    stdout_file: Option<std::fs::File>,
) -> Result<Started, String> {
    use std::fs::File;
    use std::os::fd::OwnedFd;
    let io_err = |what: &str, e: std::io::Error| format!("cannot {what}: {}", config::plain_io(&e));
    let (err_read, err_write) = std::io::pipe().map_err(|e| io_err("create a pipe", e))?;
    let err_write = File::from(OwnedFd::from(err_write));
    let mut pids: Vec<u32> = Vec::new();
    let mut parent_stdin = None;
    let mut parent_stdout = None;
    let mut next_input: Option<File> = None;
    let mut first_stdin = Some(stdin);
    let mut stdout_file = stdout_file;
    let fail = |pids: &[u32], msg: String| {
        for &pgid in pids {
            let _ = sys::killpg(pgid, libc::SIGKILL);
        }
        msg
    };
    for (i, stage) in stages.iter().enumerate() {
        let last = i + 1 == stages.len();
        let (stdin_pipe, stdin_file) = match first_stdin.take() {
            Some(StdinSource::Null) => (false, None),
            Some(StdinSource::Pipe) => (true, None),
            Some(StdinSource::File(f)) => (false, Some(f)),
            None => (false, next_input.take()),
        };
        let (stdout, keep_read) = if last {
            (stdout_file.take(), None)
        } else {
            let (r, w) = std::io::pipe().map_err(|e| fail(&pids, io_err("create a pipe", e)))?;
            (
                Some(File::from(OwnedFd::from(w))),
                Some(File::from(OwnedFd::from(r))),
            )
        };
        let stderr = err_write
            .try_clone()
            .map_err(|e| fail(&pids, io_err("duplicate a pipe", e)))?;
        let spawned = sys::spawn(SpawnSpec {
            program: &stage.program,
            arg0: Some(&stage.arg0),
            args: &stage.args,
            env,
            cwd,
            stdin_pipe,
            stdin_file,
            stdout,
            stderr: Some(stderr),
            // Every stage leads its own session: no controlling terminal for any of them.
            join_group: None,
            terminal: None,
        })
        .map_err(|e| {
            fail(
                &pids,
                format!("cannot start {}: {}", stage.program, config::plain_io(&e)),
            )
        })?;
        pids.push(spawned.pid);
        if i == 0 {
            parent_stdin = spawned.stdin;
        }
        if last {
            parent_stdout = spawned.stdout;
        }
        next_input = keep_read;
    }
    drop(err_write);
    Ok(Started {
        pids,
        stdin: parent_stdin,
        stdout: parent_stdout,
        stderr: Some(File::from(OwnedFd::from(err_read))),
    })
}

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
    fn ok(value: Map<String, Value>) -> Reply {
        Reply {
            value,
            is_error: false,
            texts: None,
        }
    }

    fn err(value: Map<String, Value>) -> Reply {
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

    fn attach(&self, proc: &Arc<Proc>) {
        *self.proc.lock() = Some(proc.clone());
    }
}

/// Sends a progress notification: (elapsed ms, bytes of output so far).
pub type Progress<'a> = Option<&'a dyn Fn(u64, u64)>;

/// Context of one call: cancellation and progress.
pub struct CallCtx<'a> {
    /// Set when the client cancels the request.
    pub cancel: &'a Cancel,
    /// Progress callback when the client asked for progress.
    pub progress: Progress<'a>,
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
}

/// The shell-mode service.
pub struct Engine {
    /// Configuration.
    pub config: Arc<Config>,
    /// Records.
    pub table: Table,
    /// The reaper.
    pub reaper: Reaper,
    secrets: Arc<Secrets>,
    /// The trusted-mode policy (`None` in shell mode).
    pub trusted: Option<Policy>,
    /// The audit log.
    pub audit: Audit,
    /// The output reader.
    #[cfg(target_os = "linux")]
    ingest: crate::ingest::Ingest,
    /// Prefix of every marker of this server (`<pid>.<nonce>/`).
    pub marker_prefix: String,
    id_base: u64,
    counter: AtomicU64,
    shutting_down: AtomicBool,
}

/// Grace before SIGKILL when a call is cancelled.
const CANCEL_GRACE: Duration = Duration::from_millis(2000);
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
    ) -> Result<Engine, String> {
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
        #[cfg(target_os = "linux")]
        let ingest = crate::ingest::Ingest::start()
            .map_err(|e| format!("cannot start the output reader: {e}"))?;
        let random = random_u64();
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
            id_base: random >> 16,
            counter: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
        })
    }

    /// The redaction set built from the server's environment.
    pub fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    fn next_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        // An odd multiplier is a bijection modulo 2^48: ids never repeat in a server's life.
        let id = self.id_base.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4B)) & 0xFFFF_FFFF_FFFF;
        format!("proc_{id:012x}")
    }

    /// Refuses new work from now on (shutdown).
    pub fn close(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    fn budget(&self, requested: Option<u64>) -> usize {
        let cap = self.config.max_output_bytes;
        requested.map_or(cap, |r| (r.min(cap as u64)) as usize)
    }

    /// `exec`. `None` when the call was cancelled (no response is sent).
    pub fn exec(&self, args: ExecArgs, ctx: &CallCtx<'_>) -> Option<Reply> {
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
        let reply = self.exec_inner(args, cwd, ctx, started);
        let mut a = Map::new();
        a.insert("tool".into(), Value::from("exec"));
        a.insert("mode".into(), Value::from(self.mode_name()));
        a.insert("command".into(), Value::from(command));
        a.insert("directory".into(), Value::from(directory));
        a.insert("timeout_ms".into(), Value::from(timeout_ms));
        if let Some(r) = redirections {
            a.insert("redirections".into(), r);
        }
        a.insert(
            "duration_ms".into(),
            Value::from(started.elapsed().as_millis() as u64),
        );
        match &reply {
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
        reply
    }

    fn mode_name(&self) -> &'static str {
        if self.trusted.is_some() {
            "trusted"
        } else {
            "shell"
        }
    }

    fn exec_inner(
        &self,
        args: ExecArgs,
        cwd: Result<PathBuf, String>,
        ctx: &CallCtx<'_>,
        started: Instant,
    ) -> Option<Reply> {
        if let Err(message) = self.check_policy(&args) {
            return Some(failed_to_start(message));
        }
        let cwd = match cwd {
            Ok(c) => c,
            Err(e) => return Some(failed_to_start(e)),
        };
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = match self.exec_launch(&args, cwd) {
            Ok(l) => l,
            Err(e) => return Some(failed_to_start(e)),
        };
        let proc = match self.launch(launch) {
            Ok(p) => p,
            Err(e) => return Some(failed_to_start(e)),
        };
        ctx.cancel.attach(&proc);

        let yield_ms = args
            .yield_ms
            .unwrap_or(self.config.default_yield_ms)
            .min(self.config.max_yield_ms);
        let deadline = started + Duration::from_millis(yield_ms);
        let outcome = wait_loop(&proc, deadline, ctx, WaitMode::Exec, None);
        if outcome == Outcome::Cancelled {
            self.stop_quietly(&proc, CANCEL_GRACE);
            return None;
        }
        // The output part is what `read` from the oldest byte would return.
        let read = ReadArgs {
            since_seq: None,
            max_output_bytes: args.max_output_bytes,
            streams: Streams::Both,
            tail_lines: args.tail_lines,
        };
        let mut m = self.snapshot(&proc, read);
        let running = m.get("status").and_then(Value::as_str) == Some(Status::Running.as_str());
        if running {
            m.insert("status".into(), Value::from("backgrounded"));
            let next_seq = m.get("next_seq").cloned().unwrap_or(Value::Null);
            m.insert(
                "message".into(),
                Value::from(format!(
                    "The command is still running in the background as {id}. Use read with \
                     process_id {id} and since_seq {next_seq} for new output, wait to block until it \
                     exits or prints something (until), write to send input, and stop to end it.",
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
        Some(Reply::ok(m))
    }

    fn check_policy(&self, args: &ExecArgs) -> Result<(), String> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err("the server is shutting down".into());
        }
        check_side_effects(&args.side_effects, &self.config.blocked)?;
        check_command_regex(&self.config, &args.command, "command")?;
        if let Some(shell) = &args.shell {
            if shell.trim().is_empty() {
                return Err(
                    "shell is empty: give a shell path such as /bin/bash, or omit it".into(),
                );
            }
            check_command_regex(&self.config, shell, "shell")?;
        }
        let limit = self.config.max_processes;
        if self.table.live_count() >= limit {
            return Err(format!(
                "Maximum process limit ({limit}) reached: stop or wait for a running process first (see ps)"
            ));
        }
        Ok(())
    }

    /// Builds the launch of an `exec` call: `<shell> -c <command>` in shell mode, the parsed
    /// and checked pipeline in trusted mode.
    fn exec_launch(&self, args: &ExecArgs, cwd: PathBuf) -> Result<Launch, String> {
        let wants_stdin = args.stdin.is_some() || !args.close_stdin;
        let stdin = if wants_stdin {
            StdinSource::Pipe
        } else {
            StdinSource::Null
        };
        let mut launch = Launch {
            stages: Vec::new(),
            env: Vec::new(),
            cwd,
            stdin,
            stdout_file: None,
            display: args.command.clone(),
            name: args.name.clone(),
            ring_bytes: self.config.max_buffer_bytes,
            output_cap: None,
            timeout_ms: args.timeout_ms.unwrap_or(self.config.default_timeout_ms),
            overlay: args.env.clone(),
            initial_stdin: args
                .stdin
                .clone()
                .map(|s| (s.into_bytes(), args.close_stdin)),
        };
        match &self.trusted {
            None => {
                let shell = args
                    .shell
                    .clone()
                    .unwrap_or_else(|| self.config.shell.clone());
                launch.stages.push(Stage {
                    program: shell.clone(),
                    arg0: shell,
                    args: vec!["-c".into(), args.command.clone()],
                });
                let mut env: Vec<(OsString, OsString)> = self
                    .config
                    .env
                    .iter()
                    .filter(|(k, _)| k != MARKER_VAR)
                    .cloned()
                    .collect();
                for (k, v) in &args.env {
                    let key = OsString::from(k);
                    env.retain(|(ek, _)| *ek != key);
                    env.push((key, OsString::from(v)));
                }
                launch.env = env;
            }
            Some(policy) => {
                if args.shell.is_some() {
                    return Err(
                        "shell cannot be chosen in trusted mode: commands run without a shell"
                            .into(),
                    );
                }
                let pipeline = tokenize::parse(&args.command)?;
                launch.stages = policy.check(&pipeline)?;
                launch.env = policy.env(&args.env)?;
                let (input, output) = policy.open_redirects(&launch.cwd, &pipeline)?;
                if let Some(f) = input {
                    if args.stdin.is_some() {
                        return Err("stdin and an input redirection (<) cannot be combined".into());
                    }
                    launch.stdin = StdinSource::File(f);
                }
                launch.stdout_file = output;
                launch.output_cap = Some(self.config.shell_output_limit as u64);
                launch.ring_bytes = launch.ring_bytes.max(self.config.shell_output_limit + 1);
            }
        }
        Ok(launch)
    }

    /// Starts every stage of `launch` as one record (each stage in its own session and
    /// group; the record signals all of them). The reaper cannot reap any stage before all
    /// are registered.
    pub fn launch(&self, launch: Launch) -> Result<Arc<Proc>, String> {
        let id = self.next_id();
        let marker = format!("{}{}", self.marker_prefix, id);
        let mut env = launch.env;
        env.retain(|(k, _)| k != MARKER_VAR);
        env.push((MARKER_VAR.into(), marker.clone().into()));
        let secrets = match &self.config.redact_regex {
            Some(re) if launch.overlay.iter().any(|(k, _)| re.is_match(k)) => Arc::new(
                self.secrets.with(
                    launch
                        .overlay
                        .iter()
                        .filter(|(k, _)| re.is_match(k))
                        .map(|(k, v)| (k.as_str(), v.as_str())),
                ),
            ),
            _ => self.secrets.clone(),
        };

        let mut leaders = self.reaper.leaders.lock();
        let started = spawn_stages(
            &launch.stages,
            &env,
            &launch.cwd,
            launch.stdin,
            launch.stdout_file,
        );
        let started = started?;
        let pid = started.pids[0];
        let info = Info {
            id: id.clone(),
            pid,
            stages: started.pids.clone(),
            output_cap: launch.output_cap,
            command: secrets.redact_str(&launch.display),
            name: launch.name,
            cwd: launch.cwd.display().to_string(),
            started_wall: SystemTime::now(),
            started: Instant::now(),
            marker,
        };
        if let Some(stdin) = &started.stdin {
            let _ = sys::set_nonblocking(std::os::fd::AsRawFd::as_raw_fd(stdin));
        }
        let proc = Arc::new(Proc::new(info, launch.ring_bytes, started.stdin));
        for &p in &started.pids {
            leaders.insert(p, proc.clone());
        }
        drop(leaders);
        for &pgid in &started.pids {
            crate::guardian::announce(pgid, true);
        }
        crate::info!(
            "{id} started pid {pid} in {}: {}",
            proc.info.cwd,
            proc.info.command
        );

        self.table.insert(proc.clone());
        if launch.timeout_ms > 0 {
            let at = proc.info.started + Duration::from_millis(launch.timeout_ms);
            self.reaper.send(Cmd::Timeout(
                proc.clone(),
                at,
                Duration::from_millis(self.config.timeout_grace_ms),
            ));
        }
        self.start_output(&proc, started.stdout, started.stderr, secrets)?;
        if let Some((data, close)) = launch.initial_stdin {
            let writer = proc.clone();
            let _ = std::thread::Builder::new()
                .name(format!("in-{}", &id[5..]).chars().take(15).collect())
                .stack_size(64 * 1024)
                .spawn(move || {
                    let far = Instant::now() + Duration::from_secs(3600 * 24 * 365);
                    if let Err(e) = writer.write_stdin(&data, close, far) {
                        writer.set_stdin_error(e);
                    }
                });
        }
        Ok(proc)
    }

    /// `shell_execute` (trusted mode): runs to completion, no yield. `None` when cancelled.
    pub fn shell_execute(&self, args: ShellExecArgs, ctx: &CallCtx<'_>) -> Option<Reply> {
        let started = Instant::now();
        let mut a = Map::new();
        a.insert("tool".into(), Value::from("shell_execute"));
        a.insert("mode".into(), Value::from(self.mode_name()));
        a.insert(
            "argv".into(),
            Value::from(audit::redact_argv(&args.command, &self.secrets)),
        );
        let timeout_s = args
            .timeout
            .unwrap_or(self.config.shell_default_timeout_s)
            .clamp(1, self.config.shell_max_timeout_s.max(1));
        a.insert("timeout".into(), Value::from(timeout_s));
        a.insert(
            "output_limit".into(),
            Value::from(self.config.shell_output_limit),
        );
        let reply = self.shell_execute_inner(&args, timeout_s, ctx, started, &mut a);
        a.insert(
            "duration_ms".into(),
            Value::from(started.elapsed().as_millis() as u64),
        );
        if reply.is_none() {
            a.insert("result_type".into(), Value::from("cancelled"));
        }
        self.audit.record(a);
        reply
    }

    fn shell_execute_inner(
        &self,
        args: &ShellExecArgs,
        timeout_s: u64,
        ctx: &CallCtx<'_>,
        started: Instant,
        a: &mut Map<String, Value>,
    ) -> Option<Reply> {
        let reject = |a: &mut Map<String, Value>, reason: String| {
            a.insert("result_type".into(), Value::from("rejected"));
            a.insert("rejection_reason".into(), Value::from(reason.clone()));
            Some(shell_error(&reason, "", "", 1, started, None))
        };
        let Some(policy) = &self.trusted else {
            return reject(a, "shell_execute is only available in trusted mode".into());
        };
        if self.shutting_down.load(Ordering::SeqCst) {
            return reject(a, "the server is shutting down".into());
        }
        if args.command.is_empty() {
            return reject(a, "Empty command".into());
        }
        let pipeline = match tokenize::from_argv(&args.command) {
            Ok(p) => p,
            Err(e) => return reject(a, e),
        };
        let stages = match policy.check(&pipeline) {
            Ok(s) => s,
            Err(e) => return reject(a, e),
        };
        let cwd = match config::resolve_cwd(&self.config, args.directory.as_deref()) {
            Ok(c) => c,
            // The parameter is called `directory` here.
            Err(e) => return reject(a, e.replacen("cwd", "directory", 1)),
        };
        a.insert("directory".into(), Value::from(cwd.display().to_string()));
        a.insert(
            "redirections".into(),
            serde_json::json!({
                "stdin": pipeline.stdin_path.is_some(),
                "stdout": pipeline.stdout.as_ref().is_some_and(|r| !r.append),
                "stdout_append": pipeline.stdout.as_ref().is_some_and(|r| r.append),
            }),
        );
        let limit = self.config.max_processes;
        if self.table.live_count() >= limit {
            return reject(a, format!("Maximum process limit ({limit}) reached"));
        }
        let env = match policy.env(&[]) {
            Ok(e) => e,
            Err(e) => return reject(a, e),
        };
        let (input, output) = match policy.open_redirects(&cwd, &pipeline) {
            Ok(f) => f,
            Err(e) => return reject(a, e),
        };
        let stdin = match (input, &args.stdin) {
            (Some(_), Some(_)) => {
                return reject(
                    a,
                    "stdin and an input redirection (<) cannot be combined".into(),
                )
            }
            (Some(f), None) => StdinSource::File(f),
            (None, Some(_)) => StdinSource::Pipe,
            (None, None) => StdinSource::Null,
        };
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = Launch {
            stages,
            env,
            cwd,
            stdin,
            stdout_file: output,
            display: args.command.join(" "),
            name: Some("shell_execute".into()),
            ring_bytes: self.config.shell_output_limit + 1,
            output_cap: Some(self.config.shell_output_limit as u64),
            timeout_ms: 0,
            overlay: Vec::new(),
            initial_stdin: args.stdin.clone().map(|s| (s.into_bytes(), true)),
        };
        let proc = match self.launch(launch) {
            Ok(p) => p,
            Err(e) => {
                a.insert("result_type".into(), Value::from("process_error"));
                a.insert("error".into(), Value::from(e.clone()));
                return Some(shell_error(&e, "", "", 1, started, None));
            }
        };
        a.insert("process_id".into(), Value::from(proc.info.id.clone()));
        ctx.cancel.attach(&proc);
        let deadline = started + Duration::from_secs(timeout_s);
        let outcome = wait_loop(&proc, deadline, ctx, WaitMode::Wait, None);
        if outcome == Outcome::Cancelled {
            self.stop_quietly(&proc, CANCEL_GRACE);
            return None;
        }
        if outcome != Outcome::Finished {
            proc.set_reason(EndReason::TimedOut);
            proc.signal(libc::SIGKILL);
            let never = Cancel::default();
            let quiet = CallCtx {
                cancel: &never,
                progress: None,
            };
            wait_loop(
                &proc,
                Instant::now() + Duration::from_secs(5),
                &quiet,
                WaitMode::Wait,
                None,
            );
        }
        let st = proc.lock();
        let all = ReadReq {
            since: None,
            tail_lines: None,
            streams: Streams::Both,
            max_bytes: usize::MAX,
        };
        let out = st.output.read(&all);
        let reason = st.reason;
        let (exit_code, _) = st.exit();
        let signal_num = match st.leader {
            Some((sys::WaitStatus::Signaled(n), _)) => Some(n),
            _ => None,
        };
        let stage_status: Vec<Value> = st
            .stage_exits
            .iter()
            .map(|e| match e {
                Some(sys::WaitStatus::Exited(c)) => Value::from(*c),
                Some(sys::WaitStatus::Signaled(n)) => Value::from(-n),
                None => Value::Null,
            })
            .collect();
        let over = [STDOUT, STDERR]
            .map(|i| st.output.bytes_total(i) > self.config.shell_output_limit as u64);
        drop(st);
        let limit = self.config.shell_output_limit;
        let mut stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        truncate_utf8(&mut stdout, limit);
        truncate_utf8(&mut stderr, limit);
        a.insert("stdout_bytes".into(), Value::from(out.stdout.len()));
        a.insert("stderr_bytes".into(), Value::from(out.stderr.len()));
        a.insert(
            "exit_code".into(),
            exit_code.map_or(Value::Null, Value::from),
        );
        let stages = (stage_status.len() > 1).then_some(stage_status);
        let (result_type, failure) = match (reason, exit_code, signal_num) {
            (EndReason::TimedOut, _, _) => (
                "timeout",
                Some(format!("Command timed out after {timeout_s} seconds")),
            ),
            (EndReason::OutputCap, _, _) => {
                let which = if over[STDOUT] || !over[STDERR] {
                    "stdout"
                } else {
                    "stderr"
                };
                (
                    "output_cap",
                    Some(format!("{which} exceeded output limit of {limit} bytes")),
                )
            }
            (_, Some(0), _) => ("success", None),
            (_, Some(code), _) => (
                "process_error",
                Some(format!("Command failed with exit status {code}")),
            ),
            (_, None, Some(n)) => (
                "process_error",
                Some(format!("Command terminated by signal {n}")),
            ),
            (_, None, None) => (
                "process_error",
                Some("Command ended without an exit status".to_string()),
            ),
        };
        a.insert("result_type".into(), Value::from(result_type));
        let status = exit_code.unwrap_or_else(|| signal_num.map_or(1, |n| 128 + n));
        Some(match failure {
            Some(reason) => {
                a.insert("error".into(), Value::from(reason.clone()));
                shell_error(&reason, &stdout, &stderr, status, started, stages)
            }
            None => {
                let mut m = Map::new();
                m.insert("stdout".into(), Value::from(stdout.clone()));
                m.insert("stderr".into(), Value::from(stderr.clone()));
                m.insert("status".into(), Value::from(status));
                m.insert(
                    "execution_time".into(),
                    Value::from(started.elapsed().as_secs_f64()),
                );
                if let Some(s) = stages {
                    m.insert("stage_status".into(), Value::Array(s));
                }
                let mut texts: Vec<String> = [stdout, stderr]
                    .into_iter()
                    .filter(|t| !t.is_empty())
                    .collect();
                if texts.is_empty() {
                    // Some clients refuse an empty content list.
                    texts.push(String::new());
                }
                Reply {
                    value: m,
                    is_error: false,
                    texts: Some(texts),
                }
            }
        })
    }

    /// Starts reading a record's output: the shared ingest thread on Linux, a pump thread
    /// per record elsewhere.
    fn start_output(
        &self,
        proc: &Arc<Proc>,
        stdout: Option<std::fs::File>,
        stderr: Option<std::fs::File>,
        secrets: Arc<Secrets>,
    ) -> Result<(), String> {
        #[cfg(target_os = "linux")]
        {
            self.ingest.register(proc, stdout, stderr, &secrets);
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let pump_proc = proc.clone();
            let spawned = std::thread::Builder::new()
                .name(
                    format!("out-{}", &proc.info.id[5..])
                        .chars()
                        .take(15)
                        .collect(),
                )
                .stack_size(process::PUMP_STACK)
                .spawn(move || process::pump(pump_proc, stdout, stderr, secrets));
            spawned.map(|_| ()).map_err(|e| {
                crate::error!("cannot start the output thread of {}: {e}", proc.info.id);
                proc.set_reason(EndReason::Failed);
                proc.signal(libc::SIGKILL);
                format!("cannot start an output thread: {e}")
            })
        }
    }

    /// Sends SIGTERM, then SIGKILL after `grace`, without waiting.
    fn stop_quietly(&self, proc: &Arc<Proc>, grace: Duration) {
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
        let out = st.output.read(&req);
        let status = st.status();
        let (exit_code, signal) = st.exit();
        let stdin_error = st.stdin_error.clone();
        drop(st);
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(proc.info.id.clone()));
        m.insert("status".into(), Value::from(status.as_str()));
        m.insert(
            "exit_code".into(),
            exit_code.map_or(Value::Null, Value::from),
        );
        m.insert("signal".into(), signal.map_or(Value::Null, Value::from));
        put_output(&mut m, out, args.streams);
        m.insert(
            "stdin_error".into(),
            stdin_error.map_or(Value::Null, Value::from),
        );
        m
    }

    /// `write`.
    pub fn write(&self, id: &str, input: &str, newline: bool, close: bool) -> Reply {
        let Some(proc) = self.table.get(id) else {
            return Self::unknown(id);
        };
        let mut m = Map::new();
        m.insert("process_id".into(), Value::from(id));
        let result = if proc.is_finished() {
            Err(format!(
                "process {id} is not running ({})",
                proc.lock().status().as_str()
            ))
        } else {
            let mut data = input.as_bytes().to_vec();
            if newline {
                data.push(b'\n');
            }
            let deadline = Instant::now() + Duration::from_millis(TRANSPORT_CEILING_MS);
            proc.write_stdin(&data, close, deadline)
        };
        match result {
            Ok(()) => {
                m.insert("ok".into(), Value::Bool(true));
                Reply::ok(m)
            }
            Err(e) => {
                m.insert("ok".into(), Value::Bool(false));
                m.insert("error".into(), Value::from(e));
                Reply::err(m)
            }
        }
    }

    /// `wait`. `None` when cancelled.
    pub fn wait(
        &self,
        id: &str,
        timeout_ms: Option<u64>,
        until: Option<&Regex>,
        args: ReadArgs,
        ctx: &CallCtx<'_>,
    ) -> Option<Reply> {
        let Some(proc) = self.table.get(id) else {
            return Some(Self::unknown(id));
        };
        ctx.cancel.attach(&proc);
        let started = Instant::now();
        let timeout = timeout_ms
            .unwrap_or(TRANSPORT_CEILING_MS)
            .min(TRANSPORT_CEILING_MS);
        let deadline = started + Duration::from_millis(timeout);
        let watch = until.map(|re| UntilWatch::new(re, &proc, args));
        let outcome = wait_loop(&proc, deadline, ctx, WaitMode::Wait, watch);
        let result = match outcome {
            Outcome::Cancelled => return None,
            Outcome::Finished => "exited",
            Outcome::Matched => "matched",
            Outcome::Deadline | Outcome::LeaderGone => "deadline_reached",
        };
        let mut m = self.snapshot(&proc, args);
        m.insert("wait_result".into(), Value::from(result));
        m.insert(
            "waited_ms".into(),
            Value::from(started.elapsed().as_millis() as u64),
        );
        Some(Reply::ok(m))
    }

    /// `stop`.
    pub fn stop(
        &self,
        id: &str,
        signal: Option<&str>,
        force_after_ms: Option<u64>,
        ctx: &CallCtx<'_>,
    ) -> Reply {
        let Some(proc) = self.table.get(id) else {
            return Self::unknown(id);
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
                    return Reply::err(m);
                }
            },
        };
        m.insert("signal".into(), Value::from(name));
        let grace = force_after_ms
            .unwrap_or(STOP_GRACE_MS)
            .min(STOP_GRACE_MAX_MS);
        let stopped = if proc.is_finished() {
            false
        } else {
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
            let never = Cancel::default();
            let quiet = CallCtx {
                cancel: &never,
                progress: ctx.progress,
            };
            wait_loop(&proc, deadline, &quiet, WaitMode::Wait, None) == Outcome::Finished
        };
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

/// `shell_execute` arguments.
#[derive(Debug, Default)]
pub struct ShellExecArgs {
    /// argv, with `|`, `<`, `>`, `>>` elements as operators.
    pub command: Vec<String>,
    /// Input for the first stage.
    pub stdin: Option<String>,
    /// Working directory.
    pub directory: Option<String>,
    /// Timeout in seconds.
    pub timeout: Option<u64>,
}

fn truncate_utf8(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// A failed `shell_execute`: the reason first, then the output captured so far.
fn shell_error(
    reason: &str,
    stdout: &str,
    stderr: &str,
    status: i32,
    started: Instant,
    stages: Option<Vec<Value>>,
) -> Reply {
    let mut m = Map::new();
    m.insert("error".into(), Value::from(reason));
    m.insert("stdout".into(), Value::from(stdout));
    m.insert("stderr".into(), Value::from(stderr));
    m.insert("status".into(), Value::from(status));
    m.insert(
        "execution_time".into(),
        Value::from(started.elapsed().as_secs_f64()),
    );
    if let Some(s) = stages {
        m.insert("stage_status".into(), Value::Array(s));
    }
    let mut texts = vec![format!("Error executing command: {reason}")];
    if !stdout.is_empty() {
        texts.push(format!("stdout (captured before the error):\n{stdout}"));
    }
    if !stderr.is_empty() {
        texts.push(format!("stderr (captured before the error):\n{stderr}"));
    }
    Reply {
        value: m,
        is_error: true,
        texts: Some(texts),
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
fn put_byte_counts(m: &mut Map<String, Value>, output: &crate::ring::Output) {
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

/// What a safer next step looks like for each blocked category.
fn safer_step(category: &str) -> &'static str {
    match category {
        "RUNS_INLINE_CODE" => "write the code to a reviewable file in the workspace and run that file in a small, separate step",
        "KILLS_AGENT_PROCESS" => "stop only processes this server started, with the stop tool and their process_id",
        "MODIFIES_OS_SETTINGS" => "describe the system change to the user and let them apply it",
        "MODIFIES_OS_USER_SETTINGS" => "propose the change to the dotfile or user setting and let the user apply it",
        "MODIFIES_PROTECTED_FILES" => "work on a copy inside the workspace, or ask the user to change the protected file",
        "DELETES_FILES" => "move files to a scratch directory in the workspace instead of deleting them, or ask the user",
        "MAKES_NETWORK_REQUESTS" => "use files already present, or ask the user to fetch what is needed",
        "CHANGES_PACKAGES_OR_DEPENDENCIES" => "list the packages needed and let the user install them",
        "RUNS_PRIVILEGED_COMMANDS" => "run the unprivileged part only, and ask the user for the privileged step",
        "USES_DESTRUCTIVE_GIT_OPERATION" => "use a non-destructive git command (a new branch, git stash, git revert)",
        _ => "choose a command without this side effect, or ask the user to run it",
    }
}

/// Checks the declared side effects against the enum rules and the blocklist.
pub fn check_side_effects(declared: &[String], blocked: &[usize]) -> Result<(), String> {
    if declared.is_empty() {
        return Err("side_effects is empty: declare at least one category, or [\"NONE\"] for a command without side effects".into());
    }
    if declared.iter().any(|d| d == "NONE") && declared.len() > 1 {
        return Err(
            "side_effects: NONE must be the only category; drop NONE or drop the others".into(),
        );
    }
    let hits: Vec<&str> = blocked
        .iter()
        .map(|&i| SIDE_EFFECTS[i])
        .filter(|b| declared.iter().any(|d| d == b))
        .collect();
    if hits.is_empty() {
        return Ok(());
    }
    let mut msg = format!(
        "Blocked by policy: the declared side effect{} {} {} not allowed on this server, so execution was stopped before any process started.",
        if hits.len() > 1 { "s" } else { "" },
        hits.join(", "),
        if hits.len() > 1 { "are" } else { "is" },
    );
    for h in &hits {
        msg.push_str(&format!(" Safer next step for {h}: {}.", safer_step(h)));
    }
    Err(msg)
}

fn check_command_regex(config: &Config, text: &str, what: &str) -> Result<(), String> {
    if let Some(re) = &config.deny_regex {
        if re.is_match(text) {
            return Err(format!(
                "Command denied by policy: the {what} matches YIELDSHELL_DENY_COMMAND_REGEX"
            ));
        }
    }
    if let Some(re) = &config.allow_regex {
        if !re.is_match(text) {
            return Err(format!("Command not allowed by policy: the {what} does not match YIELDSHELL_ALLOW_COMMAND_REGEX"));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitMode {
    /// `exec`: also return 250 ms after the leader exits.
    Exec,
    /// `wait`/`stop`: only on finish, match, deadline or cancel.
    Wait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Finished,
    LeaderGone,
    Deadline,
    Cancelled,
    Matched,
}

/// Incremental matching of `until` over new output, line by line per stream.
struct UntilWatch<'a> {
    re: &'a Regex,
    /// Stream offset where scanning resumes (the start of an unfinished line).
    from: [u64; 2],
    streams: Streams,
    scratch: Vec<u8>,
}

impl<'a> UntilWatch<'a> {
    fn new(re: &'a Regex, proc: &Proc, args: ReadArgs) -> UntilWatch<'a> {
        let st = proc.lock();
        let seq = args.since_seq.unwrap_or(1);
        let from = [
            st.output.stream_off_at(STDOUT, seq),
            st.output.stream_off_at(STDERR, seq),
        ];
        UntilWatch {
            re,
            from,
            streams: args.streams,
            scratch: Vec::new(),
        }
    }

    fn check(&mut self, st: &process::State) -> bool {
        for stream in [STDOUT, STDERR] {
            let wanted = match self.streams {
                Streams::Both => true,
                Streams::Stdout => stream == STDOUT,
                Streams::Stderr => stream == STDERR,
            };
            if !wanted {
                continue;
            }
            self.scratch.clear();
            let (start, end) =
                st.output
                    .stream_bytes_from(stream, self.from[stream], &mut self.scratch);
            if start == end {
                continue;
            }
            if self.re.is_match(&String::from_utf8_lossy(&self.scratch)) {
                return true;
            }
            // Resume at the start of the last unfinished line; a very long line without a
            // newline is not rescanned forever.
            self.from[stream] = match memchr::memrchr(b'\n', &self.scratch) {
                Some(i) => start + i as u64 + 1,
                None if self.scratch.len() > 64 * 1024 => end,
                None => start,
            };
        }
        false
    }
}

fn wait_loop(
    proc: &Arc<Proc>,
    deadline: Instant,
    ctx: &CallCtx<'_>,
    mode: WaitMode,
    mut until: Option<UntilWatch<'_>>,
) -> Outcome {
    let started = Instant::now();
    let mut next_progress = started + Duration::from_secs(1);
    let mut st = proc.lock();
    loop {
        if ctx.cancel.is_cancelled() {
            return Outcome::Cancelled;
        }
        if st.ended.is_some() {
            return Outcome::Finished;
        }
        if let Some(w) = until.as_mut() {
            if w.check(&st) {
                return Outcome::Matched;
            }
        }
        let now = Instant::now();
        let mut wake = deadline;
        if mode == WaitMode::Exec {
            if let Some((_, exited_at)) = st.leader {
                let at = exited_at + process::LEADER_EXIT_GRACE;
                if now >= at {
                    return Outcome::LeaderGone;
                }
                wake = wake.min(at);
            }
        }
        if now >= deadline {
            return Outcome::Deadline;
        }
        if let Some(progress) = ctx.progress {
            if now >= next_progress {
                let bytes = st.output.bytes_total(STDOUT) + st.output.bytes_total(STDERR);
                let elapsed = now.saturating_duration_since(started).as_millis() as u64;
                // Never call out while holding the record's lock.
                parking_lot::MutexGuard::unlocked(&mut st, || progress(elapsed, bytes));
                next_progress = now + Duration::from_secs(1);
                continue;
            }
            wake = wake.min(next_progress);
        }
        proc.wait_until(&mut st, wake);
    }
}

/// Formats a wall-clock time as RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// The marker prefix of this server: `<pid>.<random>/`.
pub fn new_marker_prefix() -> String {
    format!("{}.{:08x}/", std::process::id(), random_u64() as u32)
}

/// 64 random bits from the standard library's hash seed (no extra dependency, no unsafe).
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        let check = |secs: u64, expected: &str| {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), expected);
        };
        check(0, "1970-01-01T00:00:00.000Z");
        check(951_782_400, "2000-02-29T00:00:00.000Z");
        check(1_796_083_199, "2026-11-30T23:59:59.000Z");
    }

    #[test]
    fn side_effect_rules() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_side_effects(&s(&["NONE"]), &[16]).is_ok());
        assert!(check_side_effects(&s(&[]), &[])
            .unwrap_err()
            .contains("empty"));
        assert!(check_side_effects(&s(&["NONE", "OTHER"]), &[])
            .unwrap_err()
            .contains("NONE"));
        let e =
            check_side_effects(&s(&["RUNS_INLINE_CODE", "DELETES_FILES"]), &[16, 3]).unwrap_err();
        assert!(
            e.contains("DELETES_FILES, RUNS_INLINE_CODE") || e.contains("RUNS_INLINE_CODE"),
            "{e}"
        );
        assert!(e.contains("before any process started"), "{e}");
        assert!(e.contains("Safer next step for RUNS_INLINE_CODE"), "{e}");
    }
}
