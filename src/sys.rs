//! Every system call that needs `unsafe`, behind safe wrappers that return `io::Result`.
//!
//! Nothing outside this module contains `unsafe`. Blocking calls retry on `EINTR`; the
//! non-blocking ones do not need to.
//!
//! Spawning is `posix_spawn` on Linux (with `POSIX_SPAWN_SETSID`, file actions for the
//! working directory and the three standard descriptors, an empty signal mask and default
//! dispositions), and `std::process::Command` with a `setsid` `pre_exec` step elsewhere:
//! either way every command leads its own session and process group and has no
//! controlling terminal. The server never waits on a child it spawned: only the reaper
//! reaps, through [`reap_any`].
//!
//! Descriptors that a call only uses are taken as `BorrowedFd`, so the caller keeps the
//! ownership and the descriptor stays open for the call.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
#[cfg(not(target_os = "linux"))]
use std::os::unix::process::CommandExt;
use std::path::Path;
#[cfg(not(target_os = "linux"))]
use std::process::{Command, Stdio};

/// How a child ended, decoded from the raw `waitpid` status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitStatus {
    /// Normal exit with this code.
    Exited(i32),
    /// Killed by this signal.
    Signaled(i32),
}

/// What to spawn. The environment is complete: nothing is inherited beyond it.
pub struct SpawnSpec<'a> {
    /// The program (looked up in the `PATH` of `env` when it has no `/`).
    pub program: &'a str,
    /// `argv[0]` as the child sees it, when it differs from `program`.
    pub arg0: Option<&'a str>,
    /// Arguments after the program name.
    pub args: &'a [String],
    /// The whole environment of the child.
    pub env: &'a [(OsString, OsString)],
    /// The working directory.
    pub cwd: &'a Path,
    /// Whether stdin is a pipe (`true`) or `/dev/null`.
    pub stdin_pipe: bool,
    /// Stdout and stderr targets; `None` makes a pipe.
    pub stdout: Option<File>,
    /// Stdin source; overrides `stdin_pipe` when given.
    pub stdin_file: Option<File>,
    /// Stderr target; `None` makes a pipe.
    pub stderr: Option<File>,
    /// The process group to join (`Some(0)`: a new group in the server's session); `None`
    /// makes the child lead a new session.
    pub join_group: Option<u32>,
    /// A terminal (`/dev/pts/N`) to open in the child after it became a session leader,
    /// which makes it the session's controlling terminal (Linux; needs `join_group: None`).
    /// Its stdio should be that terminal too (see [`open_pty`]).
    pub terminal: Option<&'a Path>,
}

/// A started child: its pid (also its process group id) and the parent's pipe ends.
pub struct Spawned {
    /// Process id, which is also the process group and session id.
    pub pid: u32,
    /// Write end of the child's stdin, when it is a pipe.
    pub stdin: Option<File>,
    /// Read end of the child's stdout, when it is a pipe.
    pub stdout: Option<File>,
    /// Read end of the child's stderr, when it is a pipe.
    pub stderr: Option<File>,
}

/// Starts a child in a new session (or in `join_group`), with exactly the given stdio,
/// environment and working directory. Every other descriptor of the server is close-on-exec.
///
/// On Linux this is `posix_spawn` (a `vfork`-style clone in glibc and musl, so the cost does
/// not grow with the server's memory) with `POSIX_SPAWN_SETSID`, the working directory set
/// by a file action, an empty signal mask and default dispositions for the signals the
/// server handles or ignores (SIGPIPE above all). `exec` failures come back as the error.
#[cfg(target_os = "linux")]
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    use std::ffi::CString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};

    let nul = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} contains a NUL byte"),
        )
    };
    let path = CString::new(
        resolve_program(spec.program, spec.env)
            .into_os_string()
            .into_vec(),
    )
    .map_err(|_| nul("the program path"))?;
    let mut argv: Vec<CString> = Vec::with_capacity(spec.args.len() + 1);
    argv.push(
        CString::new(spec.arg0.unwrap_or(spec.program)).map_err(|_| nul("the program name"))?,
    );
    for a in spec.args {
        argv.push(CString::new(a.as_str()).map_err(|_| nul("an argument"))?);
    }
    let mut envp: Vec<CString> = Vec::with_capacity(spec.env.len());
    for (k, v) in spec.env {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        envp.push(CString::new(kv).map_err(|_| nul("an environment variable"))?);
    }
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|c| c.as_ptr() as *mut _).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|c| c.as_ptr() as *mut _).collect();
    envp_ptrs.push(std::ptr::null_mut());
    let cwd =
        CString::new(spec.cwd.as_os_str().as_bytes()).map_err(|_| nul("the working directory"))?;

    // The child's ends; the parent's ends are returned.
    let (child_in, parent_in): (File, Option<File>) = match (spec.stdin_file, spec.stdin_pipe) {
        (Some(f), _) => (f, None),
        (None, true) => {
            let (r, w) = std::io::pipe()?;
            (
                File::from(OwnedFd::from(r)),
                Some(File::from(OwnedFd::from(w))),
            )
        }
        (None, false) => (File::open("/dev/null")?, None),
    };
    let out_pair = |given: Option<File>| -> io::Result<(File, Option<File>)> {
        match given {
            Some(f) => Ok((f, None)),
            None => {
                let (r, w) = std::io::pipe()?;
                Ok((
                    File::from(OwnedFd::from(w)),
                    Some(File::from(OwnedFd::from(r))),
                ))
            }
        }
    };
    let (child_out, parent_out) = out_pair(spec.stdout)?;
    let (child_err, parent_err) = out_pair(spec.stderr)?;

    let mut actions = SpawnActions::new()?;
    actions.dup2(child_in.as_raw_fd(), 0)?;
    actions.dup2(child_out.as_raw_fd(), 1)?;
    actions.dup2(child_err.as_raw_fd(), 2)?;
    let terminal = match spec.terminal {
        Some(t) => Some(CString::new(t.as_os_str().as_bytes()).map_err(|_| nul("the terminal"))?),
        None => None,
    };
    if let Some(t) = &terminal {
        // glibc and musl run setsid (POSIX_SPAWN_SETSID) before the file actions, and a
        // session leader without a controlling terminal that opens a terminal without
        // O_NOCTTY acquires it: this open makes the terminal the session's.
        actions.open(0, t, libc::O_RDWR)?;
    }
    actions.chdir(&cwd)?;
    let mut attr = SpawnAttr::new()?;
    attr.configure(spec.join_group)?;

    let mut pid: libc::pid_t = 0;
    // SAFETY: `path`, `argv_ptrs` and `envp_ptrs` are NUL-terminated C strings and
    // null-terminated pointer arrays that outlive the call; `actions` and `attr` were
    // initialised by their constructors; `pid` is writable.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            &actions.0,
            &attr.0,
            argv_ptrs.as_ptr(),
            envp_ptrs.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // The child holds its own copies now; closing ours keeps only the parent's ends open.
    drop((child_in, child_out, child_err));
    Ok(Spawned {
        pid: pid as u32,
        stdin: parent_in,
        stdout: parent_out,
        stderr: parent_err,
    })
}

