//! Policy of shell mode: declared side effects, the command regexes, the process limit,
//! and how an `exec` call becomes a launch (shell or trusted pipeline, environment, cwd).

use std::path::PathBuf;

use crate::base::config::{Config, SIDE_EFFECTS};

/// What a safer next step looks like for each blocked category.
fn safer_step(category: &str) -> &'static str {
    match category {
        "RUNS_INLINE_CODE" => "write the code to a reviewable file in the workspace and run that file in a small, separate step",
        "KILLS_AGENT_PROCESS" => "stop only processes this server started, with the stop tool and their process_id",
        "MODIFIES_OS_SETTINGS" => "describe the system change to the user and let them apply it",
        "MODIFIES_OS_USER_SETTINGS" => "propose the change to the dotfile or user setting and let the user apply it",
        "MODIFIES_PROTECTED_FILES" => "work on a copy inside the workspace, or ask the user to change the protected file",
        "DELETES_FILES" => "move files to a scratch directory in the workspace instead of deleting them, or ask the user",
        "MAKES_NETWORK_REQUESTS" => "use files already present, or ask the user to fetch what is needed",
        "CHANGES_PACKAGES_OR_DEPENDENCIES" => "list the packages needed and let the user install them",
        "RUNS_PRIVILEGED_COMMANDS" => "run the unprivileged part only, and ask the user for the privileged step",
        "USES_DESTRUCTIVE_GIT_OPERATION" => "use a non-destructive git command (a new branch, git stash, git revert)",
        _ => "choose a command without this side effect, or ask the user to run it",
    }
}

/// Checks the declared side effects against the enum rules and the blocklist.
pub fn check_side_effects(declared: &[String], blocked: &[usize]) -> Result<(), String> {
    if declared.is_empty() {
        return Err("side_effects is empty: declare at least one category, or [\"NONE\"] for a command without side effects".into());
    }
    if declared.iter().any(|d| d == "NONE") && declared.len() > 1 {
        return Err(
            "side_effects: NONE must be the only category; drop NONE or drop the others".into(),
        );
    }
    let hits: Vec<&str> = blocked
        .iter()
        .map(|&i| SIDE_EFFECTS[i])
        .filter(|b| declared.iter().any(|d| d == b))
        .collect();
    if hits.is_empty() {
        return Ok(());
    }
    let mut msg = format!(
        "Blocked by policy: the declared side effect{} {} {} not allowed on this server, so execution was stopped before any process started.",
        if hits.len() > 1 { "s" } else { "" },
        hits.join(", "),
        if hits.len() > 1 { "are" } else { "is" },
    );
    for h in &hits {
        msg.push_str(&format!(" Safer next step for {h}: {}.", safer_step(h)));
    }
    Err(msg)
}

pub(crate) fn check_command_regex(config: &Config, text: &str, what: &str) -> Result<(), String> {
    if let Some(re) = &config.deny_regex {
        if re.is_match(text) {
            return Err(format!(
                "Command denied by policy: the {what} matches YIELDSHELL_DENY_COMMAND_REGEX"
            ));
        }
    }
    if let Some(re) = &config.allow_regex {
        if !re.is_match(text) {
            return Err(format!("Command not allowed by policy: the {what} does not match YIELDSHELL_ALLOW_COMMAND_REGEX"));
        }
    }
    Ok(())
}

/// Resolves the working directory a call asked for (parameter `param`, relative to the
/// default directory) and checks it against the allowed directories.
pub(crate) fn resolve_dir(
    config: &Config,
    requested: Option<&str>,
    param: &str,
) -> Result<PathBuf, String> {
    let requested = match requested {
        Some(c) if !c.is_empty() => config.default_cwd.join(c),
        Some(_) => {
            return Err(format!(
                "{param} is empty: give a directory path, or omit {param} for the default"
            ))
        }
        None => config.default_cwd.clone(),
    };
    let resolved = std::fs::canonicalize(&requested).map_err(|e| {
        format!(
            "{param} {} is not usable: {}",
            requested.display(),
            crate::base::config::plain_io(&e)
        )
    })?;
    if !resolved.is_dir() {
        return Err(format!(
            "{param} {} is not a directory",
            requested.display()
        ));
    }
    let allowed = &config.allowed_cwds;
    if !allowed.is_empty() && !allowed.iter().any(|root| resolved.starts_with(root)) {
        let roots: Vec<String> = allowed.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "{param} {} (resolved to {}) is outside the allowed directories: {}",
            requested.display(),
            resolved.display(),
            roots.join(", ")
        ));
    }
    crate::policy::sandbox::cwd::check(config, &resolved, param)?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_effect_rules() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_side_effects(&s(&["NONE"]), &[16]).is_ok());
        assert!(check_side_effects(&s(&[]), &[])
            .unwrap_err()
            .contains("empty"));
        assert!(check_side_effects(&s(&["NONE", "OTHER"]), &[])
            .unwrap_err()
            .contains("NONE"));
        let e =
            check_side_effects(&s(&["RUNS_INLINE_CODE", "DELETES_FILES"]), &[16, 3]).unwrap_err();
        assert!(
            e.contains("DELETES_FILES, RUNS_INLINE_CODE") || e.contains("RUNS_INLINE_CODE"),
            "{e}"
        );
        assert!(e.contains("before any process started"), "{e}");
        assert!(e.contains("Safer next step for RUNS_INLINE_CODE"), "{e}");
    }
}
