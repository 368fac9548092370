//! `Engine::launch`: a `Launch` becomes a running record, in named steps: the guardian,
//! the child's environment, the cgroup, the sandbox's plan (`Sandbox::prepare`, a value),
//! the spawn under that plan (`spawn::start`), then the reaper's registration, the table,
//! the timeout, ingest and the initial stdin.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::base::sys;
use crate::base::sys::libc;
use crate::policy::approval::Rule;
use crate::policy::redact::Source;
use crate::policy::trusted::{tokenize, Redirects, Stage};
use crate::process::reaper::Cmd;
#[cfg(not(target_os = "linux"))]
use crate::process::record::{self as process, EndReason};
use crate::process::record::{Info, Proc};
use crate::process::spawn::{Launch, Started, StdinSource};
use crate::process::table::Slot;
use crate::process::tree::MARKER_VAR;
use crate::tools::engine::{Engine, ExecArgs};
use crate::tools::policy::{
    blocked_side_effects, check_command_length, check_command_regex, check_declared, Refusal,
};

/// What each step of a launch cost, for the debug log (BENCHMARKS.md lists them).
#[derive(Default)]
struct Costs {
    guardian: Duration,
    cgroup: Duration,
    plan: Duration,
    spawn: Duration,
}

impl Engine {
    /// Starts every stage of `launch` as one record (each stage in its own session and
    /// group; the record signals all of them). The steps: the guardian, the child's
    /// environment, the cgroup, the sandbox's plan, the spawn, then the record's
    /// registration. The reaper cannot reap any stage before all are registered.
    pub fn launch(&self, launch: Launch, slot: Slot<'_>) -> Result<Arc<Proc>, String> {
        let mut costs = Costs::default();
        let t = Instant::now();
        self.reaper.guardian.ensure_started();
        costs.guardian = t.elapsed();
        let id = self.ids.next();
        let marker = format!("{}{}", self.marker_prefix, id);
        // A sandboxed call writes only beneath its working directory, so it gets a
        // temporary directory of its own, emptied when the record ends.
        let tmp = match self.sandbox.private_tmp() {
            true => Some(crate::process::tmpdir::CallDir::new()?),
            false => None,
        };
        let env = self.child_env(launch.env, &launch.overlay, &marker, tmp.as_ref());
        // The call's secrets join the set in force before anything starts, so every other
        // call's filter hides them from the first byte this command could give away; they
        // leave it when the record is forgotten (the lease goes with it).
        let lease = self.secrets.lease(&launch.overlay);
        let secrets = self.secrets.current();

        // Per-command limits and the command's cgroup are applied by each child before it
        // executes, with the kernel sandbox: the command starts inside its cgroup, with no
        // window to fork outside it.
        let t = Instant::now();
        let cgroup = self.commands.new_cgroup()?;
        let joiner = match &cgroup {
            Some(g) => Some(g.joiner()?),
            None => None,
        };
        costs.cgroup = t.elapsed();
        let rlimits = self.commands.rlimits();
        let t = Instant::now();
        let mut plan = self.sandbox.prepare(
            &launch.stages,
            &launch.cwd,
            tmp.as_ref().map(|t| t.path()),
            &rlimits,
            joiner.as_ref().map(crate::process::cgroup::Joiner::join),
        )?;
        costs.plan = t.elapsed();
        let setups: Vec<_> = (0..launch.stages.len()).map(|i| plan.setup(i)).collect();

        // The reaper's lock is held from before the first fork until every stage is in
        // `leaders`: the reaper reaps any child (`waitpid(-1)`), and a stage that exits at
        // once would otherwise be reaped as unknown and its exit lost. Keeping such early
        // exits aside for the launch to claim is not safe: by the time the launch knows
        // its pids, an unknown child reaped earlier may have had the same pid.
        let t = Instant::now();
        let mut leaders = self.reaper.leaders.lock();
        let started = crate::process::spawn::start(
            &launch.stages,
            &env,
            &launch.cwd,
            launch.stdin,
            launch.stdout_file,
            launch.terminal,
            &setups,
        )
        .map_err(|e| too_long(e.errno, plan.explain(e.message, e.errno)))?;
        drop(setups);
        let protected = plan.take_watch();
        costs.spawn = t.elapsed();
        let t = Instant::now();
        if let Some(g) = &cgroup {
            g.started(started.pids.len());
        }
        let input = match (&started.terminal, &started.stdin) {
            (Some(t), _) => Some(crate::process::inputwait::Input::Tty(t.path.clone())),
            (None, Some(f)) => f.metadata().ok().map(|m| {
                crate::process::inputwait::Input::Pipe(crate::base::sys::ext::MetadataExt::ino(&m))
            }),
            (None, None) => None,
        };
        let Started {
            pids,
            stdin,
            stdout,
            stderr,
            terminal,
        } = started;
        let pid = pids[0];
        let info = Info {
            id: id.clone(),
            pid,
            stages: pids.clone(),
            stage_names: launch.stages.iter().map(|s| s.arg0.clone()).collect(),
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
                secrets: Some(self.secrets.clone()),
                _lease: lease,
                tmp,
                guardian: Some(self.reaper.guardian.clone()),
                protected,
            },
        };
        if let Some(stdin) = &stdin {
            let _ = sys::set_nonblocking(crate::base::sys::fd::AsFd::as_fd(stdin));
        }
        let proc = Arc::new(Proc::new(
            info,
            launch.ring_bytes,
            launch.head_bytes.unwrap_or(self.config.head_bytes),
            stdin,
        ));
        if let Some(matcher) = &self.config.highlight {
            proc.lock().output.highlight(matcher.clone());
        }
        for &p in &pids {
            leaders.insert(p, proc.clone());
        }
        drop(leaders);