/// The program to execute: a name with `/` as given, otherwise the first executable match
/// in the child's `PATH` (or the usual directories when it has none).
#[cfg(target_os = "linux")]
fn resolve_program(program: &str, env: &[(OsString, OsString)]) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return program.into();
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return candidate;
        }
    }
    // Not found: let posix_spawn report ENOENT for the bare name.
    program.into()
}

#[cfg(target_os = "linux")]
struct SpawnActions(libc::posix_spawn_file_actions_t);

#[cfg(target_os = "linux")]
impl SpawnActions {
    fn new() -> io::Result<SpawnActions> {
        // SAFETY: an all-zero value is a valid place for init to write into.
        let mut fa: libc::posix_spawn_file_actions_t = unsafe { std::mem::zeroed() };
        // SAFETY: `fa` is a valid, writable file-actions object.
        let rc = unsafe { libc::posix_spawn_file_actions_init(&mut fa) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(SpawnActions(fa))
    }

    fn dup2(&mut self, from: RawFd, to: RawFd) -> io::Result<()> {
        // SAFETY: the object was initialised; both descriptors are plain integers.
        let rc = unsafe { libc::posix_spawn_file_actions_adddup2(&mut self.0, from, to) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    fn open(&mut self, fd: RawFd, path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<()> {
        // SAFETY: the object was initialised and `path` is a valid C string (copied by libc).
        let rc = unsafe {
            libc::posix_spawn_file_actions_addopen(&mut self.0, fd, path.as_ptr(), flags, 0)
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    fn chdir(&mut self, dir: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: the object was initialised and `dir` is a valid C string (copied by libc).
        let rc = unsafe { libc::posix_spawn_file_actions_addchdir_np(&mut self.0, dir.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Drop for SpawnActions {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new` and is destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.0);
        }
    }
}

#[cfg(target_os = "linux")]
struct SpawnAttr(libc::posix_spawnattr_t);

#[cfg(target_os = "linux")]
impl SpawnAttr {
    fn new() -> io::Result<SpawnAttr> {
        // SAFETY: an all-zero value is a valid place for init to write into.
        let mut attr: libc::posix_spawnattr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is a valid, writable attribute object.
        let rc = unsafe { libc::posix_spawnattr_init(&mut attr) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(SpawnAttr(attr))
    }

    /// New session (or the given group), empty signal mask, default dispositions.
    fn configure(&mut self, join_group: Option<u32>) -> io::Result<()> {
        let check = |rc: libc::c_int| {
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(rc))
            }
        };
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        match join_group {
            None => flags |= libc::POSIX_SPAWN_SETSID as libc::c_int,
            Some(pgid) => {
                flags |= libc::POSIX_SPAWN_SETPGROUP;
                // SAFETY: the object was initialised; the group id is a plain integer.
                check(unsafe {
                    libc::posix_spawnattr_setpgroup(&mut self.0, pgid as libc::pid_t)
                })?;
            }
        }
        // SAFETY: `set` is a valid sigset_t that sigemptyset/sigaddset initialise and fill
        // (glibc's sigset_t is an array of at least 1024 bits, so the words written for
        // signals 32 and 33 are inside it); the attribute object was initialised and copies
        // the sets.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            check(libc::posix_spawnattr_setsigmask(&mut self.0, &set))?;
            for sig in [
                libc::SIGPIPE,
                libc::SIGCHLD,
                libc::SIGTERM,
                libc::SIGINT,
                libc::SIGHUP,
                libc::SIGQUIT,
                libc::SIGUSR1,
                libc::SIGUSR2,
                libc::SIGTSTP,
                libc::SIGTTIN,
                libc::SIGTTOU,
                libc::SIGXFSZ,
            ] {
                libc::sigaddset(&mut set, sig);
            }
            // glibc reserves signals 32 and 33 for itself; its posix_spawn sets them to
            // SIG_IGN in the child (which exec keeps) unless they are in the default set,
            // and its sigaddset refuses them, so set their bits directly.
            #[cfg(target_env = "gnu")]
            {
                let words = &mut set as *mut libc::sigset_t as *mut libc::c_ulong;
                let bits = libc::c_ulong::BITS as usize;
                for sig in [32usize, 33] {
                    *words.add((sig - 1) / bits) |= 1 << ((sig - 1) % bits);
                }
            }
            check(libc::posix_spawnattr_setsigdefault(&mut self.0, &set))?;
            check(libc::posix_spawnattr_setflags(
                &mut self.0,
                flags as libc::c_short,
            ))?;
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Drop for SpawnAttr {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new` and is destroyed once.
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.0);
        }
    }
}

/// Starts a child in a new session (or in `join_group`), with exactly the given stdio,
/// environment and working directory. Every other descriptor of the server is close-on-exec.
#[cfg(not(target_os = "linux"))]
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    let mut cmd = Command::new(spec.program);
    if let Some(arg0) = spec.arg0 {
        cmd.arg0(arg0);
    }
    cmd.args(spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(spec.cwd);
    match spec.stdin_file {
        Some(f) => cmd.stdin(Stdio::from(f)),
        None if spec.stdin_pipe => cmd.stdin(Stdio::piped()),
        None => cmd.stdin(Stdio::null()),
    };
    match spec.stdout {
        Some(f) => cmd.stdout(Stdio::from(f)),
        None => cmd.stdout(Stdio::piped()),
    };
    match spec.stderr {
        Some(f) => cmd.stderr(Stdio::from(f)),
        None => cmd.stderr(Stdio::piped()),
    };
    match spec.join_group {
        Some(pgid) => {
            cmd.process_group(pgid as i32);
        }
        None => {
            // SAFETY: the closure runs in the forked child before exec and calls only
            // `setsid`, which is async-signal-safe; it allocates nothing and touches no lock.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    let mut child = cmd.spawn()?;
    Ok(Spawned {
        pid: child.id(),
        stdin: child.stdin.take().map(|p| File::from(OwnedFd::from(p))),
        stdout: child.stdout.take().map(|p| File::from(OwnedFd::from(p))),
        stderr: child.stderr.take().map(|p| File::from(OwnedFd::from(p))),
    })
    // Dropping `child` neither waits nor kills: the reaper owns the pid from here on.
}

/// Reaps one exited child without blocking. `Ok(None)` when no child has exited yet or
/// there is no child at all.
pub fn reap_any() -> io::Result<Option<(u32, WaitStatus)>> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable c_int for the duration of the call.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == 0 {
            return Ok(None);
        }
        if pid > 0 {
            let decoded = if libc::WIFEXITED(status) {
                WaitStatus::Exited(libc::WEXITSTATUS(status))
            } else if libc::WIFSIGNALED(status) {
                WaitStatus::Signaled(libc::WTERMSIG(status))
            } else {
                // Stopped or continued: not an exit. WNOHANG without WUNTRACED does not
                // report these, but be safe.
                continue;
            };
            return Ok(Some((pid as u32, decoded)));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// Sends `signal` to every process of group `pgid`.
pub fn killpg(pgid: u32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing pgid <= 1",
        ));
    }
    // SAFETY: plain system call with integer arguments; pgid > 1 so it never means "all".
    let rc = unsafe { libc::kill(-(pgid as libc::pid_t), signal) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `signal` to process `pid`.
pub fn kill(pid: u32, signal: i32) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing pid <= 1",
        ));
    }
    // SAFETY: plain system call with integer arguments; pid > 1.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether process group `pgid` still has a member (zombies included).
pub fn group_exists(pgid: u32) -> bool {
    match killpg(pgid, 0) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() != Some(libc::ESRCH),
    }
}

/// Makes this process the reaper of orphaned descendants (Linux), so that processes left
/// behind by a command's shell are reparented to the server and reaped at once.
pub fn set_child_subreaper() -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integer arguments.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Marks every descriptor at or above `low` close-on-exec, so that descriptors the server
/// inherited without `O_CLOEXEC` never reach a child.
pub fn cloexec_from(low: RawFd) {
    let fds: Vec<RawFd> =
        match std::fs::read_dir("/proc/self/fd").or_else(|_| std::fs::read_dir("/dev/fd")) {
            Ok(dir) => dir
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .filter(|&fd| fd >= low)
                .collect(),
            Err(_) => (low..1024).collect(),
        };
    for fd in fds {
        // SAFETY: F_GETFD/F_SETFD only change descriptor flags; an fd that is not open
        // (for example the directory handle already closed) just returns EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Puts `fd` into non-blocking mode.
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor that is open for the call (it is borrowed);
    // only status flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags == -1 {
            return Err(io::Error::last_os_error());
        }
        if libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Readiness of up to two descriptors, as reported by [`poll_read2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Ready {
    /// The descriptor has data, or reached end of file or an error (a read will not block).
    pub readable: [bool; 2],
}

/// Waits until one of the (up to two) descriptors is readable or hung up. A `None` slot is
/// skipped. Retries on `EINTR`. `timeout_ms < 0` waits forever.
pub fn poll_read2(fds: [Option<BorrowedFd<'_>>; 2], timeout_ms: i32) -> io::Result<Ready> {
    let mut pfds = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 2];
    for (slot, fd) in pfds.iter_mut().zip(fds) {
        if let Some(fd) = fd {
            slot.fd = fd.as_raw_fd();
            slot.events = libc::POLLIN;
        }
    }
    loop {
        // SAFETY: `pfds` is a valid array of two pollfd; negative fds are ignored by poll.
        let rc = unsafe { libc::poll(pfds.as_mut_ptr(), 2, timeout_ms) };
        if rc >= 0 {
            let mut ready = Ready::default();
            for (i, p) in pfds.iter().enumerate() {
                ready.readable[i] = p.fd >= 0 && p.revents != 0;
            }
            return Ok(ready);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// Asks the kernel for a larger pipe buffer (Linux); failure is harmless and ignored.
pub fn grow_pipe(file: &File, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: F_SETPIPE_SZ on a pipe descriptor we own; the kernel clamps or refuses.
        unsafe {
            libc::fcntl(file.as_raw_fd(), libc::F_SETPIPE_SZ, bytes as libc::c_int);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, bytes);
}

/// How [`open_target_beneath`] opens the final component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Read only.
    Read,
    /// Write, create, truncate.
    Truncate,
    /// Write, create, append.
    Append,
}

/// Ignores SIGINT, SIGTERM, SIGHUP and SIGPIPE in this process (the guardian's).
pub fn ignore_terminal_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
        // SAFETY: setting a signal's disposition to SIG_IGN installs no handler.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
}

/// An epoll instance (Linux): many pipes, one waiting thread.
#[cfg(target_os = "linux")]
pub struct Epoll {
    fd: OwnedFd,
}

#[cfg(target_os = "linux")]
impl Epoll {
    /// A new instance, close-on-exec.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 takes a flag and returns a new descriptor or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd })
    }

    /// Watches `fd` for input (level-triggered), reporting `token`.
    pub fn add(&self, fd: BorrowedFd<'_>, token: u64) -> io::Result<()> {
        let fd = fd.as_raw_fd();
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
            u64: token,
        };
        // SAFETY: both descriptors are open and `ev` is a valid event the kernel copies.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd`.
    pub fn delete(&self, fd: BorrowedFd<'_>) {
        let fd = fd.as_raw_fd();
        // SAFETY: a null event is allowed for EPOLL_CTL_DEL since Linux 2.6.9.
        unsafe {
            libc::epoll_ctl(
                self.fd.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd,
                std::ptr::null_mut(),
            );
        }
    }

    /// Waits for events; returns the tokens that are ready. Retries on `EINTR`.
    pub fn wait(&self, tokens: &mut Vec<u64>, max: usize, timeout_ms: i32) -> io::Result<()> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; max.max(1)];
        loop {
            // SAFETY: `events` has room for `max` entries, which is what we pass.
            let n = unsafe {
                libc::epoll_wait(
                    self.fd.as_raw_fd(),
                    events.as_mut_ptr(),
                    events.len() as i32,
                    timeout_ms,
                )
            };
            if n >= 0 {
                tokens.clear();
                // Copy the packed field out before use.
                tokens.extend(events[..n as usize].iter().map(|e| e.u64));
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(err);
            }
        }
    }
}

/// A handle on one process that stays valid across pid reuse (Linux `pidfd`).
pub struct ProcHandle {
    pid: u32,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fd: Option<OwnedFd>,
}

impl ProcHandle {
    /// Opens a handle on the process that has `pid` now. Falls back to a plain pid where
    /// pidfds are unavailable (old kernels, other systems).
    pub fn open(pid: u32) -> io::Result<ProcHandle> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1
            // (always close-on-exec).
            let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
            if rc >= 0 {
                // SAFETY: the kernel just returned this descriptor to us; nobody else owns it.
                let fd = unsafe { OwnedFd::from_raw_fd(rc as RawFd) };
                return Ok(ProcHandle { pid, fd: Some(fd) });
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::ESRCH) {
                return Err(err);
            }
        }
        Ok(ProcHandle { pid, fd: None })
    }

    /// Sends `signal` to exactly the process the handle was opened on, if it still runs.
    pub fn signal(&self, signal: i32) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            // SAFETY: pidfd_send_signal with a valid pidfd, a signal number, no siginfo.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            if rc == -1 {
                return Err(io::Error::last_os_error());
            }
            return Ok(());
        }
        kill(self.pid, signal)
    }
}

