//! tar (GNU tar, and bsdtar under the same rules): the options are read as tar reads them,
//! after expanding the bundled first argument (`tar cvf a.tar d` is `-c -v -f a.tar d`:
//! letters that take a value take the following arguments in order), with getopt_long's
//! rules: long options by any unambiguous prefix (`--checkpoint-a`), a value may be `--` or
//! start with `-` (`-f -- --use-compress-program=X` names the archive `--`, and the option
//! after it is real), and `--exclude --to-command=x` excludes a pattern.
//!
//! Refused: every option that runs a program (`--to-command`, `--use-compress-program`/`-I`,
//! `--rsh-command`, `--rmt-command`, `--info-script`/`--new-volume-script`/`-F`, and
//! `--checkpoint-action` with an `exec` action), multi-volume mode (`-M`, `--multi-volume`,
//! and `-L`/`--tape-length`, which implies it: the volume prompt reads `!` from stdin and
//! starts a shell), and remote archives (`-f host:file` runs rsh/ssh with a caller-chosen
//! host, which can be an ssh option such as `-oProxyCommand=...`) unless `--force-local` is
//! given. A file list (`-T`/`--files-from`) is refused unless `--verbatim-files-from` or
//! `--null` comes before it: by default tar reads a line starting with `-` in it as an option,
//! so the list's content (which a redirection can write, or stdin for `-T -`) could hold
//! `--to-command=...`. An ambiguous abbreviation that could be one of these is refused too (tar would
//! refuse it anyway). GNU tar's `-W` is `--verify`; a grammar where `-W name` means `--name`
//! is read as well, and the stricter verdict wins.

use crate::trusted::getopt::{Arg, Grammar, Item};

const REASON: &str = "tar command execution option";
const MULTI_VOLUME: &str = "tar multi-volume mode (its volume prompt runs a shell)";

const SHORT: &[(char, Arg)] = &[
    ('b', Arg::Required),
    ('C', Arg::Required),
    ('f', Arg::Required),
    ('F', Arg::Required),
    ('g', Arg::Required),
    ('H', Arg::Required),
    ('I', Arg::Required),
    ('K', Arg::Required),
    ('L', Arg::Required),
    ('N', Arg::Required),
    ('T', Arg::Required),
    ('V', Arg::Required),
    ('X', Arg::Required),
];

