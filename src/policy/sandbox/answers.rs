//! `Protected::find`'s answers kept from one call to the next while what they rest on is
//! unchanged, so that a call in a directory that did not change pays a `stat` for each
//! directory and file the answer read (the stamps, `lookup::Stamps`) instead of the whole
//! look-up (the walk up to a git directory, its `.git` file and common directory read and
//! resolved, each protected name looked up).
//!
//! An answer is kept only when its stamps can stand for it (`Stamps::standing`): no
//! symbolic link among the protected names and nothing read through one, and every stamped
//! directory and file unchanged for [`lookup::QUIET`](super::lookup::QUIET) when it was
//! read. It is given again only while every stamp still holds and the wall clock was not
//! set in between (`Stamps::hold`); else it is dropped and the look-up made afresh.

use std::path::{Path, PathBuf};
use std::time::Duration;

use parking_lot::Mutex;

use super::lookup::Stamps;

/// Most answers kept (one per working directory and writable places, most recent last).
const MOST: usize = 8;

/// The calls' working directory, roots and writable places, as `Protected::find` got them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Key {
    cwd: PathBuf,
    roots: Vec<PathBuf>,
    writable: Vec<PathBuf>,
}

impl Key {
    pub(super) fn new(cwd: &Path, roots: &[&Path], writable: &[&Path]) -> Key {
        Key {
            cwd: cwd.to_path_buf(),
            roots: roots.iter().map(|p| p.to_path_buf()).collect(),
            writable: writable.iter().map(|p| p.to_path_buf()).collect(),
        }
    }
}

/// The answers kept.
pub(super) struct Kept<T> {
    entries: Mutex<Vec<(Key, T, Stamps)>>,
    /// Places whose answer could not be kept a moment ago, and until when they are looked
    /// up without stamps (a busy directory would cost the stamps at every call and keep
    /// nothing).
    busy: Mutex<Vec<(Key, std::time::Instant)>>,
    /// How long a stamped path must have been unchanged for its answer to be kept.
    quiet: Duration,
    /// Answers given from here (for the tests).
    #[cfg(test)]
    given: std::sync::atomic::AtomicUsize,
}

impl<T> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kept({} answers)", self.entries.lock().len())
    }
}

impl<T: Clone> Default for Kept<T> {
    fn default() -> Self {
        Kept::new(super::lookup::QUIET)
    }
}

impl<T: Clone> Kept<T> {
    /// No answers yet; an answer is kept when what it read was unchanged for `quiet`.
    pub(super) fn new(quiet: Duration) -> Kept<T> {
        Kept {
            entries: Mutex::new(Vec::new()),
            busy: Mutex::new(Vec::new()),
            quiet,
            #[cfg(test)]
            given: Default::default(),
        }
    }

    /// How long a directory must have been unchanged for its stamp to stand for it.
    pub(super) fn quiet(&self) -> Duration {
        self.quiet
    }

    /// The answer kept for `key`, when every stamp it rests on still holds. One that does
    /// not hold is dropped.
    pub(super) fn answer(&self, key: &Key) -> Option<T> {
        let (found, stamps) = {
            let entries = self.entries.lock();
            let (_, found, stamps) = entries.iter().find(|(k, _, _)| k == key)?;
            (found.clone(), stamps.clone())
        };
        // Checked outside the lock: each stamp is a system call.
        if stamps.hold() {
            crate::base::log::debug!("protected paths of {}: the kept answer", key.cwd.display());
            #[cfg(test)]
            self.given
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Some(found);
        }
        if crate::base::log::enabled(crate::base::log::Level::Debug) {
            let what = stamps
                .first_changed()
                .map_or("the clock was set".to_string(), |p| p.display().to_string());
            crate::base::log::debug!(
                "protected paths of {} looked up afresh: {what} changed",
                key.cwd.display()
            );
        }
        self.entries.lock().retain(|(k, _, _)| k != key);
        None
    }

    /// How many answers were given from here.
    #[cfg(test)]
    pub(super) fn given(&self) -> usize {
        self.given.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// True when `key`'s place could not be kept a moment ago: look it up without stamps.
    pub(super) fn is_busy(&self, key: &Key) -> bool {
        let now = std::time::Instant::now();
        let mut busy = self.busy.lock();
        busy.retain(|(_, until)| *until > now);
        busy.iter().any(|(k, _)| k == key)
    }

    /// Keeps `found` for `key`, when its `stamps` can stand for it; a place whose stamps
    /// cannot is looked up without them for [`lookup::QUIET`](super::lookup::QUIET) (its
    /// directories changed within that, so nothing could be kept before it passed).
    pub(super) fn keep(&self, key: Key, found: &T, stamps: Stamps) {
        if !stamps.standing(self.quiet) {
            let mut busy = self.busy.lock();
            if busy.len() < MOST && !busy.iter().any(|(k, _)| *k == key) {
                let until = std::time::Instant::now() + self.quiet;
                busy.push((key.clone(), until));
            }
            drop(busy);
            if crate::base::log::enabled(crate::base::log::Level::Debug) {
                let why = stamps.why_not_standing(self.quiet).unwrap_or_default();
                crate::base::log::debug!(
                    "protected paths of {} not kept for the next call: {why}",
                    key.cwd.display()
                );
            }
            return;
        }
        let mut entries = self.entries.lock();
        entries.retain(|(k, _, _)| *k != key);
        if entries.len() >= MOST {
            entries.remove(0);
        }
        entries.push((key, found.clone(), stamps));
    }
}
