//! Startup warnings: one stderr line each for a configuration that will
//! refuse every call it can foresee, so that the operator learns it before the model does.
//!
//! - a trusted server (or a shell server under `workspace` without roots) whose working
//!   directory is refused (a desktop client that starts it in `/`): every call without
//!   `directory` / `cwd` is refused;
//! - a `YIELDSHELL_ALLOWED_CWDS` root that is not an existing directory (outside
//!   `workspace`, where it stops the server);
//! - an allowlist entry that the argument hardening always refuses (`python3`, `bash`), or a
//!   pattern that admits only such names;
//! - the allowlist entries that have no argument rules (all in one line), and each name the
//!   operator accepts without rules (`YIELDSHELL_UNREVIEWED_COMMANDS`);
//! - each `YIELDSHELL_WRITABLE_PATHS` entry: a place every sandboxed call may write;
//! - under `workspace`, the audit log, the server's executable or a `PATH` directory in a
//!   place the calls may write (`/tmp`, a root, a writable place).

use std::path::{Path, PathBuf};

use crate::base::config::{Config, Mode, SandboxMode};
use crate::policy::trusted::reviewed::{self, Review};
use crate::policy::trusted::{harden, identity};

/// The warnings for `config`, one line each (empty when there is nothing to say).
pub(crate) fn warnings(config: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for path in &config.writable_paths {
        out.push(format!(
            "YIELDSHELL_WRITABLE_PATHS: every sandboxed call may write beneath {}, which is not \
             a working directory (what one call writes there, a later call or program reads)",
            path.display()
        ));
    }
    let workspace = config.mode == Mode::Shell
        && matches!(config.sandbox, SandboxMode::On | SandboxMode::Workspace);
    if workspace {
        out.extend(workspace_writes_what_runs_later(config));
    }
    // Under `workspace` a root that is not there stops the server instead (`sandbox`).
    if !workspace {
        for root in config.allowed_cwds.iter().filter(|r| !r.is_dir()) {
            out.push(format!(
                "YIELDSHELL_ALLOWED_CWDS root {} is not an existing directory: no call can \
                 work beneath it until it is made",
                root.display()
            ));
        }
    }
    if config.mode != Mode::Trusted && !(workspace && config.allowed_cwds.is_empty()) {
        return out;
    }
    if let Err(why) =
        crate::tools::policy::resolve_dir(config, None, "the default working directory")
    {
        out.push(format!(
            "{} refuses the working directory {}, so every call without a directory \
             (cwd) will be refused: set YIELDSHELL_DEFAULT_CWD to a project directory. ({})",
            if workspace {
                "YIELDSHELL_SANDBOX=workspace"
            } else {
                "trusted mode"
            },
            config.default_cwd.display(),
            one_line(&why)
        ));
    }
    if config.mode != Mode::Trusted {
        return out;
    }
    let names = [&config.allow_commands, &config.allowed_commands];
    let mut listed: Vec<String> = Vec::new();
    for name in names
        .iter()
        .filter_map(|v| v.as_deref())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if !listed.iter().any(|l| l == name) {
            listed.push(name.to_string());
        }
        if let Some(why) = harden::always_refused(name) {
            out.push(format!(
                "allowlist entry {name} is always refused by the argument hardening: {}; remove it",
                one_line(&why)
            ));
        }
    }
    out.extend(review_warnings(config, &listed));
    for (pattern, re) in allow_patterns(config) {
        let refused: Vec<&str> = identity::denied_samples()
            .filter(|n| re.is_match(n))
            .take(4)
            .collect();
        if let Some(first) = refused.first() {
            let why = harden::always_refused(first).unwrap_or_default();
            out.push(format!(
                "ALLOW_PATTERNS entry {pattern} admits {}, which the argument hardening always \
                 refuses: {}",
                refused.join(", "),
                one_line(&why)
            ));
        }
    }
    out
}

