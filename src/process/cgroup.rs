//! A pids cgroup per command, so that `pids=N` of `YIELDSHELL_LIMITS` holds for a command
//! and everything it starts (SPEC section 13): a fork bomb fills its own cgroup, gets
//! `EAGAIN` from `fork`, and the machine and the server keep answering.
//!
//! Where: beneath the server's own pids cgroup (so a cap placed around the server also
//! holds for its commands), in a directory `yieldshell-<server pid>-<n>`, created before the
//! spawn and removed once the record has ended.
//! - cgroup v1 (a `pids` hierarchy, as at `/sys/fs/cgroup/pids`, writable by root or by
//!   delegation), or cgroup v2 (the unified hierarchy with the `pids` controller enabled
//!   for the children of the server's cgroup, as with systemd delegation).
//! - The command joins it before it executes anything: the child of the server's spawn
//!   writes `0` to the cgroup's `cgroup.procs` (opened by the server,
//!   [`CommandGroup::procs_writer`]) before its exec, so there is no window in which the
//!   command could fork outside.
//!
//! Where neither can be created, [`Cgroups::probe`] says why (a startup warning) and
//! `pids` is not enforced.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which cgroup version the per-command cgroups use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// A v1 `pids` hierarchy.
    V1,
    /// The unified (v2) hierarchy.
    V2,
}

/// Where per-command cgroups are made, found once at startup.
#[derive(Debug)]
pub struct Cgroups {
    version: Version,
    /// The server's own pids cgroup directory (parent of the per-command ones).
    parent: PathBuf,
    /// `pids.max` of each command's cgroup (`None`: the cgroup only tracks ownership).
    max: Option<u64>,
    counter: AtomicU64,
}

/// One command's cgroup; removed (when empty) by [`CommandGroup::remove`] or on drop.
#[derive(Debug)]
pub struct CommandGroup {
    dir: PathBuf,
}

/// The line of `/proc/self/cgroup` for the v1 `pids` hierarchy, or the v2 line.
fn own_path(cgroup_file: &str, version: Version) -> Option<String> {
    for line in cgroup_file.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = match version {
            Version::V1 => controllers.split(',').any(|c| c == "pids"),
            Version::V2 => controllers.is_empty(),
        };
        if hit {
            return Some(path.to_string());
        }
    }
    None
}

/// The mount point of the v1 `pids` hierarchy and of the v2 hierarchy, from mountinfo.
fn mount_points(mountinfo: &str) -> (Option<PathBuf>, Option<PathBuf>) {
    let mut v1 = None;
    let mut v2 = None;
    for line in mountinfo.lines() {
        // `id parent major:minor root mountpoint options... - fstype source superoptions`
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut l = left.split(' ');
        let (Some(root), Some(point)) = (l.nth(3), l.next()) else {
            continue;
        };
        let mut r = right.split(' ');
        let (Some(fstype), _, Some(opts)) = (r.next(), r.next(), r.next()) else {
            continue;
        };
        if root != "/" {
            continue;
        }
        if fstype == "cgroup" && opts.split(',').any(|o| o == "pids") && v1.is_none() {
            v1 = Some(PathBuf::from(point));
        } else if fstype == "cgroup2" && v2.is_none() {
            v2 = Some(PathBuf::from(point));
        }
    }
    (v1, v2)
}

impl Cgroups {
    /// Finds where per-command cgroups with `pids.max = max` can be made, and proves it by
    /// making and removing one. The error is the startup warning's text. Without `max` the
    /// cgroups only hold a command's processes (SPEC section 15): a v2 hierarchy then needs
    /// no controller.
    pub fn probe(max: Option<u64>) -> Result<Cgroups, String> {
        if !cfg!(target_os = "linux") {
            return Err("cgroups are a Linux kernel feature, not available on this system".into());
        }
        let mountinfo = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let (v1, v2) = mount_points(&mountinfo);
        let mut reasons = Vec::new();
        if let (Some(mount), Some(path)) = (v1, own_path(&own, Version::V1)) {
            let parent = mount.join(path.trim_start_matches('/'));
            match Cgroups::try_make(Version::V1, parent, max) {
                Ok(c) => return Ok(c),
                Err(e) => reasons.push(format!("cgroup v1 pids: {e}")),
            }
        }
        if let (Some(mount), Some(path)) = (v2, own_path(&own, Version::V2)) {
            let parent = mount.join(path.trim_start_matches('/'));
            let enabled = fs::read_to_string(parent.join("cgroup.subtree_control"))
                .unwrap_or_default()
                .split_whitespace()
                .any(|c| c == "pids");
            if enabled || max.is_none() {
                match Cgroups::try_make(Version::V2, parent, max) {
                    Ok(c) => return Ok(c),
                    Err(e) => reasons.push(format!("cgroup v2: {e}")),
                }
            } else {
                reasons.push(format!(
                    "cgroup v2: the pids controller is not enabled for the children of {} \
                     (delegate it, for example with systemd's Delegate=pids)",
                    parent.display()
                ));
            }
        }
        if reasons.is_empty() {
            reasons.push("no cgroup hierarchy with the pids controller is mounted".into());
        }
        Err(reasons.join("; "))
    }

