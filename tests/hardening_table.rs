//! The hardening case table: one line per case, `(argv, expected)`, run through
//! `trusted::harden::check` (the name as written), from the crate's `internals`. Each group holds refused forms and the accepted
//! forms next to them: over-strictness is a defect too.

use yieldshell::internals::trusted::harden::check;

/// What a hardening case expects.
#[derive(Debug)]
enum Expect {
    /// Accepted.
    Ok,
    /// Rejected with a message containing this text.
    Err(&'static str),
}
use Expect::{Err as E, Ok as A};

fn check_case(argv: &[&str], expect: &Expect) -> Result<(), String> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match (expect, check(&argv)) {
        (A, Ok(())) => Ok(()),
        (E(want), Err(msg)) if msg.contains(want) => Ok(()),
        (E(want), Err(msg)) => Err(format!("{argv:?}: {msg:?} lacks {want:?}")),
        (A, Err(msg)) => Err(format!("{argv:?}: expected acceptance, got {msg:?}")),
        (E(want), Ok(())) => Err(format!(
            "{argv:?}: expected rejection {want:?}, got acceptance"
        )),
    }
}

const CASES: &[(&[&str], Expect)] = &[
    // Empty and malformed names, control characters.
    (&[], E("Empty command")),
    (&[""], E("Empty command")),
    (&["ls\n"], E("argument 0 contains a newline")),
    (&["ls", "a\nb"], E("argument 1 contains a newline")),
    (
        &["echo", "ok", "x\ry"],
        E("argument 2 contains a carriage return"),
    ),
    (&["echo", "a\0b"], E("argument 1 contains a NUL character")),
    (
        &["grep", "-e", "x", "f\n;id"],
        E("argument 3 contains a newline"),
    ),
    (&["ls -la"], E("Unsafe command name: ls -la")),
    (&[" ls"], E("Unsafe command name")),
    (&["ls;id"], E("Unsafe command name: ls;id")),
    (&["ls|id"], E("Unsafe command name")),
    (&["ls&"], E("Unsafe command name")),
    (&["a>b"], E("Unsafe command name")),
    (&["`id`"], E("Unsafe command name")),
    (&["ls", "a;b", "c&&d", "`x`", "$(y)"], A),
    // Package managers, services, documents, images, downloads, backups and TeX.
    (
        &["npm", "run", "build"],
        E("policy: package manager subcommand run"),
    ),
    (
        &["npm", "test"],
        E("policy: package manager subcommand test"),
    ),
    (
        &["npm", "start"],
        E("policy: package manager subcommand start"),
    ),
    (
        &["npm", "exec", "x"],
        E("policy: package manager subcommand exec"),
    ),
    (
        &["npm", "x", "y"],
        E("policy: package manager subcommand x"),
    ),
    (
        &["npm", "install"],
        E("policy: package manager subcommand install"),
    ),
    (&["npm", "ci"], E("policy: package manager subcommand ci")),
    (
        &["npm", "explore", "x"],
        E("policy: package manager subcommand explore"),
    ),
    (
        &["npm", "version", "patch"],
        E("policy: package manager subcommand version"),
    ),
    (
        &["npm", "config", "set", "script-shell", "x"],
        E("policy: package manager subcommand config"),
    ),
    (
        &["npm", "audit", "fix"],
        E("policy: package manager subcommand audit"),
    ),
    (&["npm", "install", "--ignore-scripts"], A),
    (&["npm", "ci", "--ignore-scripts"], A),
    (&["npm", "ls"], A),
    (&["npm", "view", "react"], A),
    (&["npm", "outdated"], A),
    (&["npm", "audit"], A),
    (&["npm", "--version"], A),
    (
        &["yarn", "build"],
        E("policy: package manager subcommand build"),
    ),
    (&["yarn"], A),
    (&["yarn", "why", "x"], A),
    (
        &["pnpm", "dlx", "x"],
        E("policy: package manager subcommand dlx"),
    ),
    (&["pnpm", "list"], A),
    (
        &["systemctl", "--user", "start", "x"],
        E("policy: systemctl start"),
    ),
    (
        &["systemctl", "--user", "link", "./x.service"],
        E("policy: systemctl link"),
    ),
    (&["systemctl", "edit", "x"], E("policy: systemctl edit")),
    (
        &["systemctl", "restart", "nginx"],
        E("policy: systemctl restart"),
    ),
    (&["systemctl", "status", "nginx"], A),
    (&["systemctl", "--user", "list-units"], A),
    (&["systemctl", "is-active", "x"], A),
    (&["systemctl"], A),
    (&["pandoc", "--filter", "x", "a.md"], E("policy: pandoc")),
    (&["pandoc", "-F", "x", "a.md"], E("policy: pandoc")),
    (&["pandoc", "-Fx", "a.md"], E("policy: pandoc")),
    (
        &["pandoc", "--lua-filter=f.lua", "a.md"],
        E("policy: pandoc"),
    ),
    (
        &["pandoc", "--pdf-engine=sh", "-o", "a.pdf", "a.md"],
        E("policy: pandoc"),
    ),
    (&["pandoc", "--defaults", "d.yaml"], E("policy: pandoc")),
    (&["pandoc", "-f", "reader.lua", "a"], E("policy: pandoc")),
    (&["pandoc", "--fil=x", "a.md"], E("policy: pandoc")),
    (&["pandoc", "-o", "a.html", "a.md"], A),
    (&["pandoc", "-sFx", "a.md"], E("policy: pandoc")),
    (&["pandoc", "--pdf", "sh", "a.md"], E("policy: pandoc")),
    (
        &["pandoc", "--future", "a.md"],
        E("policy: pandoc option --future is not known to the rule"),
    ),
    (
        &["pandoc", "-Z", "a.md"],
        E("policy: pandoc option -Z is not known to the rule"),
    ),
    (&["pandoc", "-f", "markdown", "-t", "html", "a.md"], A),
    (
        &["convert", "|touch MARK", "out.png"],
        E("policy: image tool"),
    ),
    (&["convert", "@list", "out.png"], E("policy: image tool")),
    (
        &["convert", "msl:x.msl", "out.png"],
        E("policy: image tool"),
    ),
    (&["magick", "-script", "s.txt"], E("policy: image tool")),
    (&["gm", "convert", "|id", "o.png"], E("policy: image tool")),
    (&["convert", "in.png", "-resize", "50%", "out.png"], A),
    (&["identify", "in.png"], A),
    (
        &["bat", "--pager", "sh", "f"],
        E("policy: bat pager option"),
    ),
    (
        &["bat", "--paging=always", "f"],
        E("policy: bat pager option"),
    ),
    (
        &["batcat", "--pager=less", "f"],
        E("policy: bat pager option"),
    ),
    (&["bat", "-n", "f"], A),
    (
        &["aria2c", "--on-download-complete=sh", "u"],
        E("policy: aria2c"),
    ),
    (&["aria2c", "-i", "list"], E("policy: aria2c")),
    (&["aria2c", "--conf-path=c", "u"], E("policy: aria2c")),
    (&["aria2c", "-x", "4", "u"], A),
    (
        &["rclone", "--password-command", "sh", "ls", "r:"],
        E("policy: backup tool"),
    ),
    (
        &["rclone", "--config", "c", "ls", "r:"],
        E("policy: backup tool"),
    ),
    (&["rclone", "ls", "r:"], A),
    (
        &["restic", "-o", "sftp.command=sh", "snapshots"],
        E("policy: backup tool"),
    ),
    (
        &["restic", "--option", "rclone.program=sh", "snapshots"],
        E("policy: backup tool"),
    ),
    (
        &["restic", "--password-command=x", "snapshots"],
        E("policy: backup tool"),
    ),
    (&["restic", "snapshots"], A),
    (
        &["borg", "--rsh", "sh", "list", "r"],
        E("policy: backup tool"),
    ),
    (
        &["borg", "--remote-path=x", "list", "r"],
        E("policy: backup tool"),
    ),
    (&["borg", "list", "r"], A),
    (
        &["pdflatex", "-shell-escape", "a.tex"],
        E("policy: TeX shell escape"),
    ),
    (
        &["xelatex", "--shell-escape", "a.tex"],
        E("policy: TeX shell escape"),
    ),
    (
        &["latex", "-enable-write18", "a.tex"],
        E("policy: TeX shell escape"),
    ),
    (
        &["pdflatex", "-cnf-line=shell_escape=t", "a.tex"],
        E("policy: TeX shell escape"),
    ),
    (&["pdflatex", "-no-shell-escape", "a.tex"], A),
    (&["pdflatex", "-interaction=nonstopmode", "a.tex"], A),
];

#[test]
fn hardening_table() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(argv, expect)| check_case(argv, expect).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(CASES.len() >= 91, "only {} hardening cases", CASES.len());
}
