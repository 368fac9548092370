//! Protected paths (`YIELDSHELL_PROTECTED_PATHS`, docs/sandbox.md): the files inside a
//! call's writable area that decide what later programs run as the person, outside any
//! sandbox: git's directory (hooks, `config`, a new `commondir`), shell rc files, `.envrc`,
//! editor tasks, agent settings. For each call this finds them (`Protected::find`): `git`
//! is the git directory of the repository holding the working directory (walking up, a
//! `.git` file followed, with its common directory) and `.git` at each root; the other
//! names are taken in the working directory, in each directory above it that lies in the
//! same writable place (the repository's root, say), and in each root. With the git
//! directories go what in them makes git run programs (`config`, `hooks/`, `info/`,
//! `commondir`...: `Controls`), read-only for git stages too, the `.git` files of their
//! submodules and linked worktrees, and the hooks directory and monitor their
//! configuration names in the tree. What exists and lies in a
//! writable area is bound read-only onto itself in the call's own mount namespace
//! (`sys::Protect`); the directories between the writable area's top and each of them are
//! bound onto themselves, so that none can be renamed away and replaced. What does not
//! exist is watched: a call that creates it is told, and the audit line names it
//! (`Watch::created`).

use crate::base::sys::ext::MetadataExt;
use std::path::{Path, PathBuf};

use crate::base::config::Config;
use crate::base::sys::{self, Protect};
use crate::policy::sandbox::git_controls::{common_dir, git_paths_at, is_git_directory, Controls};
use crate::policy::sandbox::lookup::Lookups;
use crate::policy::trusted::Stage;

/// Test-only: behave as where namespaces cannot be made (`1`).
pub const TEST_NO_NAMESPACES_VAR: &str = "YIELDSHELL_TEST_NO_NAMESPACES";

/// The name that stands for the git directories.
pub const GIT: &str = "git";

/// git's global configuration where `XDG_CONFIG_HOME` is not set, protected with
/// `.gitconfig`.
const XDG_GITCONFIG: &str = ".config/git/config";

/// One path to bind: where, its device and inode now, and whether it is a git path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub id: (u64, u64),
    pub git: bool,
}

/// What a protected symbolic link was when the call started: its device and inode, and
/// where it pointed.
pub type Link = ((u64, u64), PathBuf);

/// What one call protects and watches.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// Paths made read-only (git paths and the other names), outer ones first.
    pub protected: Vec<Entry>,
    /// Directories bound onto themselves, so that no protected path can be moved away
    /// with its parent; outer ones first.
    pub pinned: Vec<Entry>,
    /// Protected names that did not exist when the call started.
    pub missing: Vec<PathBuf>,
    /// Protected names that are symbolic links, with their device and inode: a link
    /// cannot be bound, so its target is protected and the link itself only watched.
    pub links: Vec<(PathBuf, Link)>,
    /// Protected files with other names (hard links): the bind covers this name only, so
    /// the file stays writable through the others.
    pub hard_linked: Vec<PathBuf>,
    /// The directories above the missing names, as they were when unchanged for a while:
    /// while one is the same at the answer, nothing was made in it (`Watch::created`).
    quiet: Quiet,
}

/// For missing names, the directory each would be made in (links followed) with its stamp,
/// taken when it had been unchanged for a while; and when the stamps were taken.
#[derive(Clone, Debug, Default)]
pub(super) struct Quiet {
    homes: Vec<(PathBuf, PathBuf, super::lookup::Stamp)>,
    taken: Option<(std::time::Instant, std::time::SystemTime)>,
}

/// What a record keeps to report: the protected names it watched for creation, and what
/// it protected (for the line of a command that failed writing there).
#[derive(Debug, Default)]
pub struct Watch {
    pub missing: Vec<PathBuf>,
    pub protected: Vec<PathBuf>,
    pub links: Vec<(PathBuf, Link)>,
    pub hard_linked: Vec<PathBuf>,
    /// The directories above the missing names that were quiet at the call's start.
    quiet: Quiet,
}

impl Watch {
    /// What a call's record keeps of what was found for it.
    pub(super) fn of(found: Found) -> Watch {
        Watch {
            protected: found.protected.into_iter().map(|e| e.path).collect(),
            missing: found.missing,
            links: found.links,
            hard_linked: found.hard_linked,
            quiet: found.quiet,
        }
    }

