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

/// npm, yarn, pnpm: everything that runs package scripts (`run`, `test`, `start`, `exec`, an
/// unknown name, which yarn and pnpm run as a script, `install` without `--ignore-scripts`) is
/// refused; looking at packages is accepted.
pub fn check_node_package_manager(args: &[String]) -> Result<(), String> {
    const SAFE: &[&str] = &[
        "ls", "list", "ll", "la", "view", "info", "show", "v", "outdated", "search", "whoami",
        "ping", "help", "fund", "explain", "why", "query", "prefix", "root", "bin", "cache",
        "licenses", "audit",
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
