//! awk (gawk, mawk, the one true awk, busybox's is refused with busybox): a closed grammar,
//! the union of gawk 5's and mawk 1.3.4's option tables (the one true awk's few options, `-f`,
//! `-v`, `-F`, `-d`, `-V`, `--csv`, `--version`, are in it), read with getopt_long up to the
//! first operand, an ambiguous abbreviation both ways (taking the next argument as its value,
//! and not), the `-W` lists split at commas as mawk splits them (`-W interactive,exec FILE`),
//! each `-W` name matched without regard to case by any prefix, and the program text lexed
//! (`awk_scan`). An option, letter or `-W` name that none of them has is refused, naming it.
//!
//! Refused: program text from anywhere but the checked program argument (`-f`, `-e`,
//! `--source`, `--exec`, `--include`, `--load`, `-E`, `-i`, `-l` and their `-W` and
//! abbreviated forms; a program file's content cannot be checked here, and a file the caller
//! wrote by redirection is exactly what an attacker would use), gawk's debugger (`-D`,
//! `--debug`: it reads commands, including `eval`, from stdin), and the options that write a
//! file named by their value (`-d`, `-o`, `-p` with an attached value, `--dump-variables=`,
//! `--pretty-print=`, `--profile=`, `--persist=`). Accepted: `-F`, `-v`, `--assign` and every
//! other option the grammar has; their values are data.

use super::awk_scan::{raw_awk_danger, scan_awk, AwkScan};
use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

const REASON: &str = "awk external access";

#[rustfmt::skip]
pub(crate) const GRAMMAR: Grammar = Grammar {
    // gawk's optstring (`F:f:v:W;bcCd::D::e:E:ghi:Ikl:L::nNo::Op::MPrSstVYZ:`), whose letters
    // include mawk's (`-f`, `-F`, `-v`, `-W`) and the one true awk's.
    short: &[
        ('F', Arg::Required), ('f', Arg::Required), ('v', Arg::Required), ('W', Arg::Required),
        ('E', Arg::Required), ('e', Arg::Required), ('i', Arg::Required), ('l', Arg::Required),
        ('Z', Arg::Required), ('d', Arg::Optional), ('D', Arg::Optional), ('L', Arg::Optional),
        ('o', Arg::Optional), ('p', Arg::Optional), ('b', Arg::No), ('c', Arg::No),
        ('C', Arg::No), ('g', Arg::No), ('h', Arg::No), ('I', Arg::No), ('k', Arg::No),
        ('M', Arg::No), ('n', Arg::No), ('N', Arg::No), ('O', Arg::No), ('P', Arg::No),
        ('r', Arg::No), ('S', Arg::No), ('s', Arg::No), ('t', Arg::No), ('V', Arg::No),
        ('Y', Arg::No),
    ],
    long: Longs::words(
        "assign= bignum characters-as-bytes copyright csv debug? dump dump-variables? exec=
         field-separator= file= gen-pot help include= interactive lint? lint-old load= locale=
         no-optimize non-decimal-data nostalgia optimize parsedebug persist? posix posix_space
         pretty-print? profile? random? re-interval repetitions sandbox source= sprintf? trace
         traditional usage use-lc-numeric version",
    ),
    stop_at_operand: true,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Program sources other than the checked program argument, and gawk's debugger.
const PROHIBITED_LONG: &[&str] = &["debug", "exec", "file", "include", "load", "source"];
/// Options that write a file named by their optional value.
const FILE_OUTPUT_LONG: &[&str] = &["dump-variables", "persist", "pretty-print", "profile"];
const PROHIBITED_SHORT: &[char] = &['E', 'e', 'f', 'i', 'l', 'D'];
const FILE_OUTPUT_SHORT: &[char] = &['d', 'o', 'p'];

/// A `-W` item or long option as mawk matches it: without regard to case, and without the
/// dashes or blanks mawk skips before the name.
fn w_name(written: &str) -> String {
    written
        .trim_start_matches(|c: char| c == '-' || c.is_ascii_whitespace())
        .to_ascii_lowercase()
}

/// One `-W` item or long option: refused when any option it can select is prohibited. The
/// awk that runs may be gawk or mawk, so a name is matched as a prefix of every option of
/// both, even where one of them has it exactly (`--dump` is mawk's `dump` and gawk's
/// `dump-variables`), and without regard to case, as mawk matches it.
fn long_refused(written: &str, value: Option<&str>) -> bool {
    let written = w_name(written);
    !written.is_empty()
        && GRAMMAR.long.iter().any(|(option, _)| {
            option.starts_with(written.as_str())
                && (PROHIBITED_LONG.contains(&option)
                    || (value.is_some() && FILE_OUTPUT_LONG.contains(&option)))
        })
}

/// A `-W` name that is no prefix of any option of the grammar (an empty one selects nothing).
fn w_unknown(written: &str) -> bool {
    let written = w_name(written);
    !written.is_empty()
        && !GRAMMAR
            .long
            .iter()
            .any(|(option, _)| option.starts_with(written.as_str()))
}

/// Why an option the grammar does not have is refused.
fn not_known(option: &str) -> String {
    crate::policy::trusted::rules::not_known(&format!("awk option {option}"))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["{print $1}", "f"],
        &["$1 > 1", "f"],
        &["-F,", "{print $2}"],
        &["BEGIN { print \"safe\" }"],
    ],
    refuse: &[
        &["BEGIN{system(\"id\")}"],
        &["{print | \"sh\"}"],
        &["{print > \"/tmp/x\"}"],
        &["BEGIN{while ((getline l < \"/etc/passwd\") > 0) print l}"],
        &["-f", "prog.awk"],
        &["-W", "exec", "x"],
        &["--from-the-future", "{print}"],
        &["-W", "from-the-future", "{print}"],
        &["-a", "{print}"],
    ],
};

