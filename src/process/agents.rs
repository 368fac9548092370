//! The glue of what agents trip over (terminals, input waits, limits) between the tools
//! and the parts that do the work: `pty` (terminals), `ansi` (escape removal), `inputwait`
//! (is a command waiting for input?), `limits` and `cgroup` (per-command limits), the head
//! of `ring`, and the non-interactive environment defaults.
//!
//! Each record carries a [`RecordExtras`] (its terminal, the identity of its stdin, its
//! cgroup); the tools call the functions here to start a command, to shape what they
//! read, and to add `awaiting_input`/`prompt`. Everything here costs nothing for a call
//! that does not use it: no terminal, no stripping, no `/proc` scan unless the record has
//! an open stdin and has been quiet for 300 ms when a call is answered.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use crate::base::config::Config;
use crate::base::limits::Limits;
use crate::base::ring::{ReadOut, STDERR, STDOUT};
use crate::base::sys;
use crate::process::cgroup::{Cgroups, CommandGroup};
use crate::process::inputwait::{self, Input};
use crate::process::record::RecordExtras;
use crate::process::record::{Proc, State};

/// Environment defaults that keep tools from stopping to ask.
pub const NONINTERACTIVE: [(&str, &str); 5] = [
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GCM_INTERACTIVE", "never"),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// Adds the non-interactive defaults to a child's environment `env` where it lacks them.
/// The call's `overlay` and the server's environment win: a name they set keeps their
/// value (in trusted mode, whose minimal environment leaves the server's values out, the
/// server's value of these five names is what the child gets).
pub fn add_noninteractive(
    env: &mut Vec<(OsString, OsString)>,
    server_env: &[(OsString, OsString)],
    overlay: &[(String, String)],
) {
    for (name, default) in NONINTERACTIVE {
        if env.iter().any(|(k, _)| k == name) || overlay.iter().any(|(k, _)| k == name) {
            continue;
        }
        let value = server_env
            .iter()
            .find(|(k, _)| k == name)
            .map_or_else(|| OsString::from(default), |(_, v)| v.clone());
        env.push((name.into(), value));
    }
}

/// The arguments of `exec` for this section.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExecExtras {
    /// Run on a pseudo-terminal.
    pub tty: bool,
    /// Terminal rows.
    pub rows: Option<u64>,
    /// Terminal columns.
    pub cols: Option<u64>,
    /// Return terminal output with its escape sequences.
    pub raw: bool,
}

/// The terminal size an `exec` asks for, or `None` for pipes; refused in trusted mode.
pub fn terminal_of(args: &ExecExtras, trusted: bool) -> Result<Option<(u16, u16)>, String> {
    if !args.tty {
        if args.rows.is_some() || args.cols.is_some() {
            return Err("rows and cols apply only with tty: true".into());
        }
        return Ok(None);
    }
    if trusted {
        return Err("tty is not available in trusted mode: its commands run without a shell or a terminal; drop tty, or use a shell-mode server".into());
    }
    crate::process::pty::check_size(args.rows, args.cols).map(Some)
}

/// Per-command limits and where per-command cgroups are made, found when an engine starts
/// and owned by it: a second engine in the same process (the in-process tests) makes its
/// own from its own configuration.
pub struct CommandSetup {
    limits: Limits,
    cgroups: Option<Cgroups>,
}

impl CommandSetup {
    /// Reads the limits of `config` and finds where per-command cgroups can be made: they
    /// hold `pids` of `YIELDSHELL_LIMITS` and, on Linux, every command's processes (the
    /// record owns what is in its cgroup, whatever session or group they move to).
    /// `YIELDSHELL_CGROUP=off` (without `pids`) keeps commands out of cgroups. Warns when
    /// `pids` cannot be enforced.
    pub fn new(config: &Config) -> CommandSetup {
        let limits = config.limits;
        let wanted = cfg!(target_os = "linux") && config.cgroups;
        if let (Some(max), Some(_)) = (limits.pids, sys::JOB_PROCESS_LIMIT) {
            crate::base::log::info!("pids={max}: the active-process limit of each command's job");
            return CommandSetup {
                limits,
                cgroups: None,
            };
        }
        let cgroups = match limits.pids {
            None if !wanted => None,
            None => match Cgroups::probe(None) {
                Ok(c) => {
                    crate::base::log::info!(
                        "a {:?} cgroup per command holds its processes",
                        c.version()
                    );
                    Some(c)
                }
                Err(why) => {
                    crate::base::log::info!(
                        "no cgroup per command ({why}); a command's processes are found through \
                         its process groups, its marker and the server's subreaper"
                    );
                    None
                }
            },
            Some(max) => match Cgroups::probe(Some(max)) {
                Ok(c) => {
                    crate::base::log::info!(
                        "pids={max}: a {:?} pids cgroup per command",
                        c.version()
                    );
                    Some(c)
                }
                Err(why) => {
                    crate::base::log::warn!(
                        "YIELDSHELL_LIMITS pids={max} is not enforced: no pids cgroup can be created ({why})"
                    );
                    None
                }
            },
        };
        CommandSetup { limits, cgroups }
    }

