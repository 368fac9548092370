//! The kernel sandbox's system calls: Landlock, capabilities, `no_new_privs`,
//! dumpability and seccomp filters.

use super::*;

// ---------------------------------------------------------------------------------------
// Kernel sandbox (Landlock), process attributes for the sandbox, seccomp.
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

/// Opens `path` as an `O_PATH` handle without following a symbolic link anywhere on it
/// (`openat2` with `RESOLVE_NO_SYMLINKS`; plain [`open_path`] before Linux 5.6), for the
/// rule of a working directory that was checked as a canonical path: a link swapped in
/// since then fails the call instead of widening the rule to the link's target.
#[cfg(target_os = "linux")]
pub fn open_path_exact(path: &Path) -> io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let how = super::child::OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: `c` is a valid NUL-terminated path and `how` a live struct of the kernel's
    // layout whose size is passed; the result is checked.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const super::child::OpenHow,
            std::mem::size_of::<super::child::OpenHow>(),
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOSYS) {
            return open_path(path);
        }
        return Err(e);
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
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

#[cfg(target_os = "linux")]
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

#[cfg(target_os = "linux")]
const CAP_VERSION_3: u32 = 0x2008_0522;

/// Empties the calling thread's bounding set (when it may change it: with `CAP_SETPCAP`),
/// which its children inherit: no program they execute can gain a capability from it.
/// The thread keeps its own effective and permitted sets. With [`clear_capabilities`]
/// and `no_new_privs`, the thread's children and the programs they execute hold no
/// capability, even as uid 0.
#[cfg(target_os = "linux")]
pub fn drop_bounding_set() -> io::Result<()> {
    let mut header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
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
    // capability it has not got already, and `clear_capabilities` clears the sets.
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
    Ok(())
}

/// Clears the calling thread's ambient, effective, permitted and inheritable sets.
#[cfg(target_os = "linux")]
pub fn clear_capabilities() -> io::Result<()> {
    let mut header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
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
    let data = [CapData::default(); 2];
    // SAFETY: `header` and `data` are valid and of the sizes version 3 expects (one header,
    // two data words, read by the kernel); pid 0 is the calling thread. Clearing every set
    // needs no privilege.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One classic BPF instruction (`struct sock_filter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// Opcode.
    pub code: u16,
    /// Jump offset when true.
    pub jt: u8,
    /// Jump offset when false.
    pub jf: u8,
    /// Operand.
    pub k: u32,
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

/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, program)`, its raw result: `-1` with `errno`, or
/// (with `TSYNC`) the id of a thread that could not take it. Allocates nothing, so the
/// child of a spawn may call it.
#[cfg(target_os = "linux")]
pub(super) fn set_seccomp_filter(program: &SeccompProgram, flags: libc::c_ulong) -> libc::c_long {
    let prog = libc::sock_fprog {
        len: program.0.len() as u16,
        filter: program.0.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points to the program's instructions, which outlive the call (the
    // kernel copies and verifies them).
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER as libc::c_ulong,
            flags,
            &prog as *const libc::sock_fprog,
        )
    }
}

/// Installs `program` as a seccomp filter on every thread of this process (`TSYNC`), after
/// setting `no_new_privs` (which `TSYNC` gives every thread too): the process and everything
/// it starts from now on run under it, for good.
#[cfg(target_os = "linux")]
pub fn install_process_seccomp_filter(program: &SeccompProgram) -> io::Result<()> {
    set_no_new_privs()?;
    let rc = set_seccomp_filter(program, libc::SECCOMP_FILTER_FLAG_TSYNC as libc::c_ulong);
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    if rc > 0 {
        return Err(io::Error::other(format!(
            "thread {rc} of this process cannot take the seccomp filter"
        )));
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

/// Opens `path` (following symlinks) read-only (there is no `O_PATH` outside Linux).
#[cfg(not(target_os = "linux"))]
pub fn open_path(path: &Path) -> io::Result<OwnedFd> {
    Ok(OwnedFd::from(File::open(path)?))
}

/// [`open_path`] (no Landlock outside Linux).
#[cfg(not(target_os = "linux"))]
pub fn open_path_exact(path: &Path) -> io::Result<OwnedFd> {
    open_path(path)
}

/// No capabilities outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn drop_bounding_set() -> io::Result<()> {
    Err(linux_only("capabilities"))
}

/// No seccomp outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn seccomp_filter_available() -> bool {
    false
}

/// No seccomp outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn install_process_seccomp_filter(_program: &SeccompProgram) -> io::Result<()> {
    Err(linux_only("seccomp"))
}
