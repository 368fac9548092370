//! Where git directories and their files lie relative to work trees: the repositories
//! nested in a work tree, which a checkout can make submodules (`nested_repositories`),
//! and a git directory or included file kept as files git checks out in another
//! repository's work tree (`tracked_in_work_tree`). Used by `guard`.
//!
//! May import: `git/keys` and `base`.

use std::path::{Path, PathBuf};

use crate::policy::trusted::git::keys::REASON;

/// Most directories looked at for nested repositories in one work tree.
pub const MAX_WALK: usize = 100_000;

/// The directories beneath `work_tree` (not itself) that hold a `.git` (a directory or a
/// regular file, symbolic links followed), without descending into them (their own check
/// walks them) or into `.git`, and without following symbolic links to directories (git
/// does not enter a submodule through one). A directory's listing says whether it holds a
/// `.git`: one `getdents` per directory, no `stat` per entry but for that. Refused past
/// [`MAX_WALK`] directories, since a repository could then go unseen.
pub fn nested_repositories(work_tree: &Path, budget: &mut usize) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut pending = vec![(work_tree.to_path_buf(), false)];
    while let Some((dir, nested)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        let mut repository = false;
        for entry in entries.flatten() {
            if entry.file_name() == ".git" {
                // A `.git` git could take: a directory, or a regular file (`gitdir:`); git
                // does not read a FIFO or a device there when it looks at a directory.
                repository = nested
                    && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir() || m.is_file());
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                subdirs.push(entry.path());
            }
        }
        if repository {
            found.push(dir);
            continue;
        }
        for sub in subdirs {
            if *budget == 0 {
                return Err(format!(
                    "{REASON}? the work tree {} has more than {MAX_WALK} directories to look \
                     through for nested repositories (each could run git under a \
                     configuration nothing checked); run git in a smaller tree",
                    work_tree.display()
                ));
            }
            *budget -= 1;
            pending.push((sub, true));
        }
    }
    Ok(found)
}

/// The repository whose work tree holds `dir` (a git directory, or a configuration file it
/// includes) as content git may check out (a bare repository tracked as files, used with
/// `--git-dir`, can be rewritten by a rebase in the outer repository between its check and
/// git reading it).
/// Git never writes a path with a `.git` component, so a git directory named `.git`, or
/// beneath one (`modules/`, `worktrees/`), is out of reach; so is one in no work tree.
pub fn tracked_in_work_tree(dir: &Path) -> Option<PathBuf> {
    // A path that does not exist yet (an include a checkout could create) is judged by
    // its directory.
    let real = std::fs::canonicalize(dir).ok().or_else(|| {
        let parent = std::fs::canonicalize(dir.parent()?).ok()?;
        Some(parent.join(dir.file_name()?))
    })?;
    if real.components().any(|c| c.as_os_str() == ".git") {
        return None;
    }
    real.ancestors()
        .skip(1)
        .find(|a| std::fs::metadata(a.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file()))
        .map(Path::to_path_buf)
}