/// Signal names that `stop` accepts, with their numbers.
const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGABRT", libc::SIGABRT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGTERM", libc::SIGTERM),
    ("SIGCHLD", libc::SIGCHLD),
    ("SIGCONT", libc::SIGCONT),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGTSTP", libc::SIGTSTP),
    ("SIGTTIN", libc::SIGTTIN),
    ("SIGTTOU", libc::SIGTTOU),
    ("SIGURG", libc::SIGURG),
    ("SIGXCPU", libc::SIGXCPU),
    ("SIGXFSZ", libc::SIGXFSZ),
    ("SIGVTALRM", libc::SIGVTALRM),
    ("SIGPROF", libc::SIGPROF),
    ("SIGWINCH", libc::SIGWINCH),
    ("SIGIO", libc::SIGIO),
    ("SIGSYS", libc::SIGSYS),
];

/// Parses a signal name (`SIGTERM`, `term`, `Term`) or number (`15`).
pub fn signal_from_name(name: &str) -> Option<(i32, &'static str)> {
    let upper = name.trim().to_ascii_uppercase();
    if let Ok(n) = upper.parse::<i32>() {
        return SIGNALS
            .iter()
            .find(|(_, num)| *num == n)
            .map(|&(s, num)| (num, s));
    }
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    SIGNALS
        .iter()
        .find(|(s, _)| *s == full)
        .map(|&(s, num)| (num, s))
}