/// Checks awk's arguments, under both readings of an ambiguous abbreviation (taking the next
/// argument as its value, and not).
pub fn check(args: &[String]) -> Result<(), String> {
    for items in GRAMMAR.readings(args) {
        check_items(items)?;
    }
    Ok(())
}

fn check_items(items: Vec<Item>) -> Result<(), String> {
    let reject = || Err(REASON.to_string());
    let mut program: Option<&str> = None;
    let mut operands: Vec<&str> = Vec::new();
    for item in items {
        let unknown = GRAMMAR.unknown(&item);
        match item {
            Item::Operand(text) => {
                if program.is_none() {
                    program = Some(text);
                } else {
                    operands.push(text);
                }
            }
            Item::Long { written, value, .. } => {
                if long_refused(written, value) {
                    return reject();
                }
            }
            Item::Short('W', value) => {
                // mawk splits the list at commas; gawk reads `-W name[=value]` as `--name`.
                for entry in value.unwrap_or_default().split(',') {
                    let (name, value) = match entry.split_once('=') {
                        Some((n, v)) => (n, Some(v)),
                        None => (entry, None),
                    };
                    if long_refused(name, value) {
                        return reject();
                    }
                    if w_unknown(name) {
                        return Err(not_known(&format!("-W {name}")));
                    }
                }
            }
            Item::Short(letter, value) => {
                if PROHIBITED_SHORT.contains(&letter)
                    || (FILE_OUTPUT_SHORT.contains(&letter) && value.is_some())
                {
                    return reject();
                }
            }
        }
        if let Some(option) = unknown {
            return Err(not_known(&option));
        }
    }
    if let Some(text) = program {
        if scan_awk(text) != AwkScan::Clean {
            return reject();
        }
    }
    // Operands are file names or `var=value` assignments, but if this reading and awk ever
    // disagree about which argument is the program (gawk's `-W assign x=1 PROGRAM`), the real
    // one must not slip through: each must lex as clean awk too.
    for arg in operands {
        if raw_awk_danger(arg) || scan_awk(arg) != AwkScan::Clean {
            return reject();
        }
    }
    Ok(())
}
