//! Std's Unix extension traits under their names, for Windows: what the layers above ask
//! of files and strings, answered by Windows' nearest meaning.
//!
//! Windows has no inode number, mode bits or owner uid in `std::fs::Metadata`: `dev` and
//! `ino` are 0 and `nlink` is 1 (so no two files are taken for hard links of each other),
//! `uid` is 0 (the value of `effective_uid`), and a file's mode bits are made from its
//! read-only attribute. Strings are WTF-8 bytes (`as_encoded_bytes`).

use std::ffi::{OsStr, OsString};
use std::fs::{DirBuilder, File, Metadata, OpenOptions, Permissions};
use std::io;

/// `std::os::unix::fs::MetadataExt`'s methods that the server reads.
pub trait MetadataExt {
    /// 0: no device number on Windows.
    fn dev(&self) -> u64;
    /// 0: no inode number in Windows' metadata.
    fn ino(&self) -> u64;
    /// 0: no user ids on Windows.
    fn uid(&self) -> u32;
    /// 1: links are not counted here.
    fn nlink(&self) -> u64;
    /// Seconds since the epoch of the last write.
    fn mtime(&self) -> i64;
    /// Nanoseconds of [`MetadataExt::mtime`].
    fn mtime_nsec(&self) -> i64;
}

impl MetadataExt for Metadata {
    fn dev(&self) -> u64 {
        0
    }
    fn ino(&self) -> u64 {
        0
    }
    fn uid(&self) -> u32 {
        0
    }
    fn nlink(&self) -> u64 {
        1
    }
    fn mtime(&self) -> i64 {
        self.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64)
    }
    fn mtime_nsec(&self) -> i64 {
        self.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::from(d.subsec_nanos()))
    }
}

/// `std::os::unix::fs::PermissionsExt`.
pub trait PermissionsExt {
    /// `0o555` for a read-only file, else `0o777` (Windows grants by ACL, not by bits).
    fn mode(&self) -> u32;
    /// Read-only unless a write bit is set.
    fn from_mode(mode: u32) -> Self;
}

impl PermissionsExt for Permissions {
    fn mode(&self) -> u32 {
        if self.readonly() {
            0o555
        } else {
            0o777
        }
    }
    fn from_mode(mode: u32) -> Permissions {
        // Permissions has no constructor on Windows: start from a fresh temporary value.
        let mut p = std::env::temp_dir()
            .metadata()
            .map(|m| m.permissions())
            .unwrap_or_else(|_| unreachable_permissions());
        p.set_readonly(mode & 0o222 == 0);
        p
    }
}

fn unreachable_permissions() -> Permissions {
    // The current directory always has metadata while the server runs in it.
    std::fs::metadata(".")
        .map(|m| m.permissions())
        .expect("the working directory has metadata")
}

/// `std::os::unix::fs::DirBuilderExt`: the mode is ignored (Windows grants by ACL).
pub trait DirBuilderExt {
    /// Ignored.
    fn mode(&mut self, mode: u32) -> &mut Self;
}

impl DirBuilderExt for DirBuilder {
    fn mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
}

/// `std::os::unix::fs::OpenOptionsExt`: the mode and the Unix flags are ignored.
pub trait OpenOptionsExt {
    /// Ignored.
    fn mode(&mut self, mode: u32) -> &mut Self;
    /// Ignored (the flags are Unix open flags).
    fn custom_flags(&mut self, flags: i32) -> &mut Self;
}

impl OpenOptionsExt for OpenOptions {
    fn mode(&mut self, _mode: u32) -> &mut Self {
        self
    }
    fn custom_flags(&mut self, _flags: i32) -> &mut Self {
        self
    }
}

/// `std::os::unix::fs::FileExt`, over `seek_read` (which also moves the file's cursor).
pub trait FileExt {
    /// Reads at `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl FileExt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// `std::os::unix::ffi::OsStrExt`, over WTF-8.
pub trait OsStrExt {
    /// The string's WTF-8 bytes.
    fn as_bytes(&self) -> &[u8];
    /// The string of `bytes`: UTF-8 as it is; any other bytes as U+FFFD (they come from
    /// Unix sources, such as an ELF header, that a Windows path never has).
    fn from_bytes(bytes: &[u8]) -> &Self;
}

impl OsStrExt for OsStr {
    fn as_bytes(&self) -> &[u8] {
        self.as_encoded_bytes()
    }
    fn from_bytes(bytes: &[u8]) -> &OsStr {
        std::str::from_utf8(bytes).map_or(OsStr::new("\u{FFFD}"), OsStr::new)
    }
}

/// `std::os::unix::ffi::OsStringExt`.
pub trait OsStringExt {
    /// The string of `bytes` (invalid UTF-8 replaced).
    fn from_vec(bytes: Vec<u8>) -> Self;
}

impl OsStringExt for OsString {
    fn from_vec(bytes: Vec<u8>) -> OsString {
        OsString::from(String::from_utf8_lossy(&bytes).into_owned())
    }
}
