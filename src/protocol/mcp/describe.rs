//! What the configuration in force says to the model beside the tools' parameters: the
//! default yield for the client that asks, in trusted mode the names and patterns allowed,
//! what the kernel sandbox keeps read-only, and `instructions`. The tools' descriptions
//! (`tools/`) put these sentences in; their defaults come from their parameter specs
//! (`params`).

use crate::base::config::{Config, Mode, Tool};

/// The allowed names and patterns, as the descriptions list them.
struct Allowed {
    names: Vec<String>,
    patterns: Vec<String>,
    /// Allowed names always refused for want of argument rules.
    unreviewed: Vec<String>,
}

fn split(value: Option<&str>) -> impl Iterator<Item = String> + '_ {
    value
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn allowed(config: &Config) -> Allowed {
    let mut names: Vec<String> = Vec::new();
    for n in
        split(config.allow_commands.as_deref()).chain(split(config.allowed_commands.as_deref()))
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let unreviewed =
        crate::policy::trusted::reviewed::always_unreviewed(&names, &config.unreviewed_commands)
            .into_iter()
            .map(str::to_string)
            .collect();
    Allowed {
        names,
        patterns: split(config.allow_patterns.as_deref()).collect(),
        unreviewed,
    }
}

/// "Allowed commands: ls, cat, git. Allowed patterns (whole name): python[0-9]*.", and
/// what is always refused, as the trusted tools' descriptions say it.
pub(super) fn allowed_sentence(config: &Config) -> String {
    allowed(config).sentence()
}

impl Allowed {
    fn sentence(&self) -> String {
        let mut s = if self.names.is_empty() && self.patterns.is_empty() {
            "Allowed commands: none (set ALLOW_COMMANDS); every call is refused.".to_string()
        } else if self.names.is_empty() {
            "Allowed commands: none by name.".to_string()
        } else {
            format!("Allowed commands: {}.", self.names.join(", "))
        };
        if !self.patterns.is_empty() {
            s.push_str(&format!(
                " Allowed patterns (whole name): {}.",
                self.patterns.join(", ")
            ));
        }
        if !self.unreviewed.is_empty() {
            s.push_str(&format!(
                " Always refused (allowlisted, but without argument rules): {}.",
                self.unreviewed.join(", ")
            ));
        }
        s.push_str(crate::base::sys::TRUSTED_NOTE);
        s
    }
}

/// The default `yield_ms` for `client`.
pub(crate) fn default_yield(config: &Config, client: Option<&str>) -> u64 {
    crate::base::clients::default_yield_ms(
        config.default_yield_ms,
        config.default_yield_explicit,
        client,
    )
    .min(config.max_yield_ms)
}

/// What the kernel sandbox keeps read-only (`YIELDSHELL_PROTECTED_PATHS`), as one sentence
/// after a description; empty when the sandbox does not apply or nothing is protected.
pub(super) fn protected_sentence(config: &Config) -> String {
    use crate::base::config::SandboxMode;
    let sandboxed = match config.mode {
        Mode::Trusted => config.sandbox != SandboxMode::Off,
        Mode::Shell => matches!(config.sandbox, SandboxMode::On | SandboxMode::Workspace),
    };
    if !sandboxed || config.protected_paths.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = config
        .protected_paths
        .iter()
        .map(|n| match n.as_str() {
            "git" if config.mode == Mode::Trusted => "the git directory (only git writes it)",
            "git" => "the git directory",
            other => other,
        })
        .collect();
    format!(
        " Read-only where the kernel allows (YIELDSHELL_PROTECTED_PATHS): {}.",
        names.join(", ")
    )
}

/// `instructions` (initialize, server/discover) for `config`; `yield_ms` is the default
/// yield for this client.
pub(crate) fn instructions_for(config: &Config, yield_ms: u64) -> String {
    let general = super::instructions(yield_ms);
    if config.mode == Mode::Shell {
        return general;
    }
    let allowed = allowed(config);
    let mut what = allowed.names.join(", ");
    if !allowed.patterns.is_empty() {
        if !what.is_empty() {
            what.push_str("; ");
        }
        what.push_str(&format!("names matching {}", allowed.patterns.join(", ")));
    }
    if what.is_empty() {
        what = "nothing (ALLOW_COMMANDS is empty)".into();
    }
    let trusted = format!(
        "Trusted mode: only these programs run, without a shell: {what} (no shells or \
         interpreters; pipes and < > >> redirections inside the working directory are parsed, \
         ; && || $( ) are refused)."
    );
    if config.tools.contains(&Tool::Exec) {
        format!("{trusted} {general}")
    } else {
        trusted
    }
}
