//! Policy of shell mode: declared side effects, the command regexes, the process limit,
//! and how an `exec` call becomes a launch (shell or trusted pipeline, environment, cwd).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::config::{Config, SIDE_EFFECTS};
use crate::engine::{Engine, ExecArgs};
use crate::spawn::{Launch, StdinSource};
use crate::tree::MARKER_VAR;
use crate::trusted::{tokenize, Stage};

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
            crate::config::plain_io(&e)
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
    crate::sandbox::cwd::check(config, &resolved, param)?;
    Ok(resolved)
}

impl Engine {
    pub(crate) fn check_policy(&self, args: &ExecArgs) -> Result<(), String> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err("the server is shutting down".into());
        }
        check_side_effects(&args.side_effects, &self.config.blocked)?;
        check_command_regex(&self.config, &args.command, "command")?;
        if let Some(shell) = &args.shell {
            if shell.trim().is_empty() {
                return Err(
                    "shell is empty: give a shell path such as /bin/bash, or omit it".into(),
                );
            }
            check_command_regex(&self.config, shell, "shell")?;
        }
        Ok(())
    }

    /// Builds the launch of an `exec` call: `<shell> -c <command>` in shell mode, the parsed
    /// and checked pipeline in trusted mode.
    pub(crate) fn exec_launch(&self, args: &ExecArgs, cwd: PathBuf) -> Result<Launch, String> {
        let wants_stdin = args.stdin.is_some() || !args.close_stdin;
        let stdin = if wants_stdin {
            StdinSource::Pipe
        } else {
            StdinSource::Null
        };
        let mut launch = Launch {
            stages: Vec::new(),
            env: Vec::new(),
            cwd,
            stdin,
            stdout_file: None,
            display: args.command.clone(),
            name: args.name.clone(),
            ring_bytes: self.config.max_buffer_bytes,
            output_cap: None,
            timeout_ms: args.timeout_ms.unwrap_or(self.config.default_timeout_ms),
            overlay: args.env.clone(),
            initial_stdin: args
                .stdin
                .clone()
                .map(|s| (s.into_bytes(), args.close_stdin)),
            terminal: None,
            head_bytes: None,
            git_ticket: None,
        };
        if let Some(size) = crate::agents::terminal_of(&args.agent, self.trusted.is_some())? {
            // A terminal is both input and output: it is never closed by `exec`.
            launch.terminal = Some(size);
            launch.stdin = StdinSource::Null;
            if let Some((_, close)) = launch.initial_stdin.as_mut() {
                *close = false;
            }
        }
        match &self.trusted {
            None => {
                let shell = args
                    .shell
                    .clone()
                    .unwrap_or_else(|| self.config.shell.clone());
                launch.stages.push(Stage {
                    program: shell.clone(),
                    arg0: shell,
                    args: vec!["-c".into(), args.command.clone()],
                });
                let mut env: Vec<(OsString, OsString)> = self
                    .config
                    .env
                    .iter()
                    .filter(|(k, _)| k != MARKER_VAR)
                    .cloned()
                    .collect();
                for (k, v) in &args.env {
                    let key = OsString::from(k);
                    env.retain(|(ek, _)| *ek != key);
                    env.push((key, OsString::from(v)));
                }
                launch.env = env;
            }
            Some(policy) => {
                if args.shell.is_some() {
                    return Err(
                        "shell cannot be chosen in trusted mode: commands run without a shell"
                            .into(),
                    );
                }
                let pipeline = tokenize::parse(&args.command)?;
                launch.stages = policy.check(&pipeline)?;
                launch.env = policy.env(&args.env)?;
                launch.git_ticket = Some(policy.check_git_use(
                    &launch.cwd,
                    &launch.stages,
                    pipeline.stdout.as_ref().map(|r| r.path.as_str()),
                )?);
                let (input, output) = policy.open_redirects(&launch.cwd, &pipeline)?;
                if let Some(f) = input {
                    if args.stdin.is_some() {
                        return Err("stdin and an input redirection (<) cannot be combined".into());
                    }
                    launch.stdin = StdinSource::File(f);
                }
                launch.stdout_file = output;
                launch.output_cap = Some(self.config.shell_output_limit as u64);
                launch.ring_bytes = launch.ring_bytes.max(self.config.shell_output_limit + 1);
            }
        }
        Ok(launch)
    }
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
