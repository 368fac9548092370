//! The kernel sandbox's system calls: Landlock, capabilities, `no_new_privs`,
//! dumpability, rlimits, seccomp filters, and the launcher's exec.

use super::*;

// ---------------------------------------------------------------------------------------
// Kernel sandbox (Landlock), process attributes for the sandbox, and the launcher's exec.
// ---------------------------------------------------------------------------------------

/// Landlock's numbers (uapi `linux/landlock.h`), defined here because the `libc` crate has
/// only the system call numbers.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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
#[cfg(target_os = "linux")]
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

// ---------------------------------------------------------------------------------------
// Elsewhere (macOS): no Landlock, no seccomp, no Linux capabilities. The sandbox never
// builds a domain there (the ABI is 0, so `YIELDSHELL_SANDBOX=on`, `workspace` and
// `YIELDSHELL_NETWORK=deny` refuse to start); these only keep its code portable.
// ---------------------------------------------------------------------------------------

#[cfg(not(target_os = "linux"))]
fn linux_only(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is a Linux kernel feature, not available on this system"),
    )
}

/// No Landlock outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn landlock_create_ruleset(_attr: &landlock::RulesetAttr) -> io::Result<OwnedFd> {
    Err(linux_only("Landlock"))
}

/// No Landlock outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn landlock_add_path_rule(
    _ruleset: &OwnedFd,
    _parent: &OwnedFd,
    _access: u64,
) -> io::Result<()> {
    Err(linux_only("Landlock"))
}

/// No Landlock outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn landlock_restrict_self(_ruleset: &OwnedFd) -> io::Result<()> {
    Err(linux_only("Landlock"))
}

/// Opens `path` (following symlinks) read-only (there is no `O_PATH` outside Linux).
#[cfg(not(target_os = "linux"))]
pub fn open_path(path: &Path) -> io::Result<OwnedFd> {
    Ok(OwnedFd::from(File::open(path)?))
}

/// No `no_new_privs` outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn set_no_new_privs() -> io::Result<()> {
    Err(linux_only("no_new_privs"))
}

/// No Linux capabilities outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn drop_all_capabilities() -> io::Result<()> {
    Err(linux_only("dropping capabilities"))
}

/// No seccomp outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn seccomp_filter_available() -> bool {
    false
}

/// No seccomp outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn install_seccomp_filter(_program: &[crate::sandbox::filter::Insn]) -> io::Result<()> {
    Err(linux_only("seccomp"))
}

/// A job for a long-lived thread (the sandbox's domain threads): a closure whose borrows of
/// its caller's stack were erased by [`run_elsewhere`], which keeps them alive until the
/// job has run and been dropped. The thread calls [`ErasedJob::run`] with whether it could
/// enter the call's own domain; dropping the job unrun is always allowed.
pub struct ErasedJob(Box<dyn FnOnce(Result<(), String>) + Send + 'static>);

impl ErasedJob {
    /// Runs the job; `entered` is passed on to it.
    pub fn run(self, entered: Result<(), String>) {
        (self.0)(entered)
    }
}

impl std::fmt::Debug for ErasedJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErasedJob")
    }
}

/// Runs `f` on another thread: `submit` hands the job to that thread (or gives it back when
/// it cannot), and this returns only once the job has finished *and* been dropped, wherever
/// that happened. `None` when the job was dropped without running or panicked.
pub fn run_elsewhere<'a, T: Send + 'a>(
    f: impl FnOnce(Result<(), String>) -> T + Send + 'a,
    submit: impl FnOnce(ErasedJob) -> Result<(), ErasedJob>,
) -> Option<T> {
    /// Fields drop in order: `f` (with everything it borrows) before `done`, whose drop is
    /// what the caller waits for.
    struct Parts<F, T> {
        f: F,
        done: crossbeam_channel::Sender<T>,
    }
    let (done, finished) = crossbeam_channel::bounded::<T>(1);
    let parts = Parts { f, done };
    let job: Box<dyn FnOnce(Result<(), String>) + Send + 'a> = Box::new(move |entered| {
        let Parts { f, done } = parts;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || f(entered)));
        if let Ok(value) = out {
            let _ = done.send(value);
        }
        drop(done);
    });
    // The job and everything it borrows for 'a stay valid while it exists: this function
    // does not return before `done`, the last part the job owns, is dropped (the `recv`
    // loop below ends only on disconnection), whether the job ran, was dropped unrun on the
    // other thread, was given back by `submit`, or panicked (caught inside the job). A job
    // that is never dropped blocks this caller for good instead of outliving its borrows.
    // SAFETY: only the lifetime bound changes (same layout), and the borrows outlive the
    // job as said above.
    let job: Box<dyn FnOnce(Result<(), String>) + Send + 'static> =
        unsafe { std::mem::transmute(job) };
    if let Err(back) = submit(ErasedJob(job)) {
        drop(back);
    }
    let mut value = None;
    while let Ok(v) = finished.recv() {
        value = Some(v);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_borrows_the_callers_data_and_is_waited_for() {
        let mut seen = vec![1, 2];
        let got = run_elsewhere(
            |entered: Result<(), String>| {
                seen.push(3);
                entered.map(|()| seen.len())
            },
            |job| {
                std::thread::spawn(move || job.run(Ok(())));
                Ok(())
            },
        );
        assert_eq!(got, Some(Ok(3)));
        assert_eq!(seen, [1, 2, 3]);
        // A job given back, or dropped unrun on the other thread, is None; so is a panic.
        assert_eq!(run_elsewhere(|_| 1, Err), None);
        let dropped = run_elsewhere(
            |_| 1,
            |job| {
                std::thread::spawn(move || drop(job));
                Ok(())
            },
        );
        assert_eq!(dropped, None);
        let panicked: Option<u8> = run_elsewhere(
            |_| panic!("in the job"),
            |job| {
                std::thread::spawn(move || job.run(Ok(())));
                Ok(())
            },
        );
        assert_eq!(panicked, None);
    }
}
