//! Every system call that needs `unsafe`, behind safe wrappers that return `io::Result`.
//!
//! Nothing outside this module contains `unsafe`. Blocking calls retry on `EINTR`; the
//! non-blocking ones do not need to.
//!
//! The operating system is one seam: `imp` is `unix` (Linux and macOS) or `windows`, two
//! modules with the same items and signatures, re-exported here; the layers above never
//! name an operating system. Beside them, `fd`, `ext` and `libc` give the upper layers the
//! same names on every system: on Unix they are std's and libc's own, on Windows their
//! counterparts (handles for descriptors, Win32 file identities for inodes, the POSIX
//! constants the server's logic speaks).
//!
//! Spawning is a `vfork`-style clone on Linux (`child`: the child applies limits, a cgroup
//! and the kernel sandbox, starts a new session, sets the working directory and the three
//! standard descriptors, default dispositions and an empty signal mask, and executes),
//! `std::process::Command` with a `setsid` `pre_exec` step on other Unix systems, and on
//! Windows `CreateProcessW` into a Job Object of the command's own, created suspended and
//! resumed once inside it: either way every command leads its own session and process
//! group (on Windows: its job) and has no controlling terminal. The server never waits on
//! a child it spawned: only the reaper reaps, through [`reap_any`].
//!
//! Descriptors that a call only uses are taken as `BorrowedFd`, so the caller keeps the
//! ownership and the descriptor stays open for the call.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::fs::File;
use std::io;
#[cfg(all(unix, not(target_os = "linux")))]
use std::os::unix::process::CommandExt;
use std::path::Path;
#[cfg(all(unix, not(target_os = "linux")))]
use std::process::Command;

#[cfg(unix)]
use fd::{AsRawFd, FromRawFd, RawFd};
use fd::{BorrowedFd, OwnedFd};

#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod clone3;
#[cfg(unix)]
mod fs;
mod protect;
#[cfg(unix)]
mod pty;
mod sandbox;
mod spawn;
mod target;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
pub use child::namespaces_available;
#[cfg(unix)]
pub use fs::*;
pub use protect::*;
#[cfg(unix)]
pub use pty::*;
pub use sandbox::*;
pub use spawn::*;
pub use target::*;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
use windows as imp;

pub use imp::*;

/// The variables that name the temporary directory (`TMPDIR` on Unix, `TMP` and `TEMP` on
/// Windows): a call's own directory is named by all three.
pub const TEMP_DIR_VARS: &[&str] = &["TMPDIR", "TMP", "TEMP"];

/// Descriptors on Unix (std's own), handles under the same names on Windows.
pub mod fd {
    #[cfg(windows)]
    pub use super::windows::fd::*;
    #[cfg(unix)]
    pub use std::os::fd::*;
}

/// The Unix extension traits of std (`MetadataExt`, `OsStrExt`, ...) on Unix, and traits of
/// the same names and methods on Windows, so that one text serves both.
pub mod ext {
    #[cfg(windows)]
    pub use super::windows::ext::*;
    #[cfg(unix)]
    pub use std::os::unix::ffi::{OsStrExt, OsStringExt};
    #[cfg(unix)]
    pub use std::os::unix::fs::{
        DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt,
    };
}

/// libc's names: the crate itself on Unix; on Windows the crate plus the POSIX constants and
/// types the server's logic speaks (signal numbers as on Linux, which [`killpg`] and
/// [`kill`] map to their Windows meaning; open flags, which the Windows side ignores).
pub mod libc {
    #[cfg(windows)]
    pub use super::windows::posix::*;
    pub use ::libc::*;
}

/// How a child ended, decoded from the raw `waitpid` status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitStatus {
    /// Normal exit with this code.
    Exited(i32),
    /// Killed by this signal.
    Signaled(i32),
}

/// What [`watch_child`] saw of one child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEvent {
    /// Still running (or nothing new since the last look).
    Running,
    /// Stopped by this signal (reported once per stop; Unix only).
    #[cfg_attr(windows, allow(dead_code))]
    Stopped(i32),
    /// Ended, and reaped now.
    Ended(WaitStatus),
    /// Not a child of this process (any more): reaped elsewhere.
    Gone,
}

/// Readiness of up to two descriptors, as reported by [`poll_read2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Ready {
    /// The descriptor has data, or reached end of file or an error (a read will not block).
    pub readable: [bool; 2],
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
