//! The redirection targets of trusted mode: the textual rules (relative, no `..`, not into
//! a git directory), the contained open beneath the working directory, and the git
//! directories a target must not reach.

use super::*;

/// The textual rules for a redirection target: relative, no `..`, not into `.git`.
pub(super) fn check_redirect_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err(
            "Redirection target is empty: give a file name relative to the working directory"
                .into(),
        );
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(format!(
            "Redirection target must be relative to the working directory, got the absolute path {path}"
        ));
    }
    for c in p.components() {
        match c {
            Component::ParentDir => {
                return Err(format!("Redirection target may not contain '..': {path}"));
            }
            Component::Normal(n) if n == ".git" => {
                // Writing into .git (config, hooks) would make a later allowed `git` run code.
                return Err(format!(
                    "Redirection target may not be inside a .git directory: {path}"
                ));
            }
            _ => (),
        }
    }
    Ok(())
}

pub(super) fn open_contained(
    cwd: &Path,
    path: &str,
    mode: OpenMode,
    how: Redirects,
) -> Result<Option<File>, String> {
    check_redirect_path(path)?;
    let writing = mode != OpenMode::Read;
    if writing {
        check_git_directories(cwd, path)?;
    }
    let check = |stat: &sys::TargetStat| -> Result<(), String> {
        if stat.kind == "symlink" {
            return Err(format!(
                "Redirection target may not go through a symlink: {path}"
            ));
        }
        if stat.kind != "regular file" {
            return Err(format!(
                "Redirection target must be a regular file: {path} is a {}",
                stat.kind
            ));
        }
        if writing && stat.nlink > 1 {
            return Err(format!(
                "Redirection target has more than one hard link: {path} has {} names, and \
                 writing it would change the file under every one of them; write to a new \
                 file instead",
                stat.nlink
            ));
        }
        Ok(())
    };
    let opened = match how {
        Redirects::Open => {
            sys::open_target_beneath(cwd, Path::new(path), mode, &check).map(|r| r.map(Some))
        }
        Redirects::Judge => {
            sys::judge_target_beneath(cwd, Path::new(path), mode == OpenMode::Read, &check)
                .map(|r| r.map(|()| None))
        }
    };
    match opened {
        Ok(Ok(file)) => Ok(file),
        Ok(Err(sys::NotOpened::Refused(verdict))) => Err(verdict),
        Ok(Err(sys::NotOpened::Replaced)) => Err(format!(
            "Cannot open redirection target {path}: it was replaced while it was being checked"
        )),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) if is_symlink_on_path(cwd, path) => {
                format!("Redirection target may not go through a symlink: {path}")
            }
            _ => format!(
                "Cannot open redirection target {path}: {}",
                crate::base::config::plain_io(&e)
            ),
        }),
    }
}

/// The files that make a directory a git directory (with `HEAD`).
const GIT_MARKERS: &[&str] = &[
    "HEAD",
    "config",
    "objects",
    "refs",
    "commondir",
    "packed-refs",
];

/// True when `dir` is a git directory: `HEAD` with `objects`, `refs`, `config` or `commondir`
/// (a bare repository, a `.git` directory under any name, a linked worktree's directory).
fn is_git_directory(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
        && ["objects", "refs", "config", "commondir"]
            .iter()
            .any(|m| std::fs::symlink_metadata(dir.join(m)).is_ok())
}

/// Refuses a write into any git directory on the way to the target (the working directory
/// and its ancestors included), and a write that would complete one.
pub(super) fn check_git_directories(cwd: &Path, path: &str) -> Result<(), String> {
    let target = cwd.join(path);
    let refuse = |dir: &Path| {
        Err(format!(
            "Redirection target may not be inside a git directory: {path} ({} holds HEAD and \
             the repository's files; its config and hooks would make a later git command run \
             code)",
            dir.display()
        ))
    };
    let mut dir = target.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == ".git") || is_git_directory(d) {
            return refuse(d);
        }
        dir = d.parent();
    }
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if let Some(parent) = target.parent() {
        if GIT_MARKERS[..3].contains(&name) || name == "commondir" {
            let others = GIT_MARKERS
                .iter()
                .filter(|m| **m != name)
                .any(|m| std::fs::symlink_metadata(parent.join(m)).is_ok());
            if others {
                return Err(format!(
                    "Redirection target may not be a git directory's file: {path} would sit \
                     next to other git files in {} and could make it a repository whose \
                     config a later git command runs",
                    parent.display()
                ));
            }
        }
    }
    if name == ".gitconfig" || path.contains(".config/git/") {
        return Err(format!(
            "Redirection target may not be a git configuration file: {path}"
        ));
    }
    Ok(())
}

fn is_symlink_on_path(cwd: &Path, path: &str) -> bool {
    let mut p = cwd.to_path_buf();
    for c in Path::new(path).components() {
        p.push(c);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod policy_tests {
    use super::*;

    #[test]
    fn redirect_path_rules() {
        let check = |p: &str, ok: bool| assert_eq!(check_redirect_path(p).is_ok(), ok, "{p}");
        check("out.txt", true);
        check("sub/out.txt", true);
        check("./out.txt", true);
        check("/etc/passwd", false);
        check("../x", false);
        check("a/../../x", false);
        check(".git/config", false);
        check("sub/.git/hooks/pre-commit", false);
        check("", false);
    }

    #[test]
    fn git_directories_are_protected() {
        let root = std::env::temp_dir().join(format!("yieldshell-gitdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["bare/objects", "bare/refs", "half", "plain/sub", "cfg"] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(root.join("bare/config"), "").expect("write");
        std::fs::write(root.join("half/HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(root.join("cfg/config"), "").expect("write");
        let check = |cwd: &str, path: &str, ok: bool| {
            let got = check_git_directories(&root.join(cwd), path);
            assert_eq!(got.is_ok(), ok, "{cwd} {path}: {got:?}");
        };
        check("", "bare/config", false);
        check("", "bare/hooks/pre-commit", false);
        check("", "bare/objects/x", false);
        check("bare", "description", false);
        check("bare/refs", "x", false);
        check("", "half/config", false);
        check("", "half/objects", false);
        check("", "cfg/HEAD", false);
        check("", "cfg/other", true);
        check("", "half/notes.txt", true);
        check("", "plain/sub/config", true);
        check("", "plain/HEAD", true);
        check("", ".gitconfig", false);
        check("", "home/.config/git/config", false);
        check("plain", "out.txt", true);
        let _ = std::fs::remove_dir_all(&root);
    }
}
