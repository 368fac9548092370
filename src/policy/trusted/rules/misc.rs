//! Smaller rules: fd, rg, split, diff3/sdiff and wget, each refusing the option that runs a
//! command given in the arguments. Each is a closed grammar read as the program reads its
//! options (`getopt`): an option it does not know is refused, naming it.

use crate::policy::trusted::getopt::{Arg, Grammar, Item};

/// fd 10's options, from its `clap` definition (`src/cli.rs`): every long option and alias
/// (clap takes no abbreviations: `check_fd` refuses one as unknown), the hidden negations (`--no-hidden`, `--ignore`, …) and `-1`. Values are attached
/// (`-d3`, `--max-depth=3`) or the next argument; clap reads a
/// separate value that starts with `-` as a new option and reports the missing value.
#[rustfmt::skip]
const FD: Grammar = Grammar {
    short: &[
        ('H', Arg::No), ('I', Arg::No), ('u', Arg::No), ('s', Arg::No), ('i', Arg::No),
        ('g', Arg::No), ('F', Arg::No), ('a', Arg::No), ('l', Arg::No), ('L', Arg::No),
        ('p', Arg::No), ('0', Arg::No), ('1', Arg::No), ('q', Arg::No), ('h', Arg::No),
        ('V', Arg::No), ('d', Arg::Required), ('E', Arg::Required), ('t', Arg::Required),
        ('e', Arg::Required), ('S', Arg::Required), ('o', Arg::Required), ('c', Arg::Required),
        ('j', Arg::Required), ('C', Arg::Required), ('x', Arg::Required), ('X', Arg::Required),
    ],
    long: &[
        ("hidden", Arg::No), ("no-hidden", Arg::No), ("no-ignore", Arg::No), ("ignore", Arg::No),
        ("no-ignore-vcs", Arg::No), ("ignore-vcs", Arg::No), ("no-require-git", Arg::No),
        ("require-git", Arg::No), ("no-ignore-parent", Arg::No), ("ignore-parent", Arg::No),
        ("no-global-ignore-file", Arg::No), ("unrestricted", Arg::No),
        ("case-sensitive", Arg::No), ("ignore-case", Arg::No), ("glob", Arg::No),
        ("regex", Arg::No), ("fixed-strings", Arg::No), ("literal", Arg::No), ("exact", Arg::No),
        ("and", Arg::Required), ("absolute-path", Arg::No), ("relative-path", Arg::No),
        ("list-details", Arg::No), ("follow", Arg::No), ("dereference", Arg::No),
        ("no-follow", Arg::No), ("full-path", Arg::No), ("print0", Arg::No),
        ("max-depth", Arg::Required), ("maxdepth", Arg::Required), ("min-depth", Arg::Required),
        ("mindepth", Arg::Required), ("exact-depth", Arg::Required), ("exclude", Arg::Required),
        ("prune", Arg::No), ("type", Arg::Required), ("extension", Arg::Required),
        ("size", Arg::Required), ("changed-within", Arg::Required),
        ("change-newer-than", Arg::Required), ("newer", Arg::Required),
        ("changed-after", Arg::Required), ("changed-before", Arg::Required),
        ("change-older-than", Arg::Required), ("older", Arg::Required), ("owner", Arg::Required),
        ("format", Arg::Required), ("exec", Arg::Required), ("exec-batch", Arg::Required),
        ("batch-size", Arg::Required), ("ignore-file", Arg::Required), ("color", Arg::Required),
        ("hyperlink", Arg::Optional), ("hyper", Arg::Optional), ("ignore-contain", Arg::Required),
        ("threads", Arg::Required), ("max-buffer-time", Arg::Required),
        ("max-results", Arg::Required), ("quiet", Arg::No), ("has-results", Arg::No),
        ("show-errors", Arg::No), ("base-directory", Arg::Required),
        ("path-separator", Arg::Required), ("search-path", Arg::Required),
        ("strip-cwd-prefix", Arg::Optional), ("one-file-system", Arg::No), ("mount", Arg::No),
        ("xdev", Arg::No), ("gen-completions", Arg::Optional), ("help", Arg::No),
        ("version", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const FD_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-e", "rs", "src"],
        &["-H", "pattern"],
        &["--", "-x"],
        &["-tf", "-E", "target", "--max-depth=3", "x"],
        &["-HI", "-d3", "--changed-within", "2weeks", "x", "src"],
        &["--format", "{/}", "--strip-cwd-prefix=always", "."],
        &["-l", "x"],
    ],
    refuse: &[
        &["-x", "sh"],
        &["-Hx", "sh"],
        &["-Xsh"],
        &["--exec", "sh"],
        &["--exec-batch=sh"],
        &["--exec-b", "sh"],
        &["--ex", "sh"],
        &["-tf", "-X", "rm"],
        &["--some-future-option", "x"],
        &["-K", "x"],
        &["--max-d", "--exec=sh"],
        &["--hid", "x"],
    ],
};

/// fd: `-x`/`-X`/`--exec`/`--exec-batch` run a command for each match (or for all of them);
/// an option the grammar does not have is refused. `-l` runs `ls` from the `PATH` the
/// server sets, not a program the caller names.
pub fn check_fd(args: &[String]) -> Result<(), String> {
    super::closed("fd", &FD, args, |item| {
        if item.short_is(&['x', 'X']) || item.long_is(&["exec", "exec-batch"]) {
            Some("fd --exec".to_string())
        } else {
            abbreviation("fd", item)
        }
    })
}

/// ripgrep's flags (14 and 15, from `crates/core/flags/defs.rs`, without the build-time
/// `unstable-index` ones): each flag's long name, aliases, negation and short letter. rg's
/// parser (lexopt) takes no abbreviations: `check_rg` refuses one as unknown.
/// `RIPGREP_CONFIG_PATH` (a file of flags) is the environment's, which a
/// call cannot set.
#[rustfmt::skip]
const RG: Grammar = Grammar {
    short: &[
        ('A', Arg::Required), ('B', Arg::Required), ('b', Arg::No), ('s', Arg::No),
        ('C', Arg::Required), ('c', Arg::No), ('E', Arg::Required), ('f', Arg::Required),
        ('l', Arg::No), ('F', Arg::No), ('L', Arg::No), ('g', Arg::Required), ('h', Arg::No),
        ('.', Arg::No), ('i', Arg::No), ('v', Arg::No), ('n', Arg::No), ('N', Arg::No),
        ('x', Arg::No), ('M', Arg::Required), ('m', Arg::Required), ('d', Arg::Required),
        ('U', Arg::No), ('0', Arg::No), ('o', Arg::No), ('P', Arg::No), ('p', Arg::No),
        ('q', Arg::No), ('e', Arg::Required), ('r', Arg::Required), ('z', Arg::No),
        ('S', Arg::No), ('a', Arg::No), ('j', Arg::Required), ('t', Arg::Required),
        ('T', Arg::Required), ('u', Arg::No), ('V', Arg::No), ('H', Arg::No), ('I', Arg::No),
        ('w', Arg::No),
    ],
    long: &[
        ("after-context", Arg::Required), ("auto-hybrid-regex", Arg::No),
        ("no-auto-hybrid-regex", Arg::No), ("before-context", Arg::Required), ("binary", Arg::No),
        ("no-binary", Arg::No), ("block-buffered", Arg::No), ("no-block-buffered", Arg::No),
        ("byte-offset", Arg::No), ("no-byte-offset", Arg::No), ("case-sensitive", Arg::No),
        ("color", Arg::Required), ("colors", Arg::Required), ("column", Arg::No),
        ("no-column", Arg::No), ("context", Arg::Required), ("context-separator", Arg::Required),
        ("no-context-separator", Arg::No), ("count", Arg::No), ("count-matches", Arg::No),
        ("crlf", Arg::No), ("no-crlf", Arg::No), ("debug", Arg::No),
        ("dfa-size-limit", Arg::Required), ("encoding", Arg::Required), ("no-encoding", Arg::No),
        ("engine", Arg::Required), ("field-context-separator", Arg::Required),
        ("field-match-separator", Arg::Required), ("file", Arg::Required), ("files", Arg::No),
        ("files-with-matches", Arg::No), ("files-without-match", Arg::No),
        ("fixed-strings", Arg::No), ("no-fixed-strings", Arg::No), ("follow", Arg::No),
        ("no-follow", Arg::No), ("generate", Arg::Required), ("glob", Arg::Required),
        ("glob-case-insensitive", Arg::No), ("no-glob-case-insensitive", Arg::No),
        ("heading", Arg::No), ("no-heading", Arg::No), ("help", Arg::No), ("hidden", Arg::No),
        ("no-hidden", Arg::No), ("hostname-bin", Arg::Required),
        ("hyperlink-format", Arg::Required), ("iglob", Arg::Required), ("ignore-case", Arg::No),
        ("ignore-file", Arg::Required), ("ignore-file-case-insensitive", Arg::No),
        ("no-ignore-file-case-insensitive", Arg::No), ("include-zero", Arg::No),
        ("no-include-zero", Arg::No), ("invert-match", Arg::No), ("no-invert-match", Arg::No),
        ("json", Arg::No), ("no-json", Arg::No), ("line-buffered", Arg::No),
        ("no-line-buffered", Arg::No), ("line-number", Arg::No), ("no-line-number", Arg::No),
        ("line-regexp", Arg::No), ("max-columns", Arg::Required), ("max-columns-preview", Arg::No),
        ("no-max-columns-preview", Arg::No), ("max-count", Arg::Required),
        ("max-depth", Arg::Required), ("maxdepth", Arg::Required), ("max-filesize", Arg::Required),
        ("mmap", Arg::No), ("no-mmap", Arg::No), ("multiline", Arg::No), ("no-multiline", Arg::No),
        ("multiline-dotall", Arg::No), ("no-multiline-dotall", Arg::No), ("no-config", Arg::No),
        ("no-ignore", Arg::No), ("ignore", Arg::No), ("no-ignore-dot", Arg::No),
        ("ignore-dot", Arg::No), ("no-ignore-exclude", Arg::No), ("ignore-exclude", Arg::No),
        ("no-ignore-files", Arg::No), ("ignore-files", Arg::No), ("no-ignore-global", Arg::No),
        ("ignore-global", Arg::No), ("no-ignore-messages", Arg::No), ("ignore-messages", Arg::No),
        ("no-ignore-parent", Arg::No), ("ignore-parent", Arg::No), ("no-ignore-vcs", Arg::No),
        ("ignore-vcs", Arg::No), ("no-messages", Arg::No), ("messages", Arg::No),
        ("no-pcre2-unicode", Arg::No), ("pcre2-unicode", Arg::No), ("no-require-git", Arg::No),
        ("require-git", Arg::No), ("no-unicode", Arg::No), ("unicode", Arg::No), ("null", Arg::No),
        ("null-data", Arg::No), ("one-file-system", Arg::No), ("no-one-file-system", Arg::No),
        ("only-matching", Arg::No), ("path-separator", Arg::Required), ("passthru", Arg::No),
        ("passthrough", Arg::No), ("pcre2", Arg::No), ("no-pcre2", Arg::No),
        ("pcre2-version", Arg::No), ("pre", Arg::Required), ("no-pre", Arg::No),
        ("pre-glob", Arg::Required), ("pretty", Arg::No), ("quiet", Arg::No),
        ("regex-size-limit", Arg::Required), ("regexp", Arg::Required), ("replace", Arg::Required),
        ("search-zip", Arg::No), ("no-search-zip", Arg::No), ("smart-case", Arg::No),
        ("sort-files", Arg::No), ("no-sort-files", Arg::No), ("sort", Arg::Required),
        ("sortr", Arg::Required), ("stats", Arg::No), ("no-stats", Arg::No),
        ("stop-on-nonmatch", Arg::No), ("text", Arg::No), ("no-text", Arg::No),
        ("threads", Arg::Required), ("trace", Arg::No), ("trim", Arg::No), ("no-trim", Arg::No),
        ("type", Arg::Required), ("type-add", Arg::Required), ("type-clear", Arg::Required),
        ("type-not", Arg::Required), ("type-list", Arg::No), ("unrestricted", Arg::No),
        ("version", Arg::No), ("vimgrep", Arg::No), ("with-filename", Arg::No),
        ("no-filename", Arg::No), ("word-regexp", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const RG_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-n", "TODO", "src"],
        &["--", "--pre"],
        &["-g", "*.rs", "x"],
        &["-e", "--pre=sh", "x"],
        &["--no-pre", "-z", "x"],
        &["-inA2", "--type", "rust", "--glob=!target", "x"],
        &["--pre-glob", "*.gz", "-l", "x"],
        &["--json", "--no-ignore", "-uu", "x", "."],
    ],
    refuse: &[
        &["--pre", "sh", "x"],
        &["--pre=sh", "x"],
        &["--pr", "sh", "x"],
        &["-n", "x", "--pre", "sh"],
        &["--hostname-bin", "sh", "x"],
        &["--hostname-bin=sh", "x"],
        &["--hostname", "sh", "x"],
        &["--some-future-option", "x"],
        &["-K", "x"],
        &["--max-c", "--pre=sh", "x"],
        &["--hid", "x"],
    ],
};

/// rg: `--pre COMMAND` runs a preprocessor on every searched file, `--hostname-bin COMMAND`
/// a program that prints the host name (ripgrep 14 runs it for hyperlinks); an option the
/// grammar does not have is refused. `-z` runs decompressors from the server's `PATH`, not
/// programs the caller names.
pub fn check_rg(args: &[String]) -> Result<(), String> {
    super::closed("rg", &RG, args, |item| {
        if item.long_is(&["pre"]) {
            Some("rg --pre".to_string())
        } else if item.long_is(&["hostname-bin"]) {
            Some("rg --hostname-bin".to_string())
        } else {
            abbreviation("rg", item)
        }
    })
}

/// An abbreviated long option, for the programs that take none (fd's clap, rg's lexopt): the
/// program reads the name exactly, so a newer version's option of that name could take no
/// value where the abbreviated one takes the next argument, and hide an option there.
fn abbreviation(program: &str, item: &Item<'_>) -> Option<String> {
    match item {
        Item::Long {
            candidates,
            written,
            ..
        } if !candidates.is_empty() && !candidates.contains(written) => Some(
            crate::policy::trusted::rules::not_known(&format!("{program} option --{written}")),
        ),
        _ => None,
    }
}

/// GNU split's options (coreutils 9.1's `--help` and optstring, with the obsolete `-NUM` as
/// digit letters and the hidden `---io-blksize`).
#[rustfmt::skip]
const SPLIT: Grammar = Grammar {
    short: &[
        ('a', Arg::Required), ('b', Arg::Required), ('C', Arg::Required), ('d', Arg::No),
        ('e', Arg::No), ('l', Arg::Required), ('n', Arg::Required), ('t', Arg::Required),
        ('u', Arg::No), ('x', Arg::No), ('0', Arg::No), ('1', Arg::No), ('2', Arg::No),
        ('3', Arg::No), ('4', Arg::No), ('5', Arg::No), ('6', Arg::No), ('7', Arg::No),
        ('8', Arg::No), ('9', Arg::No),
    ],
    long: &[
        ("suffix-length", Arg::Required), ("additional-suffix", Arg::Required),
        ("bytes", Arg::Required), ("line-bytes", Arg::Required),
        ("numeric-suffixes", Arg::Optional), ("hex-suffixes", Arg::Optional),
        ("elide-empty-files", Arg::No), ("filter", Arg::Required), ("lines", Arg::Required),
        ("number", Arg::Required), ("separator", Arg::Required), ("unbuffered", Arg::No),
        ("verbose", Arg::No), ("-io-blksize", Arg::Required), ("help", Arg::No),
        ("version", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SPLIT_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-l", "100", "f", "part-"],
        &["-b", "1M", "f"],
        &["-d", "-a3", "--additional-suffix=.txt", "-n", "l/4", "f"],
        &["-1000", "f"],
        &["-t", "--filter=x", "f"],
        &["--", "--filter=sh"],
    ],
    refuse: &[
        &["--filter=sh", "f"],
        &["--fil", "sh", "f"],
        &["--f=sh", "f"],
        &["-l", "1", "--filter", "id", "f"],
        &["f", "--filter=id"],
        &["--some-future-option", "f"],
        &["-z", "f"],
    ],
};

/// split: `--filter=COMMAND` pipes every chunk through a shell command; an option the grammar
/// does not have is refused.
pub fn check_split(args: &[String]) -> Result<(), String> {
    super::closed("split", &SPLIT, args, |item| {
        item.long_is(&["filter"])
            .then(|| "split --filter".to_string())
    })
}

/// GNU diff3's options (diffutils 3.8's `--help` and optstring).
#[rustfmt::skip]
const DIFF3: Grammar = Grammar {
    short: &[
        ('a', Arg::No), ('e', Arg::No), ('i', Arg::No), ('m', Arg::No), ('v', Arg::No),
        ('x', Arg::No), ('3', Arg::No), ('A', Arg::No), ('E', Arg::No), ('L', Arg::Required),
        ('T', Arg::No), ('X', Arg::No),
    ],
    long: &[
        ("text", Arg::No), ("strip-trailing-cr", Arg::No), ("show-all", Arg::No), ("ed", Arg::No),
        ("diff-program", Arg::Required), ("show-overlap", Arg::No), ("label", Arg::Required),
        ("merge", Arg::No), ("initial-tab", Arg::No), ("overlap-only", Arg::No),
        ("easy-only", Arg::No), ("version", Arg::No), ("help", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// GNU sdiff's options (diffutils 3.8's `--help` and optstring).
#[rustfmt::skip]
const SDIFF: Grammar = Grammar {
    short: &[
        ('a', Arg::No), ('b', Arg::No), ('B', Arg::No), ('d', Arg::No), ('E', Arg::No),
        ('H', Arg::No), ('i', Arg::No), ('I', Arg::Required), ('l', Arg::No),
        ('o', Arg::Required), ('s', Arg::No), ('t', Arg::No), ('v', Arg::No),
        ('w', Arg::Required), ('W', Arg::No), ('Z', Arg::No),
    ],
    long: &[
        ("output", Arg::Required), ("ignore-case", Arg::No), ("ignore-tab-expansion", Arg::No),
        ("ignore-trailing-space", Arg::No), ("ignore-space-change", Arg::No),
        ("ignore-all-space", Arg::No), ("ignore-blank-lines", Arg::No),
        ("ignore-matching-lines", Arg::Required), ("strip-trailing-cr", Arg::No),
        ("text", Arg::No), ("width", Arg::Required), ("left-column", Arg::No),
        ("suppress-common-lines", Arg::No), ("expand-tabs", Arg::No), ("tabsize", Arg::Required),
        ("minimal", Arg::No), ("speed-large-files", Arg::No), ("diff-program", Arg::Required),
        ("help", Arg::No), ("version", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Why `--diff-program` is refused.
const DIFF_PROGRAM: &str = "external diff program";

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const DIFF_PROGRAM_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b", "c"],
        &["-m", "a", "b", "c"],
        &["-mL", "mine", "-L", "base", "--label=theirs", "a", "b", "c"],
        &["-E", "-i", "--strip-trailing-cr", "a", "b", "c"],
        &["-L", "--diff-program=sh", "a", "b", "c"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b", "c"],
        &["--diff-p", "sh", "a", "b", "c"],
        &["--d=sh", "a", "b", "c"],
        &["a", "b", "c", "--diff-program", "sh"],
        &["--some-future-option", "a", "b", "c"],
        &["-Z", "a", "b", "c"],
    ],
};

/// diff3: `--diff-program=PROGRAM` runs the named program; an option the grammar does not
/// have is refused.
pub fn check_diff_program(args: &[String]) -> Result<(), String> {
    super::closed("diff3", &DIFF3, args, |item| {
        item.long_is(&["diff-program"])
            .then(|| DIFF_PROGRAM.to_string())
    })
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SDIFF_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b"],
        &["-s", "-w", "80", "a", "b"],
        &["-sw80", "a", "b"],
        &["-I", "-o", "a", "b"],
        &["--ignore-all-space", "--tabsize=4", "-l", "a", "b"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b"],
        &["--diff", "sh", "a", "b"],
        &["-o", "out", "a", "b"],
        &["-so", "out", "a", "b"],
        &["-sout", "a", "b"],
        &["--output=out", "a", "b"],
        &["--out", "out", "a", "b"],
        &["--some-future-option", "a", "b"],
        &["-x", "a", "b"],
    ],
};

/// sdiff: `--diff-program` runs the named program; with `-o`/`--output` it merges
/// interactively, and its `e` commands start an editor (`ed` by default, which runs shell
/// commands from the same stdin); an option the grammar does not have is refused.
pub fn check_sdiff(args: &[String]) -> Result<(), String> {
    super::closed("sdiff", &SDIFF, args, |item| {
        if item.long_is(&["diff-program"]) {
            Some(DIFF_PROGRAM.to_string())
        } else if item.long_is(&["output"]) || item.short_is(&['o']) {
            Some("interactive merge (its e command starts an editor)".to_string())
        } else {
            None
        }
    })
}

/// GNU wget's options, from its option table (`option_data` in wget 1.21's `src/main.c`, with
/// the TLS, c-ares, metalink and zlib ones): a value option takes a value, a boolean one an
/// optional `=value` and has a `--no-` form, and `-n` takes its letters as a value (`-nv`,
/// `-nc`).
#[rustfmt::skip]
const WGET: Grammar = Grammar {
    short: &[
        ('4', Arg::No), ('6', Arg::No), ('A', Arg::Required), ('B', Arg::Required),
        ('D', Arg::Required), ('E', Arg::No), ('F', Arg::No), ('H', Arg::No), ('I', Arg::Required),
        ('K', Arg::No), ('L', Arg::No), ('N', Arg::No), ('O', Arg::Required), ('P', Arg::Required),
        ('Q', Arg::Required), ('R', Arg::Required), ('S', Arg::No), ('T', Arg::Required),
        ('U', Arg::Required), ('V', Arg::No), ('X', Arg::Required), ('Y', Arg::Required),
        ('a', Arg::Required), ('b', Arg::No), ('c', Arg::No), ('d', Arg::No), ('e', Arg::Required),
        ('h', Arg::No), ('i', Arg::Required), ('k', Arg::No), ('l', Arg::Required), ('m', Arg::No),
        ('n', Arg::Required), ('o', Arg::Required), ('p', Arg::No), ('q', Arg::No), ('r', Arg::No),
        ('t', Arg::Required), ('v', Arg::No), ('w', Arg::Required), ('x', Arg::No),
    ],
    long: &[
        ("accept", Arg::Required), ("accept-regex", Arg::Required),
        ("adjust-extension", Arg::Optional), ("append-output", Arg::Required),
        ("ask-password", Arg::Optional), ("auth-no-challenge", Arg::Optional),
        ("background", Arg::Optional), ("backup-converted", Arg::Optional),
        ("backups", Arg::Optional), ("base", Arg::Required), ("bind-address", Arg::Required),
        ("bind-dns-address", Arg::Required), ("body-data", Arg::Required),
        ("body-file", Arg::Required), ("ca-certificate", Arg::Required),
        ("ca-directory", Arg::Required), ("cache", Arg::Optional), ("certificate", Arg::Required),
        ("certificate-type", Arg::Required), ("check-certificate", Arg::Optional),
        ("ciphers", Arg::Required), ("clobber", Arg::Optional), ("compression", Arg::Required),
        ("config", Arg::Required), ("connect-timeout", Arg::Required),
        ("content-disposition", Arg::Optional), ("content-on-error", Arg::Optional),
        ("continue", Arg::Optional), ("convert-file-only", Arg::Optional),
        ("convert-links", Arg::Optional), ("cookies", Arg::Optional), ("crl-file", Arg::Required),
        ("cut-dirs", Arg::Required), ("debug", Arg::Optional), ("default-page", Arg::Required),
        ("delete-after", Arg::Optional), ("directories", Arg::Optional),
        ("directory-prefix", Arg::Required), ("dns-cache", Arg::Optional),
        ("dns-servers", Arg::Required), ("dns-timeout", Arg::Required), ("domains", Arg::Required),
        ("dont-remove-listing", Arg::No), ("dot-style", Arg::Required),
        ("egd-file", Arg::Required), ("exclude-directories", Arg::Required),
        ("exclude-domains", Arg::Required), ("execute", Arg::Required),
        ("follow-ftp", Arg::Optional), ("follow-tags", Arg::Required),
        ("force-directories", Arg::Optional), ("force-html", Arg::Optional),
        ("ftp-password", Arg::Required), ("ftp-stmlf", Arg::Optional), ("ftp-user", Arg::Required),
        ("ftps-clear-data-connection", Arg::Optional), ("ftps-fallback-to-ftp", Arg::Optional),
        ("ftps-implicit", Arg::Optional), ("ftps-resume-ssl", Arg::Optional),
        ("glob", Arg::Optional), ("header", Arg::Required), ("help", Arg::No),
        ("host-directories", Arg::Optional), ("hsts", Arg::Optional), ("hsts-file", Arg::Required),
        ("html-extension", Arg::Optional), ("htmlify", Arg::Optional),
        ("http-keep-alive", Arg::Optional), ("http-passwd", Arg::Required),
        ("http-password", Arg::Required), ("http-user", Arg::Required),
        ("https-only", Arg::Optional), ("if-modified-since", Arg::Optional),
        ("ignore-case", Arg::Optional), ("ignore-length", Arg::Optional),
        ("ignore-tags", Arg::Required), ("include-directories", Arg::Required),
        ("inet4-only", Arg::Optional), ("inet6-only", Arg::Optional),
        ("input-file", Arg::Required), ("input-metalink", Arg::Required), ("iri", Arg::Optional),
        ("keep-badhash", Arg::Optional), ("keep-session-cookies", Arg::Optional),
        ("level", Arg::Required), ("limit-rate", Arg::Required), ("load-cookies", Arg::Required),
        ("local-encoding", Arg::Required), ("max-redirect", Arg::Required),
        ("metalink-index", Arg::Required), ("metalink-over-http", Arg::Optional),
        ("method", Arg::Required), ("mirror", Arg::Optional), ("netrc", Arg::Optional),
        ("no", Arg::Required), ("no-adjust-extension", Arg::No), ("no-ask-password", Arg::No),
        ("no-auth-no-challenge", Arg::No), ("no-background", Arg::No),
        ("no-backup-converted", Arg::No), ("no-backups", Arg::No), ("no-cache", Arg::No),
        ("no-check-certificate", Arg::No), ("no-clobber", Arg::Optional),
        ("no-config", Arg::Optional), ("no-content-disposition", Arg::No),
        ("no-content-on-error", Arg::No), ("no-continue", Arg::No),
        ("no-convert-file-only", Arg::No), ("no-convert-links", Arg::No), ("no-cookies", Arg::No),
        ("no-debug", Arg::No), ("no-delete-after", Arg::No), ("no-directories", Arg::No),
        ("no-dns-cache", Arg::No), ("no-follow-ftp", Arg::No), ("no-force-directories", Arg::No),
        ("no-force-html", Arg::No), ("no-ftp-stmlf", Arg::No),
        ("no-ftps-clear-data-connection", Arg::No), ("no-ftps-fallback-to-ftp", Arg::No),
        ("no-ftps-implicit", Arg::No), ("no-ftps-resume-ssl", Arg::No), ("no-glob", Arg::No),
        ("no-host-directories", Arg::No), ("no-hsts", Arg::No), ("no-html-extension", Arg::No),
        ("no-htmlify", Arg::No), ("no-http-keep-alive", Arg::No), ("no-https-only", Arg::No),
        ("no-if-modified-since", Arg::No), ("no-ignore-case", Arg::No),
        ("no-ignore-length", Arg::No), ("no-inet4-only", Arg::No), ("no-inet6-only", Arg::No),
        ("no-iri", Arg::No), ("no-keep-badhash", Arg::No), ("no-keep-session-cookies", Arg::No),
        ("no-metalink-over-http", Arg::No), ("no-mirror", Arg::No), ("no-netrc", Arg::No),
        ("no-no-clobber", Arg::No), ("no-no-config", Arg::No), ("no-no-parent", Arg::No),
        ("no-page-requisites", Arg::No), ("no-parent", Arg::Optional), ("no-passive-ftp", Arg::No),
        ("no-preserve-permissions", Arg::No), ("no-protocol-directories", Arg::No),
        ("no-proxy", Arg::No), ("no-quiet", Arg::No), ("no-random-wait", Arg::No),
        ("no-recursive", Arg::No), ("no-relative", Arg::No), ("no-remove-listing", Arg::No),
        ("no-report-speed", Arg::No), ("no-restrict-file-names", Arg::No),
        ("no-retr-symlinks", Arg::No), ("no-retry-connrefused", Arg::No),
        ("no-retry-on-host-error", Arg::No), ("no-save-headers", Arg::No),
        ("no-server-response", Arg::No), ("no-show-progress", Arg::No), ("no-span-hosts", Arg::No),
        ("no-spider", Arg::No), ("no-strict-comments", Arg::No), ("no-timestamping", Arg::No),
        ("no-trust-server-names", Arg::No), ("no-unlink", Arg::No),
        ("no-use-server-timestamps", Arg::No), ("no-verbose", Arg::No), ("no-warc-cdx", Arg::No),
        ("no-warc-compression", Arg::No), ("no-warc-digests", Arg::No),
        ("no-warc-keep-log", Arg::No), ("no-wdebug", Arg::No), ("no-xattr", Arg::No),
        ("output-document", Arg::Required), ("output-file", Arg::Required),
        ("page-requisites", Arg::Optional), ("parent", Arg::Optional),
        ("passive-ftp", Arg::Optional), ("password", Arg::Required),
        ("pinnedpubkey", Arg::Required), ("post-data", Arg::Required),
        ("post-file", Arg::Required), ("prefer-family", Arg::Required),
        ("preferred-location", Arg::Required), ("preserve-permissions", Arg::Optional),
        ("private-key", Arg::Required), ("private-key-type", Arg::Required),
        ("progress", Arg::Required), ("protocol-directories", Arg::Optional),
        ("proxy", Arg::Optional), ("proxy-passwd", Arg::Required),
        ("proxy-password", Arg::Required), ("proxy-user", Arg::Required),
        ("proxy__compat", Arg::Required), ("quiet", Arg::Optional), ("quota", Arg::Required),
        ("random-file", Arg::Required), ("random-wait", Arg::Optional),
        ("read-timeout", Arg::Required), ("recursive", Arg::Optional), ("referer", Arg::Required),
        ("regex-type", Arg::Required), ("reject", Arg::Required), ("reject-regex", Arg::Required),
        ("rejected-log", Arg::Required), ("relative", Arg::Optional),
        ("remote-encoding", Arg::Required), ("remove-listing", Arg::Optional),
        ("report-speed", Arg::Optional), ("restrict-file-names", Arg::Optional),
        ("retr-symlinks", Arg::Optional), ("retry-connrefused", Arg::Optional),
        ("retry-on-host-error", Arg::Optional), ("retry-on-http-error", Arg::Required),
        ("save-cookies", Arg::Required), ("save-headers", Arg::Optional),
        ("secure-protocol", Arg::Required), ("server-response", Arg::Optional),
        ("show-progress", Arg::Optional), ("span-hosts", Arg::Optional), ("spider", Arg::Optional),
        ("start-pos", Arg::Required), ("strict-comments", Arg::Optional),
        ("timeout", Arg::Required), ("timestamping", Arg::Optional), ("tries", Arg::Required),
        ("trust-server-names", Arg::Optional), ("unlink", Arg::Optional),
        ("use-askpass", Arg::Required), ("use-server-timestamps", Arg::Optional),
        ("user", Arg::Required), ("user-agent", Arg::Required), ("verbose", Arg::Optional),
        ("version", Arg::No), ("wait", Arg::Required), ("waitretry", Arg::Required),
        ("warc-cdx", Arg::Optional), ("warc-compression", Arg::Optional),
        ("warc-dedup", Arg::Required), ("warc-digests", Arg::Optional),
        ("warc-file", Arg::Required), ("warc-header", Arg::Required),
        ("warc-keep-log", Arg::Optional), ("warc-max-size", Arg::Required),
        ("warc-tempdir", Arg::Required), ("wdebug", Arg::Optional), ("xattr", Arg::Optional),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const WGET_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-q", "-O", "out.html", "https://example.com"],
        &["https://example.com/f"],
        &["-Oe", "https://example.com"],
        &[
            "-nv",
            "-c",
            "--tries=3",
            "--no-check-certificate",
            "https://example.com",
        ],
        &[
            "-r",
            "-np",
            "-nH",
            "--cut-dirs=2",
            "-A",
            "*.tar.gz",
            "https://example.com/d/",
        ],
        &[
            "--no-config",
            "--header",
            "--execute=x",
            "https://example.com",
        ],
        &["-U", "-e", "https://example.com"],
    ],
    refuse: &[
        &["--use-askpass=sh", "https://example.com"],
        &["--use-a", "sh", "https://example.com"],
        &["-e", "use_askpass=sh", "https://example.com"],
        &["--execute", "x=y"],
        &["--exec=x=y"],
        &["--config", "rc", "https://example.com"],
        &["--conf=rc", "https://example.com"],
        &["-qe", "x=y"],
        &["-qex=y"],
        &["https://example.com", "-e", "x=y"],
        &["--some-future-option", "https://example.com"],
        &["-j", "https://example.com"],
    ],
};

/// wget: `--use-askpass=COMMAND` runs a command; `-e`/`--execute` runs wgetrc commands (which
/// include `use_askpass`), and `--config` reads a wgetrc file; an option the grammar does not
/// have is refused. `WGETRC` (a wgetrc file) and `HOME` (`.wgetrc`) are the environment's,
/// which a call cannot set.
pub fn check_wget(args: &[String]) -> Result<(), String> {
    super::closed("wget", &WGET, args, |item| {
        (item.long_is(&["use-askpass", "execute", "config"]) || item.short_is(&['e']))
            .then(|| "wget command option".to_string())
    })
}
