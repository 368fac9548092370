//! npm, yarn and pnpm: everything that runs package scripts is refused.

/// The first argument that is not an option.
fn subcommand(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const PACKAGE_MANAGER_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["ls"],
        &["view", "react"],
        &["install", "--ignore-scripts"],
        &["audit"],
    ],
    refuse: &[
        &["run", "build"],
        &["test"],
        &["install"],
        &["exec", "x"],
        &["audit", "fix"],
        &["help", "install"],
        &["my-script"],
    ],
};

/// npm, yarn, pnpm: everything that runs package scripts (`run`, `test`, `start`, `exec`, an
/// unknown name, which yarn and pnpm run as a script, `install` without `--ignore-scripts`) is
/// refused, and so is `help` (npm opens it with the `browser` or `viewer` that a project's
/// `.npmrc` names); looking at packages is accepted.
pub fn check_node_package_manager(args: &[String]) -> Result<(), String> {
    const SAFE: &[&str] = &[
        "ls", "list", "ll", "la", "view", "info", "show", "v", "outdated", "search", "whoami",
        "ping", "fund", "explain", "why", "query", "prefix", "root", "bin", "cache", "licenses",
        "audit",
    ];
    const INSTALL: &[&str] = &["install", "i", "ci", "add", "update", "up", "upgrade"];
    let ignore_scripts = args.iter().any(|a| a == "--ignore-scripts");
    match subcommand(args) {
        None => Ok(()),
        Some(s) if SAFE.contains(&s) && !args.iter().any(|a| a == "fix") => Ok(()),
        Some(s) if INSTALL.contains(&s) && ignore_scripts => Ok(()),
        Some(s) => Err(format!(
            "package manager subcommand {s} (it can run package scripts; inspection \
             subcommands and install --ignore-scripts are accepted)"
        )),
    }
}
