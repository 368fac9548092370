//! Configuration: every option from its environment variable, overridden by its flag.
//!
//! Options are read once at startup into [`Config`]. Each option is one row of `OPTIONS`,
//! which also produces `--help`, so the documentation cannot drift from the parser. A
//! malformed value is a startup error naming the variable (or flag), the value and what
//! is accepted; `main` prints it as one line and exits with status 2.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use regex_lite::Regex;

use crate::base::config::{
    Api, Config, Mode, Tool, ALL_TOOLS, DEFAULT_BLOCKED, SIDE_EFFECTS, TRANSPORT_CEILING_MS,
};
use crate::base::log::Level;
use crate::base::ring::highlights::Matcher;

mod help;
mod lists;
mod paths;
use lists::{parse_blocked, parse_tools};

use paths::parse_allowed_cwds;

/// What `parse` decided.
#[derive(Debug)]
pub enum Parsed {
    /// Run the server.
    Run(Box<Config>),
    /// Print this text (help or version) to stdout and exit 0.
    Print(String),
}

struct Opt {
    flag: &'static str,
    env: &'static str,
    default: &'static str,
    help: &'static str,
}

const fn opt(
    flag: &'static str,
    env: &'static str,
    default: &'static str,
    help: &'static str,
) -> Opt {
    Opt {
        flag,
        env,
        default,
        help,
    }
}