    /// The watched names that exist now (a symbolic link counts), and the protected links
    /// that were removed or replaced.
    pub fn created(&self) -> Vec<&Path> {
        // Still a link, the same inode, to the same place (an inode number can be reused
        // at once by the file that replaces it).
        let replaced = self.links.iter().filter(|(p, id)| {
            std::fs::symlink_metadata(p).map_or(true, |m| {
                !m.file_type().is_symlink() || (m.dev(), m.ino()) != id.0 || {
                    std::fs::read_link(p).ok().as_ref() != Some(&id.1)
                }
            })
        });
        // A directory that is as it was at the start, though unchanged for a while then,
        // had no entry made in it since: nothing beneath it needs a look.
        let mut steady: Vec<(&Path, bool)> = Vec::new();
        let mut untouched = |p: &Path| -> bool {
            let Some(taken) = self.quiet.taken else {
                return false;
            };
            let Some((_, dir, stamp)) = self.quiet.homes.iter().find(|(name, _, _)| name == p)
            else {
                return false;
            };
            if let Some((_, same)) = steady.iter().find(|(d, _)| *d == dir.as_path()) {
                return *same;
            }
            let same = super::lookup::unchanged(dir, *stamp, taken);
            steady.push((dir.as_path(), same));
            same
        };
        // A directory with several watched names is listed once: most were not made.
        let mut listings: Vec<(&Path, Option<super::lookup::Listing>)> = Vec::new();
        let mut made: Vec<&PathBuf> = Vec::new();
        for p in &self.missing {
            if untouched(p) {
                continue;
            }
            let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
                if std::fs::symlink_metadata(p).is_ok() {
                    made.push(p);
                }
                continue;
            };
            if !listings.iter().any(|(d, _)| *d == dir) {
                let several = self
                    .missing
                    .iter()
                    .filter(|m| m.parent() == Some(dir))
                    .count()
                    > 2;
                let listing = several.then(|| super::lookup::Listing::of(dir)).flatten();
                listings.push((dir, listing));
            }
            let ruled_out = listings
                .iter()
                .find(|(d, _)| *d == dir)
                .and_then(|(_, l)| l.as_ref())
                .is_some_and(|l| !l.may_hold(Path::new(name)));
            if !ruled_out && std::fs::symlink_metadata(p).is_ok() {
                made.push(p);
            }
        }
        made.into_iter()
            .chain(replaced.map(|(p, _)| p))
            .map(PathBuf::as_path)
            .collect()
    }

    /// The line a result gets: the protected names the call created, and, when the
    /// command's output shows a write refused (`failed_write`: a read-only file system,
    /// or a mount point that cannot be moved), which paths are protected. `None` when
    /// neither applies.
    pub fn line(&self, failed_write: bool) -> Option<String> {
        let created = self.created();
        let mut parts = Vec::new();
        if !created.is_empty() {
            parts.push(format!(
                "this call created or replaced protected {} (review before running git, a \
                 shell, an editor or an agent there): {}",
                if created.len() == 1 { "name" } else { "names" },
                list(&created)
            ));
        }
        if !self.hard_linked.is_empty() {
            let linked: Vec<&Path> = self.hard_linked.iter().map(PathBuf::as_path).collect();
            parts.push(format!(
                "protected but writable through another name (a hard link; review it, and \
                 give it one name): {}",
                list(&linked)
            ));
        }
        if failed_write && !self.protected.is_empty() {
            let protected: Vec<&Path> = self.protected.iter().map(PathBuf::as_path).collect();
            parts.push(format!(
                "read-only for this call, and not to be renamed or replaced \
                 (YIELDSHELL_PROTECTED_PATHS): {}",
                list(&protected)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// At most 8 paths, then how many more.
fn list(paths: &[&Path]) -> String {
    let mut s: Vec<String> = paths
        .iter()
        .take(8)
        .map(|p| p.display().to_string())
        .collect();
    if paths.len() > 8 {
        s.push(format!("and {} more", paths.len() - 8));
    }
    s.join(", ")
}

/// True when `text` shows a write refused by a protection: `EROFS` or `EBUSY` in the
/// words of the C library.
pub fn shows_refused_write(text: &[u8]) -> bool {
    memchr::memmem::find(text, b"Read-only file system").is_some()
        || memchr::memmem::find(text, b"Device or resource busy").is_some()
}

/// The configured names, and the answers kept for the calls' directories.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    git: bool,
    names: Vec<PathBuf>,
    kept: std::sync::Arc<super::answers::Kept<Found>>,
}

impl Protected {
    /// From `YIELDSHELL_PROTECTED_PATHS`' parsed names (empty: `none`).
    pub fn new(names: &[String]) -> Protected {
        let mut list: Vec<PathBuf> = names
            .iter()
            .filter(|n| *n != GIT)
            .map(PathBuf::from)
            .collect();
        // `.gitconfig` stands for git's global configuration, which git also reads from
        // `.config/git/config` (where `XDG_CONFIG_HOME` is not set).
        let xdg = PathBuf::from(XDG_GITCONFIG);
        if list.iter().any(|n| n == Path::new(".gitconfig")) && !list.contains(&xdg) {
            list.push(xdg);
        }
        Protected {
            git: names.iter().any(|n| n == GIT),
            names: list,
            kept: Default::default(),
        }
    }

    /// [`Protected::new`], keeping answers whose directories were unchanged for `quiet`.
    #[cfg(test)]
    pub(super) fn with_quiet(names: &[String], quiet: std::time::Duration) -> Protected {
        Protected {
            kept: std::sync::Arc::new(super::answers::Kept::new(quiet)),
            ..Protected::new(names)
        }
    }

    /// How many answers were given from the kept ones so far.
    #[cfg(test)]
    pub(super) fn answers_kept_given(&self) -> usize {
        self.kept.given()
    }

    /// True when nothing is protected (`none`).
    pub fn is_empty(&self) -> bool {
        !self.git && self.names.is_empty()
    }

    /// What `check` and the descriptions say is protected.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.git {
            parts.push(
                "the git directory of the repository holding the working directory (with \
                 its .git file and common directory; its config and hooks read-only for git \
                 too) and .git at each root"
                    .into(),
            );
        }
        if !self.names.is_empty() {
            parts.push(format!(
                "{} in the working directory, the writable directories above it and each root",
                self.names
                    .iter()
                    .map(|n| n.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        parts.join("; ")
    }

    /// What a call in `cwd` protects, with `roots` (the `workspace` roots; the working
    /// directory is one too) and `writable` (every place the call may write beneath). All
    /// paths are canonical. A path outside every writable place needs nothing: Landlock
    /// refuses writing there already.
    pub fn find(&self, cwd: &Path, roots: &[&Path], writable: &[&Path]) -> Found {
        if self.is_empty() {
            return Found::default();
        }
        let key = super::answers::Key::new(cwd, roots, writable);
        if let Some(found) = self.kept.answer(&key) {
            return found;
        }
        let busy = self.kept.is_busy(&key);
        let (found, stamps) = self.look_up(cwd, roots, writable, !busy);
        // A protected name that is a link is watched by its target too: looked up each time.
        if found.links.is_empty() && !busy {
            self.kept.keep(key, &found, stamps);
        }
        found
    }

    /// What [`Protected::find`] answers, asked of the file system, with the stamps the
    /// answer rests on.
    fn look_up(
        &self,
        cwd: &Path,
        roots: &[&Path],
        writable: &[&Path],
        stamped: bool,
    ) -> (Found, super::lookup::Stamps) {
        let mut found = Found::default();
        // The working directory and every directory above it that the call may write in
        // (where direnv, editors and agents look for their files too), and each root.
        let mut bases: Vec<&Path> = match outermost(cwd, writable) {
            Some(top) => cwd.ancestors().take_while(|d| d.starts_with(top)).collect(),
            None => vec![cwd],
        };
        for root in roots {
            if !bases.contains(root) {
                bases.push(root);
            }
        }
        // Each path is looked at once however many steps ask about it (`.git` above all).
        let mut look = match stamped {
            true => Lookups::default(),
            false => Lookups::unstamped(),
        };
        // What to bind, whether it is a git path, and its `lstat` when it was just made.
        let mut candidates: Vec<(PathBuf, bool, Option<std::fs::Metadata>)> = Vec::new();
        if self.git {
            let (mut gits, top) = walk_up(&mut look, cwd);
            let mut tops: Vec<PathBuf> = top.into_iter().collect();
            for base in &bases {
                let dot = base.join(".git");
                if !look.exists(&dot) {
                    found.missing.push(dot);
                    // git takes a directory holding `HEAD`, `objects` and `refs` for a git
                    // directory before it looks above: one a call completes in a base would
                    // be the person's next git's repository there, its `config` included.
                    // A name that is not there cannot be bound: its creation is reported
                    // (beside an existing `HEAD`: the rest, and the `config` git would read).
                    let head = base.join("HEAD");
                    if !look.exists(&head) {
                        found.missing.push(head);
                    } else {
                        for name in ["objects", "refs", "commondir", "config"] {
                            let path = base.join(name);
                            if !look.exists(&path) {
                                found.missing.push(path);
                            }
                        }
                    }
                } else {
                    gits.extend(git_paths_at(&mut look, base));
                    if !tops.iter().any(|t| t == base) {
                        tops.push(base.to_path_buf());
                    }
                }
            }
            let mut unique: Vec<PathBuf> = Vec::new();
            for g in gits {
                if !unique.contains(&g) {
                    unique.push(g);
                }
            }
            let gits = unique;
            // Inside each git directory, what names programs for the person's git: git
            // stages write the rest (objects, refs, the index) but never these.
            // A git directory outside every writable place needs nothing (Landlock keeps
            // it), and reading its `modules/` and `worktrees/` would cost every call.
            let mut controls = Controls::default();
            for g in &gits {
                if outermost(g, writable).is_some() && look.is_dir(g) {
                    controls.of(&mut look, g, 0);
                }
            }
            // The `.git` files of the repository's submodules, as `.gitmodules` names them.
            // A `.git` that is a symbolic link cannot be bound (its target is): it is
            // watched, and its replacement reported.
            for top in &tops {
                controls.submodules_of(&mut look, top);
                // The programs its configuration names, wherever the repository's root is:
                // a hooks directory beneath the working directory (a monorepo's `tools/`)
                // is the call's to write even when the root is not (what lies outside every
                // writable place is left out below).
                controls.programs_of(&mut look, top);
                let dot = top.join(".git");
                if found.links.iter().any(|(p, _)| *p == dot) || outermost(top, writable).is_none()
                {
                    continue;
                }
                if let Some(m) = look.lstat(&dot) {
                    if m.file_type().is_symlink() {
                        if let Some(to) = look.read_link(&dot) {
                            found.links.push((dot, ((m.dev(), m.ino()), to)));
                        }
                    }
                }
            }
            candidates.extend(gits.into_iter().map(|p| (p, true, None)));
            candidates.extend(controls.gits.into_iter().map(|p| (p, true, None)));
            candidates.extend(controls.paths.into_iter().map(|p| (p, false, None)));
            found.missing.extend(controls.missing);
        }
        // Each name is asked about once, here: not kept in `look`, whose search would
        // cost more than it saves.
        for base in &bases {
            // One listing answers for every name that is not there (most of them).
            let listing = (self.names.len() > 2).then(|| look.listing(base)).flatten();
            for name in &self.names {
                let path = base.join(name);
                let present = match &listing {
                    Some(l) if !l.may_hold(name) => None,
                    _ => look.lstat_once(&path),
                };
                match present {
                    None => found.missing.push(path),
                    // A link's target is what later programs read; the link itself can
                    // still be replaced (docs/sandbox.md).
                    Some(m) if m.file_type().is_symlink() => {
                        if let Some(target) = look.canonical_any(&path) {
                            candidates.push((target, false, None));
                        }
                        if let Some(to) = look.read_link(&path) {
                            found.links.push((path, ((m.dev(), m.ino()), to)));
                        }
                    }
                    Some(m) => candidates.push((path, false, Some(m))),
                }
            }
        }
        for (path, git, known) in candidates {
            let Some(top) = outermost(&path, writable) else {
                continue;
            };
            let Some(m) = known.or_else(|| look.lstat(&path)) else {
                continue;
            };
            if found.protected.iter().any(|e| e.path == path) {
                continue;
            }
            let mut dir = path.parent();
            while let Some(d) = dir {
                if d == top || !d.starts_with(top) {
                    break;
                }
                if !found.pinned.iter().any(|e| e.path == d) {
                    if let Some(m) = look.lstat(d) {
                        found.pinned.push(Entry {
                            path: d.to_path_buf(),
                            id: (m.dev(), m.ino()),
                            git: false,
                        });
                    }
                }
                dir = d.parent();
            }
            if m.is_file() && m.nlink() > 1 {
                found.hard_linked.push(path.clone());
            }
            found.protected.push(Entry {
                path,
                id: (m.dev(), m.ino()),
                git,
            });
        }
        // A link in the tree on the way to a protected path (`tools -> tools-v1` before
        // `core.hooksPath = tools/hooks`, `.git: gitdir: lnk/real.git`) cannot be bound,
        // and pointing it elsewhere changes what the person's git runs: it is watched.
        for (link, m) in look.take_links_passed() {
            if outermost(&link, writable).is_none() || found.links.iter().any(|(p, _)| *p == link) {
                continue;
            }
            if let Some(to) = look.read_link(&link) {
                found.links.push((link, ((m.dev(), m.ino()), to)));
            }
        }
        let depth = |e: &Entry| e.path.components().count();
        found.pinned.sort_by_key(depth);
        found.protected.sort_by_key(depth);
        // A pinned directory that is protected too is bound once, read-only.
        let protected = &found.protected;
        found
            .pinned
            .retain(|p| !protected.iter().any(|e| e.path == p.path));
        found.missing.sort();
        found.missing.dedup();
        // The directory each missing name would be made in (or the nearest one above it
        // that exists), when it was stamped and quiet.
        let quiet = self.kept.quiet();
        for m in &found.missing {
            let Some((dir, stamp)) = look.stamps.quiet_home(m, quiet) else {
                continue;
            };
            found
                .quiet
                .homes
                .push((m.clone(), dir.to_path_buf(), stamp));
        }
        found.quiet.taken = Some(look.stamps.taken());
        (found, look.stamps)
    }
}

/// The hidden first argument of the helper that makes the calls' user namespace
/// (`sys::UserNamespace`).
pub const HOLDER_ARG: &str = "__yieldshell_userns";

/// The user namespace a call's child enters when the server is not root: made by the
/// helper (this binary with `HOLDER_ARG`), which ends once the server holds it.
fn user_namespace() -> std::io::Result<sys::UserNamespace> {
    use std::io::BufRead;
    let args = [HOLDER_ARG.to_string()];
    let spawned = sys::spawn(sys::SpawnSpec {
        program: "/proc/self/exe",
        arg0: Some("yieldshell"),
        args: &args,
        env: &[],
        cwd: Path::new("/"),
        stdin_pipe: true,
        stdout: None,
        stdin_file: None,
        stderr: None,
        join_group: None,
        terminal: None,
        setup: None,
    })?;
    let mut line = String::new();
    if let Some(out) = spawned.stdout {
        std::io::BufReader::new(out).read_line(&mut line)?;
    }
    let ns = match line.trim() {
        "ready" => sys::UserNamespace::of(spawned.pid),
        why => Err(std::io::Error::other(format!(
            "cannot make a user namespace: {}",
            if why.is_empty() {
                "the helper ended"
            } else {
                why
            }
        ))),
    };
    // Its stdin closes here: the helper ends (the reaper reaps it).
    drop(spawned.stdin);
    ns
}

/// A call's protected paths, as the child applies them (`sys::Protect`).
pub struct Protection {
    /// Every protected path read-only (shell mode's processes, trusted stages but git).
    all: Option<Protect>,
    /// The names but the git paths (trusted mode's git stages).
    for_git: Option<Protect>,
    /// Which stages run git (trusted mode).
    git_stages: Vec<bool>,
    /// What the record reports (`Protection::take_watch`).
    watch: Option<Watch>,
}

impl Protection {
    /// What the child of stage `stage` applies.
    pub fn for_stage(&self, stage: usize) -> Option<&Protect> {
        match self.git_stages.get(stage).copied().unwrap_or(false) {
            true => self.for_git.as_ref(),
            false => self.all.as_ref(),
        }
    }

    /// What the call's record keeps to report.
    pub fn take_watch(&mut self) -> Option<Watch> {
        self.watch.take()
    }
}

/// What a call in `cwd` protects (`Protected::find`), as binds for each kind of stage:
/// with `git_writes` (trusted mode), the stages that run git keep write access to the git
/// directories (their configuration is checked and their hooks are off), so that `git add`
/// and `git commit` keep working. `None` when the call protects and watches nothing.
pub fn for_call(
    names: &Protected,
    user: Option<&sys::UserNamespace>,
    git_writes: bool,
    stages: &[Stage],
    cwd: &Path,
    roots: &[&Path],
    writable: &[&Path],
) -> Result<Option<Protection>, String> {
    let found = names.find(cwd, roots, writable);
    if found.protected.is_empty() && found.missing.is_empty() {
        return Ok(None);
    }
    let binds = |git: bool| -> Result<Option<Protect>, String> {
        // For a git stage a git directory is only pinned (bound, not read-only), so that
        // its hooks and configuration, bound read-only beneath it, stay in place. Outer
        // paths first: a bind beneath a read-only one stays read-only.
        let mut list: Vec<(PathBuf, (u64, u64), bool)> = found
            .pinned
            .iter()
            .map(|e| (e.path.clone(), e.id, false))
            .chain(
                found
                    .protected
                    .iter()
                    .map(|e| (e.path.clone(), e.id, git || !e.git)),
            )
            .collect();
        list.sort_by_key(|(p, _, _)| p.components().count());
        // Beneath a read-only bind nothing can be written or renamed already: a path there
        // needs no bind of its own (the git directory's config and hooks, for a stage that
        // is not git).
        let read_only: Vec<PathBuf> = list
            .iter()
            .filter(|(_, _, ro)| *ro)
            .map(|(p, _, _)| p.clone())
            .collect();
        list.retain(|(p, _, _)| !read_only.iter().any(|r| p != r && p.starts_with(r)));
        if !list.iter().any(|(_, _, read_only)| *read_only) {
            return Ok(None);
        }
        Protect::new(&list, user)
            .map(Some)
            .map_err(|e| format!("cannot plan the protected paths: {e}"))
    };
    let git_stages: Vec<bool> = match git_writes {
        true => stages.iter().map(|s| is_git_stage(&s.program)).collect(),
        false => Vec::new(),
    };
    let for_git = match git_stages.contains(&true) {
        true => binds(false)?,
        false => None,
    };
    Ok(Some(Protection {
        all: binds(true)?,
        for_git,
        git_stages,
        watch: Some(Watch::of(found)),
    }))
}

/// True for a stage that runs git: its program is git by name and by the file it resolves
/// to (any doubt leaves the git directories read-only for it).
fn is_git_stage(program: &str) -> bool {
    crate::policy::trusted::is_git_program(program)
        && std::fs::canonicalize(program)
            .is_ok_and(|p| crate::policy::trusted::is_git_program(&p.to_string_lossy()))
}

/// The names calls protect, decided once at startup (`None`: not protected, with why):
/// the sandbox confines the calls (`active`), a name is given, and a mount namespace (and
/// a user namespace, when the server is not root) can be made here, tried once. `none`,
/// or namespaces that cannot be made, is one warning line.
pub fn startup(
    config: &Config,
    active: bool,
    warnings: &mut Vec<String>,
) -> (
    Option<(Protected, Option<sys::UserNamespace>)>,
    Option<String>,
) {
    let names = Protected::new(&config.protected_paths);
    if !active {
        return (None, None);
    }
    if names.is_empty() {
        warnings.push(
            "YIELDSHELL_PROTECTED_PATHS=none: a sandboxed call may write git hooks and \
             configuration, shell rc files, .envrc, editor tasks and agent settings in its \
             writable area, which the person's next git, shell, editor or agent session runs"
                .into(),
        );
        return (None, Some("none (YIELDSHELL_PROTECTED_PATHS=none)".into()));
    }
    let pretend = config
        .env
        .iter()
        .any(|(k, v)| k == TEST_NO_NAMESPACES_VAR && v == "1");
    let user = match (pretend, sys::is_root()) {
        (true, _) => Err(std::io::Error::other(format!(
            "switched off by the test-only {TEST_NO_NAMESPACES_VAR}"
        ))),
        (false, true) => Ok(None),
        (false, false) => user_namespace().map(Some),
    };
    match user.and_then(|u| sys::namespaces_available(u.as_ref()).map(|()| u)) {
        Ok(user) => (Some((names, user)), None),
        Err(e) => {
            let why = format!(
                "not protected: {} (a call's protection needs a private mount namespace{}, \
                 which this system refuses: {})",
                names.describe(),
                if sys::is_root() {
                    ""
                } else {
                    " inside a user namespace: unprivileged user namespaces may be disabled"
                },
                crate::base::config::plain_io(&e)
            );
            warnings.push(format!("YIELDSHELL_PROTECTED_PATHS: {why}"));
            (None, Some(why))
        }
    }
}

/// One warning line for each root written as a symbolic link (as written, resolved): the
/// call is granted the directory it named at startup, but the link itself is not
/// protected, and a call that may write where it lies (a temporary directory) can point it
/// at a tree of its own, where the person's next program at that path then runs.
pub fn linked_roots(roots: &[(PathBuf, PathBuf)]) -> Vec<String> {
    roots
        .iter()
        .map(|(link, real)| {
            format!(
                "YIELDSHELL_ALLOWED_CWDS root {} is reached through a symbolic link (to {}), \
                 which calls are not kept from replacing: name the directory itself",
                link.display(),
                real.display()
            )
        })
        .collect()
}

/// The outermost writable place `path` lies beneath (or is), if any.
fn outermost<'a>(path: &Path, writable: &[&'a Path]) -> Option<&'a Path> {
    writable
        .iter()
        .copied()
        .filter(|w| path.starts_with(w))
        .min_by_key(|w| w.components().count())
}

/// Walking up from `cwd`, once: the git paths of the repository holding it (the first
/// directory that is a git directory itself, a bare repository or the working directory
/// inside `.git`, or that holds `.git`: `git_paths_at`), and the first directory that
/// holds `.git` (the repository's root, whose `.gitmodules` and configuration are read).
fn walk_up(look: &mut Lookups, cwd: &Path) -> (Vec<PathBuf>, Option<PathBuf>) {
    let mut gits: Option<Vec<PathBuf>> = None;
    for dir in cwd.ancestors() {
        let dot = look.exists(&dir.join(".git"));
        if gits.is_none() {
            if is_git_directory(look, dir) {
                let mut out = vec![dir.to_path_buf()];
                out.extend(common_dir(look, dir));
                gits = Some(out);
            } else if dot {
                gits = Some(git_paths_at(look, dir));
            }
        }
        if dot {
            return (gits.unwrap_or_default(), Some(dir.to_path_buf()));
        }
    }
    (gits.unwrap_or_default(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::sandbox::git_controls::GIT_CONTROLS;

    fn names(list: &str) -> Protected {
        Protected::new(&list.split(',').map(String::from).collect::<Vec<_>>())
    }

    /// A fresh directory `ys-<label>-<pid>` in the temporary directory, and `repo` in it
    /// with a git directory (`.git/objects`, `.git/HEAD`).
    fn temp_repo(label: &str) -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("ys-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        (base, repo)
    }

    #[test]
    fn git_is_found_walking_up_with_its_common_directory() {
        let (base, repo) = temp_repo("protected");
        std::fs::create_dir_all(repo.join("sub/deep")).unwrap();
        std::fs::write(repo.join(".envrc"), "x").unwrap();
        // A linked worktree: a .git file naming a git directory with a commondir.
        let wt = base.join("wt");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/HEAD"), "x").unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        let repo = base.join("repo");
        let wt = base.join("wt");
        let p = names("git,.envrc,.mcp.json");
        // From below the root, inside a writable root above it: the git directory and the
        // .envrc of the working directory (none there: watched), and the directories
        // between the root and the git directory pinned.
        let cwd = repo.join("sub/deep");
        let found = p.find(&cwd, &[&base], &[&base]);
        // The repository's own .envrc, above the working directory, is protected too.
        // (What lies inside the git directory: `git_directories_keep_their_controls_...`.)
        let inside = |p: &Path| p.starts_with(repo.join(".git")) && p != repo.join(".git");
        let paths: Vec<&Path> = found
            .protected
            .iter()
            .map(|e| e.path.as_path())
            .filter(|p| !inside(p))
            .collect();
        assert_eq!(paths, [repo.join(".git"), repo.join(".envrc")]);
        let pinned: Vec<&Path> = found
            .pinned
            .iter()
            .map(|e| e.path.as_path())
            .filter(|p| !inside(p))
            .collect();
        assert_eq!(pinned, [repo.as_path()]);
        assert!(found.missing.contains(&cwd.join(".envrc")));
        assert!(found.missing.contains(&repo.join("sub/.mcp.json")));
        assert!(found.missing.contains(&base.join(".git")));
        // Only the working directory writable: the git directory above it is left to
        // Landlock.
        let found = p.find(&cwd, &[], &[&cwd]);
        assert!(found.protected.is_empty(), "{found:?}");
        // At the root: .git and .envrc, nothing pinned.
        let found = p.find(&repo, &[], &[&repo]);
        let paths: Vec<&Path> = found
            .protected
            .iter()
            .map(|e| e.path.as_path())
            .filter(|p| !inside(p))
            .collect();
        assert_eq!(paths, [repo.join(".git"), repo.join(".envrc")]);
        assert!(found.protected[0].git && !found.protected[1].git);
        assert!(found.pinned.iter().all(|e| inside(&e.path)));
        // The worktree: its .git file, its git directory and the common directory.
        let found = p.find(&wt, &[], &[&base]);
        let mut paths: Vec<PathBuf> = found
            .protected
            .iter()
            .map(|e| e.path.clone())
            .filter(|p| !GIT_CONTROLS.iter().any(|c| p.ends_with(c)))
            .collect();
        paths.sort();
        assert_eq!(
            paths,
            [
                repo.join(".git"),
                repo.join(".git/worktrees/wt"),
                wt.join(".git")
            ]
        );
        assert!(names("none").is_empty() || names(".x").names.len() == 1);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn git_directories_keep_their_controls_and_submodule_and_worktree_files_read_only() {
        let base = std::env::temp_dir().join(format!("ys-controls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let repo = base.join("repo");
        let git = repo.join(".git");
        for d in [
            "objects",
            "hooks",
            "modules/vendor/lib/objects",
            "worktrees/wt",
        ] {
            std::fs::create_dir_all(git.join(d)).unwrap();
        }
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("config"), "[core]\n").unwrap();
        let module = git.join("modules/vendor/lib");
        std::fs::write(module.join("HEAD"), "x").unwrap();
        std::fs::write(
            module.join("config"),
            "[core]\n\tworktree = ../../../../vendor/lib\n",
        )
        .unwrap();
        std::fs::create_dir_all(repo.join("vendor/lib")).unwrap();
        std::fs::write(repo.join("vendor/lib/.git"), "gitdir: x\n").unwrap();
        // A submodule named only by .gitmodules, and a linked worktree named by `gitdir`.
        std::fs::create_dir_all(repo.join("other")).unwrap();
        std::fs::write(repo.join("other/.git"), "gitdir: y\n").unwrap();
        std::fs::write(
            repo.join(".gitmodules"),
            "[submodule \"o\"]\n\tpath = other\n",
        )
        .unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: z\n").unwrap();
        std::fs::write(
            git.join("worktrees/wt/gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        let (repo, git, wt) = (base.join("repo"), base.join("repo/.git"), base.join("wt"));
        let found = names("git").find(&repo, &[], &[&base]);
        let read_only: Vec<&Path> = found
            .protected
            .iter()
            .filter(|e| !e.git)
            .map(|e| e.path.as_path())
            .collect();
        for p in [
            git.join("config"),
            git.join("hooks"),
            git.join("modules/vendor/lib/config"),
            git.join("worktrees/wt/gitdir"),
            repo.join("vendor/lib/.git"),
            repo.join("other/.git"),
            wt.join(".git"),
        ] {
            assert!(read_only.contains(&p.as_path()), "{p:?} in {read_only:?}");
        }
        assert!(found.missing.contains(&git.join("commondir")), "{found:?}");
        assert!(found.missing.contains(&git.join("info")), "{found:?}");
        // The directories between the git directory and a submodule's are pinned.
        assert!(found
            .pinned
            .iter()
            .any(|e| e.path == git.join("modules/vendor")));
        let _ = std::fs::remove_dir_all(&base);
    }

    /// Nothing is kept from one call's look-ups to the next: a protected path swapped for
    /// another file between two calls, and a name made meanwhile, are what the next call
    /// binds.
    #[test]
    fn a_path_swapped_between_calls_is_found_anew() {
        let base = std::env::temp_dir().join(format!("ys-swap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("repo/.git/objects")).unwrap();
        std::fs::write(base.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(base.join("repo/.envrc"), "x").unwrap();
        let repo = std::fs::canonicalize(base.join("repo")).unwrap();
        let p = names("git,.envrc,.mcp.json,.zshrc");
        let id = |found: &Found, path: &Path| {
            found
                .protected
                .iter()
                .find(|e| e.path == path)
                .map(|e| e.id)
        };
        let first = p.find(&repo, &[], &[&repo]);
        let envrc = id(&first, &repo.join(".envrc")).expect(".envrc protected");
        assert!(id(&first, &repo.join(".git")).is_some(), "{first:?}");
        assert!(first.missing.contains(&repo.join(".mcp.json")));
        // Between the calls: .envrc replaced (a new inode), .git moved away and a
        // directory of another's put in its place, .mcp.json made.
        std::fs::rename(repo.join(".envrc"), repo.join("old-envrc")).unwrap();
        std::fs::write(repo.join(".envrc"), "y").unwrap();
        let git = id(&first, &repo.join(".git")).unwrap();
        std::fs::rename(repo.join(".git"), repo.join("old-git")).unwrap();
        std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "x").unwrap();
        std::fs::write(repo.join(".mcp.json"), "{}").unwrap();
        let second = p.find(&repo, &[], &[&repo]);
        let envrc2 = id(&second, &repo.join(".envrc")).expect(".envrc protected");
        let git2 = id(&second, &repo.join(".git")).expect(".git protected");
        assert_ne!(envrc, envrc2);
        assert_ne!(git, git2);
        assert!(id(&second, &repo.join(".mcp.json")).is_some(), "{second:?}");
        assert!(!second.missing.contains(&repo.join(".mcp.json")));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_watch_reports_what_was_created_and_a_refused_write() {
        let base = std::env::temp_dir().join(format!("ys-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", base.join(".bashrc")).unwrap();
        let m = std::fs::symlink_metadata(base.join(".bashrc")).unwrap();
        let watch = Watch {
            missing: vec![
                base.join(".mcp.json"),
                base.join(".envrc"),
                base.join(".zshrc"),
            ],
            protected: vec![base.join(".git")],
            links: vec![(
                base.join(".bashrc"),
                ((m.dev(), m.ino()), PathBuf::from("/etc/hostname")),
            )],
            hard_linked: Vec::new(),
            quiet: Quiet::default(),
        };
        assert_eq!(watch.line(false), None);
        std::fs::write(base.join(".mcp.json"), "{}").unwrap();
        let line = watch.line(true).expect("a line");
        assert!(
            line.contains(".mcp.json") && !line.contains(".envrc") && !line.contains(".zshrc"),
            "{line}"
        );
        assert!(!line.contains(".bashrc"), "{line}");
        assert!(line.contains("YIELDSHELL_PROTECTED_PATHS"), "{line}");
        // A protected link replaced by a file of the call's is named too.
        std::fs::remove_file(base.join(".bashrc")).unwrap();
        std::fs::write(base.join(".bashrc"), "evil").unwrap();
        let line = watch.line(false).expect("a line");
        assert!(line.contains(".bashrc"), "{line}");
        assert!(shows_refused_write(
            b"sh: 1: cannot create x: Read-only file system"
        ));
        assert!(!shows_refused_write(b"Permission denied"));
        let _ = std::fs::remove_dir_all(&base);
    }

    /// Every link of a chain on the way to the hooks directory is watched, and the hooks
    /// directory is protected when the working directory lies below the repository's root
    /// (the root itself not writable).
    #[test]
    fn links_on_the_way_and_hooks_below_the_root() {
        let (base, repo) = temp_repo("chain");
        std::fs::create_dir_all(repo.join("t-v1/hooks")).unwrap();
        std::os::unix::fs::symlink("t-v1", repo.join("t1")).unwrap();
        std::os::unix::fs::symlink("t1", repo.join("tools")).unwrap();
        std::fs::write(
            repo.join(".git/config"),
            "[core] hooksPath = tools/hooks ; the team's hooks\n",
        )
        .unwrap();
        let repo = std::fs::canonicalize(&repo).unwrap();
        let found = names("git").find(&repo, &[], &[&repo]);
        let links: Vec<&Path> = found.links.iter().map(|(p, _)| p.as_path()).collect();
        assert!(links.contains(&repo.join("tools").as_path()), "{found:?}");
        assert!(links.contains(&repo.join("t1").as_path()), "{found:?}");
        assert!(
            found
                .protected
                .iter()
                .any(|e| e.path == repo.join("t-v1/hooks")),
            "{found:?}"
        );
        // Working below the root, which the call cannot write: the hooks are still its.
        let below = repo.join("t-v1");
        let found = names("git").find(&below, &[], &[&below]);
        assert!(
            found
                .protected
                .iter()
                .any(|e| e.path == repo.join("t-v1/hooks")),
            "{found:?}"
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
