//! Git never runs beside a program that may write files whose names it computes, in the
//! same tree (the race left by `git::guard`'s repository check).
//!
//! `git::guard` reads every git directory a git stage will use right before spawning it; git
//! reads them again a moment later, and again whenever it needs them. A program running at
//! the same time could change them in between: `tar -x` of a member `.git/config`, `cp -r`
//! of a tree holding a `.git`, `patch`, `wget -r`, any program the hardening does not know,
//! and git itself (`mailinfo`, `merge-file`, `apply`, a checkout into
//! `--work-tree`). Programs that write only the paths named on their command line cannot
//! (the writing rules check those names), and neither can the readers.
//!
//! So every stage is classified ([`Kind`]) with the directories it works in (its roots: the
//! working directory and every path argument; for git also every git directory `git::guard`
//! resolves for it, wherever it lies: the one found walking up, a `gitdir:` file's target,
//! `--git-dir`, a worktree's common directory, submodules' directories, and the
//! configuration files they include), each root taken both as written and with
//! its symbolic links resolved, the places of those links being roots too. A stage may not
//! start while a stage of a clashing kind (one reads git's files, the other may write), in
//! an overlapping tree (one root inside or equal to another), has been admitted and has not
//! ended, whichever started first. Admission and the check are made under one
//! lock, and an admitted stage stays registered from before it is spawned until its record
//! ends ([`Ticket`]), so there is no moment where both could slip through. A conflict is a
//! refusal naming the running process; the caller retries when it has ended.
//!
//! A call's output redirection is a writer of its target for every other call, whatever the
//! program ([`admit_with`]): it is admitted before the target is opened and truncated, so a
//! git of another call never checks the truncated file and then reads the filled one
//! (`git cat-file blob X > x/config` beside `git --git-dir=x diff`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// How a stage takes part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// git that only reads (reads repository files that name programs).
    Git,
    /// A program that may write files whose names are not on its command line.
    Writer,
    /// git that may write files: both of the above. git writes any content where it is told
    /// (`mailinfo`, `merge-file`, `apply`, a checkout into `--work-tree`), so a git of
    /// another call could check a repository and then read what this one wrote there
    /// (`git mailinfo r/.git/config` beside `git diff` in `r`).
    GitWriter,
}

impl Kind {
    /// Reads git's repository files.
    fn reads(self) -> bool {
        matches!(self, Kind::Git | Kind::GitWriter)
    }

    /// May write files.
    fn writes(self) -> bool {
        matches!(self, Kind::Writer | Kind::GitWriter)
    }

    /// Whether stages of these kinds may not run side by side in one tree.
    fn clashes(self, other: Kind) -> bool {
        (self.reads() && other.writes()) || (self.writes() && other.reads())
    }
}

#[derive(Debug)]
struct Live {
    ticket: u64,
    kind: Kind,
    program: String,
    roots: Vec<PathBuf>,
    /// `None` while the stage is being spawned.
    proc: Option<Weak<dyn Ends>>,
}

impl Live {
    fn alive(&self) -> bool {
        match &self.proc {
            None => true,
            Some(weak) => weak.upgrade().is_some_and(|p| !p.is_finished()),
        }
    }
}

struct Registry {
    next: u64,
    live: Vec<Live>,
}

/// A static, not an engine's: the claims are on trees on disk, and git calls of two engines
/// in one process race on the same files.
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    next: 1,
    live: Vec::new(),
});

/// One stage to admit: its kind, program (for messages) and roots.
pub struct Claim {
    /// The kind.
    pub kind: Kind,
    /// The program as written.
    pub program: String,
    /// The directories it works in.
    pub roots: Vec<PathBuf>,
}

/// The admission of a call's stages: registered until the record they belong to ends.
/// Dropped without [`Ticket::attach`] (the spawn failed), the admission is withdrawn.
#[derive(Debug, Default)]
pub struct Ticket {
    id: Option<u64>,
}

