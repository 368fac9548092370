//! Which files a trusted-mode call may execute: every allowlisted name resolved in the safe
//! `PATH` when the call is made (symlinks followed), the names in those directories that
//! match `ALLOW_PATTERNS`, and the ELF interpreter (`PT_INTERP`) each of them names. Also
//! the server-side check that a script's `#!` interpreter is itself executable, so that
//! the refusal comes with a reason instead of a bare "Permission denied".

use crate::base::sys::ext::{FileExt, MetadataExt, PermissionsExt};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use parking_lot::Mutex;

use crate::policy::trusted::allow::Allowlist;

/// Device and inode.
type FileId = (u64, u64);

/// A file the domain lets run, identified by device and inode (what Landlock keys on).
#[derive(Clone, Debug)]
pub struct ExecFile {
    /// The path it was found under.
    pub path: PathBuf,
    /// Device and inode of the file the path resolves to.
    pub id: (u64, u64),
    /// An ELF interpreter (the dynamic loader), here because a program names it, not
    /// because the allowlist does.
    pub loader: bool,
}

/// Resolves the allowlist against the safe `PATH`, with caches: directory listings are
/// reused while the directory's mtime is unchanged, an ELF interpreter while the file's
/// inode and mtime are, and the whole answer ([`Snapshot`]) while every `PATH` directory
/// is unchanged and every symlink it went through still leads to the same file.
#[derive(Debug)]
pub struct Resolver {
    allow: Allowlist,
    dirs: Vec<PathBuf>,
    listings: Mutex<HashMap<PathBuf, (SystemTime, Vec<String>)>>,
    interps: Mutex<HashMap<FileId, (i64, Option<PathBuf>)>>,
    /// Whether a file is an ELF program that names no interpreter, by inode and mtime.
    statics: Mutex<HashMap<FileId, (i64, bool)>>,
    last: Mutex<Option<Snapshot>>,
}

/// What a directory looked like: device, inode, mtime (seconds and nanoseconds).
type Stamp = Option<(u64, u64, i64, i64)>;

/// A resolution kept between calls, and what it depended on. A name is found in the first
/// `PATH` directory that has it, so the answer holds while no directory gained, lost or
/// renamed an entry (each changes the directory's mtime) and every file reached through a
/// symlink, and every ELF interpreter (which lives outside the `PATH`), is still the same
/// file. What this does not see (a file made executable in place, in an earlier directory
/// than the one its name was found in) can only make the kernel refuse that new file until
/// a directory changes: never grant one.
#[derive(Debug)]
struct Snapshot {
    dirs: Vec<Stamp>,
    /// Paths whose file is checked again, with the device and inode they led to.
    followed: Vec<(PathBuf, FileId)>,
    files: Vec<ExecFile>,
}

fn stamp(dir: &Path) -> Stamp {
    let m = std::fs::metadata(dir).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec()))
}

impl Resolver {
    /// A resolver for `allow` over the `PATH` directories `dirs`.
    pub fn new(allow: Allowlist, dirs: Vec<PathBuf>) -> Resolver {
        Resolver {
            allow,
            dirs,
            listings: Mutex::default(),
            interps: Mutex::default(),
            statics: Mutex::default(),
            last: Mutex::default(),
        }
    }

