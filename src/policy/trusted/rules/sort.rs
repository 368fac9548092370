//! sort (GNU coreutils 9.1, and the BSD sort of FreeBSD and macOS, whose extra long options
//! choose a sorting algorithm or a memory strategy, take no value and run nothing): a closed
//! grammar, the union of both option tables, read with getopt_long (clusters, values that look
//! like options, abbreviations, options after operands until a separate `--`), and an
//! ambiguous abbreviation both ways (taking the next argument as its value, and not), so that
//! a value never hides an option. An option neither sort has is refused, naming it.
//!
//! Refused (the original's rule): `-o`/`--output` and `-T`/`--temporary-directory` (paths
//! outside the contained redirections), `--compress-program` (runs a program) and
//! `--files0-from` (reads the file list from a file). An ambiguous prefix that could be one
//! of them (`--c`) is refused too; sort would refuse it anyway.
//!
//! `-y` (obsolete, ignored) takes a separate argument only when it is all digits: GNU sort
//! reads any other next argument as an option again (`-y -o FILE` writes FILE). So its value
//! is read as getopt reads an optional one, attached only, and the next argument is judged on
//! its own.

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

const REASON: &str = "sort external program or path option";

#[rustfmt::skip]
pub(crate) const GRAMMAR: Grammar = Grammar {
    short: &[
        ('b', Arg::No), ('c', Arg::No), ('C', Arg::No), ('d', Arg::No), ('f', Arg::No),
        ('g', Arg::No), ('h', Arg::No), ('i', Arg::No), ('k', Arg::Required), ('m', Arg::No),
        ('M', Arg::No), ('n', Arg::No), ('o', Arg::Required), ('r', Arg::No), ('R', Arg::No),
        ('s', Arg::No), ('S', Arg::Required), ('t', Arg::Required), ('T', Arg::Required),
        ('u', Arg::No), ('V', Arg::No), ('y', Arg::Optional), ('z', Arg::No),
    ],
    long: Longs::words(
        "batch-size= buffer-size= check? compress-program= debug dictionary-order
         field-separator= files0-from= general-numeric-sort heapsort help human-numeric-sort
         ignore-case ignore-leading-blanks ignore-nonprinting key= merge mergesort mmap
         month-sort numeric-sort output= parallel= qsort radixsort random-sort random-source=
         reverse sort= stable temporary-directory= unique version version-sort zero-terminated",
    ),
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
        &["-y", "-o", "x", "f"],
        &["--from-the-future", "f"],
        &["-a", "f"],
    ],
};

/// Checks sort's arguments, under both readings of an ambiguous abbreviation (taking the
/// next argument as its value, and not); an option the grammar does not have is refused.
pub fn check(args: &[String]) -> Result<(), String> {
    super::closed("sort", &GRAMMAR, args, |item| {
        (item.long_is(PROHIBITED_LONG) || item.short_is(&['o', 'T'])).then(|| REASON.to_string())
    })
}
