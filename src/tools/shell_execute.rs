//! `shell_execute` (trusted mode): runs an argv pipeline to completion, no yield, and
//! answers with its output as text blocks.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::ring::{ReadReq, Streams, STDERR, STDOUT};
use crate::base::sys;
use crate::base::sys::libc;
use crate::policy::approval::Rule;
use crate::policy::audit::{self, Record, Redirections};
use crate::policy::trusted::{tokenize, Redirects};
use crate::process::record::EndReason;
use crate::process::record::Proc;
use crate::process::spawn::{Launch, StdinSource};
use crate::tools::call::{Approvable, Approved, Call, RunsWith};
use crate::tools::engine::{Engine, CANCEL_GRACE};
use crate::tools::policy::{check_command_regex, resolve_dir};
use crate::tools::results::{KilledFor, Output, ShellResult};
use crate::tools::wait::{Outcome, WaitMode, Watch};

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
    /// Most bytes of output in the answer, both streams together.
    pub max_output_bytes: Option<u64>,
}

/// A failed `shell_execute`: the reason, and the output captured so far.
fn shell_error(
    reason: String,
    stdout: String,
    stderr: String,
    status: i32,
    started: Instant,
) -> ShellResult {
    ShellResult {
        stdout,
        stderr,
        status,
        execution_time: started.elapsed().as_secs_f64(),
        stage_status: None,
        error: Some(reason),
        capped: false,
        killed_for: None,
        process_id: None,
        omitted: Box::new([None; 2]),
        stderr_in_error: false,
        protected: None,
    }
}

/// A refusal of `shell_execute`, with what to ask a person when they may approve it.
type ShellRefusal = (Box<ShellResult>, Option<Box<Approvable>>);

/// An argv as a JSON array of strings, the form a person is shown and an approval is
/// remembered by.
fn argv_text(argv: &[String]) -> String {
    let mut out = Vec::new();
    out.push(b'[');
    for (i, a) in argv.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        crate::base::json::write_str(&mut out, a);
    }
    out.push(b']');
    String::from_utf8(out).unwrap_or_default()
}

/// A refusal before anything started.
fn refusal(reason: String, started: Instant) -> ShellResult {
    shell_error(reason, String::new(), String::new(), 1, started)
}

