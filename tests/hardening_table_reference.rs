//! More hardening cases, run through `trusted::harden::check` like
//! `tests/hardening_table.rs`: both tar dialects, values that are themselves dangerous options,
//! `--checkpoint-action` in every spelling, `git send-email`'s grammar, and the values that only
//! look like options. Where MCP Shell Server accepts and this table refuses, SECURITY.md says
//! why ("Where trusted mode and MCP Shell Server disagree").

use yieldshell::internals::trusted::harden::check;

/// What a case expects: acceptance, or a rejection whose message contains the text.
#[derive(Debug)]
enum Expect {
    Ok,
    Err(&'static str),
}
use Expect::{Err as E, Ok as A};

const TAR_R: Expect = E("policy: tar command execution option");
const TAR_MV_R: Expect = E("policy: tar multi-volume mode");
const GIT_EXT_R: Expect = E("policy: git external program");
const AWK_R: Expect = E("policy: awk external access");

const CASES: &[(&[&str], Expect)] = &[
    // bsdtar's `-H` takes no value, so `-W use-compress-program=...` is an option; every name
    // that may be bsdtar is judged under its grammar.
    (
        &[
            "bsdtar",
            "-cHWuse-compress-program=helper",
            "-f",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &["tar", "-cHWuse-compress-program=helper", "-f", "x.tar", "f"],
        TAR_R,
    ),
    (
        &[
            "gtar",
            "-cHWuse-compress-program=helper",
            "-f",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "/usr/bin/tar",
            "-cHWuse-compress-program=helper",
            "-f",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "/opt/homebrew/bin/gtar",
            "-cHWuse-compress-program=helper",
            "-f",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "bsdtar",
            "-cf",
            "x.tar",
            "-W",
            "use-compress-program=helper",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "bsdtar",
            "-cf",
            "x.tar",
            "-Wuse-compress-program",
            "helper",
            "f",
        ],
        TAR_R,
    ),
    (
        &["bsdtar", "-cf", "x.tar", "-W", "to-command=x", "f"],
        TAR_R,
    ),
    (
        &["bsdtar", "-cf", "x.tar", "--use-compress-prog=helper", "f"],
        TAR_R,
    ),
    (&["bsdtar", "-cf", "x.tar", "-I", "helper", "f"], TAR_R),
    (
        &["tar", "cHf", "x.tar", "--use-compress-program=helper", "f"],
        TAR_R,
    ),
    (
        &[
            "tar",
            "-cH",
            "--use-compress-program=helper",
            "-f",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    // Short options that take a value in GNU tar only.
    (&["tar", "-H", "-I"], TAR_R),
    (&["tar", "-cK-Ihelper"], TAR_R),
    (&["tar", "cN", "-I"], TAR_R),
    (&["tar", "-V", "-I"], TAR_R),
    (&["tar", "-g", "-I"], TAR_R),
    (
        &[
            "tar",
            "-c",
            "-",
            "-H",
            "--use-compress-program",
            "P",
            "-f",
            "-",
            "x",
        ],
        TAR_R,
    ),
    // bsdtar's own options that take a value keep it as data.
    (&["bsdtar", "-T", "-Ihelper"], A),
    (&["bsdtar", "-cs", "-Ihelper"], A),
    (&["bsdtar", "--options", "--use-compress-program=helper"], A),
    (&["bsdtar", "--cd", "--use-compress-program=helper"], A),
    // bsdtar's `-L` follows symlinks; `-M` is not one of its options.
    (&["bsdtar", "-cLf", "x.tar", "d"], A),
    (&["bsdtar", "-cMf", "x.tar", "d"], A),
    // A fixed external compressor and `-s` substitutions run no caller-chosen program.
    (&["bsdtar", "--lrzip", "-cf", "x.tar", "d"], A),
    (&["bsdtar", "--lzop", "-cf", "x.tar", "d"], A),
    (&["bsdtar", "-s", "/a/b/", "-cf", "x.tar", "d"], A),
    (&["tar", "--zstd", "-cf", "x.tar", "d"], A),
    // A long option's value that is a dangerous option under the other dialect's reading, or
    // under an abbreviation's.
    (
        &[
            "tar",
            "--mode",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--exclude-tag",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--transform",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--owner-map",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--warning",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--mo",
            "--use-compress-program=helper",
            "-cf",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--mod",
            "--use-compress-program",
            "helper",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (
        &["tar", "--exclude-t", "--to-command=x", "-cf", "x", "f"],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--exclude-t",
            "-C",
            "--to-command=x",
            "-cf",
            "x",
            "f",
        ],
        TAR_R,
    ),
    (&["gtar", "--mode", "--use-compress-program=helper"], TAR_R),
    // ... and one both dialects read as a value stays data.
    (&["tar", "--files-from", "--use-compress-program=helper"], A),
    (
        &[
            "tar",
            "--exclude",
            "--use-compress-program=helper",
            "-cf",
            "x",
            "f",
        ],
        A,
    ),
    (&["tar", "-T", "-I"], A),
    (&["tar", "-c", "-T", "IF-data", "x.tar"], A),
    (&["tar", "-cf", "x.tar", "-T", "list"], A),
    // `--checkpoint-action` in any spelling, any action.
    (
        &["tar", "-cf", "x.tar", "--checkpoint-", "helper", "d"],
        TAR_R,
    ),
    (&["tar", "-cf", "x.tar", "--checkpoint-=helper", "d"], TAR_R),
    (
        &["tar", "-cf", "x.tar", "--checkpoint-a", "helper", "d"],
        TAR_R,
    ),
    (
        &["tar", "-cf", "x.tar", "--checkpoint-act=helper", "d"],
        TAR_R,
    ),
    (
        &["tar", "-cf", "x.tar", "--checkpoint-action", "echo", "d"],
        TAR_R,
    ),
    (
        &[
            "tar",
            "--checkpoint=1",
            "--checkpoint-action=dot",
            "-cf",
            "x.tar",
            "f",
        ],
        TAR_R,
    ),
    (
        &["bsdtar", "--checkpoint-action=dot", "-cf", "x.tar", "f"],
        TAR_R,
    ),
    (&["tar", "--checkpoint", "-cf", "x.tar", "d"], A),
    (&["tar", "--checkpoint=10", "-cf", "x.tar", "d"], A),
    // Multi-volume stays refused under GNU's reading (stricter than the reference).
    (&["tar", "-c", "-L", "IF-data", "x.tar"], TAR_MV_R),
    (
        &["gtar", "--tape-length", "--use-compress-program=helper"],
        TAR_MV_R,
    ),
    // git: an abbreviation read both ways.
    (&["git", "grep", "--max", "-OP"], GIT_EXT_R),
    (&["git", "grep", "--max-depth", "-OP"], A),
    (&["git", "grep", "(", "-e", "MATCH", ")", "-OP"], GIT_EXT_R),
    (&["git", "grep", "MATCH", "-OP"], A),
    (&["git", "grep", "--end-of-options", "-O", "data"], A),
    (&["git", "grep", "-e", "x", "-O"], GIT_EXT_R),
    // git: values that only look like options.
    (&["git", "rebase", "-s", "-x"], A),
    (&["git", "rebase", "--strategy", "--exec=P"], A),
    (&["git", "rebase", "-s", "--exec", "-xP"], GIT_EXT_R),
    (&["git", "rebase", "-s", "custom"], GIT_EXT_R),
    (&["git", "rebase", "-rx"], A),
    (&["git", "commit", "-c", "HEAD", "--dry-run"], A),
    (&["git", "commit", "-c", "HEAD"], E("policy: git editor")),
    (&["git", "bisect", "--", "run"], A),
    (&["git", "bisect", "run", "x"], GIT_EXT_R),
    // git send-email: data options run, options naming a program do not.
    (
        &["git", "send-email", "--subject", "s", "--dry-run", "P"],
        A,
    ),
    (&["git", "send-email", "--smtp-server-port", "2525"], A),
    (
        &["git", "send-email", "--no-smtp-auth", "--no-identity", "P"],
        A,
    ),
    (&["git", "send-email", "--dump-aliases"], A),
    (&["git", "send-email", "-h"], A),
    (
        &[
            "git",
            "send-email",
            "--smtp-server=smtp.example.invalid",
            "P",
        ],
        A,
    ),
    (&["git", "send-email", "--smtp-server", "localhost"], A),
    (
        &["git", "send-email", "--subject", "--sendmail-cmd=DATA"],
        A,
    ),
    (&["git", "send-email", "--", "--sendmail-cmd=DATA"], A),
    (
        &["git", "send-email", "--sendmail-cmd=helper", "P"],
        GIT_EXT_R,
    ),
    (
        &["git", "send-email", "--sendmail-cmd", "helper", "P"],
        GIT_EXT_R,
    ),
    (
        &["git", "send-email", "--smtp-server=/path/helper", "P"],
        GIT_EXT_R,
    ),
    (
        &["git", "send-email", "--smtp-server", "/path/helper", "P"],
        GIT_EXT_R,
    ),
    (&["git", "send-email", "--smtp-server"], GIT_EXT_R),
    (&["git", "send-email", "--to-cmd=helper"], GIT_EXT_R),
    (&["git", "send-email", "--cc-cmd", "helper"], GIT_EXT_R),
    (&["git", "send-email", "--header-cmd=helper"], GIT_EXT_R),
    (&["git", "send-email", "--SENDMAIL-CMD=helper"], GIT_EXT_R),
    (&["git", "send-email", "+sendmail-cmd=helper"], GIT_EXT_R),
    (&["git", "send-email", "--send=helper"], GIT_EXT_R),
    (&["git", "send-email", "--smtp=/x"], GIT_EXT_R),
    (&["git", "send-email", "--h=/x"], GIT_EXT_R),
    (&["git", "send-email", "P", "--to-cmd=helper"], GIT_EXT_R),
    (
        &[
            "git",
            "send-email",
            "--subject",
            "--no-identity",
            "--sendmail-cmd=/x",
        ],
        GIT_EXT_R,
    ),
    (
        &[
            "git",
            "send-email",
            "--subject",
            "--identity",
            "",
            "--to",
            "--sendmail-cmd=/x",
        ],
        GIT_EXT_R,
    ),
    (
        &["git", "send-emai", "--sendmail-cmd=P"],
        E("policy: git alias or external subcommand"),
    ),
    // gawk's file-writing options with a path, and its debugger: stricter than the reference.
    (&["gawk", "-o/tmp/profile", "BEGIN { print 1 }"], AWK_R),
    (&["gawk", "-p/tmp/profile", "BEGIN { print 1 }"], AWK_R),
    (&["gawk", "-d/tmp/variables", "BEGIN { print 1 }"], AWK_R),
    (&["gawk", "-D/tmp/debug", "BEGIN { print 1 }"], AWK_R),
    (&["gawk", "-o", "BEGIN { print 1 }"], A),
    // make runs its recipes through the shell: stricter than the reference.
    (&["make", "build"], E("policy: make")),
    (&["make", "-C", "subdir", "test"], E("policy: make")),
];

#[test]
fn issue_16_cases() {
    let mut failures = Vec::new();
    for (argv, expect) in CASES {
        let owned: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let got = check(&owned);
        let ok = match (expect, &got) {
            (A, Ok(())) => true,
            (E(want), Err(msg)) => msg.contains(want),
            _ => false,
        };
        if !ok {
            failures.push(format!("{argv:?}: expected {expect:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
