//! Pseudo-terminals (`exec` with `tty: true`).

use super::*;

// ---------------------------------------------------------------------------------------
// Pseudo-terminals (`exec` with `tty: true`).

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

/// A new pseudo-terminal (macOS and other systems without `ptsname_r`): `openpty`, then
/// both sides close-on-exec. The parent's side, the child's side opened (`O_NOCTTY`), and
/// its path (`/dev/ttysN`); [`SpawnSpec::terminal`] makes it the child's controlling
/// terminal (`TIOCSCTTY` after `setsid`).
#[cfg(not(target_os = "linux"))]
pub fn open_pty(rows: u16, cols: u16) -> io::Result<(File, File, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    // openpty looks the child's side up with ptsname, whose buffer is shared by the whole
    // process: one terminal at a time.
    static OPENPTY: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let (mut m, mut s): (libc::c_int, libc::c_int) = (-1, -1);
    let rc = {
        let _one = OPENPTY.lock();
        // SAFETY: `m` and `s` are writable ints; a null name, termios and winsize are
        // allowed (the size is set below).
        unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openpty just opened both descriptors; nothing else owns them.
    let (master, slave) = unsafe {
        (
            File::from(OwnedFd::from_raw_fd(m)),
            File::from(OwnedFd::from_raw_fd(s)),
        )
    };
    for fd in [m, s] {
        // SAFETY: F_GETFD/F_SETFD on a descriptor owned above; only descriptor flags change.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: `buf` is writable for its whole length, which is passed.
    let rc = unsafe { libc::ttyname_r(slave.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: ttyname_r succeeded, so `buf` holds a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    set_winsize(master.as_raw_fd(), rows, cols)?;
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

/// The `(rows, cols)` of the terminal whose master (or slave) is `fd` (tests).
#[cfg(all(test, target_os = "linux"))]
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
            setup: None,
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