const LONG: &[(&str, Arg)] = &[
    ("absolute-names", Arg::No),
    ("acls", Arg::No),
    ("add-file", Arg::Required),
    ("after-date", Arg::Required),
    ("anchored", Arg::No),
    ("append", Arg::No),
    ("atime-preserve", Arg::Optional),
    ("auto-compress", Arg::No),
    ("backup", Arg::Optional),
    ("block-number", Arg::No),
    ("blocking-factor", Arg::Required),
    ("bzip2", Arg::No),
    ("catenate", Arg::No),
    ("check-device", Arg::No),
    ("check-links", Arg::No),
    ("checkpoint", Arg::Optional),
    ("checkpoint-action", Arg::Required),
    ("clamp-mtime", Arg::No),
    ("compare", Arg::No),
    ("compress", Arg::No),
    ("concatenate", Arg::No),
    ("confirmation", Arg::No),
    ("create", Arg::No),
    ("delay-directory-restore", Arg::No),
    ("delete", Arg::No),
    ("dereference", Arg::No),
    ("diff", Arg::No),
    ("directory", Arg::Required),
    ("exclude", Arg::Required),
    ("exclude-backups", Arg::No),
    ("exclude-caches", Arg::No),
    ("exclude-caches-all", Arg::No),
    ("exclude-caches-under", Arg::No),
    ("exclude-from", Arg::Required),
    ("exclude-ignore", Arg::Required),
    ("exclude-ignore-recursive", Arg::Required),
    ("exclude-tag", Arg::Required),
    ("exclude-tag-all", Arg::Required),
    ("exclude-tag-under", Arg::Required),
    ("exclude-vcs", Arg::No),
    ("exclude-vcs-ignores", Arg::No),
    ("extract", Arg::No),
    ("file", Arg::Required),
    ("files-from", Arg::Required),
    ("force-local", Arg::No),
    ("format", Arg::Required),
    ("full-time", Arg::No),
    ("get", Arg::No),
    ("group", Arg::Required),
    ("group-map", Arg::Required),
    ("gunzip", Arg::No),
    ("gzip", Arg::No),
    ("hard-dereference", Arg::No),
    ("help", Arg::No),
    ("hole-detection", Arg::Required),
    ("ignore-case", Arg::No),
    ("ignore-command-error", Arg::No),
    ("ignore-failed-read", Arg::No),
    ("ignore-zeros", Arg::No),
    ("incremental", Arg::No),
    ("index-file", Arg::Required),
    ("info-script", Arg::Required),
    ("interactive", Arg::No),
    ("keep-directory-symlink", Arg::No),
    ("keep-newer-files", Arg::No),
    ("keep-old-files", Arg::No),
    ("label", Arg::Required),
    ("level", Arg::Required),
    ("list", Arg::No),
    ("listed-incremental", Arg::Required),
    ("lzip", Arg::No),
    ("lzma", Arg::No),
    ("lzop", Arg::No),
    ("mode", Arg::Required),
    ("mtime", Arg::Required),
    ("multi-volume", Arg::No),
    ("new-volume-script", Arg::Required),
    ("newer", Arg::Required),
    ("newer-mtime", Arg::Required),
    ("no-acls", Arg::No),
    ("no-anchored", Arg::No),
    ("no-auto-compress", Arg::No),
    ("no-check-device", Arg::No),
    ("no-delay-directory-restore", Arg::No),
    ("no-ignore-case", Arg::No),
    ("no-ignore-command-error", Arg::No),
    ("no-null", Arg::No),
    ("no-overwrite-dir", Arg::No),
    ("no-quote-chars", Arg::Required),
    ("no-recursion", Arg::No),
    ("no-same-owner", Arg::No),
    ("no-same-permissions", Arg::No),
    ("no-seek", Arg::No),
    ("no-selinux", Arg::No),
    ("no-unquote", Arg::No),
    ("no-verbatim-files-from", Arg::No),
    ("no-wildcards", Arg::No),
    ("no-wildcards-match-slash", Arg::No),
    ("no-xattrs", Arg::No),
    ("null", Arg::No),
    ("numeric-owner", Arg::No),
    ("occurrence", Arg::Optional),
    ("old-archive", Arg::No),
    ("one-file-system", Arg::No),
    ("one-top-level", Arg::Optional),
    ("overwrite", Arg::No),
    ("overwrite-dir", Arg::No),
    ("owner", Arg::Required),
    ("owner-map", Arg::Required),
    ("pax-option", Arg::Required),
    ("portability", Arg::No),
    ("posix", Arg::No),
    ("preserve-order", Arg::No),
    ("preserve-permissions", Arg::No),
    ("quote-chars", Arg::Required),
    ("quoting-style", Arg::Required),
    ("read-full-records", Arg::No),
    ("record-size", Arg::Required),
    ("recursion", Arg::No),
    ("recursive-unlink", Arg::No),
    ("remove-files", Arg::No),
    ("restrict", Arg::No),
    ("rmt-command", Arg::Required),
    ("rsh-command", Arg::Required),
    ("same-order", Arg::No),
    ("same-owner", Arg::No),
    ("same-permissions", Arg::No),
    ("seek", Arg::No),
    ("selinux", Arg::No),
    ("show-defaults", Arg::No),
    ("show-omitted-dirs", Arg::No),
    ("show-snapshot-field-ranges", Arg::No),
    ("show-stored-names", Arg::No),
    ("show-transformed-names", Arg::No),
    ("skip-old-files", Arg::No),
    ("sort", Arg::Required),
    ("sparse", Arg::No),
    ("sparse-version", Arg::Required),
    ("starting-file", Arg::Required),
    ("strip-components", Arg::Required),
    ("suffix", Arg::Required),
    ("tape-length", Arg::Required),
    ("test-label", Arg::No),
    ("to-command", Arg::Required),
    ("to-stdout", Arg::No),
    ("totals", Arg::Optional),
    ("touch", Arg::No),
    ("transform", Arg::Required),
    ("uncompress", Arg::No),
    ("ungzip", Arg::No),
    ("unlink-first", Arg::No),
    ("unquote", Arg::No),
    ("update", Arg::No),
    ("usage", Arg::No),
    ("use-compress-program", Arg::Required),
    ("utc", Arg::No),
    ("verbatim-files-from", Arg::No),
    ("verbose", Arg::No),
    ("verify", Arg::No),
    ("version", Arg::No),
    ("volno-file", Arg::Required),
    ("warning", Arg::Required),
    ("wildcards", Arg::No),
    ("wildcards-match-slash", Arg::No),
    ("xattrs", Arg::No),
    ("xattrs-exclude", Arg::Required),
    ("xattrs-include", Arg::Required),
    ("xform", Arg::Required),
    ("xz", Arg::No),
    ("zstd", Arg::No),
];

