//! The file-system look-ups of one call's protected paths (`protected`, `git_controls`),
//! each made once: the walk up, the roots, the git directories' controls and the final
//! list all ask about the same few paths (`.git` above all), and each question is a system
//! call the call waits for.
//!
//! Every answer is also stamped ([`Stamps`]): before a path is looked up in a directory,
//! the directory's device, inode and change time are taken (a file read is stamped from
//! the open file itself). An entry added, removed or renamed in a directory moves the
//! directory's change time, a change of a file's content or links moves the file's, and
//! only the kernel sets a change time (to its clock, never to a value a caller gives). So
//! while every stamp still holds, and none was taken within [`QUIET`] of a change (two
//! changes in one tick of the clock can leave the time as it was), every answer is still
//! what it was: `Protected::find` answers a later call from it (`answers::Kept`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::base::sys::ext::MetadataExt;

/// How long ago a stamped directory or file must have last changed for its stamp to stand
/// for it: a change within the same tick of the kernel's coarse clock (a few milliseconds)
/// as an earlier one may leave its change time as it was.
pub const QUIET: Duration = Duration::from_secs(2);

/// How far the wall clock may have moved against the monotonic clock between a stamp and
/// its check: more (the clock was set) and no stamp stands, since a change time could
/// then repeat one taken before.
const CLOCK_MOVED: Duration = Duration::from_millis(500);

/// What a directory or file was when it was looked at: device, inode, change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Without a change time (Windows), every stamp is the same: [`Stamps::standing`] is
    /// then always false.
    #[cfg(not(unix))]
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            ctime: (0, 0),
        }
    }

    /// The stamp of `path` now (`follow`: a final link followed); `None` when it does not
    /// exist or cannot be read.
    fn now(path: &Path, follow: bool) -> Option<Stamp> {
        let m = match follow {
            true => std::fs::metadata(path),
            false => std::fs::symlink_metadata(path),
        };
        m.ok().as_ref().map(Stamp::of)
    }

    /// True when the last change is at least `quiet` before `now`.
    fn quiet(&self, now: SystemTime, quiet: Duration) -> bool {
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(
                self.ctime.0.max(0) as u64,
                self.ctime.1.clamp(0, 999_999_999) as u32,
            );
        now.duration_since(changed).is_ok_and(|d| d >= quiet)
    }
}

/// The stamps the answers of one `Protected::find` rest on, and whether they can stand for
/// them at all.
#[derive(Clone, Debug)]
pub(super) struct Stamps {
    /// Each path stamped (with whether a final link was followed) and what it was.
    list: Vec<(PathBuf, bool, Option<Stamp>)>,
    /// An answer rests on something no stamp covers (a symbolic link was followed).
    unchecked: bool,
    /// No stamps are taken (a place whose answers were not kept a moment ago): the look-up
    /// costs what it did without them, and nothing is kept.
    off: bool,
    /// When the first stamp was taken, by both clocks.
    taken: (Instant, SystemTime),
}

impl Default for Stamps {
    fn default() -> Self {
        Stamps {
            list: Vec::new(),
            unchecked: false,
            off: false,
            taken: (Instant::now(), SystemTime::now()),
        }
    }
}

impl Stamps {
    /// Stamps `path` (once).
    fn take(&mut self, path: &Path, follow: bool) -> Option<Stamp> {
        if self.off {
            return None;
        }
        if let Some((_, _, s)) = self
            .list
            .iter()
            .find(|(p, f, _)| *f == follow && p.as_os_str() == path.as_os_str())
        {
            return *s;
        }
        let s = Stamp::now(path, follow);
        self.list.push((path.to_path_buf(), follow, s));
        s
    }

    /// Keeps `stamp` for `path`, taken by the caller (from the answer itself).
    fn keep(&mut self, path: &Path, follow: bool, stamp: Option<Stamp>) {
        if self.off {
            return;
        }
        if !self
            .list
            .iter()
            .any(|(p, f, _)| *f == follow && p.as_os_str() == path.as_os_str())
        {
            self.list.push((path.to_path_buf(), follow, stamp));
        }
    }

    /// True when the stamps can stand for the answers: nothing unchecked, and every stamped
    /// path last changed at least `quiet` ([`QUIET`]) ago.
    pub(super) fn standing(&self, quiet: Duration) -> bool {
        let now = SystemTime::now();
        cfg!(unix)
            && !self.off
            && !self.unchecked
            && self
                .list
                .iter()
                .all(|(_, _, s)| s.is_none_or(|s| s.quiet(now, quiet)))
    }

