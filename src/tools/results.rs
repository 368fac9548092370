//! Typed results and errors of the tools.
//!
//! The engine answers with these values; `mcp` is the only place that turns them into
//! JSON (and derives `isError` and exec's `failed_to_start` from them), and the audit
//! record is built from the same values. Nothing here knows about JSON.

use crate::base::ring::{ReadOut, Streams};
use crate::process::record::Status;

/// A record's state and a slice of its output: what `read` returns, and the common part
/// of `exec` and `wait`.
#[derive(Debug)]
pub struct Snapshot {
    /// The record's id.
    pub process_id: String,
    /// Its status.
    pub status: Status,
    /// The exit code, once the leader was reaped.
    pub exit_code: Option<i32>,
    /// The name of the signal that ended the leader.
    pub signal: Option<String>,
    /// The output slice.
    pub output: ReadOut,
    /// Which streams were asked for (the others are left out of the result).
    pub streams: Streams,
    /// A failure writing the initial stdin.
    pub stdin_error: Option<String>,
    /// Whether it waits for input, and its prompt.
    pub input: crate::process::agents::InputState,
    /// The record was killed for its output.
    pub killed_for: Option<KilledFor>,
    /// Which stage of a pipeline failed, and how (`stage 1 of 2 (sort) failed with exit
    /// status 2`); the exit code is that stage's.
    pub failed_stage: Option<String>,
    /// The call's protected names it created, and what is protected when its output shows
    /// a write refused (`YIELDSHELL_PROTECTED_PATHS`).
    pub protected: Option<String>,
    /// Lines that look like errors in the range asked for that the answer leaves out
    /// (omitted between head and tail, evicted, or before a tail read).
    pub highlights: Vec<crate::base::ring::highlights::Highlight>,
}

/// Why a process was killed for its output: which stream went over which limit, and how
/// much it had printed.
#[derive(Debug, Clone)]
pub struct KilledFor {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// The limit, in bytes.
    pub limit: u64,
    /// The bytes the stream printed (after redaction).
    pub bytes: u64,
    /// The setting that holds the limit.
    pub setting: &'static str,
}

impl KilledFor {
    /// From `State::killed_for_output`.
    pub fn from_state(found: Option<(usize, u64, u64)>) -> Option<KilledFor> {
        let (stream, limit, bytes) = found?;
        Some(KilledFor {
            stream: if stream == 0 { "stdout" } else { "stderr" },
            limit,
            bytes,
            setting: "MCP_SHELL_OUTPUT_LIMIT_BYTES",
        })
    }

    /// One sentence for the text of an answer.
    pub fn sentence(&self) -> String {
        format!(
            "Killed for its output: {} went over the output limit of {} bytes ({}) after printing {} bytes; the output up to the kill is kept.",
            self.stream,
            crate::base::ring::grouped(self.limit),
            self.setting,
            crate::base::ring::grouped(self.bytes)
        )
    }
}

/// `exec`'s answer.
#[derive(Debug)]
pub struct ExecResult {
    /// State and output (from the oldest byte).
    pub snapshot: Snapshot,
    /// Still running after the yield.
    pub backgrounded: bool,
    /// The leader's pid.
    pub pid: u32,
    /// Time from the call to the answer.
    pub duration_ms: u64,
}

/// Why `wait` answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// The record finished.
    Exited,
    /// The output matched `until`.
    Matched,
    /// The timeout passed.
    DeadlineReached,
    /// The process waits for input (`until_input`).
    AwaitingInput,
}

impl WaitEnd {
    /// The name used in results.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitEnd::Exited => "exited",
            WaitEnd::Matched => "matched",
            WaitEnd::DeadlineReached => "deadline_reached",
            WaitEnd::AwaitingInput => "awaiting_input",
        }
    }
}

