//! Files: redirection targets opened beneath a directory without following symlinks,
//! judged through `O_PATH` before anything opens them for writing; pipe sizes.

use super::*;

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

/// What [`open_target_beneath`] saw of an existing final component before opening it for
/// I/O: on Linux an `O_PATH` handle (which neither blocks on a FIFO nor wakes a device).
#[cfg(target_os = "linux")]
struct Look {
    fd: OwnedFd,
    stat: libc::stat,
}

#[cfg(target_os = "linux")]
fn look_at(dir: RawFd, name: &std::ffi::CStr) -> io::Result<Look> {
    let fd = openat_fd(dir, name, libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)?;
    let stat = fstat_fd(fd.as_raw_fd())?;
    Ok(Look { fd, stat })
}

#[cfg(target_os = "linux")]
impl Look {
    /// Opens the very inode looked at, through `/proc/self/fd` (by name without `/proc`).
    fn reopen(&self, dir: RawFd, name: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
        let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))?;
        match openat_fd(libc::AT_FDCWD, &proc_path, flags) {
            Ok(fd) => Ok(fd),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                openat_fd(dir, name, flags | libc::O_NOFOLLOW)
            }
            Err(e) => Err(e),
        }
    }
}

/// What [`open_target_beneath`] saw of an existing final component before opening it for
/// I/O: elsewhere (no `O_PATH`) an `lstat` of the name, which opens nothing.
#[cfg(not(target_os = "linux"))]
struct Look {
    stat: libc::stat,
}

#[cfg(not(target_os = "linux"))]
fn look_at(dir: RawFd, name: &std::ffi::CStr) -> io::Result<Look> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open directory descriptor, `name` a valid C string and `stat` a
    // valid out pointer.
    let rc = unsafe { libc::fstatat(dir, name.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Look { stat })
}

#[cfg(not(target_os = "linux"))]
impl Look {
    /// Opens the name again, without following a symlink; the caller compares the inode.
    fn reopen(&self, dir: RawFd, name: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
        openat_fd(dir, name, flags | libc::O_NOFOLLOW)
    }
}

/// Opens the directory `base` (absolute: the working directory, checked as a canonical
/// path) without following a symbolic link on the way, so that a link swapped in after the
/// check fails the open instead of leading into a directory that was never checked (red
/// team, round 11). A relative `base` is opened as it is.
fn open_dir_exact(base: &Path) -> io::Result<OwnedFd> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    #[cfg(target_os = "linux")]
    const STEP: libc::c_int = libc::O_PATH;
    #[cfg(not(target_os = "linux"))]
    const STEP: libc::c_int = libc::O_RDONLY;
    let flags = STEP | libc::O_DIRECTORY | libc::O_CLOEXEC;
    if !base.is_absolute() {
        let c = CString::new(base.as_os_str().as_bytes())?;
        return openat_fd(libc::AT_FDCWD, &c, flags);
    }
    let mut dir = openat_fd(libc::AT_FDCWD, c"/", flags)?;
    for comp in base.components() {
        if let std::path::Component::Normal(name) = comp {
            let c = CString::new(name.as_bytes())?;
            dir = openat_fd(dir.as_raw_fd(), &c, flags | libc::O_NOFOLLOW)?;
        }
    }
    Ok(dir)
}

/// Opens `rel` below `base` with no symlink anywhere on the path (each component opened with `O_NOFOLLOW`), but
/// looks at an existing file before opening it for I/O: it is first opened with `O_PATH`
/// (which neither blocks on a FIFO nor wakes a device; without `O_PATH`, as on macOS, it is
/// `lstat`ed instead), `check` judges what it is, and only then is that same inode opened,
/// through `/proc/self/fd` (or, without `/proc`, by name with the inode compared
/// afterwards), with no `O_TRUNC` before the check. A new file is created
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
    let mut dir = open_dir_exact(base)?;
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
        let look = match look_at(dir.as_raw_fd(), &name) {
            Ok(look) => look,
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
        let before = look.stat;
        let stat = TargetStat {
            kind: kind_of(before.st_mode),
            nlink: before.st_nlink as u64,
        };
        if let Err(verdict) = check(&stat) {
            return Ok(Err(verdict));
        }
        let flags = io_flags | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = look.reopen(dir.as_raw_fd(), &name, flags)?;
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