    /// Why the stamps cannot stand for the answers (`None` when they can): for the debug
    /// log.
    pub(super) fn why_not_standing(&self, quiet: Duration) -> Option<String> {
        let now = SystemTime::now();
        if !cfg!(unix) {
            return Some("no change times here".into());
        }
        if self.off {
            return Some("not stamped: its place changed a moment ago".into());
        }
        if self.unchecked {
            return Some("a link was followed".into());
        }
        self.list
            .iter()
            .find(|(_, _, s)| s.is_some_and(|s| !s.quiet(now, quiet)))
            .map(|(p, _, _)| format!("{} changed less than {quiet:?} ago", p.display()))
    }

    /// The first stamp that no longer holds (for the debug log).
    pub(super) fn first_changed(&self) -> Option<&Path> {
        self.list
            .iter()
            .find(|(p, follow, s)| Stamp::now(p, *follow) != *s)
            .map(|(p, _, _)| p.as_path())
    }

    /// True when every stamp still holds (and the wall clock was not set since they were
    /// taken): every answer they cover is still the same.
    pub(super) fn hold(&self) -> bool {
        clock_steady(self.taken)
            && self
                .list
                .iter()
                .all(|(p, follow, s)| Stamp::now(p, *follow) == *s)
    }

    /// The directory a missing `path` would be made in: the nearest directory above it
    /// that existed when stamped (directories stamped as missing are passed over), with
    /// its stamp, when that directory had been quiet for `quiet`. `None` when that
    /// directory was not stamped, or was not quiet.
    pub(super) fn quiet_home<'p>(
        &self,
        path: &'p Path,
        quiet: Duration,
    ) -> Option<(&'p Path, Stamp)> {
        if !cfg!(unix) || self.off {
            return None;
        }
        let now = SystemTime::now();
        for dir in path.ancestors().skip(1) {
            let (_, _, stamp) = self
                .list
                .iter()
                .find(|(p, follow, _)| *follow && p.as_os_str() == dir.as_os_str())?;
            match stamp {
                None => continue,
                Some(s) => return s.quiet(now, quiet).then_some((dir, *s)),
            }
        }
        None
    }

    /// When the stamps were taken, by both clocks.
    pub(super) fn taken(&self) -> (Instant, SystemTime) {
        self.taken
    }
}

/// Waits until none of `paths` (links followed) changed in the last `quiet` (by their
/// change times), at most `bound`; false when that did not come. For the tests and the
/// bench, which need a kept answer to happen.
pub fn wait_unchanged(paths: &[&Path], quiet: Duration, bound: Duration) -> bool {
    let end = Instant::now() + bound;
    let now_quiet =
        |p: &&Path| Stamp::now(p, true).is_some_and(|s| s.quiet(SystemTime::now(), quiet));
    while !paths.iter().all(now_quiet) {
        if Instant::now() >= end {
            return false;
        }
        std::thread::park_timeout(Duration::from_millis(20));
    }
    true
}

/// True when the wall clock moved with the monotonic one since `taken` (within
/// [`CLOCK_MOVED`]).
fn clock_steady(taken: (Instant, SystemTime)) -> bool {
    let mono = taken.0.elapsed();
    match SystemTime::now().duration_since(taken.1) {
        Ok(wall) => wall.abs_diff(mono) <= CLOCK_MOVED,
        Err(_) => false,
    }
}

/// True when directory `dir` (link followed) still has `stamp` and the clock was not set
/// since `taken`: no entry was added, removed or renamed in it.
pub(super) fn unchanged(dir: &Path, stamp: Stamp, taken: (Instant, SystemTime)) -> bool {
    clock_steady(taken) && Stamp::now(dir, true) == Some(stamp)
}

/// The answers so far of one `Protected::find`.
#[derive(Default)]
pub(super) struct Lookups {
    /// `lstat` of each path asked about (`None`: it does not exist or cannot be read).
    stats: Vec<(PathBuf, Option<std::fs::Metadata>)>,
    /// The git paths of each directory asked about (`git_controls::git_paths_at`).
    git_paths: Vec<(PathBuf, Vec<PathBuf>)>,
    /// What the answers rest on.
    pub(super) stamps: Stamps,
    /// The symbolic links passed through on the way to a canonical path, as `lstat` saw
    /// them: a later call may point one elsewhere, which is watched (`Watch::created`).
    links: Vec<(PathBuf, std::fs::Metadata)>,
}

impl Lookups {
    /// Look-ups whose answers are not stamped (nothing of them will be kept).
    pub(super) fn unstamped() -> Lookups {
        let mut look = Lookups::default();
        look.stamps.off = true;
        look
    }