impl Engine {
    /// `shell_execute` (trusted mode): runs to completion, no yield; answers through `call`
    /// (nothing when the call was cancelled).
    pub fn shell_execute(self: &Arc<Self>, args: ShellExecArgs, call: Call) {
        let started = Instant::now();
        let timeout_s = args
            .timeout
            .unwrap_or(self.config.shell_default_timeout_s)
            .clamp(1, self.config.shell_max_timeout_s.max(1));
        let mut a = Record {
            tool: crate::base::config::Tool::ShellExecute.name(),
            mode: self.mode_name(),
            argv: Some(audit::redact_argv(&args.command, &self.secrets.current())),
            timeout: Some(timeout_s),
            output_limit: Some(self.config.shell_output_limit as u64),
            ..Record::default()
        };
        let engine = self.clone();
        let Call {
            cancel,
            respond,
            approved,
            ..
        } = call;
        a.approval = approved.as_ref().map(Approved::audit_name);
        let finish = move |result: Option<ShellResult>, mut a: Record, ask: Option<Approvable>| {
            a.duration_ms = started.elapsed().as_millis() as u64;
            if result.is_none() {
                a.result_type = "cancelled";
            }
            engine.audit.record(&a);
            let answer = result.map(|r| Ok(Output::Shell(r)));
            match (answer, ask) {
                (Some(refusal), Some(what)) => respond.ask(refusal, what),
                (answer, _) => respond.send(answer),
            }
        };
        let proc = match self.shell_start(&args, approved.as_ref(), started, &mut a) {
            Ok(p) => p,
            Err((refused, ask)) => return finish(Some(*refused), a, ask.map(|b| *b)),
        };
        cancel.attach(&proc);
        let deadline = started + Duration::from_secs(timeout_s);
        let budget = self.budget(args.max_output_bytes);
        let watch = Watch::new(vec![proc.clone()], WaitMode::Wait, deadline).cancel(&cancel);
        let engine = self.clone();
        self.waits.park(
            watch,
            Box::new(move |outcome, _| {
                if outcome == Outcome::Cancelled {
                    engine.stop_quietly(&proc, CANCEL_GRACE);
                    return finish(None, a, None);
                }
                if outcome == Outcome::Finished {
                    let result = engine.shell_result(&proc, (timeout_s, budget), started, &mut a);
                    return finish(Some(result), a, None);
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
                        let result =
                            engine.shell_result(&proc, (timeout_s, budget), started, &mut a);
                        finish(Some(result), a, None);
                    }),
                );
            }),
        );
    }

    /// Checks and starts a `shell_execute` call; the refusal as an answer otherwise, with
    /// what to ask a person when they may approve it (an argument rule, answered once
    /// every other check passed and before a redirection opens a file).
    fn shell_start(
        &self,
        args: &ShellExecArgs,
        approved: Option<&Approved>,
        started: Instant,
        a: &mut Record,
    ) -> Result<Arc<Proc>, ShellRefusal> {
        let reject = |a: &mut Record, reason: String| {
            a.result_type = "rejected";
            a.rejection_reason = Some(reason.clone());
            Err((Box::new(refusal(reason, started)), None))
        };
        let Some(policy) = &self.trusted else {
            return reject(a, "shell_execute is only available in trusted mode".into());
        };
        if self.shutting_down.load(Ordering::SeqCst) {
            return reject(a, "the server is shutting down".into());
        }
        if args.command.is_empty() {
            return reject(a, "No command provided: give a program and its arguments, for example [\"ls\", \"-l\"]".into());
        }
        // The command regexes are final, never approvable: they run before any rule a
        // person may waive. They read the argv joined with spaces, as `exec`'s command
        // would read the same call.
        if let Err(e) = check_command_regex(&self.config, &args.command.join(" "), "command") {
            return reject(a, e);
        }
        let mut pipeline = match tokenize::from_argv(&args.command) {
            Ok(p) => p,
            Err(e) => return reject(a, e),
        };
        let cwd = match resolve_dir(&self.config, args.directory.as_deref(), "directory") {
            Ok(c) => c,
            Err(e) => return reject(a, e),
        };
        if let Some(Err(e)) = approved.map(|ok| ok.check_dir(&cwd)) {
            return reject(a, e);
        }
        a.directory = Some(cwd.display().to_string());
        let redirections = |pipeline: &tokenize::Pipeline| Redirections {
            stdin: pipeline.stdin_path.is_some(),
            stdout: pipeline.stdout.as_ref().is_some_and(|r| !r.append),
            stdout_append: pipeline.stdout.as_ref().is_some_and(|r| r.append),
        };
        a.redirections = Some(redirections(&pipeline));
        if pipeline.stdin_path.is_some() && args.stdin.is_some() {
            return reject(
                a,
                "stdin and an input redirection (<) cannot be combined".into(),
            );
        }
        if let Some(r) = &pipeline.stdout {
            if let Err(why) = self.sandbox.refuse_protected_redirect(&cwd, &r.path) {
                return reject(a, why);
            }
        }
        let limit = self.config.max_processes;
        let Some(slot) = self.table.reserve(limit, pipeline.stages.len()) else {
            return reject(
                a,
                crate::tools::engine::limit_message(limit, pipeline.stages.len()),
            );
        };
        let prepared = match policy.prepare(
            &mut pipeline,
            &cwd,
            &[],
            Redirects::Open,
            approved.is_some(),
        ) {
            Ok(p) => p,
            Err(e) => {
                let Some(rule) = Rule::of_trusted(&e) else {
                    return reject(a, e.into());
                };
                let why = rule.message();
                let with = RunsWith {
                    stdin: args.stdin.as_deref(),
                    ..RunsWith::default()
                };
                let command = argv_text(&args.command);
                let what = Approvable::new(vec![rule], command, cwd, with, &self.secrets);
                a.result_type = "rejected";
                a.rejection_reason = Some(why.clone());
                return Err((Box::new(refusal(why, started)), Some(Box::new(what))));
            }
        };
        // As run: tar's compressor may have become a stage writing the archive.
        a.redirections = Some(redirections(&pipeline));
        let stdin = match (prepared.stdin, &args.stdin) {
            (Some(f), _) => StdinSource::File(f),
            (None, Some(_)) => StdinSource::Pipe,
            (None, None) => StdinSource::Null,
        };
        self.table.retain(
            Duration::from_millis(self.config.retention_ms),
            self.config.max_retained,
        );
        let launch = Launch {
            stages: prepared.stages,
            env: prepared.env,
            cwd,
            stdin,
            stdout_file: prepared.stdout,
            display: args.command.join(" "),
            name: Some("shell_execute".into()),
            ring_bytes: self.config.shell_output_limit + 1,
            output_cap: Some(self.config.shell_output_limit as u64),
            timeout_ms: 0,
            overlay: Vec::new(),
            initial_stdin: args.stdin.clone().map(|s| (s.into_bytes(), true)),
            terminal: None,
            // The first bytes up to the cap are what a capped call returns.
            head_bytes: Some(self.config.shell_output_limit),
            git_ticket: Some(prepared.git_ticket),
        };
        let proc = match self.launch(launch, slot) {
            Ok(p) => p,
            Err(e) => {
                a.result_type = "process_error";
                a.error = Some(e.clone());
                return Err((Box::new(refusal(e, started)), None));
            }
        };
        a.process_id = Some(proc.info.id.clone());
        Ok(proc)
    }

    /// The answer of a finished (or killed) `shell_execute`: each stream within its share
    /// of `budget` (head, marker, tail), the whole capture left readable with `read`.
    fn shell_result(
        &self,
        proc: &Proc,
        (timeout_s, budget): (u64, usize),
        started: Instant,
        a: &mut Record,
    ) -> ShellResult {
        // The marker names the record when `read` can page what it leaves out.
        let readable = self.config.tools.contains(&crate::base::config::Tool::Read);
        let reader = if readable { proc.info.id.as_str() } else { "" };
        let mut st = proc.lock();
        let all = ReadReq {
            since: None,
            tail_lines: None,
            streams: Streams::Both,
            max_bytes: budget,
        };
        let out = st.output.read_ends(&all, Some(reader));
        // A read without since_seq goes on after what this answer showed.
        st.cursors = [out.next_seq; 3];
        let reason = st.reason;
        let (exit_code, _) = st.exit();
        let signal_num = match st.leader {
            Some((sys::WaitStatus::Signaled(n), _)) => Some(n),
            _ => None,
        };
        let stage_status: Vec<Option<i32>> = st
            .stage_exits
            .iter()
            .map(|e| match e {
                Some(sys::WaitStatus::Exited(c)) => Some(*c),
                Some(sys::WaitStatus::Signaled(n)) => Some(-n),
                None => None,
            })
            .collect();
        let killed_for = KilledFor::from_state(st.killed_for_output(proc.info.output_cap));
        let failed_stage = crate::tools::engine::stage_failure(&proc.info, &st);
        a.stdout_bytes = Some(st.output.bytes_total(STDOUT));
        a.stderr_bytes = Some(st.output.bytes_total(STDERR));
        drop(st);
        let limit = self.config.shell_output_limit;
        let protected = proc.info.agent.protected_line(&[&out.stdout, &out.stderr]);
        a.protected.clone_from(&protected);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        a.exit_code = Some(exit_code);
        let stages = (stage_status.len() > 1).then_some(stage_status);
        // Set when the reason is what the stages wrote to stderr (shown once, in the reason);
        // the audit line then gets the stage's sentence instead, without the output.
        let mut stderr_in_error = false;
        let mut audited = None;
        let (result_type, failure) = match (reason, exit_code, signal_num) {
            (EndReason::TimedOut, _, _) => (
                "timeout",
                Some(format!("Command timed out after {timeout_s} seconds")),
            ),
            (EndReason::OutputCap, _, _) => {
                let which = killed_for.as_ref().map_or("stdout", |k| k.stream);
                (
                    "output_cap",
                    Some(format!("{which} exceeded output limit of {limit} bytes")),
                )
            }
            (_, Some(0), _) => ("success", None),
            // A failed stage of a pipeline: MCP Shell Server's words (the stage's stderr,
            // or the exit code), then which stage it was.
            _ if failed_stage.is_some() => {
                let sentence = failed_stage.clone().unwrap_or_default();
                // The stages share stderr: what they printed there comes first, as the
                // failed stage's own words came first there.
                stderr_in_error = !stderr.is_empty();
                let words = match (exit_code, signal_num) {
                    _ if stderr_in_error => stderr.trim_end_matches('\n').to_string(),
                    (Some(code), _) => format!("Command failed with exit code {code}"),
                    (None, n) => format!("Command terminated by signal {}", n.unwrap_or(0)),
                };
                audited = Some(sentence.clone());
                ("process_error", Some(format!("{words}\n{sentence}")))
            }
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
        a.result_type = result_type;
        a.error = audited.or_else(|| failure.clone());
        let status = exit_code.unwrap_or_else(|| signal_num.map_or(1, |n| 128 + n));
        ShellResult {
            stdout,
            stderr,
            status,
            execution_time: started.elapsed().as_secs_f64(),
            stage_status: stages,
            error: failure,
            capped: result_type == "output_cap",
            killed_for: killed_for.map(Box::new),
            process_id: readable.then(|| proc.info.id.clone()),
            omitted: Box::new(out.omitted),
            stderr_in_error,
            protected,
        }
    }
}
