//! Trusted mode's output redirections checked against the protected paths: the server
//! opens a redirection's target itself, in its own mount namespace, where nothing is bound
//! read-only, so this refusal is the only protection such a write has.

use std::path::{Path, PathBuf};

use super::Sandbox;

impl Sandbox {
    /// Refuses a trusted call's output redirection (`> target`, `>> target`, relative to
    /// `cwd`) that would write or create a protected path. The server opens that file
    /// itself, outside the call's mount namespace, where the protected paths are not
    /// read-only: the refusal is the only protection it has.
    pub fn refuse_protected_redirect(&self, cwd: &Path, target: &str) -> Result<(), String> {
        let Some((names, _)) = &self.protected else {
            return Ok(());
        };
        let path = target
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .fold(cwd.to_path_buf(), |p, c| p.join(c));
        let found = names.find(cwd, &[], &[cwd]);
        let hit = found
            .protected
            .iter()
            .map(|e| e.path.as_path())
            .chain(found.missing.iter().map(PathBuf::as_path))
            .find(|p| path.starts_with(p));
        match hit {
            None => Ok(()),
            Some(p) => Err(format!(
                "Redirection target {target} is protected ({}: it decides what the person's \
                 programs run later, outside any sandbox): redirect to another file, or let \
                 the person change it",
                match p == path {
                    true => "YIELDSHELL_PROTECTED_PATHS".to_string(),
                    false => format!("beneath {}, YIELDSHELL_PROTECTED_PATHS", p.display()),
                }
            )),
        }
    }
}
