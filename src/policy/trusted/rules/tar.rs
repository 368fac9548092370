//! tar in both dialects: GNU tar and bsdtar (libarchive). Each reads its options its own way,
//! and the same argv can mean different things to each: `-H` takes a value under GNU tar
//! (`--format`) and none under bsdtar (follow symlinks), so `tar -cH --use-compress-program=X`
//! compresses through `X` under bsdtar only; bsdtar's `-W name=value` is `--name=value`
//! (GNU's `-W` is `--verify`); bsdtar's `-I` is a file list where GNU's runs a compressor.
//! `bsdtar` is judged as bsdtar; `tar`, `gtar` and every other name under both (a `gtar` on
//! the path is not always GNU tar, and MCP Shell Server judges it so): dangerous under either
//! reading means refused. Within a dialect the options are read
//! as that tar reads them, after expanding the bundled first argument (`tar cvf a.tar d` is
//! `-c -v -f a.tar d`: letters that take a value take the following arguments in order),
//! with getopt_long's rules: long options by any unambiguous prefix (`--checkpoint-a`), a
//! value may be `--` or start with `-` (`-f -- --use-compress-program=X` names the archive
//! `--`, and the option after it is real), and `--exclude --to-command=x` excludes a pattern.
//! An ambiguous abbreviation is read both ways (taking the next argument as its value, and
//! not), since tar refuses it and neither reading is the real one.
//!
//! Refused: every option that runs a caller-chosen program (`--to-command`,
//! `--use-compress-program`/`-I`, `--rsh-command`, `--rmt-command`,
//! `--info-script`/`--new-volume-script`/`-F`, `--set-mtime-command` (GNU tar after 1.35),
//! and `--checkpoint-action` in any spelling and
//! with any action, as MCP Shell Server does), in GNU tar multi-volume mode (`-M`,
//! `--multi-volume`, and `-L`/`--tape-length`, which implies it: the volume prompt reads `!`
//! from stdin and starts a shell), and GNU remote archives (`-f host:file` runs rsh/ssh with a
//! caller-chosen host, which can be an ssh option such as `-oProxyCommand=...`) unless
//! `--force-local` is given. An abbreviation that could be one of these is refused, and so is
//! an unknown long option that abbreviates one in the other dialect; a long option neither
//! dialect knows is refused too (a newer tar may run a program with it). bsdtar's compression
//! options that start a fixed external compressor when libarchive lacks the library
//! (`--lrzip`, `--lz4`, `--lzop`, `--grzip`, `--zstd`...) run no caller-chosen program and are
//! accepted, as are `-s` substitutions (no program). A file list (`-T`) is data: GNU tar reads
//! only its file-selection options (`-C`, `--exclude`...) from one, none of which runs a
//! program.

use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

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