impl Ticket {
    /// Ties the admission to the record that was started: it lasts until the record ends.
    pub fn attach(&self, proc: &Arc<dyn Ends>) {
        let Some(id) = self.id else { return };
        let mut registry = REGISTRY.lock();
        for live in registry.live.iter_mut().filter(|l| l.ticket == id) {
            live.proc = Some(Arc::downgrade(proc));
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        REGISTRY
            .lock()
            .live
            .retain(|l| !(l.ticket == id && l.proc.is_none()));
    }
}

/// Where two claims meet: the first pair of roots (`a`'s, `b`'s) where one contains (or is)
/// the other.
fn meeting<'a>(a: &'a [PathBuf], b: &'a [PathBuf]) -> Option<(&'a Path, &'a Path)> {
    a.iter().find_map(|x| {
        b.iter()
            .find(|y| x.starts_with(y) || y.starts_with(x))
            .map(|y| (x.as_path(), y.as_path()))
    })
}

/// The refusal of `claim` meeting `other` (of a clashing kind) at `(mine, theirs)`.
fn conflict(claim: &Claim, other: &str, (mine, theirs): (&Path, &Path)) -> String {
    let program = claim.program.as_str();
    let (git, writer, used, tree) = if claim.kind.writes() {
        (other, program, theirs, mine)
    } else {
        (program, other, mine, theirs)
    };
    format!(
        "{}git cannot run at the same time as a program that may write files in the same tree \
         ({git} and {writer}: {git} uses {}, {writer} may write in {}, and {writer} could \
         change the repository's configuration after it was checked); run them one after the \
         other",
        crate::policy::trusted::rules::PREFIX,
        used.display(),
        tree.display()
    )
}

