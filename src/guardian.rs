//! The guardian: a small process that kills our process groups if the server dies.
//!
//! SIGKILL gives the server no chance to clean up. So before the first command starts, the
//! server starts a guardian: its own binary again, run with a hidden first argument
//! ([`ARG`]), in a session of its own, with stdout and stderr on `/dev/null` and the read
//! end of a pipe as stdin. It ignores the terminal signals and reads the pipe. The server
//! writes `+<pgid>` when it starts a process group and `-<pgid>` when the group is gone.
//! When the pipe reaches end of file (the server exited, however it exited) the guardian
//! sends SIGKILL to every group still open and to every process carrying this server's
//! marker (and their descendants), twice to catch processes forked during the first sweep,
//! then exits. After a clean shutdown there is nothing left for it to do.
//!
//! The guardian is started lazily, by the first spawn: a server that never runs a command
//! (a client's probe that only asks `server/discover`, say) starts no process at all. And
//! since it is spawned (`posix_spawn`) rather than forked, it can be started at any time,
//! from any thread.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, Write};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::{sys, tree};

/// The hidden first argument that makes the binary a guardian.
pub const ARG: &str = "__yieldshell_guardian";

static PIPE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
static PREFIX: OnceLock<String> = OnceLock::new();

/// Sets the marker prefix of this server's processes; the guardian starts with the first
/// command ([`ensure_started`]).
pub fn configure(prefix: String) {
    let _ = PREFIX.set(prefix);
}

/// Starts the guardian unless it runs already (or could not be started: that is warned
/// about once). Call before a process group is created.
pub fn ensure_started() {
    PIPE.get_or_init(|| match spawn() {
        Ok(pipe) => Some(Mutex::new(pipe)),
        Err(e) => {
            crate::warn!(
                "cannot start the guardian ({e}); a SIGKILL of the server would leave its processes"
            );
            None
        }
    });
}

fn spawn() -> std::io::Result<File> {
    let (read, write) = std::io::pipe()?;
    let null = || File::options().read(true).write(true).open("/dev/null");
    let program = own_binary()?;
    let prefix = PREFIX.get().cloned().unwrap_or_default();
    // An empty environment: the guardian needs none, and the server's may hold secrets.
    let env: Vec<(OsString, OsString)> = Vec::new();
    sys::spawn(sys::SpawnSpec {
        program: &program,
        arg0: Some("yieldshell-guardian"),
        args: &[ARG.to_string(), prefix],
        env: &env,
        cwd: std::path::Path::new("/"),
        stdin_pipe: false,
        stdin_file: Some(File::from(std::os::fd::OwnedFd::from(read))),
        stdout: Some(null()?),
        stderr: Some(null()?),
        join_group: None,
        terminal: None,
    })?;
    Ok(File::from(std::os::fd::OwnedFd::from(write)))
}

/// The path that executes this very binary (also after it was replaced on disk, on Linux).
fn own_binary() -> std::io::Result<String> {
    if cfg!(target_os = "linux") {
        return Ok("/proc/self/exe".to_string());
    }
    let path = std::env::current_exe()?;
    path.into_os_string()
        .into_string()
        .map_err(|_| std::io::Error::other("the binary's path is not UTF-8"))
}

/// The guardian's `main`: `args` are the arguments after [`ARG`] (the marker prefix).
pub fn main(args: &[OsString]) -> std::process::ExitCode {
    sys::ignore_terminal_signals();
    // Like the server, not readable through /proc by the commands it watches over.
    let _ = sys::set_dumpable(false);
    let prefix = args
        .first()
        .and_then(|p| p.to_str())
        .unwrap_or_default()
        .to_string();
    let mut groups: HashSet<u32> = HashSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, num) = line.split_at(line.len().min(1));
        let Ok(pgid) = num.parse::<u32>() else {
            continue;
        };
        match sign {
            "+" => groups.insert(pgid),
            _ => groups.remove(&pgid),
        };
    }
    for _ in 0..2 {
        for &pgid in &groups {
            let _ = sys::killpg(pgid, libc::SIGKILL);
        }
        if !prefix.is_empty() {
            tree::signal_all(&prefix, libc::SIGKILL);
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Tells the guardian that process group `pgid` started (`alive`) or is gone.
pub fn announce(pgid: u32, alive: bool) {
    if let Some(Some(pipe)) = PIPE.get() {
        let line = format!("{}{pgid}\n", if alive { '+' } else { '-' });
        let _ = pipe.lock().write_all(line.as_bytes());
    }
}
