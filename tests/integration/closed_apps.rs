//! The closed rules of everyday applications, through the real binary in trusted mode: npm,
//! systemctl, bat, aria2c and the TeX engines run their everyday forms and refuse, naming
//! the rule, what runs a program and any option or subcommand they do not know; yarn, pnpm,
//! ImageMagick and the backup tools are refused as unreviewed, saying why, and their
//! deny-lists still refuse the known forms once the operator accepts them.
//!
//! Each program is a copy of `true` (or of `touch`, to see that a refused call ran nothing)
//! under the program's name, first on the safe `PATH`: an accepted call runs and succeeds.

use serde_json::json;

use crate::renamed::Renamed;
use crate::support::{all_text, is_error, Server};

const OFF: (&str, &str) = ("YIELDSHELL_SANDBOX", "off");
const NO_OPT_IN: (&str, &str) = ("YIELDSHELL_UNREVIEWED_COMMANDS", "");
const TRUE: &str = "/usr/bin/true";

const PROGRAMS: &[(&str, &str)] = &[
    ("npm", TRUE),
    ("systemctl", TRUE),
    ("bat", "/usr/bin/touch"),
    ("aria2c", TRUE),
    ("pdflatex", TRUE),
    ("xelatex", TRUE),
    ("yarn", TRUE),
    ("convert", TRUE),
    ("restic", TRUE),
];

const ALLOW: &str = "npm,systemctl,bat,aria2c,pdflatex,xelatex,yarn,convert,restic";

fn shell_execute(server: &Server, argv: &[&str]) -> (bool, String) {
    let result = server.call("shell_execute", json!({ "command": argv }));
    (!is_error(&result), all_text(&result))
}

/// Runs each case: `None` must run and succeed, `Some(text)` must be refused with `text`.
fn expect(server: &Server, cases: &[(&[&str], Option<&str>)]) {
    let mut wrong = Vec::new();
    for (argv, want) in cases {
        let (ok, text) = shell_execute(server, argv);
        let right = match want {
            None => ok,
            Some(needle) => !ok && text.contains(needle),
        };
        if !right {
            wrong.push(format!("{argv:?} (want {want:?}): {text}"));
        }
    }
    assert!(wrong.is_empty(), "judged wrongly:\n{}", wrong.join("\n"));
}

#[test]
fn closed_rules_run_everyday_forms_and_refuse_what_runs_programs() {
    let fx = Renamed::new("closed-apps", PROGRAMS);
    let server = fx.trusted(ALLOW, &[OFF, NO_OPT_IN]);
    let tex_off = ["-no-shell-escape", "-no-mktex=pk", "-no-mktex=tfm"];
    let pdflatex: Vec<&str> = ["pdflatex"]
        .into_iter()
        .chain(tex_off)
        .chain(["doc.tex"])
        .collect();
    let xelatex: Vec<&str> = ["xelatex"]
        .into_iter()
        .chain(tex_off)
        .chain(["doc.tex"])
        .collect();
    let xelatex_no_pdf: Vec<&str> = ["xelatex"]
        .into_iter()
        .chain(tex_off)
        .chain(["-no-pdf", "doc.tex"])
        .collect();
    expect(
        &server,
        &[
            // npm: the subcommands that look, with known options.
            (&["npm", "ls", "--all", "--json"], None),
            (&["npm", "view", "react", "version"], None),
            (&["npm", "outdated", "--long"], None),
            (&["npm", "--version"], None),
            (
                &["npm", "install", "--ignore-scripts"],
                Some("package manager subcommand install (it builds the dependency tree"),
            ),
            (&["npm", "ci"], Some("package manager subcommand ci")),
            (&["npm", "audit"], Some("package manager subcommand audit")),
            (
                &["npm", "run", "build"],
                Some("package manager subcommand run"),
            ),
            (
                &["npm", "help", "install"],
                Some("package manager subcommand help"),
            ),
            (&["npm", "view", "github:a/b"], Some("only a registry name")),
            (
                &["npm", "ls", "--script-shell=sh"],
                Some("npm option --script-shell is not known to the rule"),
            ),
            (
                &["npm", "--json=exec", "ls"],
                Some("package manager subcommand exec"),
            ),
            // systemctl: the verbs that look.
            (&["systemctl", "status", "nginx", "--no-pager"], None),
            (
                &["systemctl", "--user", "list-units", "--type=service"],
                None,
            ),
            (
                &["systemctl", "start", "x"],
                Some("systemctl start (only the verbs"),
            ),
            (&["systemctl", "help", "x"], Some("systemctl help")),
            (
                &["systemctl", "-qHuser@h", "status"],
                Some("systemctl --host"),
            ),
            (
                &["systemctl", "--future", "status"],
                Some("systemctl option --future is not known to the rule"),
            ),
            // aria2c: downloads without hooks or option files.
            (
                &["aria2c", "-x4", "-d", "dl", "https://example.com/f"],
                None,
            ),
            (
                &["aria2c", "--on-download-comp=sh", "https://example.com/f"],
                Some("aria2c hook, input file"),
            ),
            (&["aria2c", "-i", "-"], Some("aria2c hook, input file")),
            (
                &["aria2c", "--future", "https://example.com/f"],
                Some("aria2c option --future is not known to the rule"),
            ),
            // TeX: only with shell escape and font generation off on the command line.
            (&pdflatex, None),
            (&xelatex_no_pdf, None),
            (
                &["pdflatex", "doc.tex"],
                Some("TeX runs programs its input names"),
            ),
            (
                &["pdflatex", "-shell-e", "doc.tex"],
                Some("TeX shell escape option"),
            ),
            (&xelatex, Some("add -no-pdf")),
        ],
    );
}

