//! What inside a repository's git directory makes the person's git run programs, for the
//! protected paths (`protected`): `config`, `config.worktree`, `hooks/`, `info/`, `commondir`
//! in the git directory and in those of its submodules (`modules/`) and linked worktrees
//! (`worktrees/`), the `.git` files of those submodules and worktrees in their work trees,
//! and what the configuration names as programs in the tree (`core.hooksPath`,
//! `core.fsmonitor`). Git stages keep write access to the rest of a git directory, never
//! to these.

use std::path::{Path, PathBuf};

use crate::policy::sandbox::lookup::Lookups;

/// The names inside a git directory that decide what the person's git runs or where it
/// reads its configuration: bound read-only for every stage, git's too. A missing one is
/// watched (a git stage can still create it: docs/sandbox.md).
pub(super) const GIT_CONTROLS: [&str; 5] =
    ["config", "config.worktree", "hooks", "info", "commondir"];

/// At most this many paths inside git directories are bound for one call (each bind costs
/// a few microseconds in the child).
const MAX_CONTROLS: usize = 64;

/// What `Controls::of` finds inside git directories.
#[derive(Default)]
pub(super) struct Controls {
    /// Paths bound read-only for every stage.
    pub(super) paths: Vec<PathBuf>,
    /// Git directories of submodules kept in their work trees (bound as git directories).
    pub(super) gits: Vec<PathBuf>,
    /// Control names that do not exist (watched).
    pub(super) missing: Vec<PathBuf>,
}

impl Controls {
    fn full(&self) -> bool {
        self.paths.len() + self.gits.len() >= MAX_CONTROLS
    }

    /// A path to bind read-only, when it exists: a link's target (a link cannot be bound;
    /// what git reads is its target), else the path itself.
    fn add(&mut self, look: &mut Lookups, path: PathBuf) {
        match look.lstat(&path) {
            None => self.missing.push(path),
            Some(m) if m.file_type().is_symlink() => {
                if let Some(target) = look.canonical_any(&path) {
                    self.paths.push(target);
                }
            }
            Some(_) => self.paths.push(path),
        }
    }

    /// The control names of git directory `gitdir`, of its submodules' git directories
    /// (`modules/`, names may hold slashes) and of its linked worktrees' (`worktrees/*`),
    /// with the `.git` files of those submodules' and worktrees' work trees.
    pub(super) fn of(&mut self, look: &mut Lookups, gitdir: &Path, depth: usize) {
        if depth > 4 || self.full() {
            return;
        }
        for name in GIT_CONTROLS {
            self.add(look, gitdir.join(name));
        }
        self.modules(look, &gitdir.join("modules"), depth);
        for wt in look.dirs(&gitdir.join("worktrees")) {
            if self.full() {
                return;
            }
            for name in ["config.worktree", "commondir", "gitdir"] {
                self.add(look, wt.join(name));
            }
            // `gitdir` names the worktree's `.git` file.
            if let Some(file) = look
                .read(&wt.join("gitdir"))
                .and_then(|t| t.lines().next().map(|l| PathBuf::from(l.trim())))
            {
                self.work_tree_file(look, &file);
            }
        }
    }

    /// The submodule git directories beneath `dir` (`modules/<name>`).
    fn modules(&mut self, look: &mut Lookups, dir: &Path, depth: usize) {
        if depth > 4 {
            return;
        }
        for d in look.dirs(dir) {
            if self.full() {
                return;
            }
            if is_git_directory(look, &d) {
                // `core.worktree` names the submodule's work tree, whose `.git` file
                // points here.
                if let Some(wt) = look.read(&d.join("config")).and_then(|t| core_worktree(&t)) {
                    self.work_tree_file(look, &d.join(wt).join(".git"));
                }
                self.of(look, &d, depth + 1);
            } else {
                self.modules(look, &d, depth + 1);
            }
        }
    }

