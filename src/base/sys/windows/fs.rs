//! Files on Windows: redirection targets opened beneath a directory by Windows' path rules,
//! never through a reparse point (symbolic link or junction).

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::os::windows::io::AsRawHandle;
use std::path::{Component, Path, PathBuf};

use super::fd::{BorrowedFd, OwnedFd};
use super::ffi;
use crate::base::sys::{NotOpened, OpenMode, TargetStat};

/// Names Windows maps to devices in every directory, with or without an extension.
const RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Why a component of a path beneath the directory is refused, by Windows' path rules.
fn refuse_component(name: &OsStr) -> Option<String> {
    let text = name.to_string_lossy();
    if text.contains(':') {
        return Some(format!(
            "{text:?} names an alternate data stream (a ':' in a file name)"
        ));
    }
    let stem = text.split('.').next().unwrap_or("").trim_end();
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        return Some(format!("{text:?} is a reserved device name on Windows"));
    }
    if text.ends_with('.') || text.ends_with(' ') {
        return Some(format!(
            "{text:?} ends with a dot or a space, which Windows strips"
        ));
    }
    None
}

/// Opens `rel` below `base` by Windows' path rules: `rel` is relative and plain (no drive
/// letter, root, `\\?\` or UNC prefix, no `..`), no component is a device name (`NUL`,
/// `CON`, ...) or names an alternate data stream (`file:stream`), and no directory on the
/// way, nor the file itself, is a reparse point (symbolic link or junction): the file is
/// opened with `FILE_FLAG_OPEN_REPARSE_POINT` and its attributes are checked on the handle.
/// `check` judges an existing file before it is truncated. The outer `Err` is a system
/// error; the inner one says why the file found was not opened.
pub fn open_target_beneath(
    base: &Path,
    rel: &Path,
    mode: OpenMode,
    check: &dyn Fn(&TargetStat) -> Result<(), String>,
) -> io::Result<Result<File, NotOpened>> {
    let path = match path_beneath(base, rel)? {
        Ok(path) => path,
        Err(refused) => return Ok(Err(refused)),
    };
    let exists = match std::fs::symlink_metadata(&path) {
        Ok(meta) => {
            let stat = stat_of(&meta);
            if let Err(verdict) = check(&stat) {
                return Ok(Err(NotOpened::Refused(verdict)));
            }
            true
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    if !exists && mode == OpenMode::Read {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    let mut opts = OpenOptions::new();
    match mode {
        OpenMode::Read => opts.read(true),
        OpenMode::Truncate => opts.write(true).create(true),
        OpenMode::Append => opts.append(true).create(true),
    };
    opts.custom_flags(ffi::FILE_FLAG_OPEN_REPARSE_POINT);
    let file = opts.open(&path)?;
    let info = file_info(&file)?;
    if info.file_attributes & ffi::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Ok(Err(NotOpened::Replaced));
    }
    let stat = TargetStat {
        kind: if file.metadata()?.is_dir() {
            "directory"
        } else {
            "regular file"
        },
        nlink: u64::from(info.number_of_links),
    };
    if let Err(verdict) = check(&stat) {
        return Ok(Err(NotOpened::Refused(verdict)));
    }
    if mode == OpenMode::Truncate {
        file.set_len(0)?;
    }
    Ok(Ok(file))
}

/// The path of `rel` beneath `base`, every directory on the way checked to be a plain
/// directory (no symbolic link, junction or other reparse point); `rel` must be a plain
/// relative path.
fn path_beneath(base: &Path, rel: &Path) -> io::Result<Result<PathBuf, NotOpened>> {
    let mut comps = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => {
                if let Some(why) = refuse_component(n) {
                    return Ok(Err(NotOpened::Refused(why)));
                }
                comps.push(n);
            }
            Component::CurDir => {}
            _ => {
                return Ok(Err(NotOpened::Refused(format!(
                    "{} is not a plain relative path (a drive letter, root, \\\\?\\ or UNC \
                     prefix, or ..)",
                    rel.display()
                ))))
            }
        }
    }
    let Some((last, dirs)) = comps.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    };
    let mut path = PathBuf::from(base);
    for dir in dirs {
        path.push(dir);
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.file_attributes() & ffi::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Ok(Err(NotOpened::Refused(format!(
                "{} is a symbolic link or junction",
                path.display()
            ))));
        }
        if !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", path.display()),
            ));
        }
    }
    path.push(last);
    Ok(Ok(path))
}

/// Judges the redirection target `rel` beneath `base` as [`open_target_beneath`] would,
/// opening and making nothing (`yieldshell check`): the directories on the way, then what
/// is at the name now, if anything (a missing name is fine unless `must_exist`).
pub fn judge_target_beneath(
    base: &Path,
    rel: &Path,
    must_exist: bool,
    check: &dyn Fn(&TargetStat) -> Result<(), String>,
) -> io::Result<Result<(), NotOpened>> {
    let path = match path_beneath(base, rel)? {
        Ok(path) => path,
        Err(refused) => return Ok(Err(refused)),
    };
    match std::fs::symlink_metadata(&path) {
        Ok(meta) => Ok(check(&stat_of(&meta)).map_err(NotOpened::Refused)),
        Err(e) if e.kind() == io::ErrorKind::NotFound && !must_exist => Ok(Ok(())),
        Err(e) => Err(e),
    }
}

fn stat_of(meta: &std::fs::Metadata) -> TargetStat {
    let kind = if meta.file_attributes() & ffi::FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        "symlink"
    } else if meta.is_dir() {
        "directory"
    } else if meta.is_file() {
        "regular file"
    } else {
        "device"
    };
    TargetStat { kind, nlink: 1 }
}

fn file_info(file: &File) -> io::Result<ffi::FileInfo> {
    let mut info = ffi::FileInfo::default();
    // SAFETY: the handle is open for the call and `info` a writable structure of the size
    // the call fills.
    if unsafe { ffi::GetFileInformationByHandle(file.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// Not available on Windows (directories opened as handles serve only the Linux sandbox's
/// caches).
pub fn make_dir_at(_dir: BorrowedFd<'_>, _name: &OsStr, _mode: u32) -> io::Result<OwnedFd> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "directory handles are not used on Windows",
    ))
}

/// Not available on Windows (see [`make_dir_at`]).
pub fn create_file_at(_dir: BorrowedFd<'_>, _name: &OsStr, _mode: u32) -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "directory handles are not used on Windows",
    ))
}