    /// Stamps the directory a look-up of `path` reads (its parent), before the look-up.
    fn depend(&mut self, path: &Path) {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            self.stamps.take(dir, true);
        }
    }

    /// `lstat` of `path` (links not followed), asked of the kernel once.
    pub(super) fn lstat(&mut self, path: &Path) -> Option<std::fs::Metadata> {
        if let Some((_, m)) = self
            .stats
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_os_str())
        {
            return m.clone();
        }
        let m = self.lstat_once(path);
        self.stats.push((path.to_path_buf(), m.clone()));
        m
    }

    /// `lstat` of `path`, asked of the kernel now (and stamped), not kept for later asks.
    pub(super) fn lstat_once(&mut self, path: &Path) -> Option<std::fs::Metadata> {
        self.depend(path);
        let m = std::fs::symlink_metadata(path).ok();
        // Whether it exists, and which file it is, rests on its directory's stamp (an entry
        // made, removed or replaced moves that); a file's own change time covers what the
        // answer reads of it besides (its links). A directory's entries are stamped when
        // looked into.
        if let Some(m) = m.as_ref().filter(|m| !m.is_dir()) {
            self.stamps.keep(path, false, Some(Stamp::of(m)));
        }
        m
    }

    /// True when `path` exists (a link counts, even a dangling one).
    pub(super) fn exists(&mut self, path: &Path) -> bool {
        self.lstat(path).is_some()
    }

    /// True when `path` is a directory itself (not a link to one): for the canonical
    /// paths of git directories, the same as following it.
    pub(super) fn is_dir(&mut self, path: &Path) -> bool {
        self.lstat(path).is_some_and(|m| m.is_dir())
    }

    /// The text of file `path`; `None` without a system call when it was found missing.
    pub(super) fn read(&mut self, path: &Path) -> Option<String> {
        use std::io::Read;
        let known_missing = self
            .stats
            .iter()
            .any(|(p, m)| m.is_none() && p.as_os_str() == path.as_os_str());
        if known_missing {
            return None;
        }
        self.depend(path);
        let read = std::fs::File::open(path).and_then(|mut f| {
            // Stamped from the open file, before its text is read: a write after this
            // moves its change time.
            let stamp = Stamp::of(&f.metadata()?);
            let mut text = String::new();
            f.read_to_string(&mut text)?;
            Ok((stamp, text))
        });
        match read {
            Ok((stamp, text)) => {
                self.stamps.keep(path, true, Some(stamp));
                Some(text)
            }
            Err(e) => {
                if e.kind() == std::io::ErrorKind::NotFound {
                    // Still missing while its directory's stamp holds.
                    self.stats.push((path.to_path_buf(), None));
                } else {
                    self.stamps.unchecked = true;
                }
                None
            }
        }
    }

    /// The canonical form of directory path `path`. Each directory the resolution passes
    /// through (each leading part of `path`, links followed) is stamped first; a result that
    /// is not a directory (a file reached through a link, which a hard link elsewhere could
    /// reach by another name) leaves the answers unchecked.
    pub(super) fn canonical_dir(&mut self, path: &Path) -> Option<PathBuf> {
        let mut part = PathBuf::new();
        for c in path.components() {
            part.push(c);
            self.stamps.take(&part, true);
            self.note_link(&part);
        }
        let out = std::fs::canonicalize(path).ok();
        if out.as_ref().is_some_and(|p| !p.is_dir()) {
            self.stamps.unchecked = true;
        }
        out
    }

    /// The canonical form of `path`, whatever it is; the answers are then unchecked (only
    /// asked about links, whose targets no stamp covers).
    pub(super) fn canonical_any(&mut self, path: &Path) -> Option<PathBuf> {
        self.stamps.unchecked = true;
        let mut part = PathBuf::new();
        for c in path.components() {
            part.push(c);
            self.note_link(&part);
        }
        std::fs::canonicalize(path).ok()
    }

    /// Keeps `part` when it is a symbolic link (once), and the links its target passes
    /// through in turn (`tools -> t1 -> t-v1`: re-pointing `t1` changes what `tools/hooks`
    /// is as much as re-pointing `tools`).
    fn note_link(&mut self, part: &Path) {
        self.note_link_at(part, 0);
    }

    fn note_link_at(&mut self, part: &Path, depth: usize) {
        if self.links.iter().any(|(p, _)| p == part) {
            return;
        }
        let Ok(m) = std::fs::symlink_metadata(part) else {
            return;
        };
        if !m.file_type().is_symlink() {
            return;
        }
        self.links.push((part.to_path_buf(), m));
        // As many links as the kernel follows in one path (40); past that the path does
        // not resolve at all.
        let Ok(to) = std::fs::read_link(part) else {
            return;
        };
        if depth >= 40 {
            return;
        }
        let target = match part.parent() {
            Some(dir) => dir.join(to),
            None => to,
        };
        let mut prefix = PathBuf::new();
        for c in target.components() {
            prefix.push(c);
            self.note_link_at(&prefix, depth + 1);
        }
    }

    /// The symbolic links passed through on the way to canonical paths (taken: asked once,
    /// at the end of a find).
    pub(super) fn take_links_passed(&mut self) -> Vec<(PathBuf, std::fs::Metadata)> {
        std::mem::take(&mut self.links)
    }

    /// The target of link `path`; the answers are then unchecked.
    pub(super) fn read_link(&mut self, path: &Path) -> Option<PathBuf> {
        self.stamps.unchecked = true;
        std::fs::read_link(path).ok()
    }

    /// The listing of directory `dir` ([`Listing::of`]), stamped first.
    pub(super) fn listing(&mut self, dir: &Path) -> Option<Listing> {
        self.stamps.take(dir, true);
        Listing::of(dir)
    }

    /// The directories in `dir` (not links), sorted; none when it cannot be read. Stamped
    /// first.
    pub(super) fn dirs(&mut self, dir: &Path) -> Vec<PathBuf> {
        self.stamps.take(dir, true);
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }

    /// The git paths of `.git` in `dir`, when they were found already.
    pub(super) fn git_paths(&self, dir: &Path) -> Option<Vec<PathBuf>> {
        self.git_paths
            .iter()
            .find(|(d, _)| d.as_os_str() == dir.as_os_str())
            .map(|(_, paths)| paths.clone())
    }

    /// Keeps the git paths found for `dir`.
    pub(super) fn keep_git_paths(&mut self, dir: &Path, paths: &[PathBuf]) {
        self.git_paths.push((dir.to_path_buf(), paths.to_vec()));
    }
}