        self.register(
            &proc,
            &pids,
            launch.git_ticket.as_ref(),
            launch.timeout_ms,
            slot,
        );
        self.start_output(&proc, stdout, stderr, self.secrets.clone())?;
        if let Some((data, close)) = launch.initial_stdin {
            self.write_initial_stdin(&proc, data, close);
        }
        crate::base::log::debug!(
            "{} launch steps (µs): guardian {}, cgroup {}, sandbox plan {}, spawn {}, \
             registration {}",
            proc.info.id,
            costs.guardian.as_micros(),
            costs.cgroup.as_micros(),
            costs.plan.as_micros(),
            costs.spawn.as_micros(),
            t.elapsed().as_micros()
        );
        Ok(proc)
    }

    /// The child's environment: the launch's, with the non-interactive defaults (when
    /// configured), the record's marker and the call's temporary directory.
    fn child_env(
        &self,
        mut env: Vec<(OsString, OsString)>,
        overlay: &[(String, String)],
        marker: &str,
        tmp: Option<&crate::process::tmpdir::CallDir>,
    ) -> Vec<(OsString, OsString)> {
        if self.config.noninteractive {
            crate::process::agents::add_noninteractive(&mut env, &self.config.env, overlay);
        }
        env.retain(|(k, _)| k != MARKER_VAR);
        env.push((MARKER_VAR.into(), marker.into()));
        if let Some(t) = tmp {
            let vars = crate::base::sys::TEMP_DIR_VARS;
            env.retain(|(k, _)| !vars.iter().any(|v| k == v));
            env.extend(vars.iter().map(|v| (v.into(), t.path().into())));
        }
        env
    }

    /// Makes a started record known: its git claim, its groups to the guardian, the table
    /// (in `slot`), and its timeout to the reaper.
    fn register(
        &self,
        proc: &Arc<Proc>,
        pids: &[u32],
        git_ticket: Option<&crate::policy::trusted::git::lock::Ticket>,
        timeout_ms: u64,
        slot: Slot<'_>,
    ) {
        if let Some(ticket) = git_ticket {
            ticket.attach(&(proc.clone() as Arc<dyn crate::policy::trusted::git::lock::Ends>));
        }
        for &pgid in pids {
            self.reaper.guardian.announce(pgid, true);
        }
        crate::base::log::info!(
            "{} started pid {} in {}: {}",
            proc.info.id,
            proc.info.pid,
            proc.info.cwd,
            proc.info.command
        );
        self.table.insert(proc.clone(), slot);
        if timeout_ms > 0 {
            let at = proc.info.started + Duration::from_millis(timeout_ms);
            self.reaper.send(Cmd::Timeout(
                proc.clone(),
                at,
                Duration::from_millis(self.config.timeout_grace_ms),
            ));
        }
    }

    /// Writes a launch's initial stdin through a parked write (closing stdin after it when
    /// `close`); a failure is kept on the record.
    fn write_initial_stdin(&self, proc: &Arc<Proc>, data: Vec<u8>, close: bool) {
        let writer = proc.clone();
        let far = Instant::now() + Duration::from_secs(3600 * 24 * 365);
        let then = move |result: Result<(), String>| {
            if let Err(e) = result {
                writer.set_stdin_error(e);
            }
        };
        crate::tools::wait::park_write(&self.waits, proc.clone(), data, close, far, Box::new(then));
    }

    /// Starts reading a record's output: the shared ingest thread on Linux, a pump thread
    /// per record elsewhere.
    pub(crate) fn start_output(
        &self,
        proc: &Arc<Proc>,
        stdout: Option<std::fs::File>,
        stderr: Option<std::fs::File>,
        secrets: Arc<dyn Source>,
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
    /// The checks of an `exec` before its directory and launch. `Err` is a final refusal;
    /// `Ok(Some(..))` a blocked side effect, which the launch answers once every other
    /// check passed (`exec_launch`); `waived` (the person approved the call) skips it.
    pub(crate) fn check_policy(
        &self,
        args: &ExecArgs,
        waived: bool,
    ) -> Result<Option<(String, Rule)>, String> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err("the server is shutting down".into());
        }
        check_declared(&args.side_effects)?;
        if self.trusted.is_none() {
            check_command_length(&args.command)?;
        }
        check_command_regex(&self.config, &args.command, "command")?;
        if let Some(shell) = &args.shell {
            if shell.trim().is_empty() {
                return Err(
                    "shell is empty: give a shell path such as /bin/bash, or omit it".into(),
                );
            }
            // A path the kernel could never execute is refused before a regex spends time
            // on it (the time a regex takes grows with the text's length).
            if shell.len() >= libc::PATH_MAX as usize {
                return Err(format!(
                    "shell is {} bytes, longer than any path the system can execute ({} \
                     bytes): give a shell path such as /bin/bash, or omit it",
                    shell.len(),
                    libc::PATH_MAX
                ));
            }
            check_command_regex(&self.config, shell, "shell")?;
        }
        if waived {
            return Ok(None);
        }
        Ok(blocked_side_effects(
            &args.side_effects,
            &self.config.blocked,
        ))
    }

    /// Builds the launch of an `exec` call: `<shell> -c <command>` in shell mode, the parsed
    /// (`parsed`, the caller's one reading of the command line) and checked pipeline in
    /// trusted mode. `held` is a refusal a person may approve,
    /// answered only once every final check passed (and before a redirection opens a
    /// file); `waived` skips trusted mode's argument rules.
    pub(crate) fn exec_launch(
        &self,
        args: &ExecArgs,
        parsed: Option<Result<tokenize::Pipeline, String>>,
        cwd: PathBuf,
        held: Option<(String, Rule)>,
        waived: bool,
    ) -> Result<Launch, Refusal> {
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
                    args: sys::shell_args(&shell, &args.command),
                    arg0: shell,
                });
                let mut env: Vec<(OsString, OsString)> = self
                    .config
                    .env
                    .iter()
                    .filter(|(k, _)| k != MARKER_VAR)
                    .cloned()
                    .collect();
                // `workspace`: the tools' caches are the server's own (never the person's).
                for (k, v) in self.sandbox.cache_env() {
                    env.retain(|(ek, _)| ek != k);
                    env.push((k.clone(), v.clone()));
                }
                for (k, v) in &args.env {
                    let key = OsString::from(k);
                    env.retain(|(ek, _)| *ek != key);
                    env.push((key, OsString::from(v)));
                }
                launch.env = env;
                if let Some((message, rule)) = held {
                    return Err(Refusal::Approvable(message, vec![rule]));
                }
            }
            Some(policy) => {
                if args.shell.is_some() {
                    return Err(Refusal::Final(
                        "shell cannot be chosen in trusted mode: commands run without a shell"
                            .into(),
                    ));
                }
                // The caller's reading of the command line (trusted mode always has one).
                let mut pipeline = match parsed {
                    Some(p) => p?,
                    None => tokenize::parse(&args.command)?,
                };
                if pipeline.stdin_path.is_some() && args.stdin.is_some() {
                    return Err(Refusal::Final(
                        "stdin and an input redirection (<) cannot be combined".into(),
                    ));
                }
                if let Some(r) = &pipeline.stdout {
                    self.sandbox
                        .refuse_protected_redirect(&launch.cwd, &r.path)
                        .map_err(Refusal::Final)?;
                }
                // Nothing is opened while a question may still be asked: an open creates or
                // truncates.
                let how = if held.is_some() {
                    Redirects::Judge
                } else {
                    Redirects::Open
                };
                let prepared =
                    match policy.prepare(&mut pipeline, &launch.cwd, &args.env, how, waived) {
                        Ok(p) => p,
                        Err(r) => {
                            let Some(rule) = Rule::of_trusted(&r) else {
                                return Err(Refusal::Final(r.text));
                            };
                            // Every approvable rule that refuses the call is shown to the
                            // person: an approval waives only what they saw.
                            let mut rules = Vec::new();
                            let message = match held {
                                Some((side_effects, first)) => {
                                    rules.push(first);
                                    side_effects
                                }
                                None => rule.message(),
                            };
                            rules.push(rule);
                            return Err(Refusal::Approvable(message, rules));
                        }
                    };
                if let Some((message, rule)) = held {
                    return Err(Refusal::Approvable(message, vec![rule]));
                }
                launch.stages = prepared.stages;
                launch.env = prepared.env;
                launch.git_ticket = Some(prepared.git_ticket);
                if let Some(f) = prepared.stdin {
                    launch.stdin = StdinSource::File(f);
                }
                launch.stdout_file = prepared.stdout;
                launch.output_cap = Some(self.config.shell_output_limit as u64);
                launch.ring_bytes = launch.ring_bytes.max(self.config.shell_output_limit + 1);
            }
        }
        Ok(launch)
    }
}

/// A spawn the kernel refused for the size of its arguments (`E2BIG`) says where long input
/// goes instead: the bare "Argument list too long" does not.
fn too_long(errno: Option<i32>, message: String) -> String {
    if errno == Some(libc::E2BIG) {
        format!(
            "{message}: the command line (with the environment) is over the kernel's limit for \
             one program's arguments, and any single argument over 128 KiB is; pass long input \
             through stdin (the stdin parameter), or write it to a file and name the file in \
             the command"
        )
    } else {
        message
    }
}
