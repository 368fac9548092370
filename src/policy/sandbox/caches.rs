//! The package caches of shell mode's `workspace` calls: a directory of this server's
//! (`$XDG_CACHE_HOME/yieldshell/workspace`, else `~/.cache/yieldshell/workspace`, mode 0700,
//! kept across calls and runs) that the sandbox lets every `workspace` call write, and the
//! variables that point each tool's cache into it. Never the person's own caches: a cache an
//! agent may write is a cache it may poison for the person's next install.
//!
//! cargo keeps its downloads beneath `CARGO_HOME`, which also holds its configuration, so
//! `CARGO_HOME` is a directory of its own here, with a copy of the person's
//! `config.toml` (taken when the directory is made ready, each run): a change a call makes
//! to the copy stays in it.

use crate::base::sys::ext::{MetadataExt, PermissionsExt};
use crate::base::sys::fd::{AsFd, OwnedFd};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::plan::HeldDir;
use crate::base::sys;

/// Each variable and the directory beneath the cache it names.
pub const VARS: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", "xdg"),
    ("npm_config_cache", "npm"),
    ("PIP_CACHE_DIR", "pip"),
    ("GOCACHE", "go-build"),
    ("GOMODCACHE", "go-mod"),
    ("YARN_CACHE_FOLDER", "yarn"),
    // pnpm keeps its store beneath `PNPM_HOME` (and its cache beneath `XDG_CACHE_HOME`);
    // its `npm_config_store_dir` would make npm warn on every command.
    ("PNPM_HOME", "pnpm"),
    ("CARGO_HOME", "cargo"),
];

/// Where the caches live for a server with environment `env`: None without `HOME` or
/// `XDG_CACHE_HOME`.
pub fn root(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .filter(|p| p.is_absolute())
    };
    let cache = var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("yieldshell").join("workspace"))
}

/// The caches made ready: the variables that name them, and the directory that holds them,
/// opened without following a link (the sandbox's grant is made from it).
#[derive(Debug)]
pub struct Prepared {
    /// Each variable and its directory.
    pub vars: Vec<(OsString, OsString)>,
    /// The caches' directory (`root`).
    pub root: HeldDir,
}

/// Makes the cache directories ready and returns them. `$XDG_CACHE_HOME` (or `~/.cache`) is
/// the person's and is followed as they set it; from `yieldshell` down, every directory is
/// made (0700) and opened relative to its parent without following a symbolic link, and
/// must belong to the server's user: a call may write beneath the caches (and beneath
/// `/tmp`, where an `XDG_CACHE_HOME` may lie), so a link it planted there must not lead the
/// server's own writes (the directories it makes, the copied cargo configuration) anywhere
/// else. An error says what is wrong, and then nothing is granted or pointed to.
pub fn prepare(root: &Path, env: &[(OsString, OsString)]) -> Result<Prepared, String> {
    let fail = |what: &str, path: &Path, e: std::io::Error| {
        format!(
            "cannot make the workspace package cache {}: {what} {}: {}",
            root.display(),
            path.display(),
            crate::base::config::plain_io(&e)
        )
    };
    let refuse = |path: &Path| {
        format!(
            "the workspace package cache {} is not a directory of the server's user \
             (a symbolic link, or another user's): remove it",
            path.display()
        )
    };
    let (Some(top), Some(base)) = (root.parent(), root.parent().and_then(Path::parent)) else {
        return Err(format!(
            "the workspace package cache {} has no parent directory",
            root.display()
        ));
    };
    std::fs::create_dir_all(base).map_err(|e| fail("mkdir", base, e))?;
    let mut dir = OwnedFd::from(std::fs::File::open(base).map_err(|e| fail("open", base, e))?);
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    // Opened beneath `dir`, made if missing; refused unless a directory of the server's user.
    let own = |dir: &OwnedFd, name: &str, path: &Path| -> Result<OwnedFd, String> {
        let fd = match sys::make_dir_at(dir.as_fd(), name.as_ref(), 0o700) {
            Ok(fd) => fd,
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(refuse(path))
            }
            Err(e) => return Err(fail("open", path, e)),
        };
        let file = std::fs::File::from(fd);
        let m = file.metadata().map_err(|e| fail("stat", path, e))?;
        if !m.is_dir() || uid.is_some_and(|u| u != m.uid()) {
            return Err(refuse(path));
        }
        Ok(OwnedFd::from(file))
    };
    for (name, path) in [("yieldshell", top), ("workspace", root)] {
        dir = own(&dir, name, path)?;
    }
    let root_dir = std::fs::File::from(dir);
    root_dir
        .set_permissions(std::fs::Permissions::from_mode(0o700))
        .map_err(|e| fail("chmod", root, e))?;
    let root_dir = OwnedFd::from(root_dir);
    let mut vars = Vec::new();
    let mut cargo = None;
    for (name, sub) in VARS {
        let path = root.join(sub);
        let fd = own(&root_dir, sub, &path)?;
        if *sub == "cargo" {
            cargo = Some(fd);
        }
        vars.push((OsString::from(name), path.into_os_string()));
    }
    if let Some(cargo) = cargo {
        copy_cargo_config(&cargo, &root.join("cargo"), env);
    }
    let root = HeldDir::from_fd(root, root_dir).map_err(|e| fail("stat", root, e))?;
    Ok(Prepared { vars, root })
}

