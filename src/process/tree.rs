//! Finding our processes that left their process group.
//!
//! Every child gets an environment marker `YIELDSHELL_OWNER=<server>/<proc id>`. A
//! descendant that called `setsid` (or was started with `nohup … &` in a new session) is
//! outside the group that `killpg` reaches, but it still carries the marker, and its parent
//! links (`/proc/<pid>/stat`) lead back to our processes. A process is ours when it carries
//! the marker, or when its parent is ours (this also covers a descendant that cleared its
//! environment while its parent lives).
//!
//! A descendant can also make itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its
//! `environ` is then unreadable to the same user, so it carries a marker nobody can see.
//! Once its parent is gone, the kernel still shows one fact: the server is a child
//! subreaper, so the orphan is re-parented to the server. In the binary ([`claim_children`])
//! every child of the server is ours: the guardian is left alone, the rest are records'
//! stage leaders (their groups are announced to the guardian, see [`crate::groups::is_live_group`])
//! or orphans. Shutdown signals them all; `stop` and timeouts signal the orphans that no
//! readable marker gives to another record (a non-dumpable orphan cannot be told apart
//! between records). Every orphan seen is announced to the guardian with its start time, so
//! a SIGKILL of the server reaches it too (see `note_orphans`).
//!
//! Signalling is race-free where Linux offers pidfds: the handle is opened first, the
//! process is checked again, and the signal goes through the handle, so a pid that was
//! reused in between is never hit. Without `/proc` (macOS) this finds nothing and only the
//! process group is signalled.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::base::sys;

/// Where the orphans found are announced: the guardian (`process/guardian`), which kills
/// them if the server dies.
pub trait Orphans: Send + Sync {
    /// Announces an orphan (`pid`, with its start time).
    fn announce_orphan(&self, pid: u32, start: u64);
    /// The guardian's pid, while one runs (never an orphan).
    fn pid(&self) -> Option<u32>;
    /// Whether every command of its server runs in a cgroup of its own: the cgroups then
    /// hold every process of every record, the guardian kills what they hold, and orphans
    /// need not be announced to it one by one.
    fn holds_cgroups(&self) -> bool;
}

/// Whether every child of this process is the server's (the binary; in-process servers
/// share their process and rely on markers only). This and the statics below describe the
/// process's children, of which the kernel gives a process one set, whichever engine
/// started them.
static SOLE: AtomicBool = AtomicBool::new(false);
/// Orphans already announced to the guardian, as (pid, start time).
static ANNOUNCED: Mutex<Option<HashSet<(u32, u64)>>> = Mutex::new(None);

/// Declares that every child of this process belongs to this server (call once, from the
/// binary's `run`, before any command starts).
pub fn claim_children() {
    SOLE.store(true, Ordering::SeqCst);
}

/// The environment variable that marks our processes.
pub const MARKER_VAR: &str = "YIELDSHELL_OWNER";

#[derive(Clone, Copy, Debug)]
struct Entry {
    ppid: u32,
    pgid: u32,
    /// Start time in clock ticks after boot: with the pid, it names one process for good.
    start: u64,
}

fn read_stat(pid: u32) -> Option<Entry> {
    if !sys::PROC_FS {
        return None;
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_stat(&text)?;
    if stat.state == "Z" || stat.state == "X" {
        return None;
    }
    Some(Entry {
        ppid: stat.ppid,
        pgid: stat.pgid,
        start: stat.start,
    })
}

/// The fields of a `/proc/<pid>/stat` line that this crate reads.
pub(crate) struct Stat<'a> {
    pub state: &'a str,
    pub ppid: u32,
    pub pgid: u32,
    pub session: u32,
    /// Start time in clock ticks after boot.
    pub start: u64,
}

/// Parses a `/proc/<pid>/stat` line (`pid (comm) state ppid pgrp session ...`). The command
/// name is in parentheses and may contain anything: the fields are read after the last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<Stat<'_>> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    // Field 22 of stat; `fields` stands at field 7 now.
    let start = fields.nth(15)?.parse().ok()?;
    Some(Stat {
        state,
        ppid,
        pgid,
        session,
        start,
    })
}

