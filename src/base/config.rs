//! Configuration as plain data: the options in force, read once at startup by
//! `options` and shared by every layer, which reads it and never parses.

use std::ffi::OsString;
use std::path::PathBuf;

use regex_lite::Regex;

use crate::base::log::Level;
pub use crate::base::tool::{Api, Tool};

/// How commands are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `<shell> -c <command>`, full environment.
    Shell,
    /// Allowlisted argv only, own parser, minimal environment.
    Trusted,
}

/// The side-effect categories an `exec` call declares, in schema order.
pub const SIDE_EFFECTS: &[&str] = &[
    "CHANGES_NETWORK_CONFIGURATION",
    "CHANGES_PACKAGES_OR_DEPENDENCIES",
    "CONSUMES_SIGNIFICANT_RESOURCES",
    "DELETES_FILES",
    "EXPOSES_SECRETS",
    "KILLS_AGENT_PROCESS",
    "MAKES_NETWORK_REQUESTS",
    "MODIFIES_OS_SETTINGS",
    "MODIFIES_OS_USER_SETTINGS",
    "MODIFIES_OUTSIDE_WORKSPACE",
    "MODIFIES_PRODUCTION_SERVICES",
    "MODIFIES_PROTECTED_FILES",
    "MODIFIES_SECURITY_CONTROLS",
    "MODIFIES_WORKSPACE_FILES",
    "NONE",
    "OTHER",
    "RUNS_INLINE_CODE",
    "RUNS_PRIVILEGED_COMMANDS",
    "STOPS_OR_RESTARTS_SERVICES",
    "UNKNOWN",
    "USES_DESTRUCTIVE_GIT_OPERATION",
];

/// Blocked unless `MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS` says otherwise.
pub const DEFAULT_BLOCKED: &str =
    "KILLS_AGENT_PROCESS,MODIFIES_OS_SETTINGS,MODIFIES_OS_USER_SETTINGS,MODIFIES_PROTECTED_FILES,RUNS_INLINE_CODE";

/// Every tool the server has, in listing order.
pub const ALL_TOOLS: &[Tool] = &Tool::ALL;

