//! Finding our processes that left their process group.
//!
//! Every child gets an environment marker `YIELDSHELL_OWNER=<server>/<proc id>`. A
//! descendant that called `setsid` (or was started with `nohup … &` in a new session) is
//! outside the group that `killpg` reaches, but it still carries the marker, and its parent
//! links (`/proc/<pid>/stat`) lead back to our processes. A process is ours when it carries
//! the marker, or when its parent is ours (this also covers a descendant that cleared its
//! environment while its parent lives).
//!
//! Signalling is race-free where Linux offers pidfds: the handle is opened first, the
//! process is checked again, and the signal goes through the handle, so a pid that was
//! reused in between is never hit. Without `/proc` (macOS) this finds nothing and only the
//! process group is signalled.

use std::collections::{HashMap, HashSet};

use crate::sys;

/// The environment variable that marks our processes.
pub const MARKER_VAR: &str = "YIELDSHELL_OWNER";

#[derive(Clone, Copy, Debug)]
struct Entry {
    ppid: u32,
    pgid: u32,
}

fn read_stat(pid: u32) -> Option<Entry> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: parse after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(Entry { ppid, pgid })
}

fn has_marker(pid: u32, marker: &str, prefix_only: bool) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ.split(|&b| b == 0).any(|var| {
        let Some(value) = var
            .strip_prefix(MARKER_VAR.as_bytes())
            .and_then(|v| v.strip_prefix(b"="))
        else {
            return false;
        };
        if prefix_only {
            value.starts_with(marker.as_bytes())
        } else {
            value == marker.as_bytes()
        }
    })
}

fn all_pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Our processes: marked with `marker` (exactly, or as a prefix when `prefix_only`), members
/// of the groups `pgids`, and descendants of either. The server itself is never included.
fn ours(marker: &str, prefix_only: bool, pgids: &[u32]) -> Vec<(u32, Entry, bool)> {
    let me = std::process::id();
    let mut table: HashMap<u32, Entry> = HashMap::new();
    for pid in all_pids() {
        if pid != me {
            if let Some(e) = read_stat(pid) {
                table.insert(pid, e);
            }
        }
    }
    let mut set: HashSet<u32> = HashSet::new();
    let mut marked: HashSet<u32> = HashSet::new();
    for (&pid, e) in &table {
        if pgids.contains(&e.pgid) {
            set.insert(pid);
        } else if has_marker(pid, marker, prefix_only) {
            set.insert(pid);
            marked.insert(pid);
        }
    }
    // Close over children: a process whose parent is ours is ours.
    loop {
        let before = set.len();
        for (&pid, e) in &table {
            if !set.contains(&pid) && set.contains(&e.ppid) {
                set.insert(pid);
            }
        }
        if set.len() == before {
            break;
        }
    }
    set.into_iter()
        .filter_map(|pid| Some((pid, *table.get(&pid)?, marked.contains(&pid))))
        .collect()
}

/// Signals every process of record `marker` that is outside its process groups `pgids`
/// (which the caller signals with `killpg`). Returns how many were signalled.
pub fn signal_strays(marker: &str, pgids: &[u32], signal: i32) -> usize {
    let mut sent = 0;
    for (pid, entry, marked) in ours(marker, false, pgids) {
        if pgids.contains(&entry.pgid) {
            continue;
        }
        if signal_checked(pid, marker, false, marked, entry.ppid, signal) {
            sent += 1;
        }
    }
    sent
}

/// Signals every process that carries a marker starting with `prefix` (all records of this
/// server), and their descendants. Returns how many were signalled.
pub fn signal_all(prefix: &str, signal: i32) -> usize {
    let mut sent = 0;
    for (pid, entry, marked) in ours(prefix, true, &[]) {
        if signal_checked(pid, prefix, true, marked, entry.ppid, signal) {
            sent += 1;
        }
    }
    sent
}

/// Opens a handle, proves the process is still the one found, then signals through the
/// handle.
fn signal_checked(
    pid: u32,
    marker: &str,
    prefix_only: bool,
    marked: bool,
    ppid: u32,
    signal: i32,
) -> bool {
    let Ok(handle) = sys::ProcHandle::open(pid) else {
        return false;
    };
    let still_ours = if marked {
        has_marker(pid, marker, prefix_only)
    } else {
        read_stat(pid).is_some_and(|e| e.ppid == ppid)
    };
    still_ours && handle.signal(signal).is_ok()
}
