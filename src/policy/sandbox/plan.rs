//! What one call's processes get before they run: a Landlock domain, as rules on paths,
//! and the seccomp filter's choice. Built by the server per call (`super::Sandbox::plan`);
//! the ruleset made from it is kept (`super::domains`) and each child of the call restricts
//! itself to it before it executes (`sys::ChildSetup`).

use crate::base::sys::ext::MetadataExt;
use crate::base::sys::fd::OwnedFd;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::filter::Filter;
use crate::base::sys;

/// Landlock rules: the rights handled (denied unless granted) and the grants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// Filesystem rights handled (`sys::landlock::FS_*`).
    pub handled_fs: u64,
    /// Network rights handled (`sys::landlock::NET_*`); no port is ever granted.
    pub handled_net: u64,
    /// IPC scopes (`sys::landlock::SCOPE_*`).
    pub scoped: u64,
    /// Rights granted beneath each path (a file or a directory).
    pub grants: Vec<(u64, PathBuf)>,
    /// What the seccomp filter refuses (`super::filter`).
    pub filter: Filter,
    /// The grant opened without following symbolic links: the working directory, checked
    /// as a canonical path.
    pub exact: Option<PathBuf>,
    /// Rights granted beneath directories held open since the server started (the
    /// `workspace` roots), made from their descriptors rather than their paths.
    pub held: Vec<(u64, HeldDir)>,
}

/// A directory opened once, at startup, without following symbolic links, whose Landlock
/// rule is made from that descriptor at every call. Landlock keys a rule on the inode, so
/// renaming the directory, or putting a link or another directory in its place, changes
/// nothing of what the rule grants.
#[derive(Clone, Debug)]
pub struct HeldDir {
    /// The path it was opened by (for messages and `check`).
    pub path: PathBuf,
    fd: Arc<OwnedFd>,
    /// Its device and inode.
    id: (u64, u64),
}

impl PartialEq for HeldDir {
    fn eq(&self, other: &HeldDir) -> bool {
        self.id == other.id && self.path == other.path
    }
}
impl Eq for HeldDir {}

impl HeldDir {
    /// Opens `path` (an absolute path with no symbolic link in it) as it is now; an error
    /// when it does not exist, is reached through a link, or is not a directory.
    pub fn open(path: &Path) -> io::Result<HeldDir> {
        let fd = sys::open_path_exact(path)?;
        let file = std::fs::File::from(fd);
        let m = file.metadata()?;
        if !m.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(HeldDir {
            path: path.to_path_buf(),
            fd: Arc::new(OwnedFd::from(file)),
            id: (m.dev(), m.ino()),
        })
    }

    /// Holds `fd`, a directory already opened without following links, named `path`.
    pub fn from_fd(path: &Path, fd: OwnedFd) -> io::Result<HeldDir> {
        let file = std::fs::File::from(fd);
        let m = file.metadata()?;
        Ok(HeldDir {
            path: path.to_path_buf(),
            fd: Arc::new(OwnedFd::from(file)),
            id: (m.dev(), m.ino()),
        })
    }
}

/// What each grant of a ruleset landed on, in order (the grants by path, then the held
/// ones): device and inode, `None` for a grant skipped (no such file, or no right this ABI
/// handles).
pub type Identity = Vec<Option<(u64, u64)>>;