fn has_marker(pid: u32, marker: &str, prefix_only: bool) -> bool {
    if !sys::PROC_FS {
        return false;
    }
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
    if !sys::PROC_FS {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Which children of the server count as seeds, besides marked processes.
#[derive(Clone, Copy)]
enum Adopt<'a> {
    /// None (an in-process server, or the guardian without announced orphans).
    Nothing,
    /// Children that are neither a live record's stage nor marked with one of this
    /// server's markers (`prefix`): orphans no readable marker gives to another record.
    /// `born` is the earliest start time of the record's stage leaders, when known: an
    /// orphan that started before it cannot be the record's (and none is adopted when it is
    /// not known).
    Unattributed(&'a str, Option<u64>),
    /// These (pid, start time) pairs, announced by the server (the guardian).
    Listed(&'a [(u32, u64)]),
}

/// Our processes: marked with `marker` (exactly, or as a prefix when `prefix_only`), members
/// of the groups `pgids`, children of the server as `adopt` says, and descendants of any.
/// The server itself is never included.
fn ours(
    marker: &str,
    prefix_only: bool,
    pgids: &[u32],
    adopt: Adopt<'_>,
) -> Vec<(u32, Entry, bool)> {
    let me = std::process::id();
    let mut table: HashMap<u32, Entry> = HashMap::new();
    for pid in all_pids() {
        if pid != me {
            if let Some(e) = read_stat(pid) {
                table.insert(pid, e);
            }
        }
    }
    let guardian = crate::process::groups::pid();
    let mut set: HashSet<u32> = HashSet::new();
    let mut marked: HashSet<u32> = HashSet::new();
    for (&pid, e) in &table {
        if pgids.contains(&e.pgid) {
            set.insert(pid);
        } else if has_marker(pid, marker, prefix_only) {
            set.insert(pid);
            marked.insert(pid);
        } else if adopted(pid, e, me, guardian, adopt) {
            set.insert(pid);
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
pub fn signal_strays(
    marker: &str,
    pgids: &[u32],
    signal: i32,
    guardian: Option<&dyn Orphans>,
) -> usize {
    let mut sent = 0;
    let prefix = marker.rfind('/').map_or("", |i| &marker[..=i]);
    let adopt = if SOLE.load(Ordering::SeqCst) && !prefix.is_empty() {
        if let Some(guardian) = guardian {
            note_orphans(guardian);
        }
        let born = pgids
            .iter()
            .filter_map(|&p| crate::process::groups::group_start(p))
            .min();
        Adopt::Unattributed(prefix, born)
    } else {
        Adopt::Nothing
    };
    let found = match adopt {
        Adopt::Unattributed(prefix, born) => record_tree(marker, pgids, prefix, born),
        _ => ours(marker, false, pgids, adopt),
    };
    for (pid, entry, marked) in found {
        if pgids.contains(&entry.pgid) {
            continue;
        }
        if signal_checked(pid, marker, false, marked, entry, signal) {
            sent += 1;
        }
    }
    sent
}

/// A record's processes in the binary, without looking at the rest of the host: every
/// process of a record descends from one of its stages or from an orphan re-parented to the
/// server (a child subreaper). The seeds are the stages (`pgids`) and the orphans that are
/// the record's: in one of its groups, carrying its `marker`, or adopted as in
/// [`Adopt::Unattributed`]; then their descendants. Costs the record's processes plus the
/// server's children.
fn record_tree(
    marker: &str,
    pgids: &[u32],
    prefix: &str,
    born: Option<u64>,
) -> Vec<(u32, Entry, bool)> {
    let me = std::process::id();
    let guardian = crate::process::groups::pid();
    // A stage is a seed while it is the server's live child leading its live group (a pid
    // is not reused while it is unreaped or its group has members).
    let mut queue: std::collections::VecDeque<(u32, bool)> = pgids
        .iter()
        .filter(|&&p| {
            crate::process::groups::is_live_group(p) && read_stat(p).is_some_and(|e| e.ppid == me)
        })
        .map(|&p| (p, false))
        .collect();
    // The server's children that are the record's orphans, not seen yet.
    let orphans = |seen: &HashSet<u32>| -> Vec<(u32, bool)> {
        let mut found = Vec::new();
        for pid in main_thread_children() {
            if seen.contains(&pid)
                || guardian == Some(pid)
                || crate::process::groups::is_live_group(pid)
            {
                continue;
            }
            let Some(e) = read_stat(pid) else { continue };
            if pgids.contains(&e.pgid) {
                found.push((pid, false));
            } else if has_marker(pid, marker, false) {
                found.push((pid, true));
            } else if adopted(pid, &e, me, guardian, Adopt::Unattributed(prefix, born)) {
                found.push((pid, false));
            }
        }
        found
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    queue.extend(orphans(&seen));
    // A process whose parent exits while the walk runs moves to the server after the
    // server's children were read and before its parent's were: the server's children are
    // read again after each walk, until they hold nothing new (a parent that ends is gone
    // from the tree once its children have moved).
    for _ in 0..4 {
        while let Some((pid, marked)) = queue.pop_front() {
            if pid == me || !seen.insert(pid) {
                continue;
            }
            if let Some(e) = read_stat(pid) {
                out.push((pid, e, marked));
            }
            queue.extend(children_of(pid).into_iter().map(|c| (c, false)));
        }
        queue.extend(orphans(&seen));
        if queue.is_empty() {
            break;
        }
    }
    out
}

/// Signals every process that carries a marker starting with `prefix` (all records of this
/// server), and their descendants. Returns how many were signalled.
/// In the binary every process of every record is a descendant of the server (a child
/// subreaper: an orphan is re-parented to it, wherever it moved), so it signals every
/// descendant but the guardian, found by walking the children lists down from the server:
/// the cost is what the server started, not what the host runs.
pub fn signal_all(prefix: &str, signal: i32) -> usize {
    if SOLE.load(Ordering::SeqCst) {
        let mut sent = 0;
        for (pid, entry) in server_descendants() {
            let Ok(handle) = sys::ProcHandle::open(pid) else {
                continue;
            };
            // The handle holds the pid: the same start time means the same process.
            if read_stat(pid).is_some_and(|e| e.start == entry.start)
                && handle.signal(signal).is_ok()
            {
                sent += 1;
            }
        }
        return sent;
    }
    signal_with(prefix, Adopt::Nothing, signal)
}

/// The children of process `pid`, over all its threads (`/proc/<pid>/task/*/children`).
fn children_of(pid: u32) -> Vec<u32> {
    if !sys::PROC_FS {
        return Vec::new();
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let mut path = task.path();
        path.push("children");
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// Every live descendant of the server but the guardian (and its own children), with its
/// stat entry, parents before children.
fn server_descendants() -> Vec<(u32, Entry)> {
    let guardian = crate::process::groups::pid();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut queue: std::collections::VecDeque<u32> =
        children_of(std::process::id()).into_iter().collect();
    while let Some(pid) = queue.pop_front() {
        if guardian == Some(pid) || !seen.insert(pid) {
            continue;
        }
        if let Some(e) = read_stat(pid) {
            out.push((pid, e));
        }
        queue.extend(children_of(pid));
    }
    out
}

/// [`signal_all`] for the guardian: `orphans` are the (pid, start time) pairs the server
/// announced; each that still runs with the same start time is signalled, with its
/// descendants.
pub fn signal_all_with(prefix: &str, orphans: &[(u32, u64)], signal: i32) -> usize {
    signal_with(prefix, Adopt::Listed(orphans), signal)
}

fn signal_with(prefix: &str, adopt: Adopt<'_>, signal: i32) -> usize {
    let mut sent = 0;
    for (pid, entry, marked) in ours(prefix, true, &[], adopt) {
        if signal_checked(pid, prefix, true, marked, entry, signal) {
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
    found: Entry,
    signal: i32,
) -> bool {
    let Ok(handle) = sys::ProcHandle::open(pid) else {
        return false;
    };
    let still_ours = if marked {
        has_marker(pid, marker, prefix_only)
    } else {
        read_stat(pid).is_some_and(|e| e.ppid == found.ppid && e.start == found.start)
    };
    still_ours && handle.signal(signal).is_ok()
}

/// The start time of process `pid` (clock ticks after boot), if it runs.
pub fn start_of(pid: u32) -> Option<u64> {
    read_stat(pid).map(|e| e.start)
}

/// Whether `pid` (a process other than the server) is a seed under `adopt`.
fn adopted(pid: u32, e: &Entry, me: u32, guardian: Option<u32>, adopt: Adopt<'_>) -> bool {
    match adopt {
        Adopt::Nothing => false,
        Adopt::Listed(list) => list.contains(&(pid, e.start)),
        _ if e.ppid != me || guardian == Some(pid) => false,
        // When the record's start is no longer known (its groups were announced gone), no
        // orphan can be attributed to it: never signal what is not provably ours.
        Adopt::Unattributed(prefix, born) => {
            born.is_some_and(|b| e.start >= b)
                && !crate::process::groups::is_live_group(e.pgid)
                && !has_marker(pid, prefix, true)
        }
    }
}

/// The children of this process's main thread. The kernel re-parents an orphan to the first
/// live thread of its subreaper (`find_alive_thread`: the thread group's leader, which is
/// the main thread, alive while the server runs), and the main thread spawns nothing
/// itself: so these are the orphans re-parented to the server, read with one file instead
/// of one per thread (this runs when each record ends, on the way to its answer).
fn main_thread_children() -> Vec<u32> {
    if !sys::PROC_FS {
        return Vec::new();
    }
    let me = std::process::id();
    std::fs::read_to_string(format!("/proc/{me}/task/{me}/children"))
        .map(|text| {
            text.split_ascii_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Announces to the guardian every child of the server that is neither the guardian nor a
/// live record's stage leader (an orphan re-parented to us), once each. Called when a
/// record ends and on every `stop`, timeout and shutdown scan; does nothing outside the
/// binary.
pub fn note_orphans(guardian: &dyn Orphans) {
    if !SOLE.load(Ordering::SeqCst) || guardian.holds_cgroups() {
        return;
    }
    let guardian_pid = guardian.pid();
    let mut seen = HashSet::new();
    for pid in main_thread_children() {
        // A live record's stage leader (its pid is its group's id) is not an orphan: told
        // apart without reading its stat, so this costs little with thousands of records.
        if guardian_pid == Some(pid) || crate::process::groups::is_live_group(pid) {
            continue;
        }
        let Some(e) = read_stat(pid) else { continue };
        if !crate::process::groups::is_live_group(e.pgid) {
            seen.insert((pid, e.start));
        }
    }
    let mut announced = ANNOUNCED.lock();
    let known = announced.get_or_insert_with(HashSet::new);
    for &(pid, start) in &seen {
        if !known.contains(&(pid, start)) {
            guardian.announce_orphan(pid, start);
        }
    }
    *known = seen;
}

/// How often the orphan watch looks for new children of the server.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Wakes the orphan watch from its idle wait (`wake_watch`).
static WATCH: (Mutex<()>, parking_lot::Condvar) = (Mutex::new(()), parking_lot::Condvar::new());

/// Called when a group starts: an idle orphan watch resumes. Taking the watch's lock makes
/// the wake-up impossible to miss between its check and its wait.
pub fn wake_watch() {
    let _guard = WATCH.0.lock();
    WATCH.1.notify_all();
}

/// Starts the thread that runs [`note_orphans`] every [`WATCH_EVERY`] while a record is live
/// or an orphan is known (and otherwise waits, woken by [`wake_watch`]), so that an orphan made by a command that still runs is announced
/// to the guardian too (once the server is SIGKILLed nobody can see it as ours any more).
/// Only in the binary, once; called when the guardian started.
pub fn watch_orphans(guardian: std::sync::Arc<dyn Orphans>) {
    // The process's orphans are re-parented to the process, whichever engine made them:
    // one watch per process.
    static STARTED: AtomicBool = AtomicBool::new(false);
    if !SOLE.load(Ordering::SeqCst)
        || guardian.holds_cgroups()
        || STARTED.swap(true, Ordering::SeqCst)
    {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("orphans".into())
        .stack_size(128 * 1024)
        .spawn(move || loop {
            // Idle (no live record, no known orphan): sleep until a group starts.
            {
                let mut idle = WATCH.0.lock();
                while !(crate::process::groups::any_live_group()
                    || ANNOUNCED.lock().as_ref().is_some_and(|k| !k.is_empty()))
                {
                    WATCH.1.wait(&mut idle);
                }
            }
            std::thread::sleep(WATCH_EVERY);
            note_orphans(&*guardian);
        });
    if let Err(e) = spawned {
        crate::base::log::warn!("cannot start the orphan watch ({e}); orphans are announced to the guardian only at stops and ends");
    }
}