/// The whole configuration, read once at startup.
#[derive(Debug)]
pub struct Config {
    /// Shell or trusted mode.
    pub mode: Mode,
    /// The names the tools speak (`YIELDSHELL_API`).
    pub api: Api,
    /// Tools to list and serve (already narrowed by mode and `YIELDSHELL_TOOLS`).
    pub tools: Vec<Tool>,
    /// Working directory when a call gives none; base of relative `cwd` values.
    pub default_cwd: PathBuf,
    /// Roots a `cwd` must lie under (resolved); empty means anywhere.
    pub allowed_cwds: Vec<PathBuf>,
    /// The roots given as a path through a symbolic link: as written, and resolved.
    pub linked_roots: Vec<(PathBuf, PathBuf)>,
    /// Further places a sandboxed call may write beneath (absolute, resolved where they
    /// exist), none of them a working directory.
    pub writable_paths: Vec<PathBuf>,
    /// Shell for `exec` in shell mode.
    pub shell: String,
    /// Default and ceiling of `exec`'s `yield_ms`.
    pub default_yield_ms: u64,
    /// Whether the operator set `default_yield_ms` (then no client's timeout lowers it).
    pub default_yield_explicit: bool,
    /// Ceiling of `yield_ms` (never above 55000).
    pub max_yield_ms: u64,
    /// `YIELDSHELL_APPROVALS=ask`: a call refused by a rule the person may waive is put to
    /// them through the client, when the client can ask.
    pub approvals: bool,
    /// How long a question waits for the person's answer (and a 2026-07-28 approval
    /// state lives).
    pub approval_timeout_ms: u64,
    /// Default `timeout_ms` of `exec` (0 = unlimited).
    pub default_timeout_ms: u64,
    /// Default and ceiling of `max_output_bytes`.
    pub max_output_bytes: usize,
    /// Ring size per stream.
    pub max_buffer_bytes: usize,
    /// Finished records older than this are removed before each spawn.
    pub retention_ms: u64,
    /// At most this many finished records are kept.
    pub max_retained: usize,
    /// At most this many live processes.
    pub max_processes: usize,
    /// Blocked side-effect categories (indexes into `SIDE_EFFECTS`).
    pub blocked: Vec<usize>,
    /// A command (or shell) matching this is denied.
    pub deny_regex: Option<Regex>,
    /// A command (or shell) must match this.
    pub allow_regex: Option<Regex>,
    /// Variables whose names match have their values redacted.
    pub redact_regex: Option<Regex>,
    /// Log level.
    pub log_level: Level,
    /// Audit log file; stderr when `None`.
    pub audit_log: Option<PathBuf>,
    /// Without an audit log file, whether audit lines go to stderr (the server: yes;
    /// `yieldshell call`: only when `--log` or `YIELDSHELL_LOG` is given).
    pub audit_to_stderr: bool,
    /// Whether `--log` or `YIELDSHELL_LOG` was given.
    pub log_explicit: bool,
    /// Grace between SIGTERM and SIGKILL when `timeout_ms` expires.
    pub timeout_grace_ms: u64,
    /// Raw `ALLOW_COMMANDS`.
    pub allow_commands: Option<String>,
    /// Raw `ALLOWED_COMMANDS`.
    pub allowed_commands: Option<String>,
    /// Raw `ALLOW_PATTERNS`.
    pub allow_patterns: Option<String>,
    /// `shell_execute` default timeout, seconds.
    pub shell_default_timeout_s: u64,
    /// `shell_execute` maximum timeout, seconds.
    pub shell_max_timeout_s: u64,
    /// Per-stream output cap in trusted mode.
    pub shell_output_limit: usize,
    /// `PATH` of children in trusted mode.
    pub safe_path: String,
    /// Variables passed to children in trusted mode.
    pub child_env_allowlist: Vec<String>,
    /// Allowlisted programs the operator accepts without argument rules
    /// (`YIELDSHELL_UNREVIEWED_COMMANDS`).
    pub unreviewed_commands: Vec<String>,
    /// The server's environment at startup.
    pub env: Vec<(OsString, OsString)>,
    /// First bytes of each stream kept for good beside the ring (`YIELDSHELL_HEAD_BYTES`).
    pub head_bytes: usize,
    /// Bytes of answers waiting for stdout past which no new request is read
    /// (`YIELDSHELL_MAX_QUEUED_BYTES`).
    pub max_queued_bytes: usize,
    /// Per-command limits (`YIELDSHELL_LIMITS`).
    pub limits: crate::base::limits::Limits,
    /// Add the non-interactive defaults to children (`YIELDSHELL_NONINTERACTIVE`).
    pub noninteractive: bool,
    /// The kernel sandbox (`YIELDSHELL_SANDBOX`).
    pub sandbox: crate::base::config::SandboxMode,
    /// Network access of started processes (`YIELDSHELL_NETWORK`).
    pub network: crate::base::config::Network,
    /// A cgroup per command where one can be made (`YIELDSHELL_CGROUP`: `auto` or `off`;
    /// `pids=` of `YIELDSHELL_LIMITS` needs one whatever this says).
    pub cgroups: bool,
    /// Whether results carry `structuredContent` and tools `outputSchema`
    /// (`YIELDSHELL_STRUCTURED`).
    pub structured: Structured,
    /// What makes an output line a highlight (`YIELDSHELL_HIGHLIGHT_REGEX`); `None`: off.
    pub highlight: Option<std::sync::Arc<crate::base::ring::highlights::Matcher>>,
    /// Names kept read-only for a sandboxed call's processes (`YIELDSHELL_PROTECTED_PATHS`):
    /// `git` (the git directories of the repository that holds the working directory and
    /// at each root) and names relative to the working directory and each root. Empty:
    /// `none`.
    pub protected_paths: Vec<String>,
}

/// `YIELDSHELL_PROTECTED_PATHS` unless set: the files that decide what a later program run
/// by the person executes (git's directory, editor and agent settings, shell rc files).
pub const DEFAULT_PROTECTED_PATHS: &str = "git,.vscode,.idea,.claude,.cursor,.codex,.gemini,\
     .mcp.json,.envrc,.bashrc,.bash_profile,.bash_login,.profile,.zshrc,.zprofile,.zshenv,\
     .gitconfig";

/// Parses a `YIELDSHELL_PROTECTED_PATHS` value of `name` (the variable or flag, for the
/// message): comma-separated names, `none` for no name at all, empty for the default list.
pub fn parse_protected_paths(name: &str, value: &str) -> Result<Vec<String>, String> {
    let value = value.trim();
    let value = if value.is_empty() {
        DEFAULT_PROTECTED_PATHS
    } else {
        value
    };
    if value == "none" {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let plain = !item.starts_with('/')
            && item
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !plain || item == "none" {
            return Err(format!(
                "invalid {name}={value:?}: {item:?} is not a name beneath the working \
                 directory; expected comma-separated relative names without '.' or '..' \
                 (such as .envrc or .vscode/tasks.json), git for the repository's git \
                 directories, or none alone"
            ));
        }
        if !names.iter().any(|n| n == item) {
            names.push(item.to_string());
        }
    }
    if names.is_empty() {
        return Err(format!(
            "invalid {name}={value:?}: no name in it; expected comma-separated names, or none"
        ));
    }
    Ok(names)
}