/// The name of signal `num` (`SIGTERM`), or `SIG<num>` for one without a name here.
pub fn signal_name(num: i32) -> String {
    match SIGNALS.iter().find(|(_, n)| *n == num) {
        Some((s, _)) => (*s).to_string(),
        None => format!("SIG{num}"),
    }
}

/// The list of accepted signal names, for error messages.
pub fn signal_names() -> impl Iterator<Item = &'static str> {
    SIGNALS.iter().map(|(s, _)| *s)
}

/// What [`open_target_beneath`] found at a path that already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetStat {
    /// `regular file`, `directory`, `FIFO`, `character device`, `block device`, `socket` or
    /// `symlink`.
    pub kind: &'static str,
    /// The number of hard links.
    pub nlink: u64,
}

fn kind_of(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "regular file",
        libc::S_IFDIR => "directory",
        libc::S_IFIFO => "FIFO",
        libc::S_IFCHR => "character device",
        libc::S_IFBLK => "block device",
        libc::S_IFSOCK => "socket",
        libc::S_IFLNK => "symlink",
        _ => "special file",
    }
}

fn fstat_fd(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor owned by the caller and `st` a valid out pointer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn openat_fd(dir: RawFd, name: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: `dir` is an open directory descriptor and `name` a valid C string; the mode
    // argument is read only with O_CREAT.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, 0o644 as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` below `base` with no symlink anywhere on the path (each component opened with `O_NOFOLLOW`), but
/// looks at an existing file before opening it for I/O: it is first opened with `O_PATH`
/// (which neither blocks on a FIFO nor wakes a device), `check` judges what it is, and only
/// then is that same inode opened, through `/proc/self/fd` (or, without `/proc`, by name with
/// the inode compared afterwards), with no `O_TRUNC` before the check. A new file is created
/// with `O_EXCL`. The outer `Err` is a system error; the inner one is `check`'s verdict.
pub fn open_target_beneath(
    base: &Path,
    rel: &Path,
    mode: OpenMode,
    check: &dyn Fn(&TargetStat) -> Result<(), String>,
) -> io::Result<Result<File, String>> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let comps: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let Some((last, dirs)) = comps.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    };
    let base_c = CString::new(base.as_os_str().as_bytes())?;
    let mut dir = openat_fd(
        libc::AT_FDCWD,
        &base_c,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    )?;
    for comp in dirs {
        let c = CString::new(comp.as_bytes())?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        dir = openat_fd(dir.as_raw_fd(), &c, flags)?;
    }
    let name = CString::new(last.as_bytes())?;
    let io_flags = match mode {
        OpenMode::Read => libc::O_RDONLY,
        OpenMode::Truncate => libc::O_WRONLY,
        OpenMode::Append => libc::O_WRONLY | libc::O_APPEND,
    };
    for _ in 0..4 {
        let path_fd = match openat_fd(
            dir.as_raw_fd(),
            &name,
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        ) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && mode != OpenMode::Read => {
                let flags =
                    io_flags | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                match openat_fd(dir.as_raw_fd(), &name, flags) {
                    Ok(fd) => return Ok(Ok(File::from(fd))),
                    // Created by someone else meanwhile: look at it again.
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let before = fstat_fd(path_fd.as_raw_fd())?;
        let stat = TargetStat {
            kind: kind_of(before.st_mode),
            nlink: before.st_nlink as u64,
        };
        if let Err(verdict) = check(&stat) {
            return Ok(Err(verdict));
        }
        let flags = io_flags | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        let proc_path = CString::new(format!("/proc/self/fd/{}", path_fd.as_raw_fd()))?;
        let fd = match openat_fd(libc::AT_FDCWD, &proc_path, flags) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                openat_fd(dir.as_raw_fd(), &name, flags | libc::O_NOFOLLOW)?
            }
            Err(e) => return Err(e),
        };
        let after = fstat_fd(fd.as_raw_fd())?;
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) {
            return Ok(Err("it was replaced while it was being checked".to_string()));
        }
        let stat = TargetStat {
            kind: kind_of(after.st_mode),
            nlink: after.st_nlink as u64,
        };
        if let Err(verdict) = check(&stat) {
            return Ok(Err(verdict));
        }
        if mode == OpenMode::Truncate {
            // SAFETY: `fd` is an open descriptor we own.
            if unsafe { libc::ftruncate(fd.as_raw_fd(), 0) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // O_NONBLOCK only guarded the open; the child gets a normal file.
        // SAFETY: F_GETFL/F_SETFL on the descriptor we own.
        unsafe {
            let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if fl >= 0 {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
            }
        }
        return Ok(Ok(File::from(fd)));
    }
    Err(io::Error::new(
        io::ErrorKind::WouldBlock,
        "the target kept changing while it was being opened",
    ))
}

/// Fixes the allocator's policy for large blocks at start-up, before any of them: on glibc,
/// blocks of 1 MiB or more are always mapped on their own (`M_MMAP_THRESHOLD`), so freeing
/// one returns it to the kernel at once. By default glibc raises that threshold to the size
/// of the largest mapped block freed (up to 32 MiB), after which a burst of large requests
/// stays in the heap; setting it explicitly turns that adjustment off. musl's allocator
/// always maps large blocks on their own: nothing to do there.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a parameter of the allocator, under its lock; called
    // before the allocations it concerns, it affects no live block.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1024 * 1024);
    }
}

