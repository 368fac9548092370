//! Rules for everyday applications with an option, a subcommand or a file name that runs a
//! program: package managers (`npm run`, lifecycle scripts), systemctl (unit files, editors),
//! pandoc (filters, PDF engines, Lua readers), ImageMagick and GraphicsMagick (`|cmd` file
//! names, MSL scripts), bat (pagers), aria2c (`--on-download-*` hooks), rclone and restic
//! (password commands, backend programs), borg (`--rsh`), and TeX (shell escape). Where a
//! program has many subcommands, only those known not to run anything are accepted.

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

/// True when `arg` is one of `options` (`-x`, `--long`, `--long=value`), or an abbreviation
/// of a long one of at least `min` characters.
fn is_option(arg: &str, options: &[&str], min: usize) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    options.iter().any(|o| {
        name == *o
            || (o.starts_with("--")
                && name.starts_with("--")
                && name.len() >= min + 2
                && o.starts_with(name))
            || (o.len() == 2
                && !o.starts_with("--")
                && name.starts_with(o)
                && !name.starts_with("--"))
    })
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const PANDOC_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["in.md", "-o", "out.html"],
        &["-f", "markdown", "-t", "html", "in.md"],
    ],
    refuse: &[
        &["--filter", "sh", "in.md"],
        &["-F", "x", "in.md"],
        &["--lua-filter=x.lua", "in.md"],
        &["--pdf-engine=sh", "in.md"],
        &["-t", "writer.lua", "in.md"],
        &["--defaults", "d.yaml"],
    ],
};

/// pandoc: filters, Lua filters, defaults files (which name filters), PDF engines and data
/// directories run programs or code; so do custom Lua readers and writers.
pub fn check_pandoc(args: &[String]) -> Result<(), String> {
    const RUNS: &[&str] = &[
        "--filter",
        "-F",
        "--lua-filter",
        "-L",
        "--defaults",
        "-d",
        "--pdf-engine",
        "--pdf-engine-opt",
        "--data-dir",
    ];
    if args
        .iter()
        .any(|a| is_option(a, RUNS, 3) || a.ends_with(".lua"))
    {
        return Err("pandoc filter, engine or Lua option".to_string());
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const MAGICK_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["in.png", "-resize", "50%", "out.png"],
        &["in.jpg", "out.png"],
    ],
    refuse: &[
        &["|id", "out.png"],
        &["@list", "out.png"],
        &["msl:x.msl"],
        &["ephemeral:x", "out.png"],
        &["in.png", "-script", "s"],
    ],
};

/// ImageMagick and GraphicsMagick: a file name starting with `|` is a command, `@file` reads
/// names from a file, MSL and `ephemeral:` coders and `-script` run scripts.
pub fn check_magick(args: &[String]) -> Result<(), String> {
    for arg in args {
        let lower = arg.to_ascii_lowercase();
        if arg.starts_with('|')
            || arg.starts_with('@')
            || lower.contains(":|")
            || lower.starts_with("msl:")
            || lower.starts_with("ephemeral:")
            || lower.starts_with("mvg:")
            || lower == "-script"
            || lower == "-process"
        {
            return Err("image tool command file name or script".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BAT_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["f.rs"], &["--paging=never", "f.rs"], &["-n", "f.rs"]],
    refuse: &[
        &["--pager", "sh", "f.rs"],
        &["--pager=sh", "f.rs"],
        &["--paging=always", "f.rs"],
    ],
};

/// bat: `--pager` names a program, and `--paging=always` runs it without a terminal.
pub fn check_bat(args: &[String]) -> Result<(), String> {
    if args
        .iter()
        .any(|a| a.starts_with("--pager") || a.starts_with("--paging=always") || a == "-P")
    {
        return Err("bat pager option".to_string());
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const ARIA2C_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["https://example.com/f"],
        &["-x", "4", "https://example.com/f"],
    ],
    refuse: &[
        &["--on-download-complete=sh", "https://example.com/f"],
        &["-i", "list"],
        &["--conf-path=c"],
        &["--input-file=list"],
    ],
};

/// aria2c: `--on-download-*` and `--on-bt-*` run hooks; an input file (`-i`) and a
/// configuration file can set them.
pub fn check_aria2c(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        a.starts_with("--on-")
            || a.starts_with("--conf-path")
            || a.starts_with("--input-file")
            || a.starts_with("-i")
    }) {
        return Err("aria2c hook or input file option".to_string());
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BACKUP_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["snapshots"], &["ls", "remote:"]],
    refuse: &[
        &["--password-command=sh", "snapshots"],
        &["--config", "c", "ls"],
        &["--rsh", "sh", "list"],
        &["-o", "sftp.command=sh", "snapshots"],
    ],
};

/// rclone, restic and borg: password commands, backend options (`-o sftp.command=`,
/// `rclone.program`), remote shells and configuration files run programs.
pub fn check_backup(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        a.starts_with("--password-command")
            || a.starts_with("--config")
            || a.starts_with("--option")
            || a == "-o"
            || a.starts_with("-o")
            || a.starts_with("--rsh")
            || a.starts_with("--remote-path")
            || a.starts_with("--sftp-command")
    }) {
        return Err("backup tool command or configuration option".to_string());
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const TEX_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["doc.tex"], &["-interaction=nonstopmode", "doc.tex"]],
    refuse: &[
        &["-shell-escape", "doc.tex"],
        &["--shell-escape", "doc.tex"],
        &["-enable-write18", "doc.tex"],
        &["-cnf-line=shell_escape=t", "doc.tex"],
    ],
};

/// TeX engines: shell escape, and `-cnf-line`, which can turn it on.
pub fn check_tex(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        let a = a.trim_start_matches('-');
        a.starts_with("shell-escape")
            || a.starts_with("enable-write18")
            || a.starts_with("cnf-line")
    }) {
        return Err("TeX shell escape option".to_string());
    }
    Ok(())
}