/// Each root as written (cleaned), as the file system resolves it, and the place of every
/// symbolic link met while resolving it (a program that may change one of those links
/// changes what the root stands for), so that two names of one directory meet.
fn expand(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        let mut paths = vec![clean(root)];
        if let Some((real, links)) = resolved(root) {
            paths.push(real);
            paths.extend(links);
        }
        for path in paths {
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// The most symbolic links followed while resolving one path (the kernel's limit).
const MAX_LINKS: usize = 40;

/// An absolute `path` resolved as the kernel would, as far as it exists (the rest appended,
/// with `..` applied to the text), and the paths of the symbolic links followed on the way.
pub(super) fn resolved(path: &Path) -> Option<(PathBuf, Vec<PathBuf>)> {
    use std::ffi::OsString;
    use std::path::Component;
    if !path.is_absolute() {
        return None;
    }
    let parts = |p: &Path| -> Vec<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut todo: std::collections::VecDeque<OsString> = parts(path).into();
    let mut done = PathBuf::from("/");
    let mut links = Vec::new();
    let mut missing = false;
    while let Some(part) = todo.pop_front() {
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        if missing {
            done = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && links.len() < MAX_LINKS => {
                let Ok(target) = std::fs::read_link(&next) else {
                    done = next;
                    missing = true;
                    continue;
                };
                links.push(next);
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                for part in parts(&target).into_iter().rev() {
                    todo.push_front(part);
                }
            }
            Ok(_) => done = next,
            Err(_) => {
                done = next;
                missing = true;
            }
        }
    }
    Some((done, links))
}

/// Whether `path` (absolute) passes through a process's working directory or root in
/// `/proc` (`/proc/<pid>/cwd`, `/proc/self/root`, `/proc/<pid>/task/<tid>/cwd`), as written
/// or through a symbolic link met while resolving it (`/dev/fd/../cwd` is `/proc/self/cwd`).
/// Such a path names another directory in every process: `/proc/self/cwd` is the server's
/// working directory when the server checks it and the call's when git reads it (the check
/// would read a clean directory, git one whose configuration runs a program).
/// Other files of `/proc` (`/proc/self/status`) are the same kind of file on both sides.
pub fn process_relative(path: &Path) -> bool {
    let magic = |p: &Path| {
        let parts: Vec<&std::ffi::OsStr> = p
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        let dir = |k: usize| parts.get(k).is_some_and(|n| *n == "cwd" || *n == "root");
        parts.first().is_some_and(|n| *n == "proc")
            && (dir(2) || (parts.get(2).is_some_and(|n| *n == "task") && dir(4)))
    };
    if magic(&clean(path)) {
        return true;
    }
    resolved(path).is_some_and(|(real, links)| magic(&real) || links.iter().any(|l| magic(l)))
}

/// Admits a call's stages, or refuses them when one would run beside a stage of a clashing
/// kind in an overlapping tree (among themselves, or already admitted and not ended).
#[cfg(test)]
pub fn admit(claims: Vec<Claim>) -> Result<Ticket, String> {
    admit_with(claims, None)
}

/// [`admit`], with the call's output redirection as a writer of its target (`outside`): it is
/// compared with the stages of other calls only (the caller checks it against its own git
/// stages, so that `git log > out.txt` runs), and registered with the others. It must be
/// admitted before the target is opened: `git cat-file blob X > x/config` truncates and then
/// fills a file that a git of another call could check empty and then read full.
pub fn admit_with(claims: Vec<Claim>, outside: Option<Claim>) -> Result<Ticket, String> {
    if claims.is_empty() && outside.is_none() {
        return Ok(Ticket::default());
    }
    let outside = outside.map(|c| Claim {
        roots: expand(&c.roots),
        ..c
    });
    // Resolved before taking the lock: the file system may be slow.
    let claims: Vec<Claim> = claims
        .into_iter()
        .map(|c| Claim {
            roots: expand(&c.roots),
            ..c
        })
        .collect();
    for (i, a) in claims.iter().enumerate() {
        for b in &claims[i + 1..] {
            if !a.kind.clashes(b.kind) {
                continue;
            }
            if let Some(at) = meeting(&a.roots, &b.roots) {
                return Err(conflict(a, &b.program, at));
            }
        }
    }
    let mut registry = REGISTRY.lock();
    registry.live.retain(Live::alive);
    let claims: Vec<Claim> = claims.into_iter().chain(outside).collect();
    for claim in &claims {
        for other in registry.live.iter().filter(|l| l.kind.clashes(claim.kind)) {
            if let Some(at) = meeting(&claim.roots, &other.roots) {
                return Err(conflict(claim, &other.program, at));
            }
        }
    }
    let id = registry.next;
    registry.next += 1;
    for claim in claims {
        registry.live.push(Live {
            ticket: id,
            kind: claim.kind,
            program: claim.program,
            roots: claim.roots,
            proc: None,
        });
    }
    Ok(Ticket { id: Some(id) })
}

/// The roots of a stage run in `cwd`: the working directory and every argument read as a
/// path (an option's attached value too), made absolute and cleaned of `.` and `..`.
pub fn roots(cwd: &Path, args: &[String]) -> Vec<PathBuf> {
    let mut roots = vec![clean(cwd)];
    for path in arg_paths(cwd, args) {
        let path = clean(&path);
        if !path.starts_with(&roots[0]) {
            roots.push(path);
        }
    }
    roots
}

/// Every argument read as a path (an option's attached value too), joined to `cwd` as
/// written: `..` after a symbolic link is the kernel's to apply (`/dev/fd/..` is `/proc/self`).
pub fn arg_paths(cwd: &Path, args: &[String]) -> Vec<PathBuf> {
    args.iter()
        .filter_map(|arg| {
            let text = match arg.split_once('=') {
                Some((_, v)) if arg.starts_with('-') || !v.is_empty() => v,
                _ => arg.as_str(),
            };
            (!text.starts_with('-') && !text.is_empty()).then(|| cwd.join(text))
        })
        .collect()
}

/// `path` without `.` components and with `..` applied to the text (no symlink resolved:
/// both sides of a comparison are cleaned the same way, and the working directory is real).
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What a ticket is attached to: a record, known here only by whether it has ended.
pub trait Ends: Send + Sync {
    /// Whether every process of the record has ended.
    fn is_finished(&self) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(kind: Kind, program: &str, roots: &[&str]) -> Claim {
        Claim {
            kind,
            program: program.into(),
            roots: roots.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn git_and_writers_in_one_tree_are_kept_apart() {
        // Unique roots: other tests use the same registry.
        let base = format!("/gitlock-test-{}", std::process::id());
        let repo = format!("{base}/repo");
        let sub = format!("{base}/repo/sub");
        let elsewhere = format!("{base}/other");
        let git = admit(vec![claim(Kind::Git, "git", &[&repo])]).expect("git alone");
        let refused = admit(vec![claim(Kind::Writer, "tar", &[&sub])]);
        assert!(refused.is_err_and(|e| e.contains("git and tar")));
        let refused = admit(vec![claim(Kind::Writer, "tar", &[&base])]);
        assert!(refused.is_err());
        // Another tree, or another git, is fine.
        let other = admit(vec![claim(Kind::Writer, "tar", &[&elsewhere])]).expect("other tree");
        let git2 = admit(vec![claim(Kind::Git, "git", &[&sub])]).expect("git and git");
        drop((git, git2));
        // Dropped before being attached (the spawn failed): withdrawn.
        let tar = admit(vec![claim(Kind::Writer, "tar", &[&sub])]).expect("git ended");
        assert!(admit(vec![claim(Kind::Git, "git", &[&repo])]).is_err());
        drop(tar);
        drop(other);
        // git that writes clashes with git that reads, with git that writes and with any
        // writer; git that only reads never clashes with git that only reads.
        let writing = admit(vec![claim(Kind::GitWriter, "git mailinfo", &[&base])]);
        let writing = writing.expect("nothing running");
        let refused = admit(vec![claim(Kind::Git, "git", &[&sub])]);
        assert!(refused.is_err_and(|e| e.contains("git and git mailinfo")));
        assert!(admit(vec![claim(Kind::GitWriter, "git apply", &[&repo])]).is_err());
        assert!(admit(vec![claim(Kind::Writer, "tar", &[&repo])]).is_err());
        drop(writing);
        let reading = admit(vec![claim(Kind::Git, "git", &[&sub])]).expect("writer ended");
        assert!(admit(vec![claim(Kind::GitWriter, "git apply", &[&repo])]).is_err());
        drop(reading);
        // Within one pipeline.
        let pipeline = admit(vec![
            claim(Kind::Git, "git", &[&repo]),
            claim(Kind::Writer, "tar", &[&repo]),
        ]);
        assert!(pipeline.is_err());
    }

    #[test]
    fn two_names_of_one_directory_meet() {
        let base = std::env::temp_dir().join(format!("yieldshell-gitlock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("b/.git")).expect("mkdir");
        std::fs::create_dir_all(base.join("x")).expect("mkdir");
        let base = std::fs::canonicalize(&base).expect("canonicalize");
        std::os::unix::fs::symlink(base.join("b"), base.join("link")).expect("symlink");
        // Through `..`, through symbolic links, and below a name that does not exist yet.
        std::os::unix::fs::symlink("../link/.git", base.join("x/chain")).expect("symlink");
        let got = expand(&[base.join("x/../link/.git/new/../config")]);
        assert!(got.contains(&base.join("link/.git/config")), "{got:?}");
        assert!(got.contains(&base.join("b/.git/config")), "{got:?}");
        // A link met on the way is a root too: changing it changes the path.
        let chained = expand(&[base.join("x/chain/config")]);
        assert!(chained.contains(&base.join("b/.git/config")), "{chained:?}");
        assert!(chained.contains(&base.join("x/chain")), "{chained:?}");
        assert!(chained.contains(&base.join("link")), "{chained:?}");
        let writer = expand(&[base.join("b")]);
        let at = meeting(&got, &writer).expect("they meet");
        assert_eq!(
            at,
            (
                base.join("b/.git/config").as_path(),
                base.join("b").as_path()
            )
        );
        assert!(meeting(&got, &expand(&[base.join("x")])).is_none());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn roots_of_arguments() {
        let got = roots(
            Path::new("/w/p"),
            &[
                "-xf".into(),
                "a.tar".into(),
                "-C".into(),
                "/elsewhere/x".into(),
                "--directory=../q".into(),
            ],
        );
        let want: Vec<PathBuf> = ["/w/p", "/elsewhere/x", "/w/q"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
    }
}