pub(crate) const LONG: Longs = Longs::words(concat!(
    "absolute-names acls add-file= after-date= anchored append atime-preserve? auto-compress
     backup? block-number blocking-factor= bzip2 catenate check-device check-links checkpoint?
     checkpoint-action= clamp-mtime compare compress concatenate confirmation create
     delay-directory-restore delete dereference diff directory= exclude= exclude-backups
     exclude-caches exclude-caches-all exclude-caches-under exclude-from= exclude-ignore=
     exclude-ignore-recursive= exclude-tag= exclude-tag-all= exclude-tag-under= exclude-vcs
     exclude-vcs-ignores extract file= files-from= force-local format= full-time get group=
     group-map= gunzip gzip hard-dereference help hole-detection= ignore-case
     ignore-command-error ignore-failed-read ignore-zeros incremental index-file= info-script=
     interactive keep-directory-symlink keep-newer-files keep-old-files label= level= list
     listed-incremental= lzip lzma lzop mode= mtime= multi-volume new-volume-script= newer=
     newer-mtime= no-acls no-anchored no-auto-compress no-check-device no-delay-directory-restore
     no-ignore-case no-ignore-command-error no-null no-overwrite-dir no-quote-chars= no-recursion
     no-same-owner no-same-permissions no-seek no-selinux no-unquote no-verbatim-files-from
     no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner occurrence? old-archive
     one-file-system one-top-level? overwrite overwrite-dir owner= owner-map= pax-option=
     portability posix preserve-order preserve-permissions quote-chars= quoting-style=
     read-full-records record-size= recursion recursive-unlink remove-files restrict rmt-command=
     rsh-command= same-order same-owner same-permissions seek selinux",
    // GNU tar after 1.35: runs the command for each file archived.
    " set-mtime-command= set-mtime-format= show-defaults show-omitted-dirs
     show-snapshot-field-ranges show-stored-names show-transformed-names skip-old-files sort=
     sparse sparse-version= starting-file= strip-components= suffix= tape-length= test-label
     to-command= to-stdout totals? touch transform= uncompress ungzip unlink-first unquote update
     usage use-compress-program= utc verbatim-files-from verbose verify version volno-file=
     warning= wildcards wildcards-match-slash xattrs xattrs-exclude= xattrs-include= xform= xz
     zstd",
));

/// GNU tar's grammar.
pub(crate) const GNU: Grammar = Grammar {
    short: SHORT,
    long: LONG,
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// bsdtar's short options (`aBb:C:cf:HhI:JjkLlmnOoPpqrSs:T:tUuvW:wX:xyZz`).
const BSD_SHORT: &[(char, Arg)] = &[
    ('b', Arg::Required),
    ('C', Arg::Required),
    ('f', Arg::Required),
    ('I', Arg::Required),
    ('s', Arg::Required),
    ('T', Arg::Required),
    ('W', Arg::Required),
    ('X', Arg::Required),
];

/// bsdtar's long options (libarchive 3.5 to 3.7, `tar/cmdline.c`); none takes an optional
/// value.
pub(crate) const BSD_LONG: Longs = Longs::words(
    "absolute-paths acls append auto-compress b64encode block-size= blocking-factor= bunzip2 bzip
     bzip2 cd= check-links chroot clear-nochange-fflags compress confirmation create dereference
     directory= disable-copyfile exclude= exclude-from= exclude-vcs extract fast-read fflags
     file= files-from= format= gid= gname= group= grzip gunzip gzip help hfsCompression
     ignore-zeros include= insecure interactive keep-newer-files keep-old-files list lrzip lz4
     lzip lzma lzop mac-metadata modification-time newer= newer-ctime= newer-ctime-than=
     newer-mtime= newer-mtime-than= newer-than= no-acls no-fflags no-mac-metadata no-read-sparse
     no-recursion no-safe-writes no-same-owner no-same-permissions no-xattr no-xattrs nodump
     nopreserveHFSCompression norecurse null numeric-owner older= older-ctime= older-ctime-than=
     older-mtime= older-mtime-than= older-than= one-file-system options= owner= passphrase= posix
     preserve-permissions read-full-blocks read-sparse safe-writes same-owner same-permissions
     strip-components= to-stdout totals uid= uname= uncompress unlink unlink-first update
     use-compress-program= uuencode verbose version xattrs xz zstd",
);

/// bsdtar's grammar: `-W name=value` is `--name=value`. bsdtar stops at its first operand;
/// reading on is stricter and costs nothing a caller needs.
pub(crate) const BSD: Grammar = Grammar {
    short: BSD_SHORT,
    long: BSD_LONG,
    stop_at_operand: false,
    w_long: true,
    negation: false,
    ambiguous_takes_value: true,
};

/// Which tar a name can be.
#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    Gnu,
    Bsd,
}

