//! Working directories that trusted mode refuses (REDTEAM finding 5, and finding F2 of the
//! second round): one inside a directory of the safe `PATH` or of the system (programs,
//! libraries and the ELF interpreter, configuration, data loaded as code such as git's
//! templates, system state, kernel interfaces), or an ancestor of
//! one (`/`, `/usr`). A call may write beneath its working directory (redirections, and the
//! kernel sandbox grants it), so such a directory would let it put a program of its choosing
//! under an allowed name where the allowlist looks programs up (`cp /usr/bin/python3 wc` in
//! `/usr/local/bin`), replace the dynamic loader or a library every allowed program loads
//! (`/lib64`), or write `/etc/ld.so.preload`; and a working directory of `/` would make
//! "write only beneath the working directory" mean everywhere.
//!
//! Paths are compared after resolving symlinks (`/bin` is `/usr/bin` on merged systems). A
//! directory listed exactly as a `YIELDSHELL_ALLOWED_CWDS` root is the operator's explicit
//! choice and is accepted.

use std::path::{Path, PathBuf};

use crate::base::config::{Config, Mode};

/// System trees no trusted-mode call may work in (nor above): programs, libraries and the
/// dynamic loader, configuration, boot files, kernel interfaces, state of the system.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/libexec",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/local/lib",
    "/usr/local/libexec",
    // Data that programs load as code or copy into what they run: git's templates (hooks
    // and config copied into every new repository: red team, round 9), perl and python
    // modules, shell completions; package and scheduler state run by the system.
    "/usr/share",
    "/usr/local/share",
    "/var/lib",
    "/var/spool",
    "/etc",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    // macOS (absent elsewhere, so skipped): the system volume and its Library.
    "/System",
    "/Library",
];

/// The safe `PATH` directories that exist, with symlinks resolved.
fn safe_dirs(safe_path: &str) -> Vec<PathBuf> {
    safe_path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect()
}

/// The system trees that exist, with symlinks resolved: read once (they do not move while
/// the server runs), not on every call.
fn system_dirs() -> &'static [PathBuf] {
    static DIRS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        SYSTEM_DIRS
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect()
    })
}

/// Refuses `resolved` (a canonical directory, named by parameter `param`) in trusted mode
/// when it is inside a safe `PATH` directory or an ancestor of one.
pub fn check(config: &Config, resolved: &Path, param: &str) -> Result<(), String> {
    if config.mode != Mode::Trusted || config.allowed_cwds.iter().any(|r| r == resolved) {
        return Ok(());
    }
    check_against(&safe_dirs(&config.safe_path), resolved, param)?;
    check_system(system_dirs(), resolved, param)?;
    check_home(home_dirs(), resolved, param)
}

/// The home directories of the server's user (`HOME`, and the password database's entry,
/// which ssh and p11-kit read), with symlinks resolved: read once.
fn home_dirs() -> &'static [PathBuf] {
    static DIRS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
            .map(PathBuf::from)
            .into_iter()
            .collect();
        // The process's user owns `/proc/self`.
        let uid = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m));
        if let (Ok(uid), Ok(passwd)) = (uid, std::fs::read_to_string("/etc/passwd")) {
            homes.extend(passwd.lines().find_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                let home = fields.get(5)?;
                (fields.get(2)?.parse::<u32>().ok()? == uid).then(|| PathBuf::from(home))
            }));
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for home in homes
            .iter()
            .filter(|h| h.is_absolute() && h.as_os_str() != "/")
        {
            if let Ok(real) = std::fs::canonicalize(home) {
                if !out.contains(&real) {
                    out.push(real);
                }
            }
        }
        out
    })
}

/// Refuses the home directory, its ancestors and its dot-directories (`~/.ssh`, `~/.config`):
/// ssh's `PKCS11Provider`, p11-kit's modules and gpg's agent are read from there, so a call
/// writing beneath one of them could make an allowed program load a library (red team,
/// round 10). Project directories inside the home (`~/src/app`) are accepted.
fn check_home(homes: &[PathBuf], resolved: &Path, param: &str) -> Result<(), String> {
    for home in homes {
        let settings = resolved
            .strip_prefix(home)
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| first.as_os_str().to_string_lossy().starts_with('.'));
        let relation = if resolved == home {
            "is"
        } else if home.starts_with(resolved) {
            "is an ancestor of"
        } else if settings {
            "is in a settings directory of"
        } else {
            continue;
        };
        return Err(format!(
            "{param} {} {relation} the home directory {} of the server's user: programs \
             read their settings and load modules from its dot-directories (ssh's config, \
             p11-kit's modules), so trusted mode refuses a working directory there. Point \
             the call at a project directory ({param}), such as one inside the home, or set \
             YIELDSHELL_DEFAULT_CWD to one; a directory listed exactly in \
             YIELDSHELL_ALLOWED_CWDS is accepted",
            resolved.display(),
            home.display()
        ));
    }
    Ok(())
}

