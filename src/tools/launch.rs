//! `Engine::launch`: a `Launch` becomes a running record: the guardian, the stages
//! (`spawn::spawn_stages`), the reaper's registration, the table, the timeout, ingest and
//! the initial stdin.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::base::config::{self};
use crate::base::sys;
use crate::policy::redact::Secrets;
use crate::policy::trusted::{tokenize, Stage};
use crate::process::reaper::Cmd;
#[cfg(not(target_os = "linux"))]
use crate::process::record::{self as process, EndReason};
use crate::process::record::{Info, Proc};
use crate::process::spawn::{spawn_stages, stage_command, Launch, Started, StdinSource};
use crate::process::table::Slot;
use crate::process::tree::MARKER_VAR;
use crate::tools::engine::{Engine, ExecArgs};
use crate::tools::policy::{check_command_regex, check_side_effects};

impl Engine {
    /// Starts every stage of `launch` as one record (each stage in its own session and
    /// group; the record signals all of them). The reaper cannot reap any stage before all
    /// are registered.
    pub fn launch(&self, launch: Launch, slot: Slot<'_>) -> Result<Arc<Proc>, String> {
        crate::process::guardian::ensure_started();
        let id = self.ids.next();
        let marker = format!("{}{}", self.marker_prefix, id);
        let mut env = launch.env;
        if self.config.noninteractive {
            crate::process::agents::add_noninteractive(&mut env, &self.config.env, &launch.overlay);
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

        let cgroup = crate::process::agents::new_cgroup()?;
        let mut leaders = self.reaper.leaders.lock();
        let (stdin, stdout_file, cwd) = (launch.stdin, launch.stdout_file, &launch.cwd);
        // Per-command limits (SPEC section 13) and the command's cgroup (SPEC section 15) are
        // applied by each child before it executes, with the kernel sandbox (`ChildSetup`):
        // the command starts inside its cgroup, with no window to fork outside it.
        let rlimits = crate::process::agents::rlimits();
        let mut terminal = None;
        let on_terminal = launch.terminal;
        let terminal_slot = &mut terminal;
        let env_ref = &env;
        let procs = match &cgroup {
            Some(g) => Some(g.procs_writer()?),
            None => None,
        };
        let spawn_stages_of =
            move |stages: &[Stage], setup: Option<&sys::ChildSetup<'_>>| match on_terminal {
                Some((rows, cols)) => {
                    let stage = stages.first().ok_or_else(|| "nothing to run".to_string())?;
                    let command = stage_command(stage);
                    let t = crate::process::pty::spawn(
                        &command.program,
                        &command.arg0,
                        &command.args,
                        env_ref,
                        cwd,
                        (rows, cols),
                        setup,
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
                None => spawn_stages(stages, env_ref, cwd, stdin, stdout_file, setup),
            };
        let sandbox = &self.sandbox;
        let stages = &launch.stages;
        let started = sandbox.spawn(
            stages,
            cwd,
            &rlimits,
            procs.as_ref().map(std::os::fd::AsFd::as_fd),
            spawn_stages_of,
        );
        let started = started?;
        let input = match (&terminal, &started.stdin) {
            (Some(t), _) => Some(crate::process::inputwait::Input::Tty(t.path.clone())),
            (None, Some(f)) => f.metadata().ok().map(|m| {
                crate::process::inputwait::Input::Pipe(std::os::unix::fs::MetadataExt::ino(&m))
            }),
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
            agent: crate::process::record::RecordExtras {
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
            ticket.attach(&(proc.clone() as Arc<dyn crate::policy::trusted::git::lock::Ends>));
        }
        for &pgid in &started.pids {
            crate::process::guardian::announce(pgid, true);
        }
        crate::base::log::info!(
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
            crate::tools::wait::park_write(
                &self.waits,
                proc.clone(),
                data,
                close,
                far,
                Box::new(then),
            );
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
                crate::base::log::error!("cannot start the output thread of {}: {e}", proc.info.id);
                proc.set_reason(EndReason::Failed);
                proc.signal(libc::SIGKILL);
                format!("cannot start an output thread: {e}")
            })
        }
    }
}

impl Engine {
    pub(crate) fn check_policy(&self, args: &ExecArgs) -> Result<(), String> {
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
        Ok(())
    }

    /// Builds the launch of an `exec` call: `<shell> -c <command>` in shell mode, the parsed
    /// and checked pipeline in trusted mode.
    pub(crate) fn exec_launch(&self, args: &ExecArgs, cwd: PathBuf) -> Result<Launch, String> {
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
            terminal: None,
            head_bytes: None,
            git_ticket: None,
        };
        if let Some(size) =
            crate::process::agents::terminal_of(&args.agent, self.trusted.is_some())?
        {
            // A terminal is both input and output: it is never closed by `exec`.
            launch.terminal = Some(size);
            launch.stdin = StdinSource::Null;
            if let Some((_, close)) = launch.initial_stdin.as_mut() {
                *close = false;
            }
        }
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
                launch.git_ticket = Some(policy.check_git_use(
                    &launch.cwd,
                    &launch.stages,
                    pipeline.stdout.as_ref().map(|r| r.path.as_str()),
                )?);
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
}
