//! Policy of shell mode: the declared side effects, the command regexes, and the working
//! directory a call names (`resolve_dir`). How an `exec` becomes a launch is in
//! `tools/launch`; the process limit is counted in `tools/engine`.

use std::path::PathBuf;

use crate::base::config::{Config, SIDE_EFFECTS};
use crate::policy::approval::Rule;

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

/// Why a call cannot start: a final refusal, or one by rules a person may approve (the
/// message, and every such rule that refuses it: the person is shown them all).
pub(crate) enum Refusal {
    Final(String),
    Approvable(String, Vec<Rule>),
}

impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal::Final(message)
    }
}

/// Checks the form of the declared side effects: at least one, and `NONE` alone. A
/// malformed declaration is never put to a person.
pub fn check_declared(declared: &[String]) -> Result<(), String> {
    if declared.is_empty() {
        return Err("side_effects is empty: declare at least one category, or [\"NONE\"] for a command without side effects".into());
    }
    if declared.iter().any(|d| d == "NONE") && declared.len() > 1 {
        return Err(
            "side_effects: NONE must be the only category; drop NONE or drop the others".into(),
        );
    }
    Ok(())
}

/// The refusal of declared side effects the operator blocked, with its rule (a person may
/// approve it), or `None` when none is blocked.
pub fn blocked_side_effects(declared: &[String], blocked: &[usize]) -> Option<(String, Rule)> {
    let hits: Vec<&str> = blocked
        .iter()
        .map(|&i| SIDE_EFFECTS[i])
        .filter(|b| declared.iter().any(|d| d == b))
        .collect();
    if hits.is_empty() {
        return None;
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
    let rule = Rule::SideEffects(hits.iter().map(|h| h.to_string()).collect());
    Some((msg, rule))
}

/// The longest shell-mode command: the command goes to the shell as one argument
/// (`sh -c <command>`), and Linux refuses an argument of 128 KiB or more (`MAX_ARG_STRLEN`,
/// its terminating NUL included).
pub const MAX_SHELL_COMMAND: usize = (128 << 10) - 1;

/// Refuses a shell-mode command that could not run, before any regex looks at it (the
/// time a regex takes grows with the command's length).
pub(crate) fn check_command_length(command: &str) -> Result<(), String> {
    if command.len() <= MAX_SHELL_COMMAND {
        return Ok(());
    }
    Err(format!(
        "the command is {} bytes, over the 128 KiB a single command line can hold: put the \
         script in a file and run it, or pass data on stdin",
        command.len()
    ))
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
    let requested_text = requested.unwrap_or_default();
    let requested = match requested {
        Some(c) if !c.is_empty() => config.default_cwd.join(c),
        Some(_) => {
            return Err(format!(
                "{param} is empty: give a directory path, or omit {param} for the default"
            ))
        }
        None => config.default_cwd.clone(),
    };
    let resolved = crate::base::sys::canonicalize(&requested).map_err(|e| {
        format!(
            "{param} {} is not usable: {}{}",
            requested.display(),
            crate::base::config::plain_io(&e),
            crate::base::config::tilde_note(requested_text)
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
    fn a_command_one_argument_cannot_hold_is_refused() {
        assert!(check_command_length(&"a".repeat(MAX_SHELL_COMMAND)).is_ok());
        let e = check_command_length(&"a".repeat(128 << 10)).unwrap_err();
        assert!(e.contains("131072 bytes") && e.contains("128 KiB"), "{e}");
        assert!(e.contains("in a file") && e.contains("stdin"), "{e}");
    }

    #[test]
    fn side_effect_rules() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_declared(&s(&["NONE"])).is_ok());
        assert!(blocked_side_effects(&s(&["NONE"]), &[16]).is_none());
        assert!(check_declared(&s(&[])).unwrap_err().contains("empty"));
        assert!(check_declared(&s(&["NONE", "OTHER"]))
            .unwrap_err()
            .contains("NONE"));
        let (e, rule) =
            blocked_side_effects(&s(&["RUNS_INLINE_CODE", "DELETES_FILES"]), &[16, 3]).unwrap();
        assert!(
            e.contains("DELETES_FILES, RUNS_INLINE_CODE") || e.contains("RUNS_INLINE_CODE"),
            "{e}"
        );
        assert!(e.contains("before any process started"), "{e}");
        assert!(e.contains("Safer next step for RUNS_INLINE_CODE"), "{e}");
        assert!(
            matches!(rule, Rule::SideEffects(hits) if hits.contains(&"RUNS_INLINE_CODE".to_string()))
        );
    }
}