const GRAMMAR: Grammar = Grammar {
    short: SHORT,
    long: LONG,
    stop_at_operand: false,
    w_long: false,
    negation: false,
};

/// The same grammar where `-W name` means `--name`.
const GRAMMAR_W: Grammar = Grammar {
    w_long: true,
    ..GRAMMAR
};

/// Long options that run a program.
const EXECUTING_LONG: &[&str] = &[
    "to-command",
    "use-compress-program",
    "rsh-command",
    "rmt-command",
    "info-script",
    "new-volume-script",
];
const MULTI_VOLUME_LONG: &[&str] = &["multi-volume", "tape-length"];
const EXECUTING_SHORT: &[char] = &['I', 'F'];
const MULTI_VOLUME_SHORT: &[char] = &['M', 'L'];

/// Checks tar's arguments.
pub fn check(args: &[String]) -> Result<(), String> {
    let args = expand_bundle(args);
    check_items(&GRAMMAR.parse(&args))?;
    check_items(&GRAMMAR_W.parse(&args))
}

/// `cvf a.tar d` → `-c -v -f a.tar d`.
fn expand_bundle(args: &[String]) -> Vec<String> {
    let Some(first) = args.first().filter(|a| !a.starts_with('-')) else {
        return args.to_vec();
    };
    let mut options: Vec<String> = Vec::new();
    let mut values = args[1..].iter();
    for letter in first.chars() {
        options.push(format!("-{letter}"));
        if SHORT
            .iter()
            .any(|(c, a)| *c == letter && *a == Arg::Required)
        {
            if let Some(value) = values.next() {
                options.push(value.clone());
            }
        }
    }
    options.extend(values.cloned());
    options
}

const FILE_LIST: &str = "tar file list read as options (give --verbatim-files-from before -T)";

fn check_items(items: &[Item]) -> Result<(), String> {
    let mut archives: Vec<&str> = Vec::new();
    let mut force_local = false;
    let mut verbatim = false;
    for item in items {
        // An ambiguous abbreviation is an error for tar, not a file list.
        let list = match item {
            Item::Long { candidates, .. } => candidates.len() == 1 && item.long_is(&["files-from"]),
            _ => item.short_is(&['T']),
        };
        if list && !verbatim {
            return Err(FILE_LIST.to_string());
        }
        if let Item::Long {
            candidates,
            negated: false,
            ..
        } = item
        {
            match candidates.as_slice() {
                ["verbatim-files-from"] | ["null"] => verbatim = true,
                ["no-verbatim-files-from"] | ["no-null"] => verbatim = false,
                _ => (),
            }
        }
        match item {
            Item::Operand(_) => (),
            Item::Short(letter, value) => {
                if EXECUTING_SHORT.contains(letter) {
                    return Err(REASON.to_string());
                }
                if MULTI_VOLUME_SHORT.contains(letter) {
                    return Err(MULTI_VOLUME.to_string());
                }
                if *letter == 'f' {
                    archives.extend(value);
                }
            }
            Item::Long {
                candidates, value, ..
            } => {
                if item.long_is(EXECUTING_LONG) {
                    return Err(REASON.to_string());
                }
                if item.long_is(MULTI_VOLUME_LONG) {
                    return Err(MULTI_VOLUME.to_string());
                }
                if item.long_is(&["checkpoint-action"]) {
                    // An ambiguous prefix, a missing value or an `exec` action.
                    let exec = value.is_none_or(|v| v.to_ascii_lowercase().contains("exec"));
                    if candidates.len() > 1 || exec {
                        return Err(REASON.to_string());
                    }
                }
                if candidates.as_slice() == ["force-local"] {
                    force_local = true;
                }
                if candidates.as_slice() == ["file"] {
                    archives.extend(value);
                }
            }
        }
    }
    if !force_local && archives.iter().any(|a| is_remote_archive(a)) {
        return Err(REASON.to_string());
    }
    Ok(())
}

/// GNU tar treats `host:file` (a colon before any slash) as a remote archive.
fn is_remote_archive(name: &str) -> bool {
    match name.find(':') {
        Some(colon) => !name[..colon].contains('/'),
        None => false,
    }
}