    /// Every file the call may execute: allowlisted programs and their ELF interpreters,
    /// without duplicates. `cwd` resolves allowlisted paths written without a leading `/`
    /// (an allowlist with such a path is resolved anew for every call).
    pub fn exec_set(&self, cwd: &Path) -> Vec<ExecFile> {
        if self.allow.names().iter().any(|n| n.contains('/')) {
            return self.resolve(cwd);
        }
        // Stamped before resolving: a change during the resolution shows at the next call.
        let dirs: Vec<Stamp> = self.dirs.iter().map(|d| stamp(d)).collect();
        if let Some(last) = &*self.last.lock() {
            let same = |(path, id): &(PathBuf, FileId)| {
                std::fs::metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == *id)
            };
            if last.dirs == dirs && last.followed.iter().all(same) {
                return last.files.clone();
            }
        }
        let files = self.resolve(cwd);
        let followed = files
            .iter()
            .filter(|f| {
                !self
                    .dirs
                    .iter()
                    .any(|d| f.path.parent() == Some(d.as_path()))
                    || std::fs::symlink_metadata(&f.path).map_or(true, |m| m.is_symlink())
            })
            .map(|f| (f.path.clone(), f.id))
            .collect();
        *self.last.lock() = Some(Snapshot {
            dirs,
            followed,
            files: files.clone(),
        });
        files
    }

    /// [`Resolver::exec_set`] without the kept answer.
    fn resolve(&self, cwd: &Path) -> Vec<ExecFile> {
        let mut names: Vec<String> = Vec::new();
        let mut out: Vec<ExecFile> = Vec::new();
        // One `stat` per file: its identity and its interpreter's cache key come from it.
        let mut metas: Vec<std::fs::Metadata> = Vec::new();
        let push = |(out, metas): (&mut Vec<ExecFile>, &mut Vec<std::fs::Metadata>),
                    path: PathBuf,
                    m: Option<std::fs::Metadata>| {
            if let Some(m) = m.or_else(|| std::fs::metadata(&path).ok()) {
                let id = (m.dev(), m.ino());
                if !out.iter().any(|f| f.id == id) {
                    out.push(ExecFile {
                        path,
                        id,
                        loader: false,
                    });
                    metas.push(m);
                }
            }
        };
        for name in self.allow.names() {
            if name.contains('/') {
                push((&mut out, &mut metas), cwd.join(name), None);
            } else if let Some((p, m)) = self.lookup(name) {
                names.push(name.clone());
                push((&mut out, &mut metas), p, Some(m));
            }
        }
        if self.allow.patterns().next().is_some() {
            for dir in &self.dirs {
                for name in self.matching_names(dir) {
                    if names.contains(&name) {
                        continue;
                    }
                    // The first directory of the PATH that has the name wins, as in lookup.
                    if let Some((p, m)) = self.lookup(&name) {
                        push((&mut out, &mut metas), p, Some(m));
                    }
                    names.push(name);
                }
            }
        }
        // git's own http(s) transport helpers, which git starts from its exec path for an
        // `http(s)://` remote (the only transports trusted mode leaves open).
        for i in 0..out.len() {
            for helper in Self::git_http_helpers(&out[i].path) {
                push((&mut out, &mut metas), helper, None);
            }
        }
        let programs = out.len();
        let mut interps: Vec<PathBuf> = Vec::new();
        for i in 0..programs {
            if let Some(interp) = self.elf_interpreter(&out[i].path, &metas[i]) {
                // Most programs name the same loader: look it up once.
                if !interps.contains(&interp) {
                    interps.push(interp);
                }
            }
        }
        for interp in interps {
            push((&mut out, &mut metas), interp, None);
        }
        for f in &mut out[programs..] {
            f.loader = true;
        }
        out
    }

    /// `git-remote-http` and `git-remote-https` beside `program` when it is git (in
    /// `<prefix>/libexec/git-core` or `<prefix>/lib/git-core` of `<prefix>/bin/git`).
    fn git_http_helpers(program: &Path) -> Vec<PathBuf> {
        let Ok(real) = std::fs::canonicalize(program) else {
            return Vec::new();
        };
        if real.file_name().is_none_or(|n| n != "git") {
            return Vec::new();
        }
        let Some(prefix) = real.parent().and_then(Path::parent) else {
            return Vec::new();
        };
        ["libexec/git-core", "lib/git-core"]
            .iter()
            .flat_map(|dir| {
                ["git-remote-http", "git-remote-https"].map(|name| prefix.join(dir).join(name))
            })
            .filter(|p| p.is_file())
            .collect()
    }

    /// The first executable `name` in the safe `PATH`, with what `stat` said of it.
    fn lookup(&self, name: &str) -> Option<(PathBuf, std::fs::Metadata)> {
        self.dirs.iter().find_map(|d| {
            let p = d.join(name);
            let m = std::fs::metadata(&p).ok()?;
            (m.is_file() && m.permissions().mode() & 0o111 != 0).then_some((p, m))
        })
    }

    /// Names in `dir` that the patterns admit (names on the name list are found by
    /// `lookup` already).
    fn matching_names(&self, dir: &Path) -> Vec<String> {
        let Ok(mtime) = std::fs::metadata(dir).and_then(|m| m.modified()) else {
            return Vec::new();
        };
        if let Some((seen, names)) = self.listings.lock().get(dir) {
            if *seen == mtime {
                return names.clone();
            }
        }
        let names: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| self.allow.check(n).is_ok())
                    .collect()
            })
            .unwrap_or_default();
        self.listings
            .lock()
            .insert(dir.to_path_buf(), (mtime, names.clone()));
        names
    }

    /// The `PT_INTERP` of the ELF file at `path` (whose `stat` is `m`), cached by inode and
    /// mtime.
    fn elf_interpreter(&self, path: &Path, m: &std::fs::Metadata) -> Option<PathBuf> {
        let key = (m.dev(), m.ino());
        if let Some((mtime, interp)) = self.interps.lock().get(&key) {
            if *mtime == m.mtime() {
                return interp.clone();
            }
        }
        let interp = read_pt_interp(path);
        self.interps.lock().insert(key, (m.mtime(), interp.clone()));
        interp
    }
}

