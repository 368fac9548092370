//! Each sandboxed call's private temporary directory: named by `TMPDIR` (and `TMP`, `TEMP`)
//! in its environment, writable by the call's processes alone (`policy/sandbox` grants it to
//! the call's Landlock domain), and emptied once the record has ended
//! (`RecordExtras::finished`).
//!
//! The directories (`t0`, `t1`, ... mode 0700) live in a directory of the server's own
//! (`yieldshell-<pid>-<random>` in the server's temporary directory, 0700, made once with a
//! name nobody else can have taken, removed when the binary exits; what a server killed with
//! `SIGKILL` left is removed by the next server that makes its own). A directory serves one
//! call at a time; once that call's processes are gone it is emptied and serves a later
//! call, so that the calls of one working directory keep sharing one kept Landlock ruleset
//! (the ruleset names the directory's inode: a new directory per call would build a new
//! ruleset per call). One that cannot be emptied is removed and never used again.

use crate::base::sys::ext::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

/// The server's directory of call directories, once made: a static, since `main` removes it
/// at exit, after every engine.
static BASE: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The directories free for a call, and how many were made.
static FREE: Mutex<(Vec<PathBuf>, u64)> = Mutex::new((Vec::new(), 0));

/// A call's private directory; emptied and given back by [`CallDir::remove`] or on drop.
#[derive(Debug)]
pub struct CallDir {
    path: PathBuf,
    removed: AtomicBool,
}

impl CallDir {
    /// A directory for one call: a free one, or a new one.
    pub fn new() -> Result<CallDir, String> {
        let base = base()?;
        let path = {
            let mut free = FREE.lock();
            match free.0.pop() {
                Some(path) => path,
                None => {
                    free.1 += 1;
                    base.join(format!("t{}", free.1 - 1))
                }
            }
        };
        if !path.is_dir() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&path)
                .map_err(|e| {
                    format!(
                        "cannot make the call's temporary directory {}: {}",
                        path.display(),
                        crate::base::config::plain_io(&e)
                    )
                })?;
        }
        Ok(CallDir {
            path,
            removed: AtomicBool::new(false),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Empties it (symbolic links are removed, never followed) and gives it back for a
    /// later call, once; removes it instead when it cannot be emptied.
    pub fn remove(&self) {
        if self.removed.swap(true, Ordering::SeqCst) {
            return;
        }
        match empty(&self.path) {
            Ok(()) => FREE.lock().0.push(self.path.clone()),
            Err(e) => {
                crate::base::log::warn!(
                    "cannot empty the temporary directory {}: {e}",
                    self.path.display()
                );
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }
}

impl Drop for CallDir {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes everything in `dir`, keeping `dir` itself (a real directory, not a link).
fn empty(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// The server's directory, made on first use.
fn base() -> Result<&'static Path, String> {
    BASE.get_or_init(|| {
        let parent = std::env::temp_dir();
        let mut last = String::new();
        // A name taken already (by anyone) is never used: `create` fails on it.
        for _ in 0..8 {
            let path = parent.join(format!(
                "yieldshell-{}-{:016x}",
                std::process::id(),
                crate::base::stamp::random_u64()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    sweep(&parent, &path);
                    return Ok(path);
                }
                Err(e) => last = crate::base::config::plain_io(&e),
            }
        }
        Err(format!(
            "cannot make the server's directory of temporary directories in {}: {last}",
            parent.display()
        ))
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

/// Removes what servers that are gone left in `parent` (a server killed with SIGKILL does not
/// remove its directory): `yieldshell-<pid>-<random>` directories of the same user as `ours`
/// whose process no longer exists.
fn sweep(parent: &Path, ours: &Path) {
    use crate::base::sys::ext::MetadataExt;
    let Ok(uid) = std::fs::metadata(ours).map(|m| m.uid()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("yieldshell-"))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, random)| random.len() == 16)
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = matches!(
            crate::base::sys::kill(pid, 0),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH)
        );
        let ours_to_remove =
            std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if gone && ours_to_remove && pid != std::process::id() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes the server's directory (at shutdown, once every record has ended).
pub fn remove_base() {
    if let Some(Ok(base)) = BASE.get() {
        let _ = std::fs::remove_dir_all(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sys::ext::PermissionsExt;

    #[test]
    fn a_call_directory_is_private_emptied_and_served_again() {
        let dir = CallDir::new().expect("made");
        let other = CallDir::new().expect("made");
        assert_ne!(dir.path(), other.path(), "two live calls never share one");
        let mode = std::fs::metadata(dir.path())
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let base = dir.path().parent().expect("base").to_path_buf();
        let base_mode = std::fs::metadata(&base).expect("stat").permissions().mode();
        assert_eq!(base_mode & 0o777, 0o700);
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::fs::write(dir.path().join("sub/f"), "x").expect("write");
        std::fs::write(dir.path().join("g"), "x").expect("write");
        std::os::unix::fs::symlink(&base, dir.path().join("link")).expect("link");
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(path.is_dir(), "kept for a later call");
        assert_eq!(
            std::fs::read_dir(&path).expect("read").count(),
            0,
            "emptied"
        );
        assert!(base.join(other.path().file_name().expect("name")).exists());
        assert!(base.exists(), "a link is removed, never followed");
        let next = CallDir::new().expect("made");
        assert!(next.path().is_dir());
    }

    #[test]
    fn what_a_server_that_is_gone_left_is_swept() {
        let parent = std::env::temp_dir().join(format!("yieldshell-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).expect("mkdir");
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let left = parent.join(format!("yieldshell-{dead}-0123456789abcdef"));
        let live = parent.join(format!(
            "yieldshell-{}-0123456789abcdef",
            std::process::id()
        ));
        let other = parent.join(format!("yieldshell-{dead}-short"));
        for d in [&left, &live, &other] {
            std::fs::create_dir_all(d.join("t0")).expect("mkdir");
        }
        let ours = parent.join("ours");
        std::fs::create_dir(&ours).expect("mkdir");
        sweep(&parent, &ours);
        assert!(!left.exists(), "a gone server's directory is removed");
        assert!(live.exists() && other.exists(), "nothing else is");
        let _ = std::fs::remove_dir_all(&parent);
    }
}