#[test]
fn a_refused_bat_runs_nothing_and_an_accepted_one_runs() {
    // bat is a copy of touch here: what runs leaves a file behind.
    let fx = Renamed::new("closed-apps-bat", PROGRAMS);
    let server = fx.trusted(ALLOW, &[OFF, NO_OPT_IN]);
    expect(
        &server,
        &[
            (&["bat", "cache"], Some("bat cache")),
            (&["bat", "--pager=sh", "pager"], Some("bat pager option")),
            (
                &["bat", "--paging", "always", "paging"],
                Some("bat pager option"),
            ),
            (&["bat", "--lessopen", "lessopen"], Some("bat pager option")),
            (
                &["bat", "--future", "future"],
                Some("bat option --future is not known to the rule"),
            ),
            (&["bat", "--", "./cache"], None),
        ],
    );
    for name in ["pager", "paging", "lessopen", "future"] {
        assert!(!fx.work.join(name).exists(), "a refused bat ran: {name}");
    }
    assert!(
        fx.work.join("cache").exists(),
        "the accepted bat did not run"
    );
}

#[test]
fn programs_that_cannot_be_closed_are_unreviewed_and_keep_their_deny_lists() {
    let fx = Renamed::new("closed-apps-open", PROGRAMS);
    let server = fx.trusted(ALLOW, &[OFF, NO_OPT_IN]);
    expect(
        &server,
        &[
            (
                &["convert", "in.png", "out.png"],
                Some("convert is allowlisted but its argument rules are not closed"),
            ),
            (&["yarn", "why", "x"], Some("yarnPath")),
            (
                &["restic", "snapshots"],
                Some("YIELDSHELL_UNREVIEWED_COMMANDS"),
            ),
            // Their deny-lists speak first: they are the argument rules.
            (&["convert", "|id", "out.png"], Some("image tool")),
        ],
    );
    let server = fx.trusted(
        ALLOW,
        &[
            OFF,
            ("YIELDSHELL_UNREVIEWED_COMMANDS", "convert,yarn,restic"),
        ],
    );
    expect(
        &server,
        &[
            (&["convert", "in.png", "-resize", "50%", "out.png"], None),
            (&["yarn", "why", "x"], None),
            (&["restic", "snapshots"], None),
            (&["convert", "msl:x.msl"], Some("image tool")),
            (
                &["yarn", "run", "x"],
                Some("package manager subcommand run"),
            ),
            (
                &["restic", "-o", "sftp.command=sh", "snapshots"],
                Some("backup tool"),
            ),
        ],
    );
}