/// Long options that run a caller-chosen program.
const EXECUTING_LONG: &[&str] = &[
    "to-command",
    "use-compress-program",
    "rsh-command",
    "rmt-command",
    "info-script",
    "new-volume-script",
    "checkpoint-action",
    "set-mtime-command",
];
const MULTI_VOLUME_LONG: &[&str] = &["multi-volume", "tape-length"];
/// GNU's `-I` (`--use-compress-program`) and `-F` (`--info-script`); bsdtar's `-I` is a file
/// list, refused with them because a `tar` may be either.
const EXECUTING_SHORT: &[char] = &['I', 'F'];
const MULTI_VOLUME_SHORT: &[char] = &['M', 'L'];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-cf", "x.tar", "f"],
        &["-tzf", "x.tar.gz"],
        &["--exclude", "--to-command=x", "-cf", "x.tar", "f"],
        &["-xf", "x.tar", "-C", "out"],
    ],
    refuse: &[
        &["-cf", "x.tar", "--checkpoint-action=exec=id", "f"],
        &["--checkpoint-a=exec=id", "-cf", "x.tar", "f"],
        &["-cf", "x.tar", "-I", "sh", "f"],
        &["-xf", "x.tar", "--to-command=sh"],
        &["-cMf", "x.tar", "f"],
        &["-c", "-f", "--", "--use-compress-program=id"],
    ],
};

/// Checks the arguments of a `tar` that may be GNU tar or bsdtar: both readings must pass.
pub fn check(args: &[String]) -> Result<(), String> {
    check_gnu(args)?;
    check_dialect(args, Dialect::Bsd)
}

/// Checks the arguments under GNU tar's reading.
fn check_gnu(args: &[String]) -> Result<(), String> {
    check_dialect(args, Dialect::Gnu)
}

/// bsdtar's accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BSD_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-cf", "x.tar", "f"],
        &["-tvf", "x.tar"],
        &["-xf", "x.tar", "-C", "out"],
    ],
    refuse: &[
        &["-cf", "x.tar", "--use-compress-program=sh", "f"],
        &["-cHWuse-compress-program=helper", "-f", "x.tar", "f"],
        &["-cf", "x.tar", "-W", "use-compress-program=helper", "f"],
        &["-cf", "x.tar", "--some-future-option", "f"],
    ],
};

