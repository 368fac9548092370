//! The path options that name roots: `YIELDSHELL_ALLOWED_CWDS`.

use std::path::{Path, PathBuf};

use super::Reader;

/// The roots, and with them the roots written through a symbolic link (as written,
/// resolved): the link itself cannot be protected, so each gets a startup warning.
pub(super) type Roots = (Vec<PathBuf>, Vec<(PathBuf, PathBuf)>);

/// The roots of `YIELDSHELL_ALLOWED_CWDS`, relative ones against the default directory, with
/// symbolic links resolved (a root that does not exist yet is kept as written). A value set
/// with no root in it (`:::`, blank) stops the server: read as "no root", it would lift the
/// restriction its operator meant to set. Under `--api 1.1` an empty value means no
/// restriction, as it did in 1.1.2.
pub(super) fn parse_allowed_cwds(r: &Reader<'_>, default_cwd: &Path) -> Result<Roots, String> {
    let Some((name, list)) = r.get("YIELDSHELL_ALLOWED_CWDS") else {
        return Ok((Vec::new(), Vec::new()));
    };
    if let Some(root) = list
        .split(crate::base::sys::PATH_LIST_SEPARATOR)
        .map(str::trim)
        .find(|root| root.starts_with('~') && !default_cwd.join(root).exists() && !r.lenient)
    {
        return Err(format!(
            "invalid {name}={list:?}: {root:?} does not exist{}",
            crate::base::config::tilde_note(root)
        ));
    }
    let mut linked = Vec::new();
    let roots: Vec<PathBuf> = list
        .split(crate::base::sys::PATH_LIST_SEPARATOR)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|root| {
            let path = default_cwd.join(root);
            match crate::base::sys::canonicalize(&path) {
                Ok(real) if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_symlink()) => {
                    linked.push((path, real.clone()));
                    real
                }
                Ok(real) => real,
                Err(_) => path,
            }
        })
        .collect();
    if roots.is_empty() && !(r.lenient && list.is_empty()) {
        return Err(format!(
            "invalid {name}={list:?}: no directory in it; expected colon-separated directories \
             that every working directory must lie under (for example /srv/app:/tmp/work), or \
             leave it unset for no restriction"
        ));
    }
    Ok((roots, linked))
}
