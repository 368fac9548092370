//! What the tool list and `instructions` say under this configuration:
//! the defaults in force (environment, client-aware yield), and in trusted mode the names
//! and patterns allowed, the timeouts and the output cap, and no parameter trusted mode
//! refuses. The registry (`tools`) holds the text for the built-in defaults; this module
//! puts the configured values in.

use serde_json::{Map, Value};

use crate::base::config::{Config, Mode, Tool};

/// The text in the registry that names the default yield (replaced by the one in force).
const YIELD_DEFAULT: &str = "(default 30000)";

/// `exec`'s parameters that trusted mode refuses (no shell, no terminal).
const SHELL_ONLY: &[&str] = &["shell", "tty", "rows", "cols", "raw"];

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

impl Allowed {
    /// "Allowed commands: ls, cat, git. Allowed patterns (whole name): python[0-9]*."
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

/// `ms` as the descriptions say it.
fn ms(ms: u64) -> String {
    ms.to_string()
}

/// The tool list of `config` for a client named `client` (when known).
pub(crate) fn tools_list_for(
    config: &Config,
    client: Option<&str>,
    version: super::ProtocolVersion,
) -> Value {
    let structured = super::structured_for(config, client);
    let mut list = super::tools_list(&config.tools, version, structured);
    let yield_ms = default_yield(config, client);
    if let Some(tools) = list.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools.iter_mut() {
            patch(tool, config, yield_ms);
        }
    }
    list
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

fn set_description(props: &mut Map<String, Value>, name: &str, text: String) {
    if let Some(Value::Object(p)) = props.get_mut(name) {
        p.insert("description".into(), Value::from(text));
    }
}

fn patch(tool: &mut Value, config: &Config, yield_ms: u64) {
    let Some(name) = tool["name"].as_str().and_then(Tool::from_name) else {
        return;
    };
    let Some(Value::Object(props)) = tool
        .get_mut("inputSchema")
        .and_then(|s| s.get_mut("properties"))
    else {
        return;
    };
    match name {
        Tool::Exec => {
            set_description(
                props,
                "yield_ms",
                format!(
                    "Wait before backgrounding (default {}, at most {}).",
                    ms(yield_ms),
                    ms(config.max_yield_ms)
                ),
            );
            set_description(
                props,
                "timeout_ms",
                format!(
                    "Runtime limit, 0 = none (default {}).",
                    ms(config.default_timeout_ms)
                ),
            );
            set_description(
                props,
                "max_output_bytes",
                format!(
                    "Output budget of the answer (default {}).",
                    config.max_output_bytes
                ),
            );
            let description = if config.mode == Mode::Trusted {
                for p in SHELL_ONLY {
                    props.remove(*p);
                }
                if config.child_env_allowlist.is_empty() {
                    props.remove("env");
                } else {
                    set_description(
                        props,
                        "env",
                        format!(
                            "Variables to set; only these names: {}.",
                            config.child_env_allowlist.join(", ")
                        ),
                    );
                }
                set_description(
                    props,
                    "command",
                    "One command line: words, 'single' or \"double\" quotes, | < > >> (see the description)."
                        .into(),
                );
                trusted_exec_description(config, yield_ms)
            } else {
                super::tools::description(Tool::Exec)
                    .replace(YIELD_DEFAULT, &format!("(default {})", ms(yield_ms)))
            };
            tool["description"] = Value::from(description + &protected_sentence(config));
        }
        Tool::ShellExecute => {
            set_description(
                props,
                "timeout",
                format!(
                    "Seconds before the command is killed (default {}, at most {}).",
                    config.shell_default_timeout_s, config.shell_max_timeout_s
                ),
            );
            let description = format!(
                "{} {} Timeout: default {} s, at most {} s. Output cap: {} bytes per stream (the command is stopped beyond it).",
                super::tools::description(Tool::ShellExecute),
                allowed(config).sentence(),
                config.shell_default_timeout_s,
                config.shell_max_timeout_s,
                config.shell_output_limit
            );
            tool["description"] = Value::from(description + &protected_sentence(config));
        }
        _ => (),
    }
}

/// What the kernel sandbox keeps read-only (`YIELDSHELL_PROTECTED_PATHS`), as one sentence
/// after a description; empty when the sandbox does not apply or nothing is protected.
fn protected_sentence(config: &Config) -> String {
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

/// `exec`'s description in trusted mode: the command language it parses and what it allows.
fn trusted_exec_description(config: &Config, yield_ms: u64) -> String {
    format!(
        "Run an allowlisted command line, without a shell, and return its output. The line \
         is split into words (quotes group, nothing is expanded: no variables, globs or ~); \
         | builds a pipeline, < > >> redirect to files inside the working directory. ; && || & \
         $( ) backticks and newlines are refused. Every stage must be allowed; shells and \
         interpreters never are, and dangerous options are refused. {} A command still \
         running after yield_ms (default {}) returns status \"backgrounded\" with a process_id: \
         use read, wait, write and stop with it. Output beyond max_output_bytes stays readable \
         with read from next_seq. side_effects is required ([\"NONE\"] for read-only commands).",
        allowed(config).sentence(),
        ms(yield_ms)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_the_default_yield_where_it_is_replaced() {
        assert!(super::super::tools::description(Tool::Exec).contains(YIELD_DEFAULT));
    }
}
