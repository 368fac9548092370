//! Startup warnings (SPEC section 14): one stderr line each for a configuration that will
//! refuse every call it can foresee, so that the operator learns it before the model does.
//!
//! - a trusted server whose working directory is refused (a desktop client that starts it in
//!   `/`): every call without `directory` / `cwd` is refused;
//! - an allowlist entry that the argument hardening always refuses (`python3`, `bash`), or a
//!   pattern that admits only such names.

use crate::base::config::{Config, Mode};
use crate::policy::trusted::{harden, identity};

/// The warnings for `config`, one line each (empty when there is nothing to say).
pub(crate) fn warnings(config: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if config.mode != Mode::Trusted {
        return out;
    }
    if let Err(why) =
        crate::tools::policy::resolve_dir(config, None, "the default working directory")
    {
        out.push(format!(
            "trusted mode refuses the working directory {}, so every call without a directory \
             (cwd) will be refused: set YIELDSHELL_DEFAULT_CWD to a project directory. ({})",
            config.default_cwd.display(),
            one_line(&why)
        ));
    }
    let names = [&config.allow_commands, &config.allowed_commands];
    for name in names
        .iter()
        .filter_map(|v| v.as_deref())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if let Some(why) = harden::always_refused(name) {
            out.push(format!(
                "allowlist entry {name} is always refused by the argument hardening: {}; remove it",
                one_line(&why)
            ));
        }
    }
    for pattern in config
        .allow_patterns
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let Ok(re) = regex_lite::Regex::new(&format!("^(?:{pattern})$")) else {
            continue;
        };
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

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
