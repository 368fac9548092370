//! sort (GNU, and the BSD sort of FreeBSD and macOS, whose extra long options choose a sorting
//! algorithm or a memory strategy, take no value and run nothing): options
//! are read with getopt_long (clusters, values that look like options, abbreviations, options
//! after operands until a separate `--`), and an ambiguous abbreviation both ways (taking the
//! next argument as its value, and not), so that a value never hides an option.
//!
//! Refused (the original's rule): `-o`/`--output` and `-T`/`--temporary-directory` (paths
//! outside the contained redirections), `--compress-program` (runs a program) and
//! `--files0-from` (reads the file list from a file). An ambiguous prefix that could be one
//! of them (`--c`) is refused too; sort would refuse it anyway.

use crate::policy::trusted::getopt::{Arg, Grammar};

const REASON: &str = "sort external program or path option";

const GRAMMAR: Grammar = Grammar {
    short: &[
        ('k', Arg::Required),
        ('o', Arg::Required),
        ('S', Arg::Required),
        ('t', Arg::Required),
        ('T', Arg::Required),
        ('y', Arg::Required),
    ],
    long: &[
        ("batch-size", Arg::Required),
        ("buffer-size", Arg::Required),
        ("check", Arg::Optional),
        ("compress-program", Arg::Required),
        ("debug", Arg::No),
        ("dictionary-order", Arg::No),
        ("field-separator", Arg::Required),
        ("files0-from", Arg::Required),
        ("general-numeric-sort", Arg::No),
        ("help", Arg::No),
        ("human-numeric-sort", Arg::No),
        ("ignore-case", Arg::No),
        ("ignore-leading-blanks", Arg::No),
        ("ignore-nonprinting", Arg::No),
        ("key", Arg::Required),
        ("merge", Arg::No),
        ("month-sort", Arg::No),
        ("numeric-sort", Arg::No),
        ("output", Arg::Required),
        ("parallel", Arg::Required),
        ("random-sort", Arg::No),
        ("random-source", Arg::Required),
        ("reverse", Arg::No),
        ("sort", Arg::Required),
        ("stable", Arg::No),
        ("temporary-directory", Arg::Required),
        ("unique", Arg::No),
        ("version", Arg::No),
        ("version-sort", Arg::No),
        ("zero-terminated", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

const PROHIBITED_LONG: &[&str] = &[
    "compress-program",
    "files0-from",
    "output",
    "temporary-directory",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-k2", "-n", "f"],
        &["-t", ",", "-k", "2", "f"],
        &["-u", "--", "-o"],
    ],
    refuse: &[
        &["-o", "x", "f"],
        &["-ro", "/tmp/x", "f"],
        &["--compress-program=sh", "f"],
        &["--c", "x", "f"],
        &["--files0-from=list"],
        &["-T", "/tmp", "f"],
    ],
};

/// Checks sort's arguments, under both readings of an ambiguous abbreviation (taking the
/// next argument as its value, and not).
pub fn check(args: &[String]) -> Result<(), String> {
    for items in GRAMMAR.readings(args) {
        for item in items {
            if item.long_is(PROHIBITED_LONG) || item.short_is(&['o', 'T']) {
                return Err(REASON.to_string());
            }
        }
    }
    Ok(())
}
