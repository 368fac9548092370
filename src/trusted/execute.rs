//! `shell_execute` (trusted mode): runs an argv pipeline to completion, no yield, and
//! answers with its output as text blocks.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::audit;
use crate::config;
use crate::engine::{Call, Engine, Reply, CANCEL_GRACE};
use crate::process::EndReason;
use crate::process::Proc;
use crate::ring::{ReadReq, Streams, STDERR, STDOUT};
use crate::spawn::{Launch, StdinSource};
use crate::sys;
use crate::trusted::tokenize;
use crate::wait::{Outcome, WaitMode, Watch};

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

impl Engine {
    /// `shell_execute` (trusted mode): runs to completion, no yield; answers through `call`
    /// (nothing when the call was cancelled).
    pub fn shell_execute(self: &Arc<Self>, args: ShellExecArgs, call: Call) {
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
        let engine = self.clone();
        let Call {
            cancel, respond, ..
        } = call;
        let finish = move |reply: Option<Reply>, mut a: Map<String, Value>| {
            a.insert(
                "duration_ms".into(),
                Value::from(started.elapsed().as_millis() as u64),
            );
            if reply.is_none() {
                a.insert("result_type".into(), Value::from("cancelled"));
            }
            engine.audit.record(a);
            respond.send(reply);
        };
        let proc = match self.shell_start(&args, started, &mut a) {
            Ok(p) => p,
            Err(reply) => return finish(Some(reply), a),
        };
        cancel.attach(&proc);
        let deadline = started + Duration::from_secs(timeout_s);
        let watch = Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).cancel(&cancel);
        let engine = self.clone();
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                if outcome == Outcome::Cancelled {
                    engine.stop_quietly(&proc, CANCEL_GRACE);
                    return finish(None, a);
                }
                if outcome == Outcome::Finished {
                    let reply = engine.shell_result(&proc, timeout_s, started, &mut a);
                    return finish(Some(reply), a);
                }
                // Over time: kill, and give the pipes a moment to drain.
                proc.set_reason(EndReason::TimedOut);
                proc.signal(libc::SIGKILL);
                let drain = Instant::now() + Duration::from_secs(5);
                let watch = Watch::new(vec![proc.clone()], WaitMode::Wait, drain);
                let waits = engine.waits.clone();
                waits.park(
                    watch,
                    Box::new(move |_, _| {
                        let reply = engine.shell_result(&proc, timeout_s, started, &mut a);
                        finish(Some(reply), a);
                    }),
                );
            }),
        );
    }

    /// Checks and starts a `shell_execute` call; the refusal as an answer otherwise.
    fn shell_start(
        &self,
        args: &ShellExecArgs,
        started: Instant,
        a: &mut Map<String, Value>,
    ) -> Result<Arc<Proc>, Reply> {
        let reject = |a: &mut Map<String, Value>, reason: String| {
            a.insert("result_type".into(), Value::from("rejected"));
            a.insert("rejection_reason".into(), Value::from(reason.clone()));
            Err(shell_error(&reason, "", "", 1, started, None))
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
        let Some(slot) = self.table.reserve(limit) else {
            return reject(a, format!("Maximum process limit ({limit}) reached"));
        };
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
            terminal: None,
            // The first bytes up to the cap are what a capped call returns (SPEC 13).
            head_bytes: Some(self.config.shell_output_limit),
        };
        let proc = match self.launch(launch, slot) {
            Ok(p) => p,
            Err(e) => {
                a.insert("result_type".into(), Value::from("process_error"));
                a.insert("error".into(), Value::from(e.clone()));
                return Err(shell_error(&e, "", "", 1, started, None));
            }
        };
        a.insert("process_id".into(), Value::from(proc.info.id.clone()));
        Ok(proc)
    }

    /// The answer of a finished (or killed) `shell_execute`.
    fn shell_result(
        &self,
        proc: &Proc,
        timeout_s: u64,
        started: Instant,
        a: &mut Map<String, Value>,
    ) -> Reply {
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
        match failure {
            Some(reason) if result_type == "output_cap" => {
                a.insert("error".into(), Value::from(reason.clone()));
                let reply = shell_error(&reason, &stdout, &stderr, status, started, stages);
                crate::agents::mark_capped(reply, limit)
            }
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
        }
    }
}