/// `wait`'s answer.
#[derive(Debug)]
pub struct WaitResult {
    /// State and output.
    pub snapshot: Snapshot,
    /// Why it answered.
    pub end: WaitEnd,
    /// How long it waited.
    pub waited_ms: u64,
    /// With several process ids: each one's state, in the order given.
    pub statuses: Option<Box<[(String, ProcStatus)]>>,
}

/// One process's state in `wait`'s `statuses`.
#[derive(Debug)]
pub struct ProcStatus {
    /// Its status.
    pub status: Status,
    /// Its exit code, once it ended (`None` while running or when a signal ended it).
    pub exit_code: Option<i32>,
    /// When it ended (RFC 3339 UTC), once it did.
    pub ended_at: Option<String>,
}

/// `write`'s answer.
#[derive(Debug)]
pub struct WriteResult {
    /// The record's id.
    pub process_id: String,
    /// Why the input was not (entirely) written; `None` when it was.
    pub error: Option<String>,
}

/// `stop`'s answer.
#[derive(Debug)]
pub struct StopResult {
    /// The record's id.
    pub process_id: String,
    /// The signal sent (by name).
    pub signal: &'static str,
    /// The group ended after the signal.
    pub stopped: bool,
    /// The record's status afterwards.
    pub status: Status,
    /// The exit code, if reaped.
    pub exit_code: Option<i32>,
    /// The signal that ended the leader, by name.
    pub exit_signal: Option<String>,
    /// Why it did not stop: it had finished already, or outlived SIGKILL.
    pub error: Option<&'static str>,
    /// True when the group outlived SIGKILL (a failure, unlike "already finished").
    pub failed: bool,
}

/// One line of `ps`.
#[derive(Debug)]
pub struct PsEntry {
    /// The record's id.
    pub process_id: String,
    /// The leader's pid.
    pub pid: u32,
    /// The caller's label.
    pub name: Option<String>,
    /// The command (redacted).
    pub command: String,
    /// The working directory.
    pub cwd: String,
    /// Status.
    pub status: Status,
    /// Exit code, if reaped.
    pub exit_code: Option<i32>,
    /// The signal that ended the leader, by name.
    pub signal: Option<String>,
    /// Start, RFC 3339.
    pub started_at: String,
    /// End, RFC 3339, once finished.
    pub ended_at: Option<String>,
    /// Run time so far, or in total.
    pub duration_ms: u64,
    /// Bytes ever written to stdout (after redaction).
    pub stdout_bytes: u64,
    /// Bytes ever written to stderr (after redaction).
    pub stderr_bytes: u64,
    /// Time since the last output.
    pub idle_ms: u64,
    /// The newest sequence number.
    pub latest_seq: u64,
    /// A failure writing the initial stdin.
    pub stdin_error: Option<String>,
    /// Whether it waits for input, and its prompt.
    pub input: crate::process::agents::InputState,
    /// How many of its processes live now, wherever they moved; `None`
    /// without a cgroup to count them in.
    pub processes: Option<usize>,
}

/// `shell_execute`'s answer, a failure included (it keeps the output captured so far).
#[derive(Debug)]
pub struct ShellResult {
    /// Standard output (cut at the output limit).
    pub stdout: String,
    /// Standard error (cut at the output limit).
    pub stderr: String,
    /// The exit status (128 + signal for a signal, 1 when it never ran).
    pub status: i32,
    /// Seconds from the call to the answer.
    pub execution_time: f64,
    /// Each stage's exit (minus the signal for a signal), for pipelines.
    pub stage_status: Option<Vec<Option<i32>>>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The output limit was hit and the process killed for it.
    pub capped: bool,
    /// What the output limit killed.
    pub killed_for: Option<Box<KilledFor>>,
    /// The record, readable with `read` while the yield tools are listed.
    pub process_id: Option<String>,
    /// What the answer left out between each stream's first and last part.
    pub omitted: Box<[Option<crate::base::ring::Omitted>; 2]>,
    /// `error` already holds stderr (a failed pipeline stage's words come first, as MCP
    /// Shell Server put them), so the text shows it once.
    pub stderr_in_error: bool,
    /// As `Snapshot::protected`.
    pub protected: Option<String>,
}

