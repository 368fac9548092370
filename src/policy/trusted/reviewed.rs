//! Reviewed or refused: an allowlisted program runs only when someone has looked at what its
//! arguments, its stdin, its environment and the files in its working directory can make it
//! run or load.
//!
//! A program is reviewed when it has argument rules (`identity`'s checked programs) or is on
//! [`INERT`], the programs that run nothing and load nothing their caller names, each with
//! the reason it is there. Any other allowlisted program is refused before anything runs,
//! unless the operator names it in `YIELDSHELL_UNREVIEWED_COMMANDS`, accepting that it may run
//! any program its arguments or files name (the kernel sandbox still confines it).
//!
//! What is deliberately not here (each refused until it has rules, or the operator accepts
//! it): `install` (`--strip-program` runs a program), `kill` (signals), `getconf` (`-v`
//! executes a helper), `iconv` (loads conversion modules), `patch` (hands ed scripts to `ed`
//! and may check files out through RCS, SCCS or git), the binutils that take `--plugin`
//! (`nm`, `ar`, `ranlib`, `objdump`), LLVM tools (`-load`), the JDK launchers (`-J`,
//! annotation processors), `kubectl` (exec credential plugins named in a kubeconfig),
//! `rustc`, `gio`, `zgrep` and friends (shell scripts that run `sed`). Programs whose rules
//! are deny-lists that cannot be closed ([`NOT_CLOSED`]: yarn, pnpm, ImageMagick and
//! GraphicsMagick, rclone, restic, borg) are refused the same way.

use super::identity::{self, Policy};
use super::names::names_of;
use super::words::Words;

const PRINTS: &str = "reads its operands or stdin and prints; runs nothing, loads nothing named";
const WRITES: &str =
    "makes, changes or removes the files it names; runs nothing, loads nothing named";
const INFO: &str = "prints what it is asked about the system; runs nothing, loads nothing named";
const SEARCHES: &str = "searches files or stdin for a pattern; runs nothing, loads nothing named";
const COMPRESSES: &str =
    "compresses or expands files or stdin with its built-in codec; runs no other program";