/// Most entries a directory is listed for before [`Listing::of`] gives up (a huge
/// directory costs more to list than the few names asked about cost to `lstat`).
const MOST_ENTRIES: usize = 4096;

/// The names in one directory, read with one listing: which of many names asked about
/// exist costs a `getdents` or two instead of an `lstat` each. Read when asked, never kept
/// beyond its caller.
pub(super) struct Listing(std::collections::HashSet<std::ffi::OsString>);

impl Listing {
    /// The listing of `dir`; `None` when it cannot be read or holds more than
    /// [`MOST_ENTRIES`] entries (then ask name by name).
    pub(super) fn of(dir: &Path) -> Option<Listing> {
        let mut names = std::collections::HashSet::new();
        for e in std::fs::read_dir(dir).ok()? {
            names.insert(e.ok()?.file_name());
            if names.len() > MOST_ENTRIES {
                return None;
            }
        }
        Some(Listing(names))
    }

    /// False when `path` (a path beneath the listed directory, `rel` its part below it)
    /// certainly does not exist: its first component is not in the listing. True when it
    /// may (ask the kernel).
    pub(super) fn may_hold(&self, rel: &Path) -> bool {
        rel.components()
            .next()
            .is_none_or(|first| self.0.contains(first.as_os_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within one look-up, a path is asked of the kernel once; a new `Lookups` (the next
    /// call's) sees what changed.
    #[test]
    fn lookups_remember_within_one_find_only() {
        let base = std::env::temp_dir().join(format!("ys-lookups-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let dot = base.join(".git");
        let mut look = Lookups::default();
        assert!(!look.exists(&dot));
        assert_eq!(look.read(&dot), None);
        std::fs::write(&dot, "gitdir: x\n").unwrap();
        assert!(!look.exists(&dot), "one find sees one answer");
        let mut next = Lookups::default();
        assert!(next.exists(&dot) && !next.is_dir(&dot));
        assert_eq!(next.read(&dot).as_deref(), Some("gitdir: x\n"));
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A listing answers "certainly absent" only for names whose first component is not
    /// in the directory; a dangling link counts as present.
    #[test]
    fn a_listing_rules_out_only_absent_names() {
        let base = std::env::temp_dir().join(format!("ys-listing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join(".vscode")).unwrap();
        std::os::unix::fs::symlink("nowhere", base.join(".envrc")).unwrap();
        let listing = Listing::of(&base).unwrap();
        assert!(listing.may_hold(Path::new(".vscode/tasks.json")));
        assert!(listing.may_hold(Path::new(".envrc")));
        assert!(!listing.may_hold(Path::new(".bashrc")));
        assert!(!listing.may_hold(Path::new(".claude/settings.json")));
        assert!(Listing::of(&base.join("missing")).is_none());
        let _ = std::fs::remove_dir_all(&base);
    }
}