/// Ceiling of every request-level wait, to stay under clients' 60 s request timeouts.
pub const TRANSPORT_CEILING_MS: u64 = 55_000;

/// What to add to the refusal of a path value that starts with `~`: nothing expands it
/// here (no shell reads these values), so `~/project` names a directory called `~`.
pub fn tilde_note(value: &str) -> String {
    let value = value.trim();
    let Some(rest) = value.strip_prefix('~') else {
        return String::new();
    };
    let home = std::env::var("HOME").unwrap_or_else(|_| "/home/you".to_string());
    let example = if rest.is_empty() || rest.starts_with('/') {
        format!("{home}{rest}")
    } else {
        format!("{home}/{}", rest.trim_start_matches('/'))
    };
    format!(" (~ is not expanded: write the full path, such as {example})")
}

/// An I/O error's message without the "(os error N)" suffix.
pub fn plain_io(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `YIELDSHELL_SANDBOX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxMode {
    /// Trusted mode: on where the kernel can; shell mode: off.
    Auto,
    /// Trusted mode: on, or refuse to start; shell mode: the same as `Workspace`.
    On,
    /// No Landlock domain (network rules still apply when requested).
    Off,
    /// Shell mode: writes confined to the workspace.
    Workspace,
}

impl SandboxMode {
    /// Parses a value of `name` (the variable or flag, for the message).
    pub fn parse(name: &str, value: &str, mode: Mode) -> Result<SandboxMode, String> {
        match (value.trim(), mode) {
            ("auto" | "", _) => Ok(SandboxMode::Auto),
            ("on", _) => Ok(SandboxMode::On),
            ("off", _) => Ok(SandboxMode::Off),
            ("workspace", Mode::Shell) => Ok(SandboxMode::Workspace),
            ("workspace", Mode::Trusted) => Err(format!(
                "invalid {name}=\"workspace\": workspace is a shell-mode setting; in trusted \
                 mode expected auto, on or off"
            )),
            (other, _) => Err(format!(
                "invalid {name}={other:?}: expected auto, on, off or (shell mode) workspace"
            )),
        }
    }
}

/// `YIELDSHELL_STRUCTURED`: whether results carry `structuredContent` (and tools their
/// `outputSchema`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structured {
    /// Off for the clients that show the model `structuredContent` in place of the text
    /// (`base/clients`), on for the others.
    Auto,
    /// Always (when the protocol version has it).
    On,
    /// Never: every client shows the text.
    Off,
}

impl Structured {
    /// Parses a value of `name` (the variable or flag, for the message).
    pub fn parse(name: &str, value: &str) -> Result<Structured, String> {
        match value.trim() {
            "auto" | "" => Ok(Structured::Auto),
            "on" => Ok(Structured::On),
            "off" => Ok(Structured::Off),
            other => Err(format!(
                "invalid {name}={other:?}: expected auto (off for clients that show the model \
                 structuredContent instead of the text), on or off"
            )),
        }
    }
}

/// `YIELDSHELL_NETWORK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// No network rule.
    Allow,
    /// No TCP connect or bind for any process started.
    Deny,
}

impl Network {
    /// Parses a value of `name` (the variable or flag, for the message).
    pub fn parse(name: &str, value: &str) -> Result<Network, String> {
        match value.trim() {
            "allow" | "" => Ok(Network::Allow),
            "deny" => Ok(Network::Deny),
            other => Err(format!("invalid {name}={other:?}: expected allow or deny")),
        }
    }
}

/// `YIELDSHELL_APPROVALS` (named `name` in errors): `ask` is true, `off` (or nothing) false.
pub fn parse_approvals(name: &str, value: &str) -> Result<bool, String> {
    match value.trim() {
        "" | "off" => Ok(false),
        "ask" => Ok(true),
        other => Err(format!(
            "invalid {name}={other:?}: expected off (refusals are final) or ask (put a refusal \
             the person may approve to them through the client)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_are_off_or_ask() {
        assert_eq!(parse_approvals("X", ""), Ok(false));
        assert_eq!(parse_approvals("X", " off "), Ok(false));
        assert_eq!(parse_approvals("X", "ask"), Ok(true));
        let e = parse_approvals("--approvals", "yes").unwrap_err();
        assert!(
            e.contains("--approvals=\"yes\"") && e.contains("off") && e.contains("ask"),
            "{e}"
        );
    }
}
