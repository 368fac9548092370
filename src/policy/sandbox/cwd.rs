//! Working directories that trusted mode refuses: one inside a directory of the safe `PATH` or of the system (programs,
//! libraries and the ELF interpreter, configuration, data loaded as code such as git's
//! templates, system state, kernel interfaces), or an ancestor of
//! one (`/`, `/usr`). A call may write beneath its working directory (redirections, and the
//! kernel sandbox grants it), so such a directory would let it put a program of its choosing
//! under an allowed name where the allowlist looks programs up (`cp /usr/bin/python3 wc` in
//! `/usr/local/bin`), replace the dynamic loader or a library every allowed program loads
//! (`/lib64`), or write `/etc/ld.so.preload`; and a working directory of `/` would make
//! "write only beneath the working directory" mean everywhere.
//!
//! Shell mode's `workspace` sandbox without `YIELDSHELL_ALLOWED_CWDS` grants writes beneath
//! the call's working directory too, so it refuses the same directories, and also the places
//! its commands are looked up in or run from, which a shell-mode child inherits from the
//! server: every directory of the server's `PATH` (and their ancestors), `~/bin` (a login
//! profile puts it on `PATH`) and the directory of the server's own executable (the next
//! start would run what a call put there). Trusted mode's children get the safe `PATH`
//! instead, so it does not refuse these.
//!
//! The system trees are refused whole (everything beneath `/usr`, `/etc`, `/var` but
//! `/var/tmp`, ...), not by a list of the subdirectories that matter, which always misses
//! some. `/opt` and `/srv` stay accepted: they hold projects as often as installed
//! software, so a program installed beneath `/opt` is writable to a call working there
//! (list the project directories in `YIELDSHELL_ALLOWED_CWDS` to rule that out).
//!
//! Paths are compared after resolving symlinks (`/bin` is `/usr/bin` on merged systems). A
//! directory listed exactly as a `YIELDSHELL_ALLOWED_CWDS` root is the operator's explicit
//! choice and is accepted.

use std::path::{Path, PathBuf};

use crate::base::config::{Config, Mode, SandboxMode};

/// System trees no call whose working directory is writable may work in (nor above), as
/// whole trees rather than a list of their subdirectories (a list misses some:
/// `/usr/include`, `/usr/local/etc`, `/var/backups`): programs, libraries and the dynamic
/// loader, headers and sources the system builds from, configuration, boot files, kernel
/// interfaces, system state and data, and the package stores of snap and Nix.
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc", "/boot", "/var",
    "/proc", "/sys", "/dev", "/run", "/snap", "/nix",
    // macOS (absent elsewhere, so skipped): the system volume and its Library.
    "/System", "/Library",
];

/// What inside [`SYSTEM_DIRS`] is accepted: the temporary directories kept across reboots
/// (`/var/tmp`) and macOS's per-user ones (`/var/folders`).
const SYSTEM_EXCEPTIONS: &[&str] = &["/var/tmp", "/var/folders"];

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
fn system_dirs() -> &'static (Vec<PathBuf>, Vec<PathBuf>) {
    static DIRS: std::sync::OnceLock<(Vec<PathBuf>, Vec<PathBuf>)> = std::sync::OnceLock::new();
    let canonical = |dirs: &[&str]| -> Vec<PathBuf> {
        dirs.iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect()
    };
    DIRS.get_or_init(|| (canonical(SYSTEM_DIRS), canonical(SYSTEM_EXCEPTIONS)))
}

/// Refuses `resolved` (a canonical directory, named by parameter `param`) in trusted mode
/// when it is inside a safe `PATH` directory or an ancestor of one, a system directory, or
/// the home's settings; the same in shell mode's `workspace` without roots, where the
/// sandbox grants writes beneath the working directory (`cwd: "/"` would grant them all).
pub fn check(config: &Config, resolved: &Path, param: &str) -> Result<(), String> {
    let who = match (config.mode, config.sandbox) {
        (Mode::Trusted, _) => "trusted mode",
        (Mode::Shell, SandboxMode::On | SandboxMode::Workspace)
            if config.allowed_cwds.is_empty() =>
        {
            "YIELDSHELL_SANDBOX=workspace without YIELDSHELL_ALLOWED_CWDS"
        }
        _ => return Ok(()),
    };
    if config.allowed_cwds.iter().any(|r| r == resolved) {
        return Ok(());
    }
    check_against(&safe_dirs(&config.safe_path), resolved, param, who)?;
    let (system, exceptions) = system_dirs();
    check_system(system, exceptions, resolved, param, who)?;
    check_home(home_dirs(), resolved, param, who)?;
    if config.mode == Mode::Shell {
        check_lookup(lookup_dirs(), resolved, param, who)?;
    }
    Ok(())
}

/// Where a shell-mode command's programs are looked up or run from: the server's `PATH`
/// (inherited by its commands), `~/bin` of each home, and the server's executable's
/// directory. Symlinks resolved where the path exists; one that does not exist yet is kept
/// as written (a call must not be the one to create it). Read once.
fn lookup_dirs() -> &'static [PathBuf] {
    static DIRS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        dirs.extend(home_dirs().iter().map(|h| h.join("bin")));
        if let Some(dir) = std::env::current_exe().ok().and_then(|e| {
            let e = std::fs::canonicalize(&e).unwrap_or(e);
            e.parent().map(Path::to_path_buf)
        }) {
            dirs.push(dir);
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in dirs.into_iter().filter(|d| d.is_absolute()) {
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            if dir.as_os_str() != "/" && !out.contains(&dir) {
                out.push(dir);
            }
        }
        out
    })
}

