//! What opening a redirection target beneath a directory takes and tells, the same on every
//! system: how the file is opened, what was found there, and why it was not opened. Each
//! system's `open_target_beneath` and `judge_target_beneath` use these.

/// How `open_target_beneath` opens the final component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Read only.
    Read,
    /// Write, create, truncate.
    Truncate,
    /// Write, create, append.
    Append,
}

/// What `open_target_beneath` found at a path that already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetStat {
    /// `regular file`, `directory`, `FIFO`, `character device`, `block device`, `socket` or
    /// `symlink` (on Windows: `regular file`, `directory`, `symlink` or `device`).
    pub kind: &'static str,
    /// The number of hard links.
    pub nlink: u64,
}

/// Why `open_target_beneath` did not open the file it found.
#[derive(Debug, PartialEq, Eq)]
pub enum NotOpened {
    /// `check` refused it: its verdict.
    Refused(String),
    /// Another file took its place between the check and the open.
    Replaced,
}