    fn try_make(version: Version, parent: PathBuf, max: Option<u64>) -> Result<Cgroups, String> {
        let c = Cgroups {
            version,
            parent,
            max,
            counter: AtomicU64::new(0),
        };
        let g = c.create().map_err(|e| e.to_string())?;
        g.remove();
        Ok(c)
    }

    /// The path prefix of every cgroup [`Cgroups::create`] makes (for the guardian).
    pub fn prefix(&self) -> PathBuf {
        self.parent
            .join(format!("yieldshell-{}-", std::process::id()))
    }

    /// The cgroup version in use.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Makes a new, empty cgroup for one command, with the configured `pids.max`.
    pub fn create(&self) -> io::Result<CommandGroup> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let dir = self
            .parent
            .join(format!("yieldshell-{}-{n}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| annotate(e, &dir, "create"))?;
        let g = CommandGroup { dir };
        if let Some(max) = self.max {
            fs::write(g.dir.join("pids.max"), max.to_string())
                .map_err(|e| annotate(e, &g.dir.join("pids.max"), "write"))?;
        }
        Ok(g)
    }
}

fn annotate(e: io::Error, path: &Path, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
}

impl CommandGroup {
    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The processes in the cgroup now (read from its `cgroup.procs`: it costs what the
    /// cgroup holds, not what the host runs).
    /// A v1 `cgroup.procs` may name a process once per thread: each comes once here.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Whether no process is left in the cgroup. A cgroup that cannot be read counts as
    /// empty (it was removed, or the hierarchy is gone).
    pub fn is_empty(&self) -> bool {
        use std::io::Read;
        let Ok(mut f) = fs::File::open(self.dir.join("cgroup.procs")) else {
            return true;
        };
        let mut first = [0u8; 16];
        !matches!(f.read(&mut first), Ok(n) if n > 0)
    }

    /// The cgroup's `cgroup.procs`, open for writing, for the command's first process to
    /// join through before it executes (`sys::ChildSetup::cgroup`; opened here, by the
    /// server, so a child already in the kernel sandbox can still write to it).
    pub fn procs_writer(&self) -> Result<fs::File, String> {
        let path = self.dir.join("cgroup.procs");
        fs::OpenOptions::new().write(true).open(&path).map_err(|e| {
            format!(
                "cannot open {} to join the command's cgroup: {e}",
                path.display()
            )
        })
    }

    /// Removes the cgroup if it is empty; true when it is gone.
    pub fn remove(&self) -> bool {
        match fs::remove_dir(&self.dir) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(_) => false,
        }
    }
}

impl Drop for CommandGroup {
    fn drop(&mut self) {
        if !self.remove() {
            crate::base::log::warn!(
                "cgroup {} is not empty yet; it stays until its last process ends",
                self.dir.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_own_paths_and_mounts() {
        let own = "9:name=systemd:/\n8:pids:/a/b\n4:memory:/m\n0::/user.slice/x\n";
        assert_eq!(own_path(own, Version::V1).as_deref(), Some("/a/b"));
        assert_eq!(own_path(own, Version::V2).as_deref(), Some("/user.slice/x"));
        let mi = "30 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:9 - cgroup cgroup rw,pids\n\
                  31 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                  32 25 0:29 /sub /elsewhere rw - cgroup cgroup rw,pids\n";
        let (v1, v2) = mount_points(mi);
        assert_eq!(v1, Some(PathBuf::from("/sys/fs/cgroup/pids")));
        assert_eq!(v2, Some(PathBuf::from("/sys/fs/cgroup/unified")));
    }

    /// Where this machine allows it (root with a v1 pids hierarchy, or delegation), a
    /// child spawned inside counts against the cgroup and a fork beyond the cap fails.
    #[test]
    fn a_child_spawned_inside_is_capped() {
        let cgroups = match Cgroups::probe(Some(5)) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("skipped: no pids cgroup can be made here: {why}");
                return;
            }
        };
        let g = cgroups.create().unwrap();
        // The shell joins first (as a spawned child does), then it and four background
        // sleeps make five tasks; the next fork fails (and the shell gives up). Builtins
        // only after that point.
        let script = format!(
            "echo $$ > {}/cgroup.procs || exit 9; for i in 1 2 3 4; do sleep 2 & done; sleep 0 && echo sixth",
            g.dir().display()
        );
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("sixth"), "{stdout}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("fork")
                || String::from_utf8_lossy(&out.stderr).contains("esource"),
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !g.pids().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(g.remove(), "cgroup still busy: {:?}", g.pids());
    }
}