/// Copies the person's cargo configuration (`$CARGO_HOME` or `~/.cargo`, `config.toml` and
/// the older `config`) into the cache's `CARGO_HOME` (`ours`, open as `dir`), so that
/// registries, source replacement and network settings still apply. Credentials are not
/// copied. Each copy is a new file: whatever a call left in its place (a link, a hard link
/// to another file) is unlinked, never written through.
fn copy_cargo_config(dir: &OwnedFd, ours: &Path, env: &[(OsString, OsString)]) {
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
    };
    let Some(theirs) = var("CARGO_HOME").or_else(|| var("HOME").map(|h| h.join(".cargo"))) else {
        return;
    };
    if theirs == ours {
        return;
    }
    for name in ["config.toml", "config"] {
        let from = theirs.join(name);
        if !from.is_file() {
            continue;
        }
        let copied = std::fs::read(&from).and_then(|text| {
            sys::create_file_at(dir.as_fd(), name.as_ref(), 0o600)?.write_all(&text)
        });
        if let Err(e) = copied {
            crate::base::log::warn!(
                "cannot copy {} to {}: {e}",
                from.display(),
                ours.join(name).display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caches_are_the_servers_own_and_private() {
        let home = std::env::temp_dir().join(format!("yieldshell-caches-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(home.join(".cargo")).expect("mkdir");
        std::fs::write(home.join(".cargo/config.toml"), "[net]\noffline = true\n").expect("write");
        let env = vec![(OsString::from("HOME"), home.clone().into_os_string())];
        let root = root(&env).expect("a root");
        assert_eq!(root, home.join(".cache/yieldshell/workspace"));
        let vars = prepare(&root, &env).expect("ready").vars;
        assert_eq!(vars.len(), VARS.len());
        for (_, dir) in &vars {
            assert!(Path::new(dir).starts_with(&root), "{dir:?}");
            assert!(Path::new(dir).is_dir());
        }
        let mode = std::fs::metadata(&root).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let copied = std::fs::read_to_string(root.join("cargo/config.toml")).expect("copied");
        assert!(copied.contains("offline"));
        // Kept across runs: a second preparation finds it ready.
        std::fs::write(root.join("npm/kept"), "x").expect("write");
        prepare(&root, &env).expect("ready again");
        assert!(root.join("npm/kept").exists());
        // A link in the root's place is refused.
        let _ = std::fs::remove_dir_all(&root);
        std::os::unix::fs::symlink(&home, &root).expect("link");
        let e = prepare(&root, &env).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        let _ = std::fs::remove_dir_all(&home);
    }
}