/// Gives free heap memory back to the kernel after a burst (a large request), so that the
/// resident size returns to where it was. On glibc that is `malloc_trim(0)`, which releases
/// the free pages of every arena, not only the top of the heap (glibc keeps freed memory
/// otherwise: its trim and mmap thresholds grow with the largest block freed). musl's
/// allocator (mallocng) maps large blocks on their own and unmaps them on free, and
/// returns freed groups of small ones by itself, so there is nothing to do there.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists under its locks; it
    // takes no pointer and cannot invalidate live allocations.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_parse() {
        let check = |input: &str, expected: Option<&str>| {
            assert_eq!(signal_from_name(input).map(|(_, s)| s), expected, "{input}");
        };
        check("SIGTERM", Some("SIGTERM"));
        check("term", Some("SIGTERM"));
        check("Sigkill", Some("SIGKILL"));
        check(" int ", Some("SIGINT"));
        check("9", Some("SIGKILL"));
        check("SIGFOO", None);
        check("", None);
        check("SIG", None);
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
    }
}

// ---------------------------------------------------------------------------------------
// Kernel sandbox (Landlock), process attributes for the sandbox, and the launcher's exec.
// ---------------------------------------------------------------------------------------

/// Landlock's numbers (uapi `linux/landlock.h`), defined here because the `libc` crate has
/// only the system call numbers.
pub mod landlock {
    /// `landlock_create_ruleset` flag: return the highest supported ABI version.
    pub const CREATE_RULESET_VERSION: u32 = 1 << 0;
    /// Rule type of `landlock_add_rule`: a file or a directory hierarchy.
    pub const RULE_PATH_BENEATH: u32 = 1;

