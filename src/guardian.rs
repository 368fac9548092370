//! The guardian: a small process that kills our process groups if the server dies.
//!
//! SIGKILL gives the server no chance to clean up. So at startup, while the server is still
//! single-threaded, it forks a guardian that detaches (own session, stdio on `/dev/null`,
//! every other descriptor closed, terminal signals ignored) and reads a pipe. The server
//! writes `+<pgid>` when it starts a process group and `-<pgid>` when the group is gone.
//! When the pipe reaches end of file (the server exited, however it exited) the guardian
//! sends SIGKILL to every group still open and to every process carrying this server's
//! marker (and their descendants), twice to catch processes forked during the first sweep,
//! then exits. After a clean shutdown there is nothing left for it to do.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::{sys, tree};

static PIPE: OnceLock<Mutex<File>> = OnceLock::new();
static PREFIX: OnceLock<String> = OnceLock::new();

/// Starts the guardian for marker `prefix`. Call before any thread is started.
pub fn start(prefix: String) {
    let _ = PREFIX.set(prefix);
    match sys::fork_helper(run) {
        Ok(pipe) => {
            let _ = PIPE.set(Mutex::new(pipe));
        }
        Err(e) => crate::warn!(
            "cannot start the guardian ({e}); a SIGKILL of the server would leave its processes"
        ),
    }
}

/// Tells the guardian that process group `pgid` started (`alive`) or is gone.
pub fn announce(pgid: u32, alive: bool) {
    if let Some(pipe) = PIPE.get() {
        let line = format!("{}{pgid}\n", if alive { '+' } else { '-' });
        let _ = pipe.lock().write_all(line.as_bytes());
    }
}

fn run(pipe: File) -> i32 {
    sys::detach_helper(pipe.as_fd());
    let prefix = PREFIX.get().cloned().unwrap_or_default();
    let mut groups: HashSet<u32> = HashSet::new();
    for line in BufReader::new(pipe).lines() {
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
    0
}