    /// The path prefix of this server's command cgroups, when cgroups are in use (for the
    /// guardian).
    pub fn cgroup_prefix(&self) -> Option<std::path::PathBuf> {
        self.cgroups.as_ref().map(Cgroups::prefix)
    }

    /// A new cgroup for one command, when cgroups are in use.
    pub fn new_cgroup(&self) -> Result<Option<CommandGroup>, String> {
        match &self.cgroups {
            None => Ok(None),
            Some(c) => c
                .create()
                .map(Some)
                .map_err(|e| format!("cannot create the command's cgroup: {e}")),
        }
    }

    /// The rlimits of every command, as the sandbox's plan takes them (resource, value; soft
    /// and hard alike). Empty when `YIELDSHELL_LIMITS` sets none.
    pub fn rlimits(&self) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = self
            .limits
            .rlimits()
            .iter()
            .map(|r| (r.resource as u32, r.soft))
            .collect();
        // Where a command's job caps its processes, `pids` travels as a limit of its own.
        if let (Some(max), Some(resource)) = (self.limits.pids, sys::JOB_PROCESS_LIMIT) {
            out.push((resource, max));
        }
        out
    }
}

impl RecordExtras {
    /// Called once when the record has ended, before its waiters are woken: the call's
    /// temporary directory is emptied and given back, so that the next call (which may come
    /// at once) takes it again with the Landlock ruleset kept for it.
    pub fn finished(&self) {
        if let Some(t) = &self.tmp {
            t.remove();
        }
    }

    /// Called once after the record's waiters were woken: its cgroup goes (when empty). An
    /// `rmdir` of a cgroup takes tens of microseconds, which the answer does not wait for.
    pub fn finished_after_answer(&self) {
        if let Some(g) = &self.cgroup {
            g.remove();
        }
    }

    /// Sends `signal` to every process in the record's cgroup (they are the record's by
    /// construction; each is checked again through a pidfd before the signal). Returns
    /// how many were signalled.
    pub fn signal_cgroup(&self, signal: i32) -> usize {
        let Some(g) = &self.cgroup else { return 0 };
        let name = g
            .dir()
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let mut sent = 0;
        for pid in g.pids() {
            let Ok(handle) = crate::base::sys::ProcHandle::open(pid) else {
                continue;
            };
            // The pid is held by the handle now: still in our cgroup means still ours.
            let inside = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
                .is_ok_and(|c| c.contains(&name));
            if inside && handle.signal(signal).is_ok() {
                sent += 1;
            }
        }
        sent
    }
}

/// The quiet time before a blocked reader counts as waiting.
const QUIET: Duration = Duration::from_millis(inputwait::QUIET_MS);

/// Whether a record waits for input, as far as can be told without `/proc`.
pub enum Precheck {
    /// It cannot be waiting (finished, no stdin, or no way to tell).
    No,
    /// Output arrived less than 300 ms ago: look again at this time.
    NotYet(Instant),
    /// Look in `/proc` (outside the record's lock) for a reader of this input.
    Look(u32, Input),
}

/// The cheap part of the input-wait check, under the record's lock.
pub fn precheck(proc: &Proc, st: &State, now: Instant) -> Precheck {
    if st.ended.is_some() || !inputwait::SUPPORTED {
        return Precheck::No;
    }
    let Some(input) = &proc.info.agent.input else {
        return Precheck::No;
    };
    if proc.info.agent.terminal.is_none() && !proc.stdin_open() {
        return Precheck::No;
    }
    let quiet_at = st.last_output + QUIET;
    if now < quiet_at {
        return Precheck::NotYet(quiet_at);
    }
    Precheck::Look(proc.info.pid, input.clone())
}

/// The prompt of a record waiting for input: the last partial line of its newest output
/// (terminal escapes removed), at most 1000 bytes.
pub fn prompt(proc: &Proc, st: &State) -> String {
    let out = &st.output;
    // The stream that printed last (a shell's `read -p` prompts on stderr).
    let stream = if out.newest_seq(STDERR) > out.newest_seq(STDOUT) {
        STDERR
    } else {
        STDOUT
    };
    let total = out.bytes_total(stream);
    let mut tail = Vec::new();
    out.stream_bytes_from(stream, total.saturating_sub(4096), &mut tail);
    let text = if proc.info.agent.terminal.is_some() {
        proc.info
            .agent
            .secrets_now()
            .redact_bytes(crate::base::ansi::strip(&tail).text)
    } else {
        tail
    };
    let text = String::from_utf8_lossy(&text);
    inputwait::prompt_of(&text, 1000).to_string()
}