/// Programs that run nothing and load no code their caller names, with the reason for each.
#[rustfmt::skip]
pub const INERT: &[(Words, &str)] = &[
    // coreutils and util-linux: text.
    (
        Words("cat tac head tail wc cut tr uniq nl od paste join comm fold fmt expand unexpand
               rev column pr tsort shuf seq numfmt echo printf yes true false test [ expr factor
               basename dirname realpath readlink pathchk"),
        PRINTS,
    ),
    (Words("sleep"), "waits; runs nothing"),
    (
        Words("base64 base32 basenc xxd hexdump md5sum sha1sum sha224sum sha256sum sha384sum
               sha512sum b2sum cksum sum"),
        PRINTS,
    ),
    (Words("cmp"), "compares two files byte by byte; runs nothing"),
    (
        Words("diff"),
        "GNU diff compares files itself (only diff3 and sdiff start a program, and they have rules)",
    ),
    (
        Words("jq"),
        "filters JSON; its modules are jq code, which cannot run programs or load libraries",
    ),
    (
        Words("file"),
        "matches files against magic patterns, which hold no code (-z starts only fixed decompressors)",
    ),
    (Words("strings"), "binutils strings prints printable runs; it takes no plugin"),
    (Words("readelf"), "reads ELF files itself, without BFD plugins"),
    // coreutils: files.
    (Words("ls dir vdir stat du df tree"), INFO),
    (
        Words("cp mv rm ln link unlink mkdir rmdir touch chmod chown chgrp truncate shred mktemp
               mkfifo tee dd csplit sync"),
        WRITES,
    ),
    // The system.
    (Words("pwd id whoami groups logname users who tty uname arch nproc date uptime free"), INFO),
    (
        Words("printenv"),
        "prints the child environment, which holds only the allowlisted variables",
    ),
    (Words("ps"), "procps ps reads /proc; runs nothing"),
    (Words("lsof"), "reads /proc; runs nothing"),
    (Words("which"), "looks names up in PATH; runs nothing"),
    // Searching.
    (Words("grep egrep fgrep"), SEARCHES),
    // Compressors and archives without a program option.
    (
        Words("gzip gunzip zcat bzip2 bunzip2 bzcat xz unxz xzcat lzma unlzma lzcat zstd unzstd
               zstdcat zstdmt lz4 unlz4 lz4cat pigz unpigz brotli"),
        COMPRESSES,
    ),
    (Words("unzip"), "extracts zip archives itself; runs no other program"),
    (Words("zipinfo"), "lists zip archives; runs nothing"),
];

const YARN: &str = "yarn runs the script that a .yarnrc or .yarnrc.yml in the working directory \
                    names (yarn-path, yarnPath) for every command";
const PNPM: &str = "pnpm downloads and runs the pnpm version package.json's packageManager names, \
                    and loads .pnpmfile.cjs from the working directory";
const MAGICK: &str = "ImageMagick and GraphicsMagick choose a coder by a file's content and hand \
                      PostScript, PDF, EPS and SVG to delegate programs (Ghostscript runs the \
                      file as a program), as delegates.xml and policy.xml say, which are \
                      searched for in several places (the working directory, in some builds)";
const BACKUP: &str = "its repositories and remotes name programs it starts (an sftp or ssh \
                      repository runs ssh with its options, restic's rclone: backend runs rclone, \
                      an rclone remote's ssh option, borg's with-lock runs any command), in \
                      arguments, configuration files and environment variables too many to close";

/// Programs whose argument rules only refuse the forms known to run something (a deny-list)
/// and cannot be closed with confidence, with the reason: they are refused as unreviewed
/// unless the operator accepts them in `YIELDSHELL_UNREVIEWED_COMMANDS`, and then their
/// rules still refuse the known forms.
#[rustfmt::skip]
pub const NOT_CLOSED: &[(&str, &str)] = &[
    ("yarn", YARN), ("yarnpkg", YARN), ("pnpm", PNPM),
    ("convert", MAGICK), ("magick", MAGICK), ("mogrify", MAGICK), ("identify", MAGICK),
    ("composite", MAGICK), ("montage", MAGICK), ("compare", MAGICK), ("stream", MAGICK),
    ("display", MAGICK), ("animate", MAGICK), ("import", MAGICK), ("gm", MAGICK),
    ("rclone", BACKUP), ("restic", BACKUP), ("borg", BACKUP),
];

/// Why `program` (by any of its names) has rules that are not closed, when it has.
pub fn not_closed(program: &str) -> Option<&'static str> {
    names_of(program).iter().find_map(|n| {
        NOT_CLOSED
            .iter()
            .find(|(name, _)| name == n)
            .map(|(_, why)| *why)
    })
}

/// How an allowlisted program stands with the review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// It has argument rules.
    Rules,
    /// It is on [`INERT`].
    Inert,
    /// The argument hardening refuses it whatever its arguments.
    Denied,
    /// Nobody has reviewed it.
    Unreviewed,
}

/// How `program` (as written, or a resolved path) stands, by any of its names
/// (`/usr/bin/xzcat`, `gzip.exe`, `x86_64-linux-gnu-strings`).
pub fn review(program: &str) -> Review {
    match identity::classify(program).1 {
        Some(Policy::Args(_)) if not_closed(program).is_some() => return Review::Unreviewed,
        Some(Policy::Args(_)) => return Review::Rules,
        Some(Policy::Deny) => return Review::Denied,
        None => (),
    }
    if names_of(program)
        .iter()
        .any(|n| INERT.iter().any(|(names, _)| names.contains(n)))
    {
        Review::Inert
    } else {
        Review::Unreviewed
    }
}

/// The refusal's text for an allowlisted program without rules.
pub fn unreviewed_text(program: &str, resolved: Option<&str>) -> String {
    let shown = match resolved {
        Some(real) => format!("{program} (which is {real})"),
        None => program.to_string(),
    };
    let rules = match resolved
        .and_then(not_closed)
        .or_else(|| not_closed(program))
    {
        Some(why) => format!("its argument rules are not closed ({why})"),
        None => "has no argument rules".to_string(),
    };
    format!(
        "Command refused: {shown} is allowlisted but {rules}, so nothing checks what its \
         arguments, stdin or files make it run or load; ask the operator to add it to \
         YIELDSHELL_UNREVIEWED_COMMANDS (accepting that it may run any program its arguments \
         name), or use a reviewed program"
    )
}

/// The allowlisted names (`ALLOW_COMMANDS`, `ALLOWED_COMMANDS`) that are always refused for
/// want of rules: neither reviewed, denied (which says so itself) nor accepted by the
/// operator in `unreviewed`.
pub fn always_unreviewed<'a>(names: &'a [String], unreviewed: &[String]) -> Vec<&'a str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|n| review(n) == Review::Unreviewed && !unreviewed.iter().any(|u| u == n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_reviewed_by_any_of_their_names() {
        let cases: &[(&str, Review)] = &[
            ("cat", Review::Inert),
            ("/usr/bin/xzcat", Review::Inert),
            ("which.debianutils", Review::Inert),
            ("x86_64-linux-gnu-strings", Review::Inert),
            ("tar", Review::Rules),
            ("gawk", Review::Rules),
            ("openssl", Review::Rules),
            ("bash", Review::Denied),
            ("not-14", Review::Unreviewed),
            ("msgexec", Review::Denied),
            ("nm", Review::Unreviewed),
            ("kubectl", Review::Unreviewed),
            ("install", Review::Unreviewed),
            ("npm", Review::Rules),
            ("systemctl", Review::Rules),
            ("pdflatex", Review::Rules),
            ("yarn", Review::Unreviewed),
            ("/usr/bin/convert", Review::Unreviewed),
            ("gm", Review::Unreviewed),
            ("restic", Review::Unreviewed),
        ];
        for (name, want) in cases {
            assert_eq!(review(name), *want, "{name}");
        }
    }

    #[test]
    fn programs_whose_rules_are_not_closed_have_rules_and_say_why() {
        for (name, _) in NOT_CLOSED {
            assert!(
                matches!(identity::classify(name).1, Some(Policy::Args(_))),
                "{name} has no deny-list rules"
            );
        }
        let text = unreviewed_text("convert", None);
        assert!(
            text.contains("convert is allowlisted but its argument rules are not closed")
                && text.contains("YIELDSHELL_UNREVIEWED_COMMANDS"),
            "{text}"
        );
        assert!(unreviewed_text("not-14", None).contains("not-14 is allowlisted but has no"));
    }

    #[test]
    fn no_program_is_both_inert_and_ruled() {
        for (names, reason) in INERT {
            for name in names.iter() {
                assert!(identity::classify(name).1.is_none(), "{name} has rules too");
                assert!(!reason.is_empty() && !reason.contains('\n'), "{name}");
            }
        }
    }
}