const OPTIONS: &[Opt] = &[
    opt(
        "--api",
        "YIELDSHELL_API",
        "",
        "1.1: speak mcp-yieldshell 1.1.2's names (tool execute, execution_id, evicted, executions, hint) and accept the environment values it accepted; default: this server's names",
    ),
    opt(
        "--mode",
        "YIELDSHELL_MODE",
        "",
        "shell or trusted; default: trusted when an allowlist variable is set, else shell",
    ),
    opt(
        "--tools",
        "YIELDSHELL_TOOLS",
        "",
        "comma-separated tools to offer (default: all tools of the mode)",
    ),
    opt(
        "--default-cwd",
        "YIELDSHELL_DEFAULT_CWD",
        "",
        "working directory when a call gives none (default: the server's)",
    ),
    opt(
        "--allowed-cwds",
        "YIELDSHELL_ALLOWED_CWDS",
        "",
        "colon-separated roots that every cwd must lie under",
    ),
    opt(
        "--shell",
        "YIELDSHELL_SHELL",
        crate::base::sys::DEFAULT_SHELL,
        "shell that runs exec commands in shell mode",
    ),
    opt(
        "--default-yield-ms",
        "YIELDSHELL_DEFAULT_YIELD_MS",
        "30000",
        "how long exec waits before backgrounding",
    ),
    opt(
        "--max-yield-ms",
        "YIELDSHELL_MAX_YIELD_MS",
        "55000",
        "ceiling of yield_ms (never above 55000)",
    ),
    opt(
        "--default-timeout-ms",
        "YIELDSHELL_DEFAULT_TIMEOUT_MS",
        "3600000",
        "runtime limit of exec; 0 = unlimited",
    ),
    opt(
        "--max-output-bytes",
        "YIELDSHELL_MAX_OUTPUT_BYTES",
        "20000",
        "default and cap of max_output_bytes per response",
    ),
    opt(
        "--max-buffer-bytes",
        "YIELDSHELL_MAX_BUFFER_BYTES",
        "262144",
        "ring buffer size per stream",
    ),
    opt(
        "--process-retention-ms",
        "YIELDSHELL_PROCESS_RETENTION_MS",
        "3600000",
        "finished records older than this are removed",
    ),
    opt(
        "--max-retained-processes",
        "YIELDSHELL_MAX_RETAINED_PROCESSES",
        "100",
        "finished records kept at most",
    ),
    opt(
        "--max-processes",
        "YIELDSHELL_MAX_PROCESSES",
        "50",
        "live processes at most",
    ),
    opt(
        "--blocked-side-effects",
        "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS",
        DEFAULT_BLOCKED,
        "side-effect categories refused (',' alone clears)",
    ),
    opt(
        "--deny-command-regex",
        "YIELDSHELL_DENY_COMMAND_REGEX",
        "",
        "a command or shell matching this is denied",
    ),
    opt(
        "--allow-command-regex",
        "YIELDSHELL_ALLOW_COMMAND_REGEX",
        "",
        "a command or shell must match this",
    ),
    opt(
        "--redact-env-regex",
        "YIELDSHELL_REDACT_ENV_REGEX",
        "",
        "values of variables whose names match are redacted from output",
    ),
    opt(
        "--timeout-grace-ms",
        "YIELDSHELL_TIMEOUT_GRACE_MS",
        "2000",
        "grace between SIGTERM and SIGKILL when timeout_ms expires",
    ),
    opt(
        "--audit-log",
        "YIELDSHELL_AUDIT_LOG",
        "",
        "append audit lines to this file instead of stderr",
    ),
    opt(
        "--log",
        "YIELDSHELL_LOG",
        "warn",
        "log level: error, warn, info, debug",
    ),
    opt(
        "--approvals",
        "YIELDSHELL_APPROVALS",
        "off",
        "ask: a call refused by a blocked side effect or a trusted-mode argument rule is put to the person through the client (MCP elicitation), when the client can ask; off: refused",
    ),
    opt(
        "--approval-timeout-ms",
        "YIELDSHELL_APPROVAL_TIMEOUT_MS",
        "120000",
        "how long a question waits for the person's answer before the call is refused",
    ),
    opt(
        "--allow-commands",
        "ALLOW_COMMANDS",
        "",
        "trusted mode: comma-separated allowed command names",
    ),
    opt(
        "--allowed-commands",
        "ALLOWED_COMMANDS",
        "",
        "alias of --allow-commands (the two are joined)",
    ),
    opt(
        "--allow-patterns",
        "ALLOW_PATTERNS",
        "",
        "trusted mode: comma-separated regexes for whole command names",
    ),
    opt(
        "--shell-default-timeout",
        "MCP_SHELL_DEFAULT_TIMEOUT_SECONDS",
        "30",
        "shell_execute default timeout, seconds",
    ),
    opt(
        "--shell-max-timeout",
        "MCP_SHELL_MAX_TIMEOUT_SECONDS",
        "300",
        "shell_execute maximum timeout, seconds",
    ),
    opt(
        "--output-limit-bytes",
        "MCP_SHELL_OUTPUT_LIMIT_BYTES",
        "1048576",
        "trusted mode: output cap per stream",
    ),
    opt(
        "--safe-path",
        "MCP_SHELL_SAFE_PATH",
        crate::base::sys::DEFAULT_SAFE_PATH,
        "trusted mode: PATH of children",
    ),
    opt(
        "--child-env-allowlist",
        "MCP_SHELL_CHILD_ENV_ALLOWLIST",
        "",
        "trusted mode: variables passed to children",
    ),
    opt(
        "--unreviewed-commands",
        "YIELDSHELL_UNREVIEWED_COMMANDS",
        "",
        "trusted mode: allowlisted programs accepted without argument rules (only the kernel sandbox confines them)",
    ),
    opt(
        "--head-bytes",
        "YIELDSHELL_HEAD_BYTES",
        "16384",
        "first bytes of each stream kept beside the ring, so the first error is never evicted",
    ),
    opt(
        "--max-queued-bytes",
        "YIELDSHELL_MAX_QUEUED_BYTES",
        "64M",
        "answers waiting for the client to read stdout past which no new request is read (K/M/G suffixes)",
    ),
    opt(
        "--limits",
        "YIELDSHELL_LIMITS",
        "",
        "per-command limits: cpu=SECONDS,mem=BYTES,fsize=BYTES,nofile=N,pids=N (K/M/G suffixes)",
    ),
    opt(
        "--noninteractive",
        "YIELDSHELL_NONINTERACTIVE",
        "1",
        "1: children get GIT_TERMINAL_PROMPT=0, GIT_PAGER=cat, PAGER=cat, GCM_INTERACTIVE=never, DEBIAN_FRONTEND=noninteractive unless set; 0: not",
    ),
    opt(
        "--sandbox",
        "YIELDSHELL_SANDBOX",
        "auto",
        "kernel sandbox (Landlock): auto (trusted mode: on where the kernel has it; shell mode: off), on (refuse to start without it), off, workspace (shell mode: writes only under the allowed cwds, /tmp, terminals and the server's own package caches)",
    ),
    opt(
        "--writable-paths",
        "YIELDSHELL_WRITABLE_PATHS",
        "",
        "colon-separated absolute paths a sandboxed call may also write beneath, without making them working directories (one startup warning each)",
    ),
    opt(
        "--protected-paths",
        "YIELDSHELL_PROTECTED_PATHS",
        crate::base::config::DEFAULT_PROTECTED_PATHS,
        "comma-separated names kept read-only for sandboxed calls (git: the repository's git directories; others beneath the working directory and each root; a name created by a call is reported); none: no protection (one startup warning)",
    ),
    opt(
        "--network",
        "YIELDSHELL_NETWORK",
        "allow",
        "allow, or deny: no TCP connect or bind for any process started (Landlock ABI 4)",
    ),
    opt(
        "--cgroup",
        "YIELDSHELL_CGROUP",
        "auto",
        "auto: each command in a cgroup of its own where one can be made (Linux), so stop \
         reaches every process it started; off: not (pids= of --limits still makes one)",
    ),
    opt(
        "--highlight-regex",
        "YIELDSHELL_HIGHLIGHT_REGEX",
        "",
        "output lines that match are highlights: kept past eviction and named in answers \
         that leave them out; default: error, fatal, failed, failure, panic, exception, \
         traceback at a word start, any case; empty: off",
    ),
    opt(
        "--structured",
        "YIELDSHELL_STRUCTURED",
        "auto",
        "on: results carry structuredContent (and tools outputSchema); off: text only; auto: \
         off for clients that show the model structuredContent in place of the text \
         (claude-code, codex-mcp-client), on for the others",
    ),
];