/// The first of `dirs` that `resolved` is, is inside, or is an ancestor of, with how.
fn meets<'a>(dirs: &'a [PathBuf], resolved: &Path) -> Option<(&'static str, &'a Path)> {
    dirs.iter().find_map(|dir| {
        let relation = if resolved == dir {
            "is"
        } else if resolved.starts_with(dir) {
            "is inside"
        } else if dir.starts_with(resolved) {
            "is an ancestor of"
        } else {
            return None;
        };
        Some((relation, dir.as_path()))
    })
}

fn check_system(dirs: &[PathBuf], resolved: &Path, param: &str) -> Result<(), String> {
    match meets(dirs, resolved) {
        None => Ok(()),
        Some((relation, dir)) => Err(format!(
            "{param} {} {relation} {}, a system directory (programs, libraries, the dynamic \
             loader, configuration): trusted mode refuses a working directory there, since a \
             call may write beneath its working directory and could replace what every allowed \
             program loads. Point the call at a project directory ({param}), or set \
             YIELDSHELL_DEFAULT_CWD to one; a directory listed exactly in \
             YIELDSHELL_ALLOWED_CWDS is accepted",
            resolved.display(),
            dir.display()
        )),
    }
}

fn check_against(dirs: &[PathBuf], resolved: &Path, param: &str) -> Result<(), String> {
    match meets(dirs, resolved) {
        None => Ok(()),
        Some((relation, dir)) => Err(format!(
            "{param} {} {relation} {}, a directory of the safe PATH \
             (MCP_SHELL_SAFE_PATH): trusted mode refuses a working directory there, since a \
             call may write beneath its working directory and could put a program under an \
             allowed name where commands are looked up. Point the call at a project \
             directory ({param}), or set YIELDSHELL_DEFAULT_CWD to one; to confine calls to \
             your projects set YIELDSHELL_ALLOWED_CWDS (a directory listed there exactly is \
             accepted)",
            resolved.display(),
            dir.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_and_ancestors_of_the_safe_path_are_refused() {
        let dirs = vec![PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin")];
        for bad in ["/", "/usr", "/usr/local", "/usr/bin", "/usr/local/bin/sub"] {
            let e = check_against(&dirs, Path::new(bad), "directory").unwrap_err();
            assert!(
                e.contains("safe PATH") && e.contains("YIELDSHELL_ALLOWED_CWDS"),
                "{e}"
            );
            assert!(e.starts_with(&format!("directory {bad} is ")), "{e}");
        }
        for good in ["/home/u/proj", "/usr/share", "/usr/binary", "/tmp"] {
            assert!(
                check_against(&dirs, Path::new(good), "cwd").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn system_directories_and_their_ancestors_are_refused() {
        let dirs: Vec<PathBuf> = ["/usr/lib", "/usr/local/lib", "/etc", "/lib64", "/run"]
            .iter()
            .map(PathBuf::from)
            .collect();
        for bad in [
            "/",
            "/usr",
            "/usr/local",
            "/etc",
            "/lib64",
            "/usr/lib/x86_64-linux-gnu",
        ] {
            let e = check_system(&dirs, Path::new(bad), "directory").unwrap_err();
            assert!(e.contains("system directory"), "{e}");
        }
        for good in [
            "/home/u/proj",
            "/var/tmp/x",
            "/tmp",
            "/srv/app",
            "/etcetera",
            "/usr/src/app",
            "/usr/share/doc",
        ] {
            assert!(
                check_system(&dirs, Path::new(good), "cwd").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn the_home_its_ancestors_and_its_settings_are_refused() {
        let homes = vec![PathBuf::from("/home/u")];
        for bad in ["/home/u", "/home", "/home/u/.ssh", "/home/u/.config/pkcs11"] {
            let e = check_home(&homes, Path::new(bad), "cwd").unwrap_err();
            assert!(e.contains("home directory /home/u"), "{e}");
        }
        for good in [
            "/home/u/proj",
            "/home/u/src/.hidden-build",
            "/home/v",
            "/tmp",
        ] {
            assert!(check_home(&homes, Path::new(good), "cwd").is_ok(), "{good}");
        }
    }

    #[test]
    fn symlinked_path_directories_are_resolved() {
        let dirs = safe_dirs("/bin:relative:/nonexistent-ys-dir");
        let canon = std::fs::canonicalize("/bin").unwrap();
        assert_eq!(dirs, vec![canon.clone()]);
        assert!(check_against(&dirs, &canon, "cwd").is_err());
    }
}