impl Rules {
    /// Creates the ruleset: each grant's path is opened (symlinks followed, so the rule
    /// lands on the file the path resolves to now); a path that does not exist is skipped.
    /// Also returns what each grant landed on: the device and inode of the file
    /// its path resolved to (`fstat` of the descriptor the rule was made from), `None` for
    /// a grant skipped. Landlock keys its rules on inodes, so two rulesets with the same
    /// rights and the same identities are the same domain's rules.
    pub fn build(&self) -> io::Result<(OwnedFd, Identity)> {
        let mut ids = Vec::with_capacity(self.grants.len());
        let attr = sys::landlock::RulesetAttr {
            handled_access_fs: self.handled_fs,
            handled_access_net: self.handled_net,
            scoped: self.scoped,
        };
        let ruleset = sys::landlock_create_ruleset(&attr)?;
        for (access, path) in &self.grants {
            let access = access & self.handled_fs;
            if access == 0 {
                ids.push(None);
                continue;
            }
            let opened = if self.exact.as_ref() == Some(path) {
                sys::open_path_exact(path)
            } else {
                sys::open_path(path)
            };
            let fd = match opened {
                Ok(fd) => fd,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    ids.push(None);
                    continue;
                }
                Err(e) => return Err(annotate(e, "open", path)),
            };
            let file = std::fs::File::from(fd);
            let m = file.metadata().map_err(|e| annotate(e, "look at", path))?;
            ids.push(Some((m.dev(), m.ino())));
            let fd = OwnedFd::from(file);
            sys::landlock_add_path_rule(&ruleset, &fd, access)
                .map_err(|e| annotate(e, "add a Landlock rule for", path))?;
        }
        for (access, held) in &self.held {
            let access = access & self.handled_fs;
            if access == 0 {
                ids.push(None);
                continue;
            }
            ids.push(Some(held.id));
            sys::landlock_add_path_rule(&ruleset, &held.fd, access)
                .map_err(|e| annotate(e, "add a Landlock rule for", &held.path))?;
        }
        Ok((ruleset, ids))
    }

    /// What [`Rules::build`] would find now, without building: each grant's path looked up
    /// (symlinks followed), but for the first ones, whose identities are `known` (found by
    /// the same lookup when the plan was made). An error where `build` would fail.
    pub fn identity(&self, known: &[(u64, u64)]) -> io::Result<Identity> {
        let mut ids = Vec::with_capacity(self.grants.len());
        for (i, (access, path)) in self.grants.iter().enumerate() {
            if access & self.handled_fs == 0 {
                ids.push(None);
                continue;
            }
            if let Some(id) = known.get(i) {
                ids.push(Some(*id));
                continue;
            }
            match std::fs::metadata(path) {
                Ok(m) => ids.push(Some((m.dev(), m.ino()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => ids.push(None),
                Err(e) => return Err(annotate(e, "look at", path)),
            }
        }
        for (access, held) in &self.held {
            ids.push((access & self.handled_fs != 0).then_some(held.id));
        }
        Ok(ids)
    }
}

fn annotate(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot {what} {}: {}",
            path.display(),
            crate::base::config::plain_io(&e)
        ),
    )
}

/// The writable places beyond the roots and the caches (`YIELDSHELL_WRITABLE_PATHS`),
/// opened for this call without following any link: a call that may write a place's parent
/// can rename it and put a link (to `/`, say) in its place, and a rule made by following that
/// link would grant what it points to. What cannot be opened so (missing, a link, not a
/// directory) is granted nothing; a directory made in its place grants only what its maker
/// could already write.
pub(super) fn held_now(
    paths: &[PathBuf],
    access: u64,
) -> impl Iterator<Item = (u64, HeldDir)> + '_ {
    paths
        .iter()
        .filter_map(move |p| HeldDir::open(p).ok().map(|h| (access, h)))
}

/// Opens each `workspace` root once, without following links ([`HeldDir`]). A root that
/// cannot be opened stops the server: the sandbox would have no directory to grant it, and
/// a directory made there later by a call must not become writable.
pub(super) fn hold_roots(roots: &[PathBuf]) -> Result<Vec<HeldDir>, String> {
    roots
        .iter()
        .map(|root| {
            HeldDir::open(root).map_err(|e| {
                format!(
                    "YIELDSHELL_ALLOWED_CWDS root {} cannot be used by \
                     YIELDSHELL_SANDBOX=workspace: {}; the sandbox grants writes beneath each \
                     root as it finds it at startup, so every root must be an existing \
                     directory: create it, or remove it from the list",
                    root.display(),
                    crate::base::config::plain_io(&e)
                )
            })
        })
        .collect()
}