    /// The submodules `.gitmodules` in `top` names: their `.git` (a file, or a git
    /// directory kept in the work tree).
    pub(super) fn submodules_of(&mut self, look: &mut Lookups, top: &Path) {
        let Some(text) = look.read(&top.join(".gitmodules")) else {
            return;
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if key.trim() != "path" || self.full() {
                continue;
            }
            let dot = top.join(value.trim().trim_matches('"')).join(".git");
            match look.lstat(&dot) {
                Some(m) if m.is_dir() => {
                    if let Some(d) = look.canonical_dir(&dot) {
                        if !self.gits.contains(&d) {
                            self.of(look, &d, 1);
                            self.gits.push(d);
                        }
                    }
                }
                Some(_) => self.work_tree_file(look, &dot),
                // A submodule not checked out (cloned without --recursive, or deinit): the
                // index may hold its gitlink, so a `.git` made there is a repository the
                // person's `git status` enters: watched, its creation told.
                None => self.missing.push(dot),
            }
        }
    }

    /// What the configuration of the repository at `top` names as programs inside the
    /// tree: the `core.hooksPath` directory (watched when missing) and the paths in a
    /// `core.fsmonitor` (`tools/fsm`, `sh tools/fsm`, `$PWD/tools/fsm`: git runs it through
    /// the shell, so each word that is a path counts); relative ones are taken from `top`,
    /// where git runs them. The configuration files are read as git reads them
    /// (`trusted::git::files`), includes not followed.
    pub(super) fn programs_of(&mut self, look: &mut Lookups, top: &Path) {
        let gits = git_paths_at(look, top);
        let mut values = Vec::new();
        for g in &gits {
            if !look.is_dir(g) {
                continue;
            }
            for name in ["config", "config.worktree"] {
                values.extend(core_values(&look.read(&g.join(name)).unwrap_or_default()));
            }
        }
        let mut paths: Vec<String> = Vec::new();
        for (key, value) in values {
            match key.as_str() {
                "hookspath" => paths.push(value),
                "fsmonitor" => paths.extend(command_paths(&value)),
                _ => (),
            }
        }
        for path in paths {
            let path = top.join(path);
            let Some(dir) = path.parent().and_then(|d| look.canonical_dir(d)) else {
                // Its directory does not exist yet either: the whole path is watched, so
                // that a call making it (`mkdir -p a/b/hooks`) is told.
                self.missing.push(path);
                continue;
            };
            match path.file_name() {
                Some(name) => self.add(look, dir.join(name)),
                None => self.add(look, dir),
            }
        }
    }

    /// A work tree's `.git` file, in canonical form, when it exists as a file.
    fn work_tree_file(&mut self, look: &mut Lookups, file: &Path) {
        let Some(dir) = file.parent().and_then(|d| look.canonical_dir(d)) else {
            return;
        };
        let file = dir.join(".git");
        if look.lstat(&file).is_some_and(|m| m.is_file()) && !self.paths.contains(&file) {
            self.paths.push(file);
        }
    }
}

/// The value of `core.worktree` in a git configuration's text, if set.
fn core_worktree(text: &str) -> Option<String> {
    core_values(text)
        .into_iter()
        .rev()
        .find(|(k, _)| k == "worktree")
        .map(|(_, v)| v)
}

/// The entries of section `core` in a git configuration's text (names in lower case,
/// without `core.`), read as git reads it (`trusted::git::files::parse_config`: a key on its
/// section's line, comments, quotes anywhere in a value, escapes, continuation lines). A
/// text git refuses gives none: git refuses to run there.
fn core_values(text: &str) -> Vec<(String, String)> {
    crate::policy::trusted::git::files::parse_config(text)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(key, value)| {
            let name = key.strip_prefix("core.")?;
            (!name.contains('.')).then(|| (name.to_string(), value))
        })
        .collect()
}

/// The paths a shell command line names (`core.fsmonitor`, which git runs through the
/// shell): each word, quotes removed, after an assignment's `=`, holding a `/`, with a
/// leading `$PWD` or `${PWD}` (the repository's root, where git runs it) removed. A boolean
/// value names none.
fn command_paths(value: &str) -> Vec<String> {
    value
        .split(|c: char| c.is_whitespace() || ";|&()<>`".contains(c))
        .map(|w| w.replace(['"', '\'', '\\'], ""))
        .map(|w| match w.split_once('=') {
            Some((name, v)) if !name.is_empty() && !name.contains('/') => v.to_string(),
            _ => w,
        })
        .map(|w| {
            for pwd in ["${PWD}/", "$PWD/"] {
                if let Some(rest) = w.strip_prefix(pwd) {
                    return rest.to_string();
                }
            }
            w
        })
        .filter(|w| w.contains('/'))
        .collect()
}

