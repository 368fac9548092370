//! Smaller rules: fd, rg, split, diff3/sdiff and wget, each refusing the option that runs a
//! command given in the arguments. fd and rg are closed grammars: an option they do not know
//! is refused. The others read every argument before a separate `--` as a possible option
//! (values included), which can only refuse more than the program would run.

use crate::policy::trusted::getopt::{Arg, Grammar};

/// True when `--name` (without `=value`) selects `option` by getopt_long-style abbreviation.
fn abbreviates(name: &str, option: &str) -> bool {
    !name.is_empty() && option.starts_with(name)
}

/// The arguments before a separate `--`; everything after it is an operand.
fn before_double_dash(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// The name of a long option (`--name` or `--name=value`); `None` for anything else.
fn long_name(arg: &str) -> Option<&str> {
    let body = arg.strip_prefix("--").filter(|b| !b.is_empty())?;
    Some(body.split_once('=').map_or(body, |(name, _)| name))
}

/// fd 10's options, from its `clap` definition (`src/cli.rs`): every long option and alias
/// (clap takes no abbreviations; reading them as getopt does only finds more options to
/// judge), the hidden negations (`--no-hidden`, `--ignore`, …) and `-1`. Values are attached
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
    ],
};

/// fd: `-x`/`-X`/`--exec`/`--exec-batch` run a command for each match (or for all of them);
/// an option the grammar does not have is refused. `-l` runs `ls` from the `PATH` the
/// server sets, not a program the caller names.
pub fn check_fd(args: &[String]) -> Result<(), String> {
    super::closed("fd", &FD, args, |item| {
        (item.short_is(&['x', 'X']) || item.long_is(&["exec", "exec-batch"]))
            .then(|| "fd --exec".to_string())
    })
}

/// ripgrep's flags (14 and 15, from `crates/core/flags/defs.rs`, without the build-time
/// `unstable-index` ones): each flag's long name, aliases, negation and short letter. rg's
/// parser (lexopt) takes no abbreviations; reading them as getopt does only finds more
/// options to judge. `RIPGREP_CONFIG_PATH` (a file of flags) is the environment's, which a
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
            None
        }
    })
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SPLIT_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["-l", "100", "f", "part-"], &["-b", "1M", "f"]],
    refuse: &[
        &["--filter=sh", "f"],
        &["--fil", "sh", "f"],
        &["-l", "1", "--filter", "id", "f"],
    ],
};

/// `split --filter=COMMAND` pipes every chunk through a shell command.
pub fn check_split(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| abbreviates(name, "filter")) {
            return Err("split --filter".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const DIFF_PROGRAM_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["a", "b", "c"], &["-m", "a", "b", "c"]],
    refuse: &[
        &["--diff-program=sh", "a", "b", "c"],
        &["--diff-p", "sh", "a", "b", "c"],
    ],
};

/// `diff3 --diff-program=PROGRAM` and `sdiff --diff-program=PROGRAM` run the named program.
pub fn check_diff_program(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| name.len() >= 2 && abbreviates(name, "diff-program")) {
            return Err("external diff program".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SDIFF_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b"],
        &["-s", "-w", "80", "a", "b"],
        &["-sw80", "a", "b"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b"],
        &["-o", "out", "a", "b"],
        &["-so", "out", "a", "b"],
        &["--output=out", "a", "b"],
        &["--out", "out", "a", "b"],
    ],
};

/// sdiff runs `--diff-program`; with `-o`/`--output` it merges interactively, and its `e`
/// commands start an editor (`ed` by default, which runs shell commands from the same
/// stdin).
pub fn check_sdiff(args: &[String]) -> Result<(), String> {
    check_diff_program(args)?;
    let reject = || Err("interactive merge (its e command starts an editor)".to_string());
    for arg in before_double_dash(args) {
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output") {
                return reject();
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            for c in cluster.chars() {
                match c {
                    'o' => return reject(),
                    // The rest of the cluster is the option's value.
                    'I' | 'w' => break,
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// wget's short options that take a value (the value ends a cluster).
const WGET_SHORT_WITH_VALUE: &[char] = &[
    'O', 'o', 'a', 't', 'T', 'w', 'Q', 'P', 'U', 'e', 'B', 'i', 'l', 'A', 'R', 'D', 'I', 'X',
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const WGET_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-q", "-O", "out.html", "https://example.com"],
        &["https://example.com/f"],
    ],
    refuse: &[
        &["--use-askpass=sh", "https://example.com"],
        &["-e", "use_askpass=sh", "https://example.com"],
        &["--execute", "x=y"],
        &["--config", "rc", "https://example.com"],
        &["-qe", "x=y"],
    ],
};

/// `wget --use-askpass=COMMAND` runs a command; `-e`/`--execute` runs wgetrc commands (which
/// include `use_askpass`), and `--config` reads a wgetrc file.
pub fn check_wget(args: &[String]) -> Result<(), String> {
    let reject = || Err("wget command option".to_string());
    for arg in before_double_dash(args) {
        if let Some(name) = long_name(arg) {
            if ["use-askpass", "execute", "config"]
                .iter()
                .any(|o| abbreviates(name, o))
            {
                return reject();
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            if let Some(letter) = cluster.chars().find(|c| WGET_SHORT_WITH_VALUE.contains(c)) {
                if letter == 'e' {
                    return reject();
                }
            }
        }
    }
    Ok(())
}