/// Whether a record waits for input, as results report it: `Some(prompt)` when a process
/// of it is blocked reading its input and it has been quiet for 300 ms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputState(pub Option<Box<str>>);

impl InputState {
    /// True when the record waits for input.
    pub fn awaiting(&self) -> bool {
        self.0.is_some()
    }
}

/// The input state of a record for a result (nothing is looked at unless it runs).
pub fn input_state(proc: &Proc, running: bool) -> InputState {
    InputState(
        running
            .then(|| awaiting_input(proc))
            .flatten()
            .map(String::into_boxed_str),
    )
}

/// The input states of several records at once (`ps`): one pass over `/proc` at most.
pub fn input_states(procs: &[(&Proc, bool)]) -> Vec<InputState> {
    let now = Instant::now();
    let looks: Vec<Option<(u32, Input)>> = procs
        .iter()
        .map(|&(proc, running)| {
            if !running {
                return None;
            }
            match precheck(proc, &proc.lock(), now) {
                Precheck::Look(pid, input) => Some((pid, input)),
                _ => None,
            }
        })
        .collect();
    let asked: Vec<(u32, &Input)> = looks.iter().flatten().map(|(g, i)| (*g, i)).collect();
    let mut answers = inputwait::blocked_readers(&asked).into_iter();
    looks
        .iter()
        .zip(procs)
        .map(|(look, &(proc, _))| {
            let waiting = look.is_some() && answers.next().flatten().is_some();
            if waiting {
                InputState(Some(prompt(proc, &proc.lock()).into_boxed_str()))
            } else {
                InputState(None)
            }
        })
        .collect()
}

/// `Some(prompt)` when a process of the record is blocked reading its input and the
/// record has printed nothing for 300 ms. Looks in `/proc` only when the cheap checks pass.
pub fn awaiting_input(proc: &Proc) -> Option<String> {
    let look = {
        let st = proc.lock();
        match precheck(proc, &st, Instant::now()) {
            Precheck::Look(pid, input) => (pid, input),
            _ => return None,
        }
    };
    inputwait::blocked_reader(look.0, &look.1)?;
    let st = proc.lock();
    Some(prompt(proc, &st))
}

/// Shapes a read of a terminal record: escape sequences removed unless `raw`, and an
/// unfinished sequence at the end left for the next read (the cursor moves back to its
/// start, while the record runs). Positions are untouched otherwise. A `raw` read in which
/// a secret shows once the escape sequences are removed (a value split by them, which the
/// stream's filter saw apart) is shaped as a read that is not raw, so that it is redacted.
pub fn shape_read(proc: &Proc, out: &mut ReadOut, raw: bool, running: bool) {
    if proc.info.agent.terminal.is_none() {
        return;
    }
    let secrets = proc.info.agent.secrets_now();
    if raw && secrets.is_empty() {
        return;
    }
    let stripped = crate::base::ansi::strip(&out.stdout);
    let redacted = secrets.redact_bytes(stripped.text.clone());
    if raw && redacted == stripped.text {
        return;
    }
    out.stdout = redacted;
    if running && stripped.held > 0 {
        out.next_seq -= stripped.held as u64;
        out.capped = true;
    }
}

/// What `write` with `close_stdin` does: on a terminal, Ctrl-D (end of input for a
/// reader in canonical mode) is appended and the terminal stays open; elsewhere the pipe
/// is closed. Returns whether to close.
pub fn close_input(proc: &Proc, close: bool, data: &mut Vec<u8>) -> bool {
    if close && proc.info.agent.terminal.is_some() {
        data.push(0x04);
        return false;
    }
    close
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noninteractive_defaults_yield_to_the_server_and_the_call() {
        let mut env = vec![(OsString::from("PATH"), OsString::from("/bin"))];
        let server = vec![(OsString::from("PAGER"), OsString::from("less"))];
        let overlay = vec![("GIT_PAGER".to_string(), "delta".to_string())];
        add_noninteractive(&mut env, &server, &overlay);
        let names: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        assert_eq!(
            names,
            vec![
                "PATH=/bin",
                "GIT_TERMINAL_PROMPT=0",
                "PAGER=less",
                "GCM_INTERACTIVE=never",
                "DEBIAN_FRONTEND=noninteractive"
            ]
        );
    }
}
