//! Files: redirection targets opened beneath a directory without following symlinks,
//! judged through `O_PATH` before anything opens them for writing; pipe sizes.

use super::*;

impl TargetStat {
    /// What `st` says of a file.
    fn of(st: &libc::stat) -> TargetStat {
        TargetStat {
            kind: kind_of(st.st_mode),
            // `st_nlink` is a u16 on macOS.
            #[allow(clippy::unnecessary_cast)]
            nlink: st.st_nlink as u64,
        }
    }
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
/// check fails the open instead of leading into a directory that was never checked. A
/// relative `base` is opened as it is.
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
/// with `O_EXCL`. The outer `Err` is a system error; the inner one says why the file found
/// was not opened.
pub fn open_target_beneath(
    base: &Path,
    rel: &Path,
    mode: OpenMode,
    check: &dyn Fn(&TargetStat) -> Result<(), String>,
) -> io::Result<Result<File, NotOpened>> {
    let (dir, name) = parent_beneath(base, rel)?;
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
        if let Err(verdict) = check(&TargetStat::of(&before)) {
            return Ok(Err(NotOpened::Refused(verdict)));
        }
        let flags = io_flags | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = look.reopen(dir.as_raw_fd(), &name, flags)?;
        let after = fstat_fd(fd.as_raw_fd())?;
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) {
            return Ok(Err(NotOpened::Replaced));
        }
        if let Err(verdict) = check(&TargetStat::of(&after)) {
            return Ok(Err(NotOpened::Refused(verdict)));
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

/// The directory holding `rel`'s last component beneath `base`, reached by opening each
/// directory on the way with `O_NOFOLLOW`, and that last component's name. `rel`'s `.`
/// components are skipped (the callers refused `..` and absolute paths already).
fn parent_beneath(base: &Path, rel: &Path) -> io::Result<(OwnedFd, std::ffi::CString)> {
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
        let c = std::ffi::CString::new(comp.as_bytes())?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        dir = openat_fd(dir.as_raw_fd(), &c, flags)?;
    }
    Ok((dir, std::ffi::CString::new(last.as_bytes())?))
}

/// What [`open_target_beneath`] would decide about `rel` below `base`, without opening the
/// file for I/O or creating it: the same walk without following symlinks, and the same
/// `check` of an existing final component; a missing one is accepted (it would be made)
/// unless `must_exist` (a file to read). For `yieldshell check`, which must refuse what a
/// call refuses and change nothing.
pub fn judge_target_beneath(
    base: &Path,
    rel: &Path,
    must_exist: bool,
    check: &dyn Fn(&TargetStat) -> Result<(), String>,
) -> io::Result<Result<(), NotOpened>> {
    let (dir, name) = parent_beneath(base, rel)?;
    match look_at(dir.as_raw_fd(), &name) {
        Ok(look) => Ok(check(&TargetStat::of(&look.stat)).map_err(NotOpened::Refused)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && !must_exist => Ok(Ok(())),
        Err(e) => Err(e),
    }
}

/// Makes the directory `name` in `dir` with `mode` unless something is there already, then
/// opens what is there as a directory without following a symbolic link (`O_NOFOLLOW`,
/// `O_DIRECTORY`): a link or a file in its place fails the open (`ELOOP`, `ENOTDIR`)
/// instead of leading elsewhere. `name` is one path component.
pub fn make_dir_at(dir: BorrowedFd<'_>, name: &std::ffi::OsStr, mode: u32) -> io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())?;
    // SAFETY: `dir` is an open directory descriptor and `c` a valid C string.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) } < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    openat_fd(dir.as_raw_fd(), &c, flags)
}

/// Creates the file `name` in `dir` afresh for writing, with `mode`: whatever was there
/// (a symbolic link, a hard link to another file) is unlinked first, never written
/// through, and the new file is made with `O_EXCL | O_NOFOLLOW`. `name` is one path
/// component.
pub fn create_file_at(dir: BorrowedFd<'_>, name: &std::ffi::OsStr, mode: u32) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())?;
    // SAFETY: `dir` is an open directory descriptor and `c` a valid C string.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) {
            return Err(e);
        }
    }
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open directory descriptor, `c` a valid C string and the mode
    // argument is read with O_CREAT.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}