impl Resolver {
    /// Whether `program` is an ELF file that names no interpreter (statically linked, or
    /// static-pie): it runs without the dynamic loader. Cached by inode and mtime.
    pub fn is_static(&self, program: &Path) -> bool {
        let Ok(m) = std::fs::metadata(program) else {
            return false;
        };
        let key = (m.dev(), m.ino());
        if let Some((mtime, yes)) = self.statics.lock().get(&key) {
            if *mtime == m.mtime() {
                return *yes;
            }
        }
        let mut magic = [0u8; 4];
        let elf = File::open(program)
            .and_then(|f| f.read_exact_at(&mut magic, 0))
            .is_ok_and(|()| &magic == b"\x7fELF");
        let yes = elf && self.elf_interpreter(program, &m).is_none();
        self.statics.lock().insert(key, (m.mtime(), yes));
        yes
    }
}

/// Reads the `PT_INTERP` segment of an ELF file (32 or 64 bit, either byte order).
pub fn read_pt_interp(path: &Path) -> Option<PathBuf> {
    let file = File::open(path).ok()?;
    let mut h = [0u8; 64];
    file.read_exact_at(&mut h, 0).ok()?;
    if &h[..4] != b"\x7fELF" {
        return None;
    }
    let wide = h[4] == 2;
    let big = h[5] == 2;
    let u16_at = |b: &[u8], o: usize| {
        let v = [b[o], b[o + 1]];
        if big {
            u16::from_be_bytes(v)
        } else {
            u16::from_le_bytes(v)
        }
    };
    let u32_at = |b: &[u8], o: usize| {
        let v = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if big {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    };
    let u64_at = |b: &[u8], o: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[o..o + 8]);
        if big {
            u64::from_be_bytes(v)
        } else {
            u64::from_le_bytes(v)
        }
    };
    let (phoff, phentsize, phnum) = if wide {
        (u64_at(&h, 0x20), u16_at(&h, 0x36), u16_at(&h, 0x38))
    } else {
        (
            u64::from(u32_at(&h, 0x1c)),
            u16_at(&h, 0x2a),
            u16_at(&h, 0x2c),
        )
    };
    let size = usize::from(phentsize) * usize::from(phnum);
    if size == 0 || size > 64 * 1024 || usize::from(phentsize) < if wide { 56 } else { 32 } {
        return None;
    }
    let mut ph = vec![0u8; size];
    file.read_exact_at(&mut ph, phoff).ok()?;
    for e in ph.chunks_exact(usize::from(phentsize)) {
        if u32_at(e, 0) != 3 {
            continue; // not PT_INTERP
        }
        let (off, len) = if wide {
            (u64_at(e, 8), u64_at(e, 32))
        } else {
            (u64::from(u32_at(e, 4)), u64::from(u32_at(e, 16)))
        };
        if len == 0 || len > 4096 {
            return None;
        }
        let mut s = vec![0u8; len as usize];
        file.read_exact_at(&mut s, off).ok()?;
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        s.truncate(end);
        use crate::base::sys::ext::OsStringExt;
        return Some(PathBuf::from(std::ffi::OsString::from_vec(s)));
    }
    None
}

/// The `#!` interpreter of a script (the first word after `#!`), as the kernel reads it
/// from the first 256 bytes; `None` for anything else.
pub fn script_interpreter(path: &Path) -> Option<PathBuf> {
    let mut buf = [0u8; 256];
    let mut file = File::open(path).ok()?;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return None,
        }
    }
    let head = buf[..n].strip_prefix(b"#!")?;
    let line = head.split(|&b| b == b'\n').next()?;
    let word = line
        .split(|&b| b == b' ' || b == b'\t')
        .find(|w| !w.is_empty())?;
    use crate::base::sys::ext::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(word)))
}