    /// Execute a file (ABI 1).
    pub const FS_EXECUTE: u64 = 1 << 0;
    /// Open a file for writing (ABI 1).
    pub const FS_WRITE_FILE: u64 = 1 << 1;
    /// Remove an empty directory or rename one (ABI 1).
    pub const FS_REMOVE_DIR: u64 = 1 << 4;
    /// Unlink or rename a file (ABI 1).
    pub const FS_REMOVE_FILE: u64 = 1 << 5;
    /// Create, rename or link a character device (ABI 1).
    pub const FS_MAKE_CHAR: u64 = 1 << 6;
    /// Create or rename a directory (ABI 1).
    pub const FS_MAKE_DIR: u64 = 1 << 7;
    /// Create, rename or link a regular file (ABI 1).
    pub const FS_MAKE_REG: u64 = 1 << 8;
    /// Create, rename or link a unix socket (ABI 1).
    pub const FS_MAKE_SOCK: u64 = 1 << 9;
    /// Create, rename or link a named pipe (ABI 1).
    pub const FS_MAKE_FIFO: u64 = 1 << 10;
    /// Create, rename or link a block device (ABI 1).
    pub const FS_MAKE_BLOCK: u64 = 1 << 11;
    /// Create, rename or link a symbolic link (ABI 1).
    pub const FS_MAKE_SYM: u64 = 1 << 12;
    /// Link or rename a file into another directory (ABI 2).
    pub const FS_REFER: u64 = 1 << 13;
    /// Truncate a file (ABI 3).
    pub const FS_TRUNCATE: u64 = 1 << 14;
    /// `ioctl` on a character or block device (ABI 5).
    pub const FS_IOCTL_DEV: u64 = 1 << 15;

    /// Bind a TCP socket to a port (ABI 4).
    pub const NET_BIND_TCP: u64 = 1 << 0;
    /// Connect a TCP socket to a port (ABI 4).
    pub const NET_CONNECT_TCP: u64 = 1 << 1;

    /// No connection to an abstract unix socket created outside the domain (ABI 6).
    pub const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    /// No signal to a process outside the domain (ABI 6).
    pub const SCOPE_SIGNAL: u64 = 1 << 1;

    /// `struct landlock_ruleset_attr` (ABI 6 layout; older kernels accept it when the fields
    /// they do not know are zero).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct RulesetAttr {
        /// Filesystem rights the ruleset handles (denied unless a rule grants them).
        pub handled_access_fs: u64,
        /// Network rights the ruleset handles.
        pub handled_access_net: u64,
        /// IPC scopes.
        pub scoped: u64,
    }

    /// `struct landlock_path_beneath_attr` (packed in the uapi header).
    #[repr(C, packed)]
    #[derive(Clone, Copy, Debug)]
    pub struct PathBeneathAttr {
        /// Rights granted beneath `parent_fd`.
        pub allowed_access: u64,
        /// A file or directory, usually opened with `O_PATH`.
        pub parent_fd: i32,
    }
}

/// The highest Landlock ABI version the kernel offers: `Ok(0)` when Landlock is not built in
/// or not enabled at boot (`ENOSYS`, `EOPNOTSUPP`).
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> io::Result<u32> {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a
    // number; it reads and writes no memory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<landlock::RulesetAttr>(),
            0usize,
            landlock::CREATE_RULESET_VERSION,
        )
    };
    if rc >= 0 {
        return Ok(rc as u32);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(0),
        _ => Err(err),
    }
}

/// The highest Landlock ABI version the kernel offers (none outside Linux).
#[cfg(not(target_os = "linux"))]
pub fn landlock_abi() -> io::Result<u32> {
    Ok(0)
}