/// What a tool answered.
#[derive(Debug)]
pub enum Output {
    /// `exec`.
    Exec(ExecResult),
    /// `read`.
    Read(Snapshot),
    /// `wait`.
    Wait(WaitResult),
    /// `write`.
    Write(WriteResult),
    /// `stop`.
    Stop(StopResult),
    /// `ps`.
    Ps(Vec<PsEntry>),
    /// `cleanup`: how many records were removed.
    Cleanup(usize),
    /// `shell_execute`.
    Shell(ShellResult),
}

/// What kind of failure a [`ToolError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The arguments were malformed or out of range.
    InvalidArgument,
    /// A policy, the process limit or shutdown refused the call before anything started.
    Refused,
    /// Starting the process failed.
    StartFailed,
    /// No record has this id.
    UnknownProcess,
    /// The signal name or number is unknown.
    InvalidSignal,
}

/// A tool call that could not do what was asked, in the style of ripgrep's
/// `CommandError`: a kind to decide on, a message to show.
#[derive(Debug)]
pub struct ToolError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What was wrong and what would be accepted.
    pub message: String,
    /// The record concerned, when the call named one.
    pub process_id: Option<String>,
}

impl ToolError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
            process_id: None,
        }
    }

    /// The same error, about record `id`.
    pub fn about(mut self, id: &str) -> ToolError {
        self.process_id = Some(id.to_string());
        self
    }

    /// No record has id `id`.
    pub fn unknown(id: &str) -> ToolError {
        ToolError::new(
            ErrorKind::UnknownProcess,
            format!("Unknown process_id: {id}"),
        )
        .about(id)
    }

    /// True when no process was started by the call (exec answers `failed_to_start`).
    pub fn started_nothing(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::InvalidArgument | ErrorKind::Refused | ErrorKind::StartFailed
        )
    }
}

/// A tool's answer.
pub type Answer = Result<Output, ToolError>;

impl Output {
    /// True when the tool could not do what was asked although the call was valid.
    pub fn is_error(&self) -> bool {
        match self {
            Output::Write(w) => w.error.is_some(),
            Output::Stop(s) => s.failed,
            Output::Shell(s) => s.error.is_some(),
            _ => false,
        }
    }
}

/// Hides the secrets in force in every text of `answer` that the server made from paths,
/// commands or names (an error's message, `ps`'s fields, a write's or a stdin's error):
/// a path the server resolved can show a secret that no output filter saw. Output is
/// redacted as it arrives and is left alone here.
pub fn redact_made_texts(answer: &mut Answer, secrets: &crate::policy::redact::Secrets) {
    let fix = |text: &mut String| {
        let clean = secrets.redact_str(text);
        if clean != *text {
            *text = clean;
        }
    };
    let fix_opt = |text: &mut Option<String>| {
        if let Some(t) = text.as_mut() {
            fix(t);
        }
    };
    match answer {
        Err(e) => fix(&mut e.message),
        Ok(Output::Exec(r)) => fix_opt(&mut r.snapshot.stdin_error),
        Ok(Output::Read(r)) => fix_opt(&mut r.stdin_error),
        Ok(Output::Wait(r)) => fix_opt(&mut r.snapshot.stdin_error),
        Ok(Output::Write(r)) => fix_opt(&mut r.error),
        Ok(Output::Ps(list)) => {
            for e in list {
                fix_opt(&mut e.name);
                fix(&mut e.command);
                fix(&mut e.cwd);
                fix_opt(&mut e.stdin_error);
            }
        }
        Ok(Output::Shell(r)) => fix_opt(&mut r.error),
        Ok(Output::Stop(_) | Output::Cleanup(_)) => (),
    }
}
