//! Configuration as plain data: the options in force, read once at startup by
//! `options` and shared by every layer, which reads it and never parses.

use std::ffi::OsString;
use std::path::PathBuf;

use regex_lite::Regex;

use crate::base::log::Level;

/// How commands are run (SPEC section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `<shell> -c <command>`, full environment.
    Shell,
    /// Allowlisted argv only, own parser, minimal environment.
    Trusted,
}

/// Which names the tools speak (SPEC section 14, `YIELDSHELL_API`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// This server's names (SPEC section 3).
    Current,
    /// mcp-yieldshell 1.1.2's names: tool `execute`, `execution_id`, OS pid as `process_id`,
    /// `evicted`, `executions`, `hint`; and its lenient environment values.
    V1_1,
}

/// The side-effect categories an `exec` call declares (SPEC section 6), in schema order.
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
pub const ALL_TOOLS: &[&str] = &[
    "shell_execute",
    "exec",
    "read",
    "write",
    "wait",
    "stop",
    "ps",
    "cleanup",
];

/// The whole configuration, read once at startup.
#[derive(Debug)]
pub struct Config {
    /// Shell or trusted mode.
    pub mode: Mode,
    /// The names the tools speak (`YIELDSHELL_API`).
    pub api: Api,
    /// Tools to list and serve (already narrowed by mode and `YIELDSHELL_TOOLS`).
    pub tools: Vec<&'static str>,
    /// Working directory when a call gives none; base of relative `cwd` values.
    pub default_cwd: PathBuf,
    /// Roots a `cwd` must lie under (resolved); empty means anywhere.
    pub allowed_cwds: Vec<PathBuf>,
    /// Shell for `exec` in shell mode.
    pub shell: String,
    /// Default and ceiling of `exec`'s `yield_ms`.
    pub default_yield_ms: u64,
    /// Whether the operator set `default_yield_ms` (then no client's timeout lowers it).
    pub default_yield_explicit: bool,
    /// Ceiling of `yield_ms` (never above 55000).
    pub max_yield_ms: u64,
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
}

/// Ceiling of every request-level wait, to stay under clients' 60 s request timeouts.
pub const TRANSPORT_CEILING_MS: u64 = 55_000;

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
