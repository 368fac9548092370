//! Spawning: a launch (stages, environment, cwd, stdin and stdout) becomes a record whose
//! stages run, each in its own session, with their output going to ingest.
//!
//! `stage_command` is the one place where a stage's program and argv become what is
//! spawned: a wrapper (a sandbox launcher, a pty) hooks in there.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config;
use crate::engine::Engine;
#[cfg(not(target_os = "linux"))]
use crate::process::{self, EndReason};
use crate::process::{Info, Proc};
use crate::reaper::Cmd;
use crate::redact::Secrets;
use crate::sys::{self, SpawnSpec};
use crate::table::Slot;
use crate::tree::MARKER_VAR;
use crate::trusted::Stage;

/// What is executed for one stage: the program, `argv[0]` and the arguments.
pub struct StageCommand {
    /// The program to execute.
    pub program: String,
    /// `argv[0]` as the child sees it.
    pub arg0: String,
    /// Arguments after `argv[0]`.
    pub args: Vec<String>,
}

/// Turns a stage into the command that is executed. Today the stage as it is; this is the
/// hook for wrapping it (a launcher that applies a sandbox, a pty).
fn stage_command(stage: &Stage) -> StageCommand {
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
    /// Trusted mode: the admission of git and file-writing stages (`trusted::gitlock`),
    /// attached to the record once it is started.
    pub git_ticket: Option<crate::trusted::gitlock::Ticket>,
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
        })
        .map_err(|e| {
            fail(
                &pids,
                format!("cannot start {}: {}", stage.program, config::plain_io(&e)),
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
    })
}

impl Engine {
    /// Starts every stage of `launch` as one record (each stage in its own session and
    /// group; the record signals all of them). The reaper cannot reap any stage before all
    /// are registered.
    pub fn launch(&self, launch: Launch, slot: Slot<'_>) -> Result<Arc<Proc>, String> {
        crate::guardian::ensure_started();
        let id = self.ids.next();
        let marker = format!("{}{}", self.marker_prefix, id);
        let mut env = launch.env;
        if self.config.noninteractive {
            crate::agents::add_noninteractive(&mut env, &self.config.env, &launch.overlay);
        }
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

        let cgroup = crate::agents::new_cgroup()?;
        let mut leaders = self.reaper.leaders.lock();
        let (stdin, stdout_file, cwd) = (launch.stdin, launch.stdout_file, &launch.cwd);
        // Per-command limits (SPEC section 13) go into the sandbox's plan: the launcher sets
        // the rlimits and joins the cgroup before the command executes.
        let rlimits = crate::agents::rlimits();
        let mut terminal = None;
        let on_terminal = launch.terminal;
        let terminal_slot = &mut terminal;
        let env_ref = &env;
        // The kernel sandbox hook: the stages start confined to the call's Landlock domain.
        // The command starts inside its cgroup (SPEC section 15). Cgroup v1 moves one
        // thread: the stages are spawned by a thread that joined first (no launcher). v2
        // moves whole processes: the launcher joins before it executes the command.
        let (plan_cgroup, thread_cgroup) = match &cgroup {
            Some(g) if g.version() == crate::cgroup::Version::V1 => (None, Some(g)),
            Some(g) => (Some(g.dir()), None),
            None => (None, None),
        };
        let spawn_stages_of = move |stages: &[Stage]| match on_terminal {
            Some((rows, cols)) => {
                let stage = stages.first().ok_or_else(|| "nothing to run".to_string())?;
                let command = stage_command(stage);
                let t = crate::pty::spawn(
                    &command.program,
                    &command.arg0,
                    &command.args,
                    env_ref,
                    cwd,
                    rows,
                    cols,
                )
                .map_err(|e| {
                    format!(
                        "cannot start {} on a terminal: {}",
                        stage.program,
                        config::plain_io(&e)
                    )
                })?;
                *terminal_slot = Some(t.terminal);
                Ok(Started {
                    pids: vec![t.pid],
                    stdin: Some(t.input),
                    stdout: Some(t.output),
                    stderr: None,
                })
            }
            None => spawn_stages(stages, env_ref, cwd, stdin, stdout_file),
        };
        let sandbox = &self.sandbox;
        let stages = &launch.stages;
        let may_keep = thread_cgroup.is_none();
        let spawn_confined = move || {
            sandbox.spawn(
                stages,
                cwd,
                &rlimits,
                plan_cgroup,
                may_keep,
                spawn_stages_of,
            )
        };
        // The thread joins before the sandbox confines it (Landlock would refuse the write
        // to the cgroup); the sandbox's thread, started from it, starts inside too.
        let started = match thread_cgroup {
            Some(g) => g.spawn_inside(spawn_confined),
            None => spawn_confined(),
        };
        let started = started?;
        let input = match (&terminal, &started.stdin) {
            (Some(t), _) => Some(crate::inputwait::Input::Tty(t.path.clone())),
            (None, Some(f)) => f
                .metadata()
                .ok()
                .map(|m| crate::inputwait::Input::Pipe(std::os::unix::fs::MetadataExt::ino(&m))),
            (None, None) => None,
        };
        let pid = started.pids[0];
        let info = Info {
            id: id.clone(),
            pid,
            stages: started.pids.clone(),
            output_cap: launch.output_cap,
            command: secrets.redact_str(&launch.display),
            name: launch.name.map(|n| secrets.redact_str(&n)),
            cwd: launch.cwd.display().to_string(),
            started_wall: SystemTime::now(),
            started: Instant::now(),
            marker,
            agent: crate::agents::RecordExtras {
                terminal,
                input,
                cgroup,
                secrets: secrets.clone(),
            },
        };
        if let Some(stdin) = &started.stdin {
            let _ = sys::set_nonblocking(std::os::fd::AsFd::as_fd(stdin));
        }
        let proc = Arc::new(Proc::new(
            info,
            launch.ring_bytes,
            launch.head_bytes.unwrap_or(self.config.head_bytes),
            started.stdin,
        ));
        for &p in &started.pids {
            leaders.insert(p, proc.clone());
        }
        drop(leaders);
        if let Some(ticket) = &launch.git_ticket {
            ticket.attach(&proc);
        }
        for &pgid in &started.pids {
            crate::guardian::announce(pgid, true);
        }
        crate::info!(
            "{id} started pid {pid} in {}: {}",
            proc.info.cwd,
            proc.info.command
        );

        self.table.insert(proc.clone(), slot);
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
            let far = Instant::now() + Duration::from_secs(3600 * 24 * 365);
            let then = move |result: Result<(), String>| {
                if let Err(e) = result {
                    writer.set_stdin_error(e);
                }
            };
            crate::wait::park_write(&self.waits, proc.clone(), data, close, far, Box::new(then));
        }
        Ok(proc)
    }

    /// Starts reading a record's output: the shared ingest thread on Linux, a pump thread
    /// per record elsewhere.
    pub(crate) fn start_output(
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
}
