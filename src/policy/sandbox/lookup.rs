//! The file-system look-ups of one call's protected paths (`protected`, `git_controls`),
//! each made once: the walk up, the roots, the git directories' controls and the final
//! list all ask about the same few paths (`.git` above all), and each question is a system
//! call the call waits for. Kept for one `Protected::find` only: nothing is remembered
//! between calls, so nothing a call changes can be answered from before it.

use std::path::{Path, PathBuf};

/// The answers so far of one `Protected::find`.
#[derive(Default)]
pub(super) struct Lookups {
    /// `lstat` of each path asked about (`None`: it does not exist or cannot be read).
    stats: Vec<(PathBuf, Option<std::fs::Metadata>)>,
    /// The git paths of each directory asked about (`git_controls::git_paths_at`).
    git_paths: Vec<(PathBuf, Vec<PathBuf>)>,
}

impl Lookups {
    /// `lstat` of `path` (links not followed), asked of the kernel once.
    pub(super) fn lstat(&mut self, path: &Path) -> Option<std::fs::Metadata> {
        if let Some((_, m)) = self
            .stats
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_os_str())
        {
            return m.clone();
        }
        let m = std::fs::symlink_metadata(path).ok();
        self.stats.push((path.to_path_buf(), m.clone()));
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
        let known_missing = self
            .stats
            .iter()
            .any(|(p, m)| m.is_none() && p.as_os_str() == path.as_os_str());
        if known_missing {
            return None;
        }
        match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) => {
                if e.kind() == std::io::ErrorKind::NotFound {
                    self.stats.push((path.to_path_buf(), None));
                }
                None
            }
        }
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