/// Parses the command line and the environment.
pub fn parse(args: &[OsString], env: Vec<(OsString, OsString)>) -> Result<Parsed, String> {
    let env_map: HashMap<&str, &str> = env
        .iter()
        .filter_map(|(k, v)| Some((k.to_str()?, v.to_str().unwrap_or(""))))
        .collect();
    // Raw values: name shown in errors, and the text.
    let mut raw: HashMap<&'static str, (String, String)> = HashMap::new();
    for o in OPTIONS {
        if let Some(v) = env_map.get(o.env) {
            raw.insert(o.env, (o.env.to_string(), (*v).to_string()));
        }
    }
    let mut i = 0;
    while i < args.len() {
        let arg = args[i]
            .to_str()
            .ok_or_else(|| format!("argument {} is not valid UTF-8", i + 1))?;
        i += 1;
        match arg {
            "-h" | "--help" => return Ok(Parsed::Print(help::help())),
            "-V" | "--version" => {
                return Ok(Parsed::Print(format!(
                    "yieldshell {}\n",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            _ => (),
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg, None),
        };
        let Some(o) = OPTIONS.iter().find(|o| o.flag == name) else {
            return Err(format!(
                "unknown argument {arg:?}; run yieldshell --help for the options"
            ));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                let v = args
                    .get(i)
                    .and_then(|v| v.to_str())
                    .ok_or_else(|| format!("{name} needs a value"))?;
                i += 1;
                v.to_string()
            }
        };
        raw.insert(o.env, (o.flag.to_string(), value));
    }
    build(&raw, env).map(|c| Parsed::Run(Box::new(c)))
}

/// The subcommands of the built-in client (`cli`).
pub const SUBCOMMANDS: [&str; 3] = ["call", "tools", "check"];

/// Splits the arguments into the options (for [`parse`]) and a subcommand with its own
/// arguments, when one is named: `yieldshell [OPTIONS] SUBCOMMAND ARGS...`. Options are
/// recognised by their flags (a flag's value is skipped), so the first other word ends them.
pub fn split_subcommand(args: &[OsString]) -> (Vec<OsString>, Option<(String, Vec<OsString>)>) {
    let mut i = 0;
    while i < args.len() {
        let Some(arg) = args[i].to_str() else {
            break;
        };
        if let Some(sub) = SUBCOMMANDS.iter().find(|s| **s == arg) {
            return (
                args[..i].to_vec(),
                Some((sub.to_string(), args[i + 1..].to_vec())),
            );
        }
        let takes_value = !arg.contains('=') && OPTIONS.iter().any(|o| o.flag == arg);
        if !arg.starts_with('-') {
            break;
        }
        i += if takes_value { 2 } else { 1 };
    }
    (args.to_vec(), None)
}

struct Reader<'a> {
    raw: &'a HashMap<&'static str, (String, String)>,
    /// mcp-yieldshell 1.1.2's reading (`--api 1.1`): an integer that is empty, not a number
    /// or out of range means the default, as it did there.
    lenient: bool,
}

impl Reader<'_> {
    fn get(&self, env: &str) -> Option<(&str, &str)> {
        self.raw.get(env).map(|(n, v)| (n.as_str(), v.as_str()))
    }

    fn text(&self, env: &str) -> String {
        match self.get(env) {
            Some((_, v)) => v.to_string(),
            None => OPTIONS
                .iter()
                .find(|o| o.env == env)
                .map_or(String::new(), |o| o.default.to_string()),
        }
    }

    /// Refuses a security setting given with nothing in it (empty or blank): read as
    /// unset, it would quietly mean the looser default its operator did not ask for.
    /// `lenient_too`: refused under `--api 1.1` as well (a setting 1.1.2 did not have).
    fn not_blank(&self, env: &str, expected: &str, lenient_too: bool) -> Result<(), String> {
        match self.get(env) {
            Some((name, value)) if value.trim().is_empty() && (lenient_too || !self.lenient) => {
                Err(format!(
                    "invalid {name}={value:?}: empty; expected {expected}, or leave it unset for the default"
                ))
            }
            _ => Ok(()),
        }
    }

    fn nonempty(&self, env: &str) -> Option<String> {
        let t = self.text(env);
        (!t.trim().is_empty()).then_some(t)
    }

    fn int(&self, env: &str, min: u64, max: u64) -> Result<u64, String> {
        let (name, value) = match self.get(env) {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (env.to_string(), self.text(env)),
        };
        match value.trim().parse::<u64>() {
            Ok(n) if n >= min && n <= max => Ok(n),
            _ if self.lenient && self.get(env).is_some() => {
                let default = OPTIONS
                    .iter()
                    .find(|o| o.env == env)
                    .map_or("", |o| o.default);
                match default.parse::<u64>() {
                    Ok(n) => Ok(n.clamp(min, max)),
                    Err(_) => Err(format!(
                        "invalid {name}={value:?}: expected an integer from {min} to {max}"
                    )),
                }
            }
            _ => Err(format!(
                "invalid {name}={value:?}: expected an integer from {min} to {max}"
            )),
        }
    }

    /// A byte count with an optional K, M or G suffix (powers of 1024).
    fn size(&self, env: &str, min: u64, max: u64) -> Result<u64, String> {
        let (name, value) = match self.get(env) {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (env.to_string(), self.text(env)),
        };
        match crate::base::limits::parse_number(value.trim(), true) {
            Some(n) if n >= min && n <= max => Ok(n),
            _ => Err(format!(
                "invalid {name}={value:?}: expected a number of bytes from {min} (64K) to {max} (1024G), optionally ending in K, M or G, for example 64M"
            )),
        }
    }

    fn regex(&self, env: &str) -> Result<Option<Regex>, String> {
        let Some((name, value)) = self.get(env) else {
            return Ok(None);
        };
        if value.is_empty() {
            return Ok(None);
        }
        crate::base::pattern::compile(value, crate::base::pattern::COMMAND_LIMIT)
            .map(Some)
            .map_err(|e| {
                format!(
                    "invalid {name}={value:?}: {}; the syntax is that of the regex-lite crate",
                    e.describe()
                )
            })
    }
}

