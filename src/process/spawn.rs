//! Spawning: a launch (stages, environment, cwd, stdin and stdout) becomes a record whose
//! stages run, each in its own session, with their output going to ingest.
//!
//! `stage_command` is the one place where a stage's program and argv become what is
//! spawned. What each child applies to itself before it executes (limits, cgroup, the
//! kernel sandbox) comes as a `sys::ChildSetup`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::base::config;
use crate::base::sys::libc;
use crate::base::sys::{self, SpawnSpec};
use crate::policy::trusted::Stage;

/// What is executed for one stage: the program, `argv[0]` and the arguments.
pub struct StageCommand {
    /// The program to execute.
    pub program: String,
    /// `argv[0]` as the child sees it.
    pub arg0: String,
    /// Arguments after `argv[0]`.
    pub args: Vec<String>,
}

/// Turns a stage into the command that is executed: the stage as it is.
pub(crate) fn stage_command(stage: &Stage) -> StageCommand {
    StageCommand {
        program: stage.program.clone(),
        arg0: stage.arg0.clone(),
        args: stage.args.clone(),
    }
}

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
    /// Run on a new terminal of (rows, cols) instead of pipes (one stage only).
    pub terminal: Option<(u16, u16)>,
    /// First bytes of each stream kept for good (default `YIELDSHELL_HEAD_BYTES`).
    pub head_bytes: Option<usize>,
    /// Trusted mode: the admission of git and file-writing stages (`trusted::git::lock`),
    /// attached to the record once it is started.
    pub git_ticket: Option<crate::policy::trusted::git::lock::Ticket>,
}

pub(crate) struct Started {
    pub pids: Vec<u32>,
    pub stdin: Option<std::fs::File>,
    pub stdout: Option<std::fs::File>,
    pub stderr: Option<std::fs::File>,
    /// The terminal, when the command runs on one.
    pub terminal: Option<crate::process::pty::Terminal>,
}

/// Why a launch's stages could not start: the message, and the errno of the failed
/// spawn when the spawn itself gives one (the program's exec, or a system call of the
/// spawn in the server); a step a child takes before its exec gives none (its message
/// names the step).
pub(crate) struct StartError {
    pub message: String,
    pub errno: Option<i32>,
}

impl From<String> for StartError {
    fn from(message: String) -> StartError {
        StartError {
            message,
            errno: None,
        }
    }
}

/// Starts the stages of a launch, on a new terminal of `terminal` (rows, cols; the first
/// stage only) or with pipes ([`spawn_stages`]); the child of stage `i` applies
/// `setups[i]` to itself before it executes.
pub(crate) fn start(
    stages: &[Stage],
    env: &[(OsString, OsString)],
    cwd: &std::path::Path,
    stdin: StdinSource,
    stdout_file: Option<std::fs::File>,
    terminal: Option<(u16, u16)>,
    setups: &[Option<sys::ChildSetup<'_>>],
) -> Result<Started, StartError> {
    let Some(size) = terminal else {
        return spawn_stages(stages, env, cwd, stdin, stdout_file, setups);
    };
    let setup = setups.first().and_then(Option::as_ref);
    let stage = stages.first().ok_or_else(|| "nothing to run".to_string())?;
    let command = stage_command(stage);
    let t = crate::process::pty::spawn(
        &command.program,
        &command.arg0,
        &command.args,
        env,
        cwd,
        size,
        setup,
    )
    .map_err(|e| StartError {
        message: format!(
            "cannot start {} on a terminal: {}",
            stage.program,
            config::plain_io(&e)
        ),
        errno: exec_errno(&e),
    })?;
    Ok(Started {
        pids: vec![t.pid],
        stdin: Some(t.input),
        stdout: Some(t.output),
        stderr: None,
        terminal: Some(t.terminal),
    })
}

/// Spawns the stages with pipes between them and one shared stderr pipe; each stage leads
/// its own session and process group. On failure every stage already started is killed
/// (the reaper reaps it as an unknown child).
pub(crate) fn spawn_stages(
    stages: &[Stage],
    env: &[(OsString, OsString)],
    cwd: &std::path::Path,
    stdin: StdinSource,
    stdout_file: Option<std::fs::File>,
    setups: &[Option<sys::ChildSetup<'_>>],
) -> Result<Started, StartError> {
    use crate::base::sys::fd::OwnedFd;
    use std::fs::File;
    let io_err = |what: &str, e: &std::io::Error| format!("cannot {what}: {}", config::plain_io(e));
    let (err_read, err_write) = std::io::pipe().map_err(|e| StartError {
        message: io_err("create a pipe", &e),
        errno: e.raw_os_error(),
    })?;
    let err_write = File::from(OwnedFd::from(err_write));
    let mut pids: Vec<u32> = Vec::new();
    let mut parent_stdin = None;
    let mut parent_stdout = None;
    let mut next_input: Option<File> = None;
    let mut first_stdin = Some(stdin);
    let mut stdout_file = stdout_file;
    let fail = |pids: &[u32], message: String, errno: Option<i32>| {
        for &pgid in pids {
            let _ = sys::killpg(pgid, libc::SIGKILL);
        }
        StartError { message, errno }
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
            let (r, w) = std::io::pipe()
                .map_err(|e| fail(&pids, io_err("create a pipe", &e), e.raw_os_error()))?;
            (
                Some(File::from(OwnedFd::from(w))),
                Some(File::from(OwnedFd::from(r))),
            )
        };
        let stderr = err_write
            .try_clone()
            .map_err(|e| fail(&pids, io_err("duplicate a pipe", &e), e.raw_os_error()))?;
        let command = stage_command(stage);
        let spawned = sys::spawn(SpawnSpec {
            program: &command.program,
            arg0: Some(&command.arg0),
            args: &command.args,
            env,
            cwd,
            stdin_pipe,
            stdin_file,
            stdout,
            stderr: Some(stderr),
            // Every stage leads its own session: no controlling terminal for any of them.
            join_group: None,
            terminal: None,
            setup: setups.get(i).and_then(Option::as_ref),
        })
        .map_err(|e| {
            fail(
                &pids,
                format!("cannot start {}: {}", stage.program, config::plain_io(&e)),
                exec_errno(&e),
            )
        })?;
        pids.push(spawned.pid);
        // Every stage writes to the shared stderr pipe given above: no pipe comes back.
        debug_assert!(spawned.stderr.is_none());
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
        terminal: None,
    })
}

/// The errno of a failed exec itself; `None` when a set-up step before it failed (its
/// reason is named by the step, not by the sandbox) or the error carries no errno.
fn exec_errno(e: &std::io::Error) -> Option<i32> {
    match sys::SpawnError::of(e) {
        Some(s) => (s.step == sys::SpawnStep::Exec).then_some(s.errno),
        None => e.raw_os_error(),
    }
}
