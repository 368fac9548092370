//! A pids cgroup per command, so that `pids=N` of `YIELDSHELL_LIMITS` holds for a command
//! and everything it starts: a fork bomb fills its own cgroup, gets
//! `EAGAIN` from `fork`, and the machine and the server keep answering.
//!
//! Where: beneath the server's own cgroup (so a cap placed around the server also holds for
//! its commands), in a directory `yieldshell-<server pid>-<n>`, created before the spawn
//! and removed once the record has ended.
//! - cgroup v2 first (the unified hierarchy; with the `pids` controller enabled for the
//!   children of the server's cgroup when a `pids` limit is asked for, as with systemd
//!   delegation), else cgroup v1 (a `pids` hierarchy, as at `/sys/fs/cgroup/pids`, writable
//!   by root or by delegation). On a host with both, a `pids` limit that only v1 can
//!   enforce takes v1.
//! - The command joins it before it executes anything, so there is no window in which it
//!   could fork outside: on v2 the clone places the child in the cgroup
//!   (`CLONE_INTO_CGROUP`, through its directory opened by the server,
//!   [`CommandGroup::joiner`]); on v1 (or a kernel before 5.7) the child writes `0` to the
//!   cgroup's `cgroup.procs`, also opened by the server, before its exec. The write is why
//!   v2 comes first: moving a process takes the kernel's cgroup lock in its slow mode, and
//!   switching to that mode waits for an RCU grace period, 5 to 15 ms here whenever
//!   commands start more than a few milliseconds apart, which is how an agent calls.
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
}

/// The number in the next cgroup's name. Names are the process's (`yieldshell-<pid>-<n>`)
/// whichever engine makes them: one counter for the process, so that two engines in one
/// process never make, and then remove, a cgroup of the same name.
static NEXT_GROUP: AtomicU64 = AtomicU64::new(0);

/// How many taken names [`Cgroups::create`] passes over before it gives up.
const LEFT_BEHIND: u32 = 64;

/// The open files through which a child joins its command's cgroup.
#[derive(Debug)]
pub struct Joiner {
    procs: fs::File,
    dir: Option<fs::File>,
}

impl Joiner {
    /// The files as the child's setup takes them.
    pub fn join(&self) -> crate::base::sys::CgroupJoin<'_> {
        use crate::base::sys::fd::AsFd;
        crate::base::sys::CgroupJoin {
            procs: self.procs.as_fd(),
            dir: self.dir.as_ref().map(AsFd::as_fd),
        }
    }
}

/// One command's cgroup; removed (when empty) by [`CommandGroup::remove`] or on drop.
#[derive(Debug)]
pub struct CommandGroup {
    dir: PathBuf,
    version: Version,
    count: parking_lot::Mutex<Count>,
}