/// Creates a Landlock ruleset handling the rights in `attr`; the descriptor is
/// close-on-exec.
#[cfg(target_os = "linux")]
pub fn landlock_create_ruleset(attr: &landlock::RulesetAttr) -> io::Result<OwnedFd> {
    // SAFETY: `attr` points to a valid, initialised struct of the size passed; the kernel
    // only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            attr as *const landlock::RulesetAttr,
            std::mem::size_of::<landlock::RulesetAttr>(),
            0u32,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor; nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// Grants `access` beneath the file or directory `parent` (any descriptor, `O_PATH` is
/// enough) in `ruleset`.
#[cfg(target_os = "linux")]
pub fn landlock_add_path_rule(ruleset: &OwnedFd, parent: &OwnedFd, access: u64) -> io::Result<()> {
    let attr = landlock::PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: both descriptors are open; `attr` is a valid packed struct the kernel reads.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            landlock::RULE_PATH_BENEATH,
            &attr as *const landlock::PathBeneathAttr,
            0u32,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Enforces `ruleset` on the calling thread and on every process it starts from now on.
/// Needs `no_new_privs` (or `CAP_SYS_ADMIN`). Cannot be undone.
#[cfg(target_os = "linux")]
pub fn landlock_restrict_self(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: the descriptor is an open ruleset; flags 0.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens `path` (following symlinks) as an `O_PATH` handle, for a Landlock rule.
pub fn open_path(path: &Path) -> io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path; the result is checked.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sets `no_new_privs` on the calling thread (inherited by every child, kept across exec):
/// set-user-id bits and file capabilities no longer raise privileges.
#[cfg(target_os = "linux")]
pub fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integer arguments.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets whether this process may be dumped and, with that, whether processes of the same
/// user without `CAP_SYS_PTRACE` may trace it or read `/proc/<pid>/environ` and `mem`.
pub fn set_dumpable(dumpable: bool) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_DUMPABLE takes plain integer arguments.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_DUMPABLE,
                libc::c_ulong::from(dumpable),
                0,
                0,
                0,
            )
        };
        if rc == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = dumpable;
    Ok(())
}

/// Sets both the soft and the hard limit of `resource` (a `RLIMIT_*` number) to `value`
/// (`u64::MAX` means unlimited).
pub fn set_rlimit(resource: u32, value: u64) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value as libc::rlim_t,
        rlim_max: value as libc::rlim_t,
    };
    // SAFETY: `lim` is a valid struct the kernel reads; the resource is a plain number
    // (an unknown one is refused with EINVAL).
    let rc = unsafe { libc::setrlimit(resource as _, &lim) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The soft limit of `resource` (a `RLIMIT_*` number).
#[cfg(test)]
pub fn get_rlimit(resource: u32) -> io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable struct.
    let rc = unsafe { libc::getrlimit(resource as _, &mut lim) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 everywhere.
    Ok(lim.rlim_cur as u64)
}

/// Restores the default disposition of SIGPIPE (the Rust runtime ignores it, and an ignored
/// signal would stay ignored across `exec`).
pub fn default_sigpipe() {
    // SAFETY: setting a default disposition installs no handler and touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Replaces this process with `program`, with `argv` and the current environment. Returns
/// only on failure.
pub fn exec_replace(program: &std::ffi::OsStr, argv: &[std::ffi::OsString]) -> io::Error {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = CString::new(program.as_bytes()) else {
        return io::Error::new(io::ErrorKind::InvalidInput, "program contains a NUL byte");
    };
    let mut owned: Vec<CString> = Vec::with_capacity(argv.len());
    for a in argv {
        match CString::new(a.as_bytes()) {
            Ok(c) => owned.push(c),
            Err(_) => {
                return io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an argument contains a NUL byte",
                )
            }
        }
    }
    let mut ptrs: Vec<*const libc::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: `path` and every element of `ptrs` are valid NUL-terminated strings that live
    // until the call (which does not return on success); `ptrs` is null-terminated;
    // `environ` is the process environment, which nothing else modifies here (single
    // thread, launcher only).
    unsafe {
        libc::execve(path.as_ptr(), ptrs.as_ptr(), environ);
    }
    io::Error::last_os_error()
}

/// Drops every capability of the calling thread for good: the whole bounding set (when the
/// thread may change it), the ambient set, and the effective, permitted and inheritable
/// sets. Only this thread changes (credentials are per thread); its children and the
/// programs they execute hold no capability, even as uid 0 (with an empty bounding set and
/// `no_new_privs`, executing a program grants none).
#[cfg(target_os = "linux")]
pub fn drop_all_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: `header` and `data` are valid, writable and of the sizes version 3 expects
    // (one header, two data words); pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    const CAP_SETPCAP: u32 = 8;
    // The bounding set first, while CAP_SETPCAP may still be effective (without it, as for
    // any server not run as root, the bounding set cannot change: skip the loop). EINVAL
    // ends the capabilities this kernel knows; EPERM means the thread cannot hold a
    // capability it has not got already, and the sets are cleared below.
    let may_drop = data[0].effective & (1 << CAP_SETPCAP) != 0;
    for cap in (0..64u32).take_while(|_| may_drop) {
        // SAFETY: prctl with PR_CAPBSET_DROP takes plain integers.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        if rc == -1 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINVAL) => break,
                Some(libc::EPERM) => continue,
                _ => return Err(io::Error::last_os_error()),
            }
        }
    }
    // SAFETY: prctl with PR_CAP_AMBIENT_CLEAR_ALL takes plain integers; EINVAL on kernels
    // before 4.3, which have no ambient set.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc == -1 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(io::Error::last_os_error());
    }
    let data = [Data::default(); 2];
    // SAFETY: `header` and `data` are valid and of the sizes version 3 expects (one header,
    // two data words, read by the kernel); pid 0 is the calling thread. Clearing every set
    // needs no privilege.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Pseudo-terminals (SPEC section 13: `exec` with `tty: true`).