/// The allowlisted names refused for want of argument rules (one line for all of them), one
/// line for each name the operator accepts without rules, and one for each pattern that
/// admits programs without rules.
fn review_warnings(config: &Config, listed: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let refused = reviewed::always_unreviewed(listed, &config.unreviewed_commands);
    if !refused.is_empty() {
        out.push(format!(
            "allowlist entries without argument rules are always refused: {} (nothing checks \
             what their arguments or files make them run or load); remove them, or accept \
             them with YIELDSHELL_UNREVIEWED_COMMANDS",
            refused.join(", ")
        ));
    }
    let allow = crate::policy::trusted::allow::Allowlist::new(
        config.allow_commands.as_deref(),
        config.allowed_commands.as_deref(),
        config.allow_patterns.as_deref(),
    )
    .ok();
    for name in &config.unreviewed_commands {
        if allow.as_ref().is_some_and(|a| a.check(name).is_err()) {
            out.push(format!(
                "YIELDSHELL_UNREVIEWED_COMMANDS entry {name} is not on the allowlist: it has \
                 no effect until ALLOW_COMMANDS names it"
            ));
            continue;
        }
        match reviewed::review(name) {
            Review::Unreviewed => out.push(format!(
                "YIELDSHELL_UNREVIEWED_COMMANDS accepts {name} without argument rules: it may \
                 run any program its arguments or files name; only the kernel layer confines \
                 it"
            )),
            Review::Denied => out.push(format!(
                "YIELDSHELL_UNREVIEWED_COMMANDS entry {name} has no effect: the argument \
                 hardening refuses it whatever its arguments"
            )),
            Review::Rules | Review::Inert => out.push(format!(
                "YIELDSHELL_UNREVIEWED_COMMANDS entry {name} has no effect: it is reviewed \
                 (its rules apply)"
            )),
        }
    }
    out.extend(patterns_without_rules(config));
    out
}

/// Each `ALLOW_PATTERNS` entry with its whole-name regex (an entry that does not compile is
/// refused at startup elsewhere, and skipped here).
fn allow_patterns(config: &Config) -> impl Iterator<Item = (&str, regex_lite::Regex)> {
    config
        .allow_patterns
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| Some((p, regex_lite::Regex::new(&format!("^(?:{p})$")).ok()?)))
}

/// One line for each `ALLOW_PATTERNS` entry that admits programs of the safe `PATH` without
/// argument rules (at most 8 named): they are always refused, unless the operator accepts
/// them by name.
fn patterns_without_rules(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for dir in config.safe_path.split(':').filter(|d| d.starts_with('/')) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if let Some(name) = entry.file_name().to_str() {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
    }
    names.sort_unstable();
    let mut out = Vec::new();
    for (pattern, re) in allow_patterns(config) {
        let matched: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| re.is_match(n))
            .filter(|n| reviewed::review(n) == Review::Unreviewed)
            .filter(|n| !config.unreviewed_commands.iter().any(|u| u == n))
            .collect();
        if !matched.is_empty() {
            let shown: Vec<&str> = matched.iter().take(8).copied().collect();
            out.push(format!(
                "ALLOW_PATTERNS entry {pattern} admits programs without argument rules, which \
                 are always refused: {}{} (accept them by name with \
                 YIELDSHELL_UNREVIEWED_COMMANDS, or narrow the pattern)",
                shown.join(", "),
                if matched.len() > shown.len() {
                    format!(" and {} more", matched.len() - shown.len())
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Under `workspace`, what a call may write that a later program runs or trusts outside the
/// sandbox: the audit log, the server's own executable and the directories of its `PATH`,
/// when they lie beneath `/tmp`, a root or a writable place. Landlock grants whole trees, so
/// the sandbox cannot keep them read-only there: the operator is told, one line each.
fn workspace_writes_what_runs_later(config: &Config) -> Vec<String> {
    let areas: Vec<&Path> = std::iter::once(Path::new("/tmp"))
        .chain(config.allowed_cwds.iter().map(|p| p.as_path()))
        .chain(config.writable_paths.iter().map(|p| p.as_path()))
        .collect();
    // A path as it is now (what does not exist yet, by its nearest existing parent).
    let writable = |path: &Path| -> Option<PathBuf> {
        let real = path
            .ancestors()
            .find_map(|a| std::fs::canonicalize(a).ok())
            .unwrap_or_default();
        areas
            .iter()
            .find(|w| real.starts_with(w))
            .map(|w| w.to_path_buf())
    };
    let mut out = Vec::new();
    if let Some(log) = config.audit_log.as_deref() {
        if let Some(w) = writable(log) {
            out.push(format!(
                "YIELDSHELL_AUDIT_LOG {} lies beneath {}, which workspace calls may write: a \
                 command can delete or replace the log; put it where calls cannot write",
                log.display(),
                w.display()
            ));
        }
    }
    if let Some(exe) = std::env::current_exe().ok().filter(|e| e.is_absolute()) {
        if let Some(w) = writable(&exe) {
            out.push(format!(
                "the server's own executable {} lies beneath {}, which workspace calls may \
                 write: a command can replace it, and the next start runs what it wrote outside \
                 the sandbox; install the binary where calls cannot write",
                exe.display(),
                w.display()
            ));
        }
    }
    let path = config
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    for dir in std::env::split_paths(&path).filter(|d| d.is_absolute()) {
        if let Some(w) = writable(&dir) {
            out.push(format!(
                "PATH directory {} lies beneath {}, which workspace calls may write: a command \
                 can put a program there that later commands and the person's shells run \
                 outside the sandbox; keep such directories out of the server's PATH",
                dir.display(),
                w.display()
            ));
        }
    }
    out
}
