//! What one call's processes get before they run: a Landlock domain, as rules on paths,
//! and the seccomp filter's choice. Built by the server per call (`super::Sandbox::plan`);
//! the ruleset made from it is kept (`super::domains`) and each child of the call restricts
//! itself to it before it executes (`sys::ChildSetup`).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
    /// as a canonical path (red team, round 11).
    pub exact: Option<PathBuf>,
}

/// What each grant of a ruleset landed on, in order: device and inode, `None` for a grant
/// skipped (no such file, or no right this ABI handles).
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