fn build(
    raw: &HashMap<&'static str, (String, String)>,
    env: Vec<(OsString, OsString)>,
) -> Result<Config, String> {
    let api = match raw.get("YIELDSHELL_API").map(|(n, v)| (n, v.trim())) {
        None | Some((_, "")) => Api::Current,
        Some((_, "1.1" | "1.1.2")) => Api::V1_1,
        Some((name, other)) => {
            return Err(format!(
                "invalid {name}={other:?}: expected 1.1 (mcp-yieldshell 1.1.2's names), or leave it unset for this server's names"
            ))
        }
    };
    let r = Reader {
        raw,
        lenient: api == Api::V1_1,
    };
    let log_level = {
        let t = r.text("YIELDSHELL_LOG");
        Level::parse(&t).ok_or_else(|| {
            format!("invalid YIELDSHELL_LOG={t:?}: expected error, warn, info or debug")
        })?
    };
    let allow_set = ["ALLOW_COMMANDS", "ALLOWED_COMMANDS", "ALLOW_PATTERNS"]
        .iter()
        .any(|v| raw.contains_key(v));
    for (env, expected, lenient_too) in [
        ("YIELDSHELL_SANDBOX", "auto, on, off or workspace", true),
        ("YIELDSHELL_NETWORK", "allow or deny", true),
        ("YIELDSHELL_AUDIT_LOG", "a file path to append to", false),
        ("YIELDSHELL_DENY_COMMAND_REGEX", "a regex", false),
        ("YIELDSHELL_ALLOW_COMMAND_REGEX", "a regex", false),
        ("YIELDSHELL_REDACT_ENV_REGEX", "a regex", false),
        ("YIELDSHELL_MODE", "shell or trusted", true),
        (
            "YIELDSHELL_LIMITS",
            "limits such as cpu=60,mem=1G,pids=100",
            true,
        ),
        ("YIELDSHELL_TOOLS", "tool names separated by ','", true),
        ("YIELDSHELL_CGROUP", "auto, on or off", true),
        ("YIELDSHELL_STRUCTURED", "auto, on or off", true),
        ("YIELDSHELL_API", "1.1", true),
    ] {
        r.not_blank(env, expected, lenient_too)?;
    }
    let mode = match r.text("YIELDSHELL_MODE").trim() {
        "" if allow_set => Mode::Trusted,
        "" | "shell" => Mode::Shell,
        "trusted" => Mode::Trusted,
        other => {
            let name = r
                .get("YIELDSHELL_MODE")
                .map_or("YIELDSHELL_MODE", |(n, _)| n);
            return Err(format!(
                "invalid {name}={other:?}: expected shell or trusted"
            ));
        }
    };
    let tools = parse_tools(&r, mode)?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let default_cwd = match r.nonempty("YIELDSHELL_DEFAULT_CWD") {
        Some(p) => {
            let path = cwd.join(p.trim());
            // 1.1.2 took any value and refused each call instead (`--api 1.1`).
            if !path.is_dir() && !r.lenient {
                return Err(format!(
                    "invalid YIELDSHELL_DEFAULT_CWD={p:?}: expected an existing directory{}",
                    crate::base::config::tilde_note(&p)
                ));
            }
            path
        }
        None => cwd,
    };
    let (allowed_cwds, linked_roots) = parse_allowed_cwds(&r, &default_cwd)?;
    let mut writable_paths = Vec::new();
    if let Some(list) = r.nonempty("YIELDSHELL_WRITABLE_PATHS") {
        let name = r
            .get("YIELDSHELL_WRITABLE_PATHS")
            .map_or("YIELDSHELL_WRITABLE_PATHS", |(n, _)| n);
        for item in list.split(':').map(str::trim).filter(|s| !s.is_empty()) {
            let path = PathBuf::from(item);
            if !path.is_absolute() {
                return Err(format!(
                    "invalid {name}={list:?}: {item:?} is not an absolute path; expected \
                     absolute paths separated by ':'{}",
                    crate::base::config::tilde_note(item)
                ));
            }
            // Landlock grants what a path resolves to; one that does not exist yet is kept
            // as written (nothing can be written beneath it until it exists).
            writable_paths.push(std::fs::canonicalize(&path).unwrap_or(path));
        }
        if writable_paths.is_empty() {
            return Err(format!(
                "invalid {name}={list:?}: no path in it; expected absolute paths separated by \
                 ':', or leave it unset"
            ));
        }
    }
    let blocked = parse_blocked(&r)?;
    let max_yield_ms = r
        .int("YIELDSHELL_MAX_YIELD_MS", 0, u64::MAX)?
        .min(TRANSPORT_CEILING_MS);
    let shell = r.text("YIELDSHELL_SHELL");
    if shell.trim().is_empty() {
        return Err("invalid YIELDSHELL_SHELL=\"\": expected a shell path such as /bin/sh".into());
    }
    let child_env_allowlist = r
        .text("MCP_SHELL_CHILD_ENV_ALLOWLIST")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let unreviewed_commands = r
        .text("YIELDSHELL_UNREVIEWED_COMMANDS")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let raw_opt = |name: &str| raw.get(name).map(|(_, v)| v.clone());
    let limits = {
        let (name, value) = r
            .get("YIELDSHELL_LIMITS")
            .unwrap_or(("YIELDSHELL_LIMITS", ""));
        crate::base::limits::Limits::parse(name, value)?
    };
    let noninteractive = {
        let (name, value) = r
            .get("YIELDSHELL_NONINTERACTIVE")
            .unwrap_or(("YIELDSHELL_NONINTERACTIVE", "1"));
        match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => {
                return Err(format!(
                    "invalid {name}={value:?}: expected 1 (add the non-interactive defaults) or 0 (do not)"
                ))
            }
        }
    };
    let sandbox = {
        let name = r
            .get("YIELDSHELL_SANDBOX")
            .map_or("YIELDSHELL_SANDBOX", |(n, _)| n);
        crate::base::config::SandboxMode::parse(name, &r.text("YIELDSHELL_SANDBOX"), mode)?
    };
    let network = {
        let name = r
            .get("YIELDSHELL_NETWORK")
            .map_or("YIELDSHELL_NETWORK", |(n, _)| n);
        crate::base::config::Network::parse(name, &r.text("YIELDSHELL_NETWORK"))?
    };
    let approvals = {
        let name = r
            .get("YIELDSHELL_APPROVALS")
            .map_or("YIELDSHELL_APPROVALS", |(n, _)| n);
        crate::base::config::parse_approvals(name, &r.text("YIELDSHELL_APPROVALS"))?
    };
    let cgroups = match r.text("YIELDSHELL_CGROUP").trim() {
        "" | "auto" => true,
        "off" => false,
        other => {
            let name = r
                .get("YIELDSHELL_CGROUP")
                .map_or("YIELDSHELL_CGROUP", |(n, _)| n);
            return Err(format!(
                "invalid {name}={other:?}: expected auto (a cgroup per command where one can \
                 be made) or off"
            ));
        }
    };
    let protected_paths = {
        r.not_blank(
            "YIELDSHELL_PROTECTED_PATHS",
            "comma-separated names, or none",
            true,
        )?;
        let name = r
            .get("YIELDSHELL_PROTECTED_PATHS")
            .map_or("YIELDSHELL_PROTECTED_PATHS", |(n, _)| n);
        crate::base::config::parse_protected_paths(name, &r.text("YIELDSHELL_PROTECTED_PATHS"))?
    };
    let structured = {
        let name = r
            .get("YIELDSHELL_STRUCTURED")
            .map_or("YIELDSHELL_STRUCTURED", |(n, _)| n);
        crate::base::config::Structured::parse(name, &r.text("YIELDSHELL_STRUCTURED"))?
    };
    Ok(Config {
        mode,
        api,
        tools,
        default_cwd,
        allowed_cwds,
        linked_roots,
        writable_paths,
        shell,
        default_yield_ms: r.int("YIELDSHELL_DEFAULT_YIELD_MS", 0, u64::MAX)?,
        default_yield_explicit: r.get("YIELDSHELL_DEFAULT_YIELD_MS").is_some(),
        max_yield_ms,
        default_timeout_ms: r.int("YIELDSHELL_DEFAULT_TIMEOUT_MS", 0, u64::MAX / 4)?,
        approvals,
        approval_timeout_ms: r.int("YIELDSHELL_APPROVAL_TIMEOUT_MS", 1, 86_400_000)?,
        max_output_bytes: r.int("YIELDSHELL_MAX_OUTPUT_BYTES", 1, 1 << 40)? as usize,
        max_buffer_bytes: r.int("YIELDSHELL_MAX_BUFFER_BYTES", 1, 1 << 40)? as usize,
        retention_ms: r.int("YIELDSHELL_PROCESS_RETENTION_MS", 0, u64::MAX / 4)?,
        max_retained: r.int("YIELDSHELL_MAX_RETAINED_PROCESSES", 0, 1 << 32)? as usize,
        max_processes: r.int("YIELDSHELL_MAX_PROCESSES", 1, 1 << 20)? as usize,
        blocked,
        deny_regex: r.regex("YIELDSHELL_DENY_COMMAND_REGEX")?,
        allow_regex: r.regex("YIELDSHELL_ALLOW_COMMAND_REGEX")?,
        redact_regex: r.regex("YIELDSHELL_REDACT_ENV_REGEX")?,
        log_level,
        audit_log: r.nonempty("YIELDSHELL_AUDIT_LOG").map(PathBuf::from),
        audit_to_stderr: true,
        log_explicit: r.get("YIELDSHELL_LOG").is_some(),
        timeout_grace_ms: r.int("YIELDSHELL_TIMEOUT_GRACE_MS", 0, 600_000)?,
        allow_commands: raw_opt("ALLOW_COMMANDS"),
        allowed_commands: raw_opt("ALLOWED_COMMANDS"),
        allow_patterns: raw_opt("ALLOW_PATTERNS"),
        shell_default_timeout_s: r.int("MCP_SHELL_DEFAULT_TIMEOUT_SECONDS", 1, 1 << 32)?,
        shell_max_timeout_s: r.int("MCP_SHELL_MAX_TIMEOUT_SECONDS", 1, 1 << 32)?,
        shell_output_limit: r.int("MCP_SHELL_OUTPUT_LIMIT_BYTES", 1, 1 << 40)? as usize,
        safe_path: r.text("MCP_SHELL_SAFE_PATH"),
        child_env_allowlist,
        unreviewed_commands,
        env,
        // 1.1.2 kept only the newest output: under 1.1 the head is kept only when asked.
        head_bytes: match (api, raw.contains_key("YIELDSHELL_HEAD_BYTES")) {
            (Api::V1_1, false) => 0,
            _ => r.int("YIELDSHELL_HEAD_BYTES", 0, 1 << 30)? as usize,
        },
        max_queued_bytes: r.size("YIELDSHELL_MAX_QUEUED_BYTES", 64 << 10, 1 << 40)? as usize,
        limits,
        noninteractive,
        sandbox,
        network,
        cgroups,
        protected_paths,
        structured,
        highlight: match r.get("YIELDSHELL_HIGHLIGHT_REGEX") {
            None => Some(Arc::new(Matcher::Keywords)),
            Some(_) => r
                .regex("YIELDSHELL_HIGHLIGHT_REGEX")?
                .map(|re| Arc::new(Matcher::Regex(re))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], env: &[(&str, &str)]) -> Result<Config, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let env = env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        match parse(&args, env)? {
            Parsed::Run(c) => Ok(*c),
            Parsed::Print(_) => Err("printed".into()),
        }
    }

    #[test]
    fn defaults() {
        let c = run(&[], &[]).unwrap();
        assert_eq!(c.mode, Mode::Shell);
        assert_eq!(c.default_yield_ms, 30_000);
        assert_eq!(c.max_output_bytes, 20_000);
        assert_eq!(c.blocked.len(), 5);
        assert_eq!(c.tools, Tool::ALL[1..].to_vec());
    }

    #[test]
    fn flags_override_env_and_errors_name_the_source() {
        let c = run(
            &["--max-processes", "7"],
            &[("YIELDSHELL_MAX_PROCESSES", "3")],
        )
        .unwrap();
        assert_eq!(c.max_processes, 7);
        let e = run(&[], &[("YIELDSHELL_MAX_PROCESSES", "lots")]).unwrap_err();
        assert!(e.contains("YIELDSHELL_MAX_PROCESSES=\"lots\""), "{e}");
        let e = run(&["--max-yield-ms=-1"], &[]).unwrap_err();
        assert!(e.contains("--max-yield-ms"), "{e}");
        let e = run(&[], &[("YIELDSHELL_DENY_COMMAND_REGEX", "(")]).unwrap_err();
        assert!(e.contains("YIELDSHELL_DENY_COMMAND_REGEX"), "{e}");
        assert!(run(&["--bogus"], &[]).unwrap_err().contains("--bogus"));
    }

    #[test]
    fn blocked_side_effects() {
        assert!(run(&[], &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ",")])
            .unwrap()
            .blocked
            .is_empty());
        let c = run(
            &[],
            &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", " DELETES_FILES ")],
        )
        .unwrap();
        assert_eq!(c.blocked, vec![3]);
        let e = run(
            &[],
            &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", "DELETES_FILE")],
        )
        .unwrap_err();
        assert!(e.contains("DELETES_FILE\""), "{e}");
    }

    #[test]
    fn settings_with_nothing_in_them_stop_the_server() {
        for bad in ["", " "] {
            let e = run(&[], &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", bad)]).unwrap_err();
            assert!(
                e.contains(&format!("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS={bad:?}"))
                    && e.contains("',' alone"),
                "{bad:?}: {e}"
            );
        }
        let e = run(&["--blocked-side-effects="], &[]).unwrap_err();
        assert!(e.contains("--blocked-side-effects=\"\""), "{e}");
        for bad in ["", " ", ":::", " : "] {
            let e = run(&[], &[("YIELDSHELL_ALLOWED_CWDS", bad)]).unwrap_err();
            assert!(
                e.contains(&format!("YIELDSHELL_ALLOWED_CWDS={bad:?}"))
                    && e.contains("no directory in it"),
                "{bad:?}: {e}"
            );
        }
        // 1.1.2's reading: an empty value is the default list, or no restriction.
        let c = run(
            &[],
            &[
                ("YIELDSHELL_API", "1.1"),
                ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", " "),
                ("YIELDSHELL_ALLOWED_CWDS", ""),
            ],
        )
        .unwrap();
        assert_eq!((c.blocked.len(), c.allowed_cwds.len()), (5, 0));
        let e = run(
            &[],
            &[("YIELDSHELL_API", "1.1"), ("YIELDSHELL_ALLOWED_CWDS", ":")],
        )
        .unwrap_err();
        assert!(e.contains("no directory in it"), "{e}");
        let c = run(&[], &[("YIELDSHELL_ALLOWED_CWDS", ":/tmp:")]).unwrap();
        assert_eq!(c.allowed_cwds.len(), 1);
        for bad in [",,", " ,, ", ", ,", ",\t,"] {
            let e = run(&[], &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", bad)]).unwrap_err();
            assert!(
                e.contains(&format!("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS={bad:?}"))
                    && e.contains("',' alone"),
                "{bad:?}: {e}"
            );
        }
        for clear in [",", " , ", ",\n"] {
            let c = run(&[], &[("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", clear)]).unwrap();
            assert!(c.blocked.is_empty(), "{clear:?}");
        }
        for variable in [
            "YIELDSHELL_SANDBOX",
            "YIELDSHELL_NETWORK",
            "YIELDSHELL_AUDIT_LOG",
            "YIELDSHELL_DENY_COMMAND_REGEX",
            "YIELDSHELL_ALLOW_COMMAND_REGEX",
            "YIELDSHELL_REDACT_ENV_REGEX",
        ] {
            for bad in ["", " "] {
                let e = run(&[], &[(variable, bad)]).unwrap_err();
                assert!(
                    e.contains(&format!("{variable}={bad:?}"))
                        && e.contains("expected")
                        && !e.contains("  "),
                    "{variable}={bad:?}: {e}"
                );
            }
        }
        // 1.1.2 had an audit log and command regexes, read blank as unset; it had no
        // sandbox or network setting.
        let c = run(
            &[],
            &[
                ("YIELDSHELL_API", "1.1"),
                ("YIELDSHELL_AUDIT_LOG", " "),
                ("YIELDSHELL_DENY_COMMAND_REGEX", ""),
                ("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", ",,"),
            ],
        )
        .unwrap();
        assert!(c.audit_log.is_none() && c.deny_regex.is_none() && c.blocked.is_empty());
        let e = run(
            &[],
            &[("YIELDSHELL_API", "1.1"), ("YIELDSHELL_NETWORK", "")],
        )
        .unwrap_err();
        assert!(e.contains("YIELDSHELL_NETWORK=\"\""), "{e}");
    }

    #[test]
    fn mode_and_tools() {
        let c = run(&[], &[("ALLOW_COMMANDS", "ls")]).unwrap();
        assert_eq!(c.mode, Mode::Trusted);
        assert_eq!(c.tools[0], Tool::ShellExecute);
        let c = run(&["--tools", "ps,exec"], &[]).unwrap();
        assert_eq!(c.tools, vec![Tool::Exec, Tool::Ps]);
        assert!(run(&["--tools", "shell_execute"], &[]).is_err());
        assert!(run(&["--mode", "sandbox"], &[]).is_err());
        assert_eq!(
            run(&[], &[("YIELDSHELL_MAX_YIELD_MS", "90000")])
                .unwrap()
                .max_yield_ms,
            55_000
        );
    }
    #[test]
    fn agent_options() {
        let c = run(&[], &[]).unwrap();
        assert_eq!((c.head_bytes, c.noninteractive), (16384, true));
        assert!(c.limits.is_empty());
        let c = run(
            &["--limits", "pids=200,mem=1G", "--head-bytes=0"],
            &[("YIELDSHELL_NONINTERACTIVE", "0")],
        )
        .unwrap();
        assert_eq!((c.head_bytes, c.noninteractive), (0, false));
        assert_eq!((c.limits.pids, c.limits.mem), (Some(200), Some(1 << 30)));
        let e = run(&[], &[("YIELDSHELL_LIMITS", "pids=many")]).unwrap_err();
        assert!(e.contains("YIELDSHELL_LIMITS=\"pids=many\""), "{e}");
        let e = run(&["--limits", "forks=3"], &[]).unwrap_err();
        assert!(e.contains("--limits") && e.contains("cpu=SECONDS"), "{e}");
        let e = run(&[], &[("YIELDSHELL_NONINTERACTIVE", "maybe")]).unwrap_err();
        assert!(e.contains("YIELDSHELL_NONINTERACTIVE=\"maybe\""), "{e}");
        let e = run(&[], &[("YIELDSHELL_HEAD_BYTES", "-5")]).unwrap_err();
        assert!(e.contains("YIELDSHELL_HEAD_BYTES"), "{e}");
    }

    #[test]
    fn max_queued_bytes() {
        assert_eq!(run(&[], &[]).unwrap().max_queued_bytes, 64 << 20);
        let c = run(&[], &[("YIELDSHELL_MAX_QUEUED_BYTES", "1G")]).unwrap();
        assert_eq!(c.max_queued_bytes, 1 << 30);
        let c = run(&["--max-queued-bytes=65536"], &[]).unwrap();
        assert_eq!(c.max_queued_bytes, 65536);
        for bad in ["lots", "1K", "-1", "2048G", ""] {
            let e = run(&[], &[("YIELDSHELL_MAX_QUEUED_BYTES", bad)]).unwrap_err();
            assert!(
                e.contains(&format!("YIELDSHELL_MAX_QUEUED_BYTES={bad:?}"))
                    && e.contains("for example 64M"),
                "{bad}: {e}"
            );
        }
    }
}