/// Refuses a stage whose program is a script with an interpreter outside `allowed`: the
/// kernel would refuse it with a bare `EACCES`, so the server says why first.
pub fn check_script(program: &Path, allowed: &[ExecFile]) -> Result<(), String> {
    let Some(interp) = script_interpreter(program) else {
        return Ok(());
    };
    let id = std::fs::metadata(&interp).ok().map(|m| (m.dev(), m.ino()));
    if id.is_some_and(|id| allowed.iter().any(|f| f.id == id)) {
        return Ok(());
    }
    let name = interp
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| interp.display().to_string());
    Err(format!(
        "Command refused by the kernel sandbox: {} is a script for {}, which is not an \
         allowed program, so the kernel would not start it (the sandbox lets a call execute \
         only allowlisted programs); allow {name} too to run it",
        program.display(),
        interp.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_interpreter_of_a_dynamic_executable() {
        // /bin/sh is dynamically linked on every distribution this runs on, except
        // static-only systems, where there is nothing to find.
        let exe = std::fs::canonicalize("/bin/sh").unwrap();
        if let Some(interp) = read_pt_interp(&exe) {
            assert!(interp.is_absolute(), "{}", interp.display());
            assert!(interp.exists(), "{}", interp.display());
        }
        assert_eq!(read_pt_interp(Path::new("/etc/hostname")), None);
        assert_eq!(read_pt_interp(Path::new("/nonexistent")), None);
    }

    #[test]
    fn reads_a_script_interpreter_and_refuses_it_when_not_allowed() {
        let dir = std::env::temp_dir().join(format!("ys-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("s");
        std::fs::write(&script, "#!  /bin/sh -e\necho hi\n").unwrap();
        assert_eq!(script_interpreter(&script), Some(PathBuf::from("/bin/sh")));
        let e = check_script(&script, &[]).unwrap_err();
        assert!(e.contains("script for /bin/sh"), "{e}");
        assert!(e.contains("allow sh"), "{e}");
        let m = std::fs::metadata("/bin/sh").unwrap();
        let sh = ExecFile {
            path: "/bin/sh".into(),
            id: (m.dev(), m.ino()),
            loader: false,
        };
        assert!(check_script(&script, &[sh]).is_ok());
        std::fs::write(&script, "echo no shebang\n").unwrap();
        assert_eq!(script_interpreter(&script), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The kept answer follows every change that alters the resolution: a name appearing in
    /// an earlier directory, and a file replaced behind a symlink outside the `PATH`.
    #[test]
    fn the_kept_resolution_follows_the_directories_and_the_symlinks() {
        use std::os::unix::fs::symlink;
        let base = std::env::temp_dir().join(format!("ys-snapshot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (d1, d2, d3) = (base.join("d1"), base.join("d2"), base.join("d3"));
        for d in [&d1, &d2, &d3] {
            std::fs::create_dir_all(d).unwrap();
        }
        let exe = |p: &Path, text: &str| {
            std::fs::write(p, text).unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        exe(&d2.join("prog"), "one");
        exe(&d3.join("real"), "two");
        symlink(d3.join("real"), d2.join("tool")).unwrap();
        let allow = Allowlist::new(Some("prog,tool"), None, None).unwrap();
        let r = Resolver::new(allow, vec![d1.clone(), d2.clone()]);
        let ids = |set: &[ExecFile]| {
            let mut v: Vec<(PathBuf, FileId)> =
                set.iter().map(|f| (f.path.clone(), f.id)).collect();
            v.sort();
            v
        };
        let id = |p: &Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.dev(), m.ino())
        };
        let first = r.exec_set(Path::new("/"));
        assert_eq!(
            ids(&first),
            vec![
                (d2.join("prog"), id(&d2.join("prog"))),
                (d2.join("tool"), id(&d3.join("real")))
            ]
        );
        // Kept: the same answer again.
        assert_eq!(ids(&r.exec_set(Path::new("/"))), ids(&first));
        // A program of the same name in an earlier directory wins from now on.
        exe(&d1.join("prog"), "three");
        let second = r.exec_set(Path::new("/"));
        assert!(
            second.iter().any(|f| f.path == d1.join("prog")),
            "{second:?}"
        );
        // The file behind the symlink replaced (its directory is not in the PATH).
        exe(&d3.join("new"), "four");
        std::fs::rename(d3.join("new"), d3.join("real")).unwrap();
        let third = r.exec_set(Path::new("/"));
        assert!(
            third
                .iter()
                .any(|f| f.path == d2.join("tool") && f.id == id(&d3.join("real"))),
            "{third:?}"
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn exec_set_has_programs_and_their_interpreters_once() {
        let allow = Allowlist::new(Some("cat,ls,cat,nosuchprogram"), None, Some("true")).unwrap();
        let r = Resolver::new(allow, vec!["/usr/bin".into(), "/bin".into()]);
        let set = r.exec_set(Path::new("/"));
        let has = |name: &str| set.iter().any(|f| f.path.ends_with(name));
        assert!(has("cat") && has("ls") && has("true"), "{set:?}");
        assert!(!has("nosuchprogram"));
        let mut ids: Vec<_> = set.iter().map(|f| f.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), set.len());
        if let Some(interp) = read_pt_interp(&set[0].path) {
            let m = std::fs::metadata(interp).unwrap();
            assert!(set.iter().any(|f| f.id == (m.dev(), m.ino())), "{set:?}");
        }
    }
}