/// Checks the arguments of bsdtar, which refuses a long option it does not know; so does
/// the rule, since a newer bsdtar may run a program with one.
pub fn check_bsd(args: &[String]) -> Result<(), String> {
    check_dialect(args, Dialect::Bsd)?;
    let args = expand_bundle(args, BSD.short);
    for items in BSD.readings(&args) {
        for item in &items {
            if let Item::Long {
                candidates,
                written,
                ..
            } = item
            {
                if candidates.is_empty() && !written.starts_with('-') {
                    return Err(format!(
                        "unknown bsdtar option --{written} (bsdtar has no option it \
                         abbreviates; a newer bsdtar may run a program with it): spell out an \
                         option of bsdtar"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_dialect(args: &[String], dialect: Dialect) -> Result<(), String> {
    let grammar = match dialect {
        Dialect::Gnu => GNU,
        Dialect::Bsd => BSD,
    };
    let args = expand_bundle(args, grammar.short);
    for items in grammar.readings(&args) {
        check_items(&items, dialect)?;
    }
    Ok(())
}

/// `cvf a.tar d` → `-c -v -f a.tar d`, with the dialect's letters that take a value.
fn expand_bundle(args: &[String], short: &[(char, Arg)]) -> Vec<String> {
    let Some(first) = args.first().filter(|a| !a.starts_with('-')) else {
        return args.to_vec();
    };
    let mut options: Vec<String> = Vec::new();
    let mut values = args[1..].iter();
    for letter in first.chars() {
        options.push(format!("-{letter}"));
        if short
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

/// True when `written` (a long option as written, without dashes, unknown to one dialect)
/// selects a program-running option in the other one.
fn other_dialect_executes(written: &str, dialect: Dialect) -> bool {
    let other = match dialect {
        Dialect::Gnu => BSD,
        Dialect::Bsd => GNU,
    };
    other
        .candidates(written)
        .iter()
        .any(|c| EXECUTING_LONG.contains(c))
}

/// True when `written` (a long option unknown to `dialect`) is unknown to the other too.
fn unknown_to_the_other(written: &str, dialect: Dialect) -> bool {
    let other = match dialect {
        Dialect::Gnu => BSD,
        Dialect::Bsd => GNU,
    };
    other.candidates(written).is_empty()
}

fn check_items(items: &[Item], dialect: Dialect) -> Result<(), String> {
    let mut archives: Vec<&str> = Vec::new();
    let mut force_local = false;
    for item in items {
        match item {
            Item::Operand(_) => (),
            Item::Short(letter, value) => {
                if EXECUTING_SHORT.contains(letter) {
                    return Err(REASON.to_string());
                }
                if dialect == Dialect::Gnu && MULTI_VOLUME_SHORT.contains(letter) {
                    return Err(MULTI_VOLUME.to_string());
                }
                if *letter == 'f' {
                    archives.extend(value);
                }
            }
            Item::Long {
                candidates,
                written,
                value,
                ..
            } => {
                if item.long_is(EXECUTING_LONG)
                    || (candidates.is_empty() && other_dialect_executes(written, dialect))
                {
                    return Err(REASON.to_string());
                }
                // GNU tar grows options (bsdtar's `-W name` is not read here: bsdtar refuses
                // a name it does not know, and `-W -x` names `---x`).
                if dialect == Dialect::Gnu
                    && candidates.is_empty()
                    && !written.starts_with('-')
                    && unknown_to_the_other(written, dialect)
                {
                    return Err(format!(
                        "unknown tar option --{written} (neither GNU tar nor bsdtar has an \
                         option it abbreviates; a newer tar may run a program with it, as GNU \
                         tar's --set-mtime-command does): spell out an option of GNU tar or \
                         bsdtar"
                    ));
                }
                if dialect == Dialect::Gnu && item.long_is(MULTI_VOLUME_LONG) {
                    return Err(MULTI_VOLUME.to_string());
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
    if dialect == Dialect::Gnu && !force_local && archives.iter().any(|a| is_remote_archive(a)) {
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

/// The compressor GNU tar starts itself for an option: `-z`, `--zstd`... (without `-a`).
const COMPRESSORS_SHORT: &[(char, &str)] = &[
    ('z', "gzip"),
    ('j', "bzip2"),
    ('J', "xz"),
    ('Z', "compress"),
];
const COMPRESSORS_LONG: &[(&str, &str)] = &[
    ("gzip", "gzip"),
    ("gunzip", "gzip"),
    ("ungzip", "gzip"),
    ("bzip2", "bzip2"),
    ("xz", "xz"),
    ("lzip", "lzip"),
    ("lzma", "lzma"),
    ("lzop", "lzop"),
    ("zstd", "zstd"),
    ("compress", "compress"),
    ("uncompress", "compress"),
];
/// GNU tar's archive suffixes for `-a` (`--auto-compress`), and the compressor of each.
const SUFFIXES: &[(&str, &str)] = &[
    ("gz", "gzip"),
    ("tgz", "gzip"),
    ("taz", "gzip"),
    ("Z", "compress"),
    ("taZ", "compress"),
    ("bz2", "bzip2"),
    ("tbz", "bzip2"),
    ("tbz2", "bzip2"),
    ("tz2", "bzip2"),
    ("lz", "lzip"),
    ("lzma", "lzma"),
    ("tlz", "lzma"),
    ("lzo", "lzop"),
    ("xz", "xz"),
    ("txz", "xz"),
    ("zst", "zstd"),
    ("tzst", "zstd"),
];

/// The program GNU tar starts itself to compress or decompress its archive, as the
/// arguments ask for it (`-z`, `--zstd`, `-a` with the archive's suffix...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compression {
    /// The compressor's name (`gzip`, `xz`...).
    pub program: &'static str,
    /// The option that asks for it, as the refusal names it (`-z`, `--zstd`, `-a`).
    pub option: String,
    /// True when tar creates an archive (`-c`): it then pipes the archive through the
    /// compressor, which GNU tar up to 1.34 starts through `/bin/sh -c`.
    pub create: bool,
    /// The archive (`-f`), when one is named once.
    pub archive: Option<String>,
    /// The same arguments with the compression options removed and the archive sent to
    /// stdout (`-f -` first), when they can be written again without changing what the
    /// rest means (None: an ambiguous abbreviation, an operand after `--`...).
    pub uncompressed: Option<Vec<String>>,
}

/// What GNU tar would compress through (read as GNU tar reads it; bsdtar compresses with
/// libarchive in its own process). None when it compresses nothing, or when the options
/// conflict (tar itself refuses them).
pub fn compression(args: &[String]) -> Option<Compression> {
    let args = expand_bundle(args, GNU.short);
    let [items, other] = GNU.readings(&args);
    let mut chosen: Option<(&'static str, String)> = None;
    let mut auto = false;
    let mut create = false;
    let mut archives: Vec<&str> = Vec::new();
    let mut rebuilt: Option<Vec<String>> = (items == other).then(Vec::new);
    let mut choose = |program: &'static str, option: String| match &chosen {
        Some((p, _)) if *p != program => Err(()),
        _ => {
            chosen = Some((program, option));
            Ok(())
        }
    };
    for item in &items {
        let mut keep: Vec<String> = Vec::new();
        match item {
            Item::Short(letter, value) => {
                if let Some((_, program)) = COMPRESSORS_SHORT.iter().find(|(c, _)| c == letter) {
                    choose(program, format!("-{letter}")).ok()?;
                } else if *letter == 'a' {
                    auto = true;
                } else if *letter == 'f' {
                    archives.extend(value);
                } else {
                    create |= *letter == 'c';
                    keep.push(format!("-{letter}"));
                    keep.extend(value.map(str::to_string));
                }
            }
            Item::Long {
                candidates, value, ..
            } => {
                let [name] = candidates.as_slice() else {
                    rebuilt = None;
                    continue;
                };
                if let Some((_, program)) = COMPRESSORS_LONG.iter().find(|(n, _)| n == name) {
                    choose(program, format!("--{name}")).ok()?;
                } else if *name == "auto-compress" || *name == "no-auto-compress" {
                    auto = *name == "auto-compress";
                } else if *name == "file" {
                    archives.extend(value);
                } else {
                    create |= *name == "create";
                    match (GNU.long_arg(name), value) {
                        (Some(Arg::Optional), Some(v)) => keep.push(format!("--{name}={v}")),
                        (_, Some(v)) => keep.extend([format!("--{name}"), v.to_string()]),
                        (_, None) => keep.push(format!("--{name}")),
                    }
                }
            }
            Item::Operand(o) => {
                if o.starts_with('-') && *o != "-" {
                    rebuilt = None;
                }
                keep.push(o.to_string());
            }
        }
        if let Some(r) = &mut rebuilt {
            r.extend(keep);
        }
    }
    let archive = match archives.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    };
    if auto && create {
        let suffix = archive
            .as_deref()
            .and_then(|a| a.rsplit_once('.'))
            .map(|(_, s)| s);
        if let Some((_, program)) = SUFFIXES.iter().find(|(s, _)| Some(*s) == suffix) {
            choose(program, "-a".into()).ok()?;
        }
    }
    let (program, option) = chosen?;
    let uncompressed = rebuilt.filter(|_| archive.is_some()).map(|r| {
        let mut argv = vec!["-f".to_string(), "-".to_string()];
        argv.extend(r);
        argv
    });
    Some(Compression {
        program,
        option,
        create,
        archive,
        uncompressed,
    })
}
