//! systemctl: only the subcommands that look are accepted.

/// The first argument that is not an option.
fn subcommand(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SYSTEMCTL_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["status", "nginx"], &["list-units"], &["is-active", "x"]],
    refuse: &[
        &["start", "x"],
        &["edit", "x"],
        &["link", "/tmp/x.service"],
        &["daemon-reload"],
        &["-H", "user@host", "status"],
        &["--host=user@host", "status"],
        &["--ho", "user@host", "status"],
    ],
};

/// systemctl: only the subcommands that look (status, show, list-*, is-*, cat) are accepted;
/// the others start units (whose files a redirection can write and `link` can install) or an
/// editor.
pub fn check_systemctl(args: &[String]) -> Result<(), String> {
    const SAFE: &[&str] = &[
        "status",
        "show",
        "cat",
        "is-active",
        "is-enabled",
        "is-failed",
        "is-system-running",
        "list-units",
        "list-unit-files",
        "list-timers",
        "list-sockets",
        "list-dependencies",
        "list-jobs",
        "list-machines",
        "help",
        "get-default",
    ];
    // `-H`/`--host` reaches the host through ssh, which runs what its configuration names.
    if args.iter().any(|a| {
        a.starts_with("--h") && "--host".starts_with(a.split('=').next().unwrap_or(""))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('H'))
    }) {
        return Err("systemctl --host (it runs ssh)".to_string());
    }
    match subcommand(args) {
        None => Ok(()),
        Some(s) if SAFE.contains(&s) => Ok(()),
        Some(s) => Err(format!(
            "systemctl {s} (only status and listing subcommands)"
        )),
    }
}