/// A new pseudo-terminal: the parent's side (the master, close-on-exec) and the path of the
/// child's side (`/dev/pts/N`), sized `rows` x `cols`. The child's side is also returned
/// opened (`O_NOCTTY`, close-on-exec), to pass as the child's stdin, stdout and stderr;
/// [`SpawnSpec::terminal`] then makes it the child's controlling terminal.
#[cfg(target_os = "linux")]
pub fn open_pty(rows: u16, cols: u16) -> io::Result<(File, File, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    // SAFETY: plain call with flags; the returned descriptor is owned below.
    let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let master = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // SAFETY: `fd` is an open pty master (grantpt and unlockpt take it as an integer).
    if unsafe { libc::grantpt(fd) } != 0 || unsafe { libc::unlockpt(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: `buf` is writable for its whole length, which is passed.
    let rc = unsafe { libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: ptsname_r succeeded, so `buf` holds a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    set_winsize(master.as_raw_fd(), rows, cols)?;
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&path)?;
    Ok((master, slave, path))
}

/// Sets the size of the terminal whose master (or slave) is `fd`.
pub fn set_winsize(fd: RawFd, rows: u16, cols: u16) -> io::Result<()> {
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer, which is valid for the call.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// True when the kernel can install seccomp filters that return an errno
/// (`SECCOMP_GET_ACTION_AVAIL`, Linux 4.14).
#[cfg(target_os = "linux")]
pub fn seccomp_filter_available() -> bool {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 from the pointer, which is valid.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            2 as libc::c_ulong, // SECCOMP_GET_ACTION_AVAIL
            0 as libc::c_ulong,
            &action as *const u32,
        )
    };
    rc == 0
}

/// Installs the classic BPF program `program` as a seccomp filter on the calling thread
/// only (no `TSYNC`): it and everything it starts from now on run under it, for good.
/// Needs `no_new_privs` (or `CAP_SYS_ADMIN`).
#[cfg(target_os = "linux")]
pub fn install_seccomp_filter(program: &[crate::sandbox::filter::Insn]) -> io::Result<()> {
    let insns: Vec<libc::sock_filter> = program
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let len = u16::try_from(insns.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seccomp filter too long"))?;
    let prog = libc::sock_fprog {
        len,
        filter: insns.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points to `len` valid instructions that outlive the call (the kernel
    // copies and verifies them); flags 0 install the filter on the calling thread only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER as libc::c_ulong,
            0 as libc::c_ulong,
            &prog as *const libc::sock_fprog,
        )
    };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The `(rows, cols)` of the terminal whose master (or slave) is `fd` (tests).
#[cfg(test)]
pub fn get_winsize(fd: RawFd) -> io::Result<(u16, u16)> {
    // SAFETY: an all-zero winsize is a valid value to be overwritten.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, valid for the call.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok((ws.ws_row, ws.ws_col))
}

#[cfg(all(test, target_os = "linux"))]
mod pty_tests {
    use super::*;
    use std::io::Read;

    /// The child opens the terminal as its controlling terminal: its stat line names a
    /// tty, `[ -t 0 ]` holds, and the window size is the one set.
    #[test]
    fn a_child_on_a_pty_has_it_as_controlling_terminal() {
        let (mut master, slave, path) = open_pty(40, 200).unwrap();
        assert_eq!(get_winsize(master.as_raw_fd()).unwrap(), (40, 200));
        let env: Vec<(OsString, OsString)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
        let args = vec![
            "-c".to_string(),
            "[ -t 0 ] && echo tty=yes; stty size; cut -d' ' -f7 /proc/$$/stat; echo end"
                .to_string(),
        ];
        let spawned = spawn(SpawnSpec {
            program: "/bin/sh",
            arg0: None,
            args: &args,
            env: &env,
            cwd: Path::new("/"),
            stdin_pipe: false,
            stdin_file: Some(slave.try_clone().unwrap()),
            stdout: Some(slave.try_clone().unwrap()),
            stderr: Some(slave),
            join_group: None,
            terminal: Some(&path),
        })
        .unwrap();
        assert!(spawned.stdout.is_none() && spawned.stdin.is_none());
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the child's side is closed by everyone: the end of output.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
            if out.windows(3).any(|w| w == b"end") {
                break;
            }
        }
        let text = String::from_utf8_lossy(&out).replace('\r', "");
        assert!(text.contains("tty=yes"), "{text}");
        assert!(text.contains("40 200"), "{text}");
        let tty_nr: i64 = text
            .lines()
            .find(|l| l.trim().chars().all(|c| c.is_ascii_digit()) && !l.trim().is_empty())
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        assert_ne!(tty_nr, 0, "no controlling terminal: {text}");
        let _ = kill(spawned.pid, libc::SIGKILL);
        // SAFETY: test-only direct reap of our own child.
        unsafe {
            libc::waitpid(spawned.pid as libc::pid_t, std::ptr::null_mut(), 0);
        }
    }
}
