//! Trusted mode: allowlisted programs run as argv, never through a shell.
//!
//! A command reaches a process only after passing, for every pipeline stage and before any
//! stage starts: the structure check of the parser (`tokenize`), the argument hardening
//! (`harden`, applied even to allowlisted names), and the allowlist (`allow`). Programs are
//! then looked up in the safe `PATH` only. Redirection targets are opened by the server,
//! relative to the working directory, one path component at a time without following
//! symlinks (`sys::open_beneath`), so the file opened is the file checked.
//!
//! The child environment is `PATH` (the safe path) plus the variables named in
//! `MCP_SHELL_CHILD_ENV_ALLOWLIST`; nothing else of the server's environment reaches it.

pub mod allow;
pub mod execute;
pub mod harden;
pub mod tokenize;

use std::ffi::OsString;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::config::Config;
use crate::sys::{self, OpenMode};
use allow::Allowlist;
use tokenize::Pipeline;

/// One stage, ready to spawn.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The program: an absolute path found in the safe `PATH`, or the allowlisted path.
    pub program: String,
    /// `argv[0]` as written by the caller.
    pub arg0: String,
    /// Arguments after `argv[0]`.
    pub args: Vec<String>,
}

/// The trusted-mode policy, built once at startup.
#[derive(Debug)]
pub struct Policy {
    allow: Allowlist,
    path_dirs: Vec<PathBuf>,
    base_env: Vec<(OsString, OsString)>,
    env_allowlist: Vec<String>,
}

impl Policy {
    /// Builds the policy; a bad allowlist value is a startup error.
    pub fn new(config: &Config) -> Result<Policy, String> {
        let allow = Allowlist::new(
            config.allow_commands.as_deref(),
            config.allowed_commands.as_deref(),
            config.allow_patterns.as_deref(),
        )?;
        let path_dirs: Vec<PathBuf> = config
            .safe_path
            .split(':')
            .filter(|d| d.starts_with('/'))
            .map(PathBuf::from)
            .collect();
        let mut base_env = vec![(OsString::from("PATH"), OsString::from(&config.safe_path))];
        for name in &config.child_env_allowlist {
            if name == "PATH" {
                continue;
            }
            if let Some((k, v)) = config.env.iter().find(|(k, _)| k.to_str() == Some(name)) {
                base_env.push((k.clone(), v.clone()));
            }
        }
        Ok(Policy {
            allow,
            path_dirs,
            base_env,
            env_allowlist: config.child_env_allowlist.clone(),
        })
    }

    /// Checks every stage (hardening, then allowlist) and resolves each program. Nothing
    /// starts unless every stage passes.
    pub fn check(&self, pipeline: &Pipeline) -> Result<Vec<Stage>, String> {
        if self.allow.is_empty() {
            return Err(allow::NOTHING_ALLOWED.to_string());
        }
        for argv in &pipeline.stages {
            harden::check(argv)?;
            let program = argv.first().map(String::as_str).unwrap_or("");
            self.allow.check(program)?;
        }
        for path in pipeline
            .stdin_path
            .iter()
            .chain(pipeline.stdout.as_ref().map(|r| &r.path))
        {
            check_redirect_path(path)?;
        }
        pipeline
            .stages
            .iter()
            .map(|argv| self.resolve(argv))
            .collect()
    }

    fn resolve(&self, argv: &[String]) -> Result<Stage, String> {
        let name = argv.first().cloned().unwrap_or_default();
        let args = argv[1..].to_vec();
        if name.contains('/') {
            // Allowed only because exactly this path is on the allowlist.
            return Ok(Stage {
                program: name.clone(),
                arg0: name,
                args,
            });
        }
        for dir in &self.path_dirs {
            let candidate = dir.join(&name);
            if is_executable(&candidate) {
                return Ok(Stage {
                    program: candidate.display().to_string(),
                    arg0: name,
                    args,
                });
            }
        }
        Err(format!(
            "Command not found: {name} (searched the safe PATH {})",
            self.path_text()
        ))
    }

    fn path_text(&self) -> String {
        self.path_dirs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    }

    /// The child environment with a call's overlay; only allowlisted names may be set.
    pub fn env(&self, overlay: &[(String, String)]) -> Result<Vec<(OsString, OsString)>, String> {
        let mut env = self.base_env.clone();
        for (k, v) in overlay {
            if !self.env_allowlist.iter().any(|a| a == k) || k == "PATH" {
                return Err(format!(
                    "environment variable {k} cannot be set in trusted mode: only the names in \
                     MCP_SHELL_CHILD_ENV_ALLOWLIST may be set ({})",
                    if self.env_allowlist.is_empty() {
                        "empty".to_string()
                    } else {
                        self.env_allowlist.join(",")
                    }
                ));
            }
            env.retain(|(ek, _)| ek.to_str() != Some(k));
            env.push((k.into(), v.into()));
        }
        Ok(env)
    }

    /// Opens the redirection targets under `cwd`: (stdin source, stdout target).
    pub fn open_redirects(
        &self,
        cwd: &Path,
        pipeline: &Pipeline,
    ) -> Result<(Option<File>, Option<File>), String> {
        let input = match &pipeline.stdin_path {
            Some(path) => Some(open_contained(cwd, path, OpenMode::Read)?),
            None => None,
        };
        let output = match &pipeline.stdout {
            Some(r) => {
                let mode = if r.append {
                    OpenMode::Append
                } else {
                    OpenMode::Truncate
                };
                Some(open_contained(cwd, &r.path, mode)?)
            }
            None => None,
        };
        Ok((input, output))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The textual rules for a redirection target: relative, no `..`, not into `.git`.
fn check_redirect_path(path: &str) -> Result<(), String> {
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

fn open_contained(cwd: &Path, path: &str, mode: OpenMode) -> Result<File, String> {
    check_redirect_path(path)?;
    let file =
        sys::open_beneath(cwd, Path::new(path), mode).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) if is_symlink_on_path(cwd, path) => {
                format!("Redirection target may not go through a symlink: {path}")
            }
            _ => format!(
                "Cannot open redirection target {path}: {}",
                crate::config::plain_io(&e)
            ),
        })?;
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(file),
        Ok(_) => Err(format!("Redirection target must be a regular file: {path}")),
        Err(e) => Err(format!("Cannot open redirection target {path}: {e}")),
    }
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
}
