//! The live process groups of this server's records, with their leaders' start times,
//! and the guardian's pid: what `tree` reads to tell a record's leader from an orphan
//! (`guardian` keeps them when groups start and end).
//!
//! Statics, not an engine's: the kernel gives a process one set of children, whichever
//! engine started them, and `tree` reads which of them lead live groups.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::Mutex;

/// The guardian's pid (0 until it started): a child of the server that is not a command.
pub(crate) static PID: AtomicU32 = AtomicU32::new(0);
/// The process groups of live records, as announced (so `tree` can tell a record's stage
/// leader, a child of the server, from an orphan that was re-parented to it).
/// Each maps to its leader's start time (see `tree::start_of`), when it could be read.
pub(crate) static LIVE: Mutex<Option<HashMap<u32, Option<u64>>>> = Mutex::new(None);

/// The guardian's pid, if it was started.
pub fn pid() -> Option<u32> {
    Some(PID.load(Ordering::Relaxed)).filter(|&p| p != 0)
}

/// Whether some record's process group is live.
pub fn any_live_group() -> bool {
    LIVE.lock().as_ref().is_some_and(|set| !set.is_empty())
}

/// Whether `pgid` is the process group of a live record.
pub fn is_live_group(pgid: u32) -> bool {
    LIVE.lock()
        .as_ref()
        .is_some_and(|set| set.contains_key(&pgid))
}

/// The start time of the leader of group `pgid` (live, or among the last `STARTS_KEPT`
/// groups announced), if known: no descendant of the group's record started earlier. Kept
/// after the group is gone, so that a `stop` whose leader died first can still tell its
/// record's strays from older ones; a pid reused as a group later gives a later time, which
/// only attributes fewer processes.
pub fn group_start(pgid: u32) -> Option<u64> {
    STARTS.lock().as_ref()?.0.get(&pgid).copied()
}

/// How many groups' start times are kept after they are gone.
pub(crate) const STARTS_KEPT: usize = 4096;

/// Start times of groups by pgid, and their order of arrival (to forget the oldest).
#[allow(clippy::type_complexity)]
pub(crate) static STARTS: Mutex<Option<(HashMap<u32, u64>, std::collections::VecDeque<u32>)>> =
    Mutex::new(None);
