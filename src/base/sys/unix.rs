//! The Unix side of the seam (Linux and macOS): reaping, signals to groups, descriptor
//! flags, polling, epoll (Linux), pidfds, the allocator and the kernel's random bits.

use super::*;
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

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

/// Looks at child `pid` without blocking: a stop is reported (`WUNTRACED`), an exit reaps
/// it.
pub fn watch_child(pid: u32) -> io::Result<ChildEvent> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable c_int for the duration of the call.
        let rc = unsafe {
            libc::waitpid(
                pid as libc::pid_t,
                &mut status,
                libc::WNOHANG | libc::WUNTRACED,
            )
        };
        if rc == 0 {
            return Ok(ChildEvent::Running);
        }
        if rc > 0 {
            return Ok(if libc::WIFSTOPPED(status) {
                ChildEvent::Stopped(libc::WSTOPSIG(status))
            } else if libc::WIFEXITED(status) {
                ChildEvent::Ended(WaitStatus::Exited(libc::WEXITSTATUS(status)))
            } else if libc::WIFSIGNALED(status) {
                ChildEvent::Ended(WaitStatus::Signaled(libc::WTERMSIG(status)))
            } else {
                ChildEvent::Running
            });
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(ChildEvent::Gone),
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

/// Puts `fd` back into blocking mode.
pub fn set_blocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on a descriptor that is open for the call (it is borrowed);
    // only status flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags == -1 {
            return Err(io::Error::last_os_error());
        }
        if libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
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

/// 64 random bits from the kernel (`getrandom(2)`, `getentropy` outside Linux); `None`
/// when it gives none.
///
/// On Linux the system call itself, not libc's `getrandom`: the standard library refers to
/// that symbol weakly, and in a static musl build linked with LTO the two references become
/// one weak one, which no archive member answers: the call jumped to address 0.
pub fn os_random_u64() -> Option<u64> {
    let mut buf = [0u8; 8];
    #[cfg(target_os = "linux")]
    // SAFETY: `buf` is 8 writable bytes and its length is passed; flags 0.
    let ok = unsafe { libc::syscall(libc::SYS_getrandom, buf.as_mut_ptr(), buf.len(), 0) } == 8;
    #[cfg(not(target_os = "linux"))]
    // SAFETY: `buf` is 8 writable bytes (getentropy takes at most 256) and its length is
    // passed.
    let ok = unsafe { libc::getentropy(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    ok.then(|| u64::from_ne_bytes(buf))
}

/// The process's effective user id.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid takes no argument and cannot fail.
    unsafe { libc::geteuid() }
}

/// The shell of shell mode when none is configured.
pub const DEFAULT_SHELL: &str = "/bin/sh";

/// Whether the system itself ends every command when the server dies, however it dies:
/// not on Unix, where the guardian does it.
pub const OWNER_DEATH_ENDS_COMMANDS: bool = false;

/// Whether output pipes are read by one thread per pipe rather than polled: no, they are
/// polled (epoll on Linux, `poll` elsewhere).
#[cfg_attr(target_os = "linux", allow(dead_code))] // Linux reads pipes in `process::ingest`.
pub const PIPE_THREADS: bool = false;

/// The arguments that make `shell` run `command`: `-c <command>`.
pub fn shell_args(_shell: &str, command: &str) -> Vec<String> {
    vec!["-c".into(), command.into()]
}

/// The number of live processes of group `pgid`, where the system counts them for a
/// group: not on Unix (a command's cgroup counts them on Linux).
pub fn group_process_count(_pgid: u32) -> Option<usize> {
    None
}

/// The reaper's side of its wake-up: a socket that SIGCHLD (through signal-hook) and
/// [`ExitWaker::wake`] write a byte to.
pub struct ExitWake {
    read: std::os::unix::net::UnixStream,
}

/// The side that wakes the reaper.
pub struct ExitWaker {
    write: std::os::unix::net::UnixStream,
}

/// A new wake-up pair, woken by every SIGCHLD from now on.
pub fn exit_wake() -> io::Result<(ExitWake, ExitWaker)> {
    let (read, write) = std::os::unix::net::UnixStream::pair()?;
    read.set_nonblocking(true)?;
    write.set_nonblocking(true)?;
    signal_hook::low_level::pipe::register(libc::SIGCHLD, write.try_clone()?)?;
    Ok((ExitWake { read }, ExitWaker { write }))
}

impl ExitWake {
    /// Waits until woken or `timeout_ms` passed, then drains the socket.
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<()> {
        use std::io::Read;
        use std::os::fd::AsFd;
        let polled = poll_read2([Some(self.read.as_fd()), None], timeout_ms);
        let mut drain = [0u8; 256];
        while matches!(self.read.read(&mut drain), Ok(n) if n > 0) {}
        polled.map(|_| ())
    }
}

impl ExitWaker {
    /// Wakes the reaper.
    pub fn wake(&self) {
        use std::io::Write;
        // A full socket already holds a wake-up: losing this byte is harmless.
        let _ = (&self.write).write(&[1]);
    }
}

/// Calls `f` with each SIGTERM, SIGINT and SIGHUP, on a thread of its own (`signals`).
pub fn on_shutdown_signals(f: impl Fn(i32) + Send + Sync + 'static) -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            for signal in signals.forever() {
                f(signal);
            }
        })?;
    Ok(())
}

/// The separator of `PATH`-like lists.
pub const PATH_LIST_SEPARATOR: char = ':';

/// The default safe `PATH` of trusted mode.
pub const DEFAULT_SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// Variables of the server's environment that every trusted-mode child gets, because
/// programs need them to start: none on Unix.
pub const LAUNCH_ENV: &[&str] = &[];

/// What `sandbox` says where no Landlock can be had outside Linux (macOS).
#[cfg_attr(target_os = "linux", allow(dead_code))] // Linux names its kernel's state instead.
pub const NO_KERNEL_SANDBOX: &str =
    "this system has no Landlock and no seccomp (Linux kernel features)";

/// What `check` says of the kernel sandbox where the kernel has no Landlock.
pub const NO_SANDBOX_STATUS: &str = "no Landlock in this kernel";

/// The files a program `name` found in `dir` may be: `dir/name` on Unix.
pub fn program_candidates(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    vec![dir.join(name)]
}

/// Why a trusted-mode program may not run on this system, whatever its arguments: never
/// on Unix.
pub fn refuse_program(_path: &Path) -> Option<String> {
    None
}

/// What trusted mode's tool descriptions add about the system: nothing on Unix (the
/// kernel sandbox is described where it applies).
pub const TRUSTED_NOTE: &str = "";

/// The resource number under which `pids` of `YIELDSHELL_LIMITS` reaches a spawn as a limit
/// of the command's job: none on Unix (a pids cgroup holds it on Linux).
pub const JOB_PROCESS_LIMIT: Option<u32> = None;

/// `std::fs::canonicalize`.
pub fn canonicalize(path: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::canonicalize(path)
}

/// Nothing to do on Unix: the guardian ends what the server started when the server dies.
pub fn contain_server() -> io::Result<()> {
    Ok(())
}

/// Whether `/proc` describes this system's processes by the pids the server knows: on
/// Linux; elsewhere on Unix there is none, and reading it finds nothing.
pub const PROC_FS: bool = true;