/// The git paths of `.git` in `dir`: a directory, with its common directory; or a file
/// (a linked worktree's, a submodule's) with the git directory it names and that one's
/// common directory. Canonical paths; what cannot be read is left out.
pub(super) fn git_paths_at(look: &mut Lookups, dir: &Path) -> Vec<PathBuf> {
    if let Some(known) = look.git_paths(dir) {
        return known;
    }
    let out = git_paths_of(look, dir);
    look.keep_git_paths(dir, &out);
    out
}

/// `git_paths_at`, asked of the file system.
fn git_paths_of(look: &mut Lookups, dir: &Path) -> Vec<PathBuf> {
    let dot = dir.join(".git");
    let Some(m) = look.lstat(&dot) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let gitdir = if m.is_dir() {
        dot.clone()
    } else if m.is_file() {
        out.push(dot.clone());
        let Some(named) = look.read(&dot).and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("gitdir:"))
                .map(|p| dir.join(p.trim()))
        }) else {
            return out;
        };
        match look.canonical_dir(&named) {
            Some(p) => p,
            None => return out,
        }
    } else {
        // A link: what it resolves to is the git directory.
        match look.canonical_any(&dot) {
            Some(p) => p,
            None => return out,
        }
    };
    out.extend(common_dir(look, &gitdir));
    out.insert(0, gitdir);
    out
}

/// The common directory a git directory's `commondir` file names, when it has one.
pub(super) fn common_dir(look: &mut Lookups, gitdir: &Path) -> Option<PathBuf> {
    let text = look.read(&gitdir.join("commondir"))?;
    let line = text.lines().next()?.trim();
    (!line.is_empty())
        .then(|| look.canonical_dir(&gitdir.join(line)))
        .flatten()
}

/// True when `dir` holds `HEAD` with `objects` or `commondir`: a git directory by any name.
pub(super) fn is_git_directory(look: &mut Lookups, dir: &Path) -> bool {
    look.exists(&dir.join("HEAD"))
        && ["objects", "commondir"]
            .iter()
            .any(|m| look.exists(&dir.join(m)))
}

#[cfg(test)]
mod tests {
    use super::{command_paths, core_values};

    #[test]
    fn the_configuration_is_read_as_git_reads_it() {
        for text in [
            "[core] hooksPath = tools/hooks",
            "[core]\n\thooksPath = tools/hooks ; c",
            "[core]\n\thooksPath = tools/hooks # c",
            "[core]\n\thooksPath = \"tools/hooks\" ;c",
            "[core]\n\thooksPath = tools/ho\"\"oks",
            "[core]\n\thooksPath = tools/ho\\\noks",
            "[Core]\n\tHOOKSPATH = tools/hooks",
        ] {
            assert_eq!(
                core_values(text),
                [("hookspath".to_string(), "tools/hooks".to_string())],
                "{text:?}"
            );
        }
        assert!(core_values("[core \"x\"]\n\thooksPath = a").is_empty());
    }

    #[test]
    fn every_path_of_a_command_line_counts() {
        for (value, want) in [
            ("tools/fsm", vec!["tools/fsm"]),
            ("sh tools/fsm", vec!["tools/fsm"]),
            ("FOO=1 tools/fsm -v", vec!["tools/fsm"]),
            ("$PWD/tools/fsm", vec!["tools/fsm"]),
            ("\"tools/fsm\" -v", vec!["tools/fsm"]),
            (
                "node scripts/fsm.js;tools/x",
                vec!["scripts/fsm.js", "tools/x"],
            ),
            ("true", vec![]),
        ] {
            assert_eq!(command_paths(value), want, "{value:?}");
        }
    }
}