/// The cgroup's process count as last read, with the task count it was read at.
///
/// Opening a cgroup file costs 10 to 30 µs (kernfs), a read of an open one about 1 µs: `ps`
/// of 1,000 records would spend most of its time opening `cgroup.procs`. `pids.current`
/// (the tasks of the cgroup, where the pids controller is on: v1, or v2 with it enabled) is
/// kept open and read afresh each time; `cgroup.procs` is read again only when it changed.
/// (`cgroup.procs` itself cannot be kept open: a v1 re-read returns the list as it was
/// while reads come less than a second apart.) A process that ends while a thread starts
/// elsewhere in the cgroup leaves the task count as it was: the process count then lags
/// until the next change.
#[derive(Debug, Default)]
struct Count {
    tasks_file: Option<fs::File>,
    /// A v2 cgroup's `cgroup.procs`, kept open where there is no `pids.current`: a v2
    /// read from offset 0 lists the cgroup as it is now.
    procs_file: Option<fs::File>,
    tasks: u64,
    processes: usize,
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
    /// cgroups only hold a command's processes: a v2 hierarchy then needs
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
        // v2 first: its child joins through the clone itself (`CLONE_INTO_CGROUP`), where a
        // v1 child writes to `cgroup.procs`, which costs an RCU grace period (several
        // milliseconds) whenever commands start more than a few milliseconds apart. v1
        // where only it has the pids controller a configured `pids` limit needs.
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
        if let (Some(mount), Some(path)) = (v1, own_path(&own, Version::V1)) {
            let parent = mount.join(path.trim_start_matches('/'));
            match Cgroups::try_make(Version::V1, parent, max) {
                Ok(c) => return Ok(c),
                Err(e) => reasons.push(format!("cgroup v1 pids: {e}")),
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
    ///
    /// A name can be taken already: an earlier server with this process id may have left
    /// its cgroup behind (killed, with a process that took longer than its guardian waited).
    /// Such a cgroup is not this process's: an empty one is removed and its name used, a
    /// busy one is passed over for the next number.
    pub fn create(&self) -> io::Result<CommandGroup> {
        let mut tries = 0;
        let dir = loop {
            let n = NEXT_GROUP.fetch_add(1, Ordering::Relaxed);
            let dir = self
                .parent
                .join(format!("yieldshell-{}-{n}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < LEFT_BEHIND => {
                    tries += 1;
                    if fs::remove_dir(&dir).is_ok() && fs::create_dir(&dir).is_ok() {
                        break dir;
                    }
                }
                Err(e) => return Err(annotate(e, &dir, "create")),
            }
        };
        let g = CommandGroup {
            count: parking_lot::Mutex::new(Count {
                tasks_file: fs::File::open(dir.join("pids.current")).ok(),
                procs_file: None,
                ..Count::default()
            }),
            dir,
            version: self.version,
        };
        if self.version == Version::V2 {
            let mut c = g.count.lock();
            if c.tasks_file.is_none() {
                c.procs_file = fs::File::open(g.dir.join("cgroup.procs")).ok();
            }
        }
        if let Some(max) = self.max {
            fs::write(g.dir.join("pids.max"), max.to_string())
                .map_err(|e| annotate(e, &g.dir.join("pids.max"), "write"))?;
        }
        Ok(g)
    }
}

/// Reads a kept v2 `cgroup.procs` afresh from its start, a chunk at a time, into `each`;
/// `None` when none is kept or it cannot be read.
fn read_kept(c: &Count, mut each: impl FnMut(&[u8])) -> Option<()> {
    use crate::base::sys::ext::FileExt;
    let f = c.procs_file.as_ref()?;
    let mut buf = [0u8; 512];
    let mut at = 0u64;
    loop {
        let n = f.read_at(&mut buf, at).ok()?;
        each(&buf[..n]);
        // A read of a cgroup file fills the buffer unless the list ended.
        if n < buf.len() {
            return Some(());
        }
        at += n as u64;
    }
}

/// The processes listed in a kept v2 `cgroup.procs`; `None` when none is kept.
fn kept_pids(c: &Count) -> Option<Vec<u32>> {
    let mut text = Vec::new();
    read_kept(c, |chunk| text.extend_from_slice(chunk))?;
    Some(pid_list(&String::from_utf8_lossy(&text)))
}

/// How many processes a kept v2 `cgroup.procs` lists now (one line each: v2 lists each
/// process once), counted without allocating; `None` when none is kept or it cannot be read.
fn kept_count(c: &Count) -> Option<usize> {
    let mut lines = 0;
    read_kept(c, |chunk| {
        lines += memchr::memchr_iter(b'\n', chunk).count()
    })?;
    Some(lines)
}

/// The processes a `cgroup.procs` text lists, each once (v1 may name a process once per
/// thread).
fn pid_list(text: &str) -> Vec<u32> {
    let mut pids: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// The cgroup's task count now, read from its kept `pids.current`.
fn tasks_of(c: &Count) -> Option<u64> {
    use crate::base::sys::ext::FileExt;
    let mut buf = [0u8; 24];
    let n = c.tasks_file.as_ref()?.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
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
        self.listed(&self.count.lock())
    }

    /// [`CommandGroup::pids`] with the count's lock held: from the kept `cgroup.procs`
    /// (v2), else from one opened now.
    fn listed(&self, c: &Count) -> Vec<u32> {
        if let Some(pids) = kept_pids(c) {
            return pids;
        }
        pid_list(&fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default())
    }

    /// Records that `n` processes were just started in the cgroup, one thread each (the
    /// stages of a launch, before anything else can be in it).
    pub fn started(&self, n: usize) {
        let mut c = self.count.lock();
        c.tasks = n as u64;
        c.processes = n;
    }

    /// How many processes the cgroup holds now (see [`Count`]: `cgroup.procs` is read only
    /// when the task count changed since the last look).
    pub fn process_count(&self) -> usize {
        let mut c = self.count.lock();
        match tasks_of(&c) {
            Some(t) if t == c.tasks => c.processes,
            Some(0) => {
                c.tasks = 0;
                c.processes = 0;
                0
            }
            Some(t) => {
                c.tasks = t;
                c.processes = self.listed(&c).len();
                c.processes
            }
            None => kept_count(&c).unwrap_or_else(|| self.listed(&c).len()),
        }
    }

    /// Whether no process is left in the cgroup. A cgroup that cannot be read counts as
    /// empty (it was removed, or the hierarchy is gone).
    pub fn is_empty(&self) -> bool {
        use std::io::Read;
        // The kept task count first (a read, not an open): a task is counted until it is
        // reaped, and the reaper reaps before it asks.
        if let Some(tasks) = tasks_of(&self.count.lock()) {
            return tasks == 0;
        }
        if let Some(n) = kept_count(&self.count.lock()) {
            return n == 0;
        }
        let Ok(mut f) = fs::File::open(self.dir.join("cgroup.procs")) else {
            return true;
        };
        let mut first = [0u8; 16];
        !matches!(f.read(&mut first), Ok(n) if n > 0)
    }

    /// What a child needs to join the cgroup (`sys::ChildSetup::cgroup`): its
    /// `cgroup.procs` open for writing, and on v2 its directory, for the clone to place the
    /// child in it at once. Opened here, by the server, so that a child already in the
    /// kernel sandbox can still join.
    pub fn joiner(&self) -> Result<Joiner, String> {
        let path = self.dir.join("cgroup.procs");
        let procs = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| {
                format!(
                    "cannot open {} to join the command's cgroup: {e}",
                    path.display()
                )
            })?;
        let dir = match self.version {
            Version::V2 => fs::File::open(&self.dir).ok(),
            Version::V1 => None,
        };
        Ok(Joiner { procs, dir })
    }

    /// Removes the cgroup if it is empty; true when it is gone. Its kept `pids.current` is
    /// closed first: a finished record holds no descriptor.
    pub fn remove(&self) -> bool {
        {
            let mut c = self.count.lock();
            c.tasks_file = None;
            c.procs_file = None;
        }
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

    /// Names an earlier process with this pid left behind: an empty one is taken over, a
    /// busy one (here: a directory holding a file, which `rmdir` refuses as it refuses a
    /// cgroup with processes) is passed over and stays as it was.
    #[test]
    fn names_left_by_an_earlier_process_are_reclaimed_or_passed_over() {
        let parent = std::env::temp_dir().join(format!(
            "yieldshell-cgroup-names-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&parent);
        fs::create_dir(&parent).unwrap();
        let cgroups = Cgroups {
            version: Version::V2,
            parent: parent.clone(),
            max: None,
        };
        let next = NEXT_GROUP.load(Ordering::Relaxed);
        let name = |n: u64| parent.join(format!("yieldshell-{}-{n}", std::process::id()));
        for n in next..next + 8 {
            fs::create_dir(name(n)).unwrap();
            if n % 2 == 0 {
                fs::write(name(n).join("busy"), "").unwrap();
            }
        }
        let made: Vec<_> = (0..6).map(|_| cgroups.create().unwrap()).collect();
        for g in &made {
            assert!(
                !g.dir().join("busy").exists(),
                "took a busy name: {:?}",
                g.dir()
            );
        }
        for n in (next..next + 8).filter(|n| n % 2 == 0) {
            assert!(name(n).join("busy").exists(), "a busy one was touched");
        }
        drop(made);
        fs::remove_dir_all(&parent).unwrap();
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

    /// The kept count follows processes that join and leave, read afresh after a change.
    #[test]
    fn the_process_count_follows_the_cgroup() {
        let Ok(cgroups) = Cgroups::probe(None) else {
            eprintln!("skipped: no cgroup can be made here");
            return;
        };
        // Another test's `Cgroups` in this process counts the same names: skip theirs.
        let g = (0..100)
            .find_map(|_| cgroups.create().ok())
            .expect("create a cgroup");
        assert_eq!(g.process_count(), 0);
        let mut children = Vec::new();
        for n in 1..=3 {
            let child = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            fs::write(g.dir().join("cgroup.procs"), child.id().to_string()).unwrap();
            children.push(child);
            assert_eq!(g.process_count(), n);
            assert_eq!(g.process_count(), n, "read again without a change");
        }
        for (i, mut child) in children.into_iter().enumerate() {
            child.kill().unwrap();
            child.wait().unwrap();
            assert_eq!(g.process_count(), 2 - i);
        }
        assert!(g.remove());
    }
}