fn check_lookup(dirs: &[PathBuf], resolved: &Path, param: &str, who: &str) -> Result<(), String> {
    match meets(dirs, resolved) {
        None => Ok(()),
        Some((relation, dir)) => Err(format!(
            "{param} {} {relation} {}, a directory commands are looked up in or run from \
             (the server's PATH, ~/bin, or the server's own executable's directory): {who} \
             refuses a working directory there, since a call may write beneath its working \
             directory and could put a program where the next command or the next server \
             start runs it. Point the call at a project directory ({param}), or set \
             YIELDSHELL_DEFAULT_CWD to one; a directory listed exactly in \
             YIELDSHELL_ALLOWED_CWDS is accepted",
            resolved.display(),
            dir.display()
        )),
    }
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
        let uid =
            std::fs::metadata("/proc/self").map(|m| crate::base::sys::ext::MetadataExt::uid(&m));
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
/// writing beneath one of them could make an allowed program load a library. Project directories inside the home (`~/src/app`) are accepted.
fn check_home(homes: &[PathBuf], resolved: &Path, param: &str, who: &str) -> Result<(), String> {
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
             p11-kit's modules), so {who} refuses a working directory there. Point \
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

fn check_system(
    dirs: &[PathBuf],
    exceptions: &[PathBuf],
    resolved: &Path,
    param: &str,
    who: &str,
) -> Result<(), String> {
    if exceptions.iter().any(|e| resolved.starts_with(e)) {
        return Ok(());
    }
    match meets(dirs, resolved) {
        None => Ok(()),
        Some((relation, dir)) => Err(format!(
            "{param} {} {relation} {}, a system directory (programs, libraries, the dynamic \
             loader, configuration, system state): {who} refuses a working directory there, since a \
             call may write beneath its working directory and could replace what every allowed \
             program loads. Point the call at a project directory ({param}), or set \
             YIELDSHELL_DEFAULT_CWD to one; a directory listed exactly in \
             YIELDSHELL_ALLOWED_CWDS is accepted",
            resolved.display(),
            dir.display()
        )),
    }
}

fn check_against(dirs: &[PathBuf], resolved: &Path, param: &str, who: &str) -> Result<(), String> {
    match meets(dirs, resolved) {
        None => Ok(()),
        Some((relation, dir)) => Err(format!(
            "{param} {} {relation} {}, a directory of the safe PATH \
             (MCP_SHELL_SAFE_PATH): {who} refuses a working directory there, since a \
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
            let e = check_against(&dirs, Path::new(bad), "directory", "trusted mode").unwrap_err();
            assert!(
                e.contains("safe PATH") && e.contains("YIELDSHELL_ALLOWED_CWDS"),
                "{e}"
            );
            assert!(e.starts_with(&format!("directory {bad} is ")), "{e}");
        }
        for good in ["/home/u/proj", "/usr/share", "/usr/binary", "/tmp"] {
            assert!(
                check_against(&dirs, Path::new(good), "cwd", "trusted mode").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn system_directories_and_their_ancestors_are_refused() {
        let dirs: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
        let exceptions: Vec<PathBuf> = SYSTEM_EXCEPTIONS.iter().map(PathBuf::from).collect();
        for bad in [
            "/",
            "/usr",
            "/usr/local",
            "/etc",
            "/lib64",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/include",
            "/usr/local/include",
            "/usr/src/app",
            "/usr/local/etc",
            "/usr/games",
            "/usr/share/doc",
            "/var",
            "/var/www/site",
            "/var/backups",
            "/var/opt",
            "/var/local",
            "/nix/store",
        ] {
            let e = check_system(
                &dirs,
                &exceptions,
                Path::new(bad),
                "directory",
                "trusted mode",
            )
            .unwrap_err();
            assert!(e.contains("system directory"), "{e}");
        }
        for good in [
            "/home/u/proj",
            "/var/tmp",
            "/var/tmp/x",
            "/tmp",
            "/srv/app",
            "/opt/app",
            "/etcetera",
            "/usrx",
        ] {
            assert!(
                check_system(&dirs, &exceptions, Path::new(good), "cwd", "trusted mode").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn the_home_its_ancestors_and_its_settings_are_refused() {
        let homes = vec![PathBuf::from("/home/u")];
        for bad in ["/home/u", "/home", "/home/u/.ssh", "/home/u/.config/pkcs11"] {
            let e = check_home(&homes, Path::new(bad), "cwd", "trusted mode").unwrap_err();
            assert!(e.contains("home directory /home/u"), "{e}");
        }
        for good in [
            "/home/u/proj",
            "/home/u/src/.hidden-build",
            "/home/v",
            "/tmp",
        ] {
            assert!(
                check_home(&homes, Path::new(good), "cwd", "trusted mode").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn lookup_directories_and_their_ancestors_are_refused() {
        let dirs = vec![PathBuf::from("/home/u/bin"), PathBuf::from("/opt/tool/bin")];
        for bad in ["/home/u/bin", "/home/u/bin/sub", "/opt/tool", "/opt"] {
            let e = check_lookup(&dirs, Path::new(bad), "cwd", "workspace").unwrap_err();
            assert!(e.contains("looked up in or run from"), "{e}");
        }
        for good in ["/home/u/proj", "/opt/app", "/srv/site", "/home/u/binaries"] {
            assert!(
                check_lookup(&dirs, Path::new(good), "cwd", "workspace").is_ok(),
                "{good}"
            );
        }
    }

    #[test]
    fn symlinked_path_directories_are_resolved() {
        let dirs = safe_dirs("/bin:relative:/nonexistent-ys-dir");
        let canon = std::fs::canonicalize("/bin").unwrap();
        assert_eq!(dirs, vec![canon.clone()]);
        assert!(check_against(&dirs, &canon, "cwd", "trusted mode").is_err());
    }
}
