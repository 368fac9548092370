//! Per-program argument rules for the hardened programs: each reads the arguments with the
//! program's own grammar (`getopt`) and decides on what the program will do. Each `check`
//! returns `Err(reason)`; the caller adds the `Command rejected by default security policy: `
//! prefix.

pub mod apps;
pub mod aria2c;
pub mod awk;
pub mod awk_scan;
pub mod cc;
pub mod curl;
pub mod find;
pub mod go;
pub mod gpg;
pub mod ld;
pub mod misc;
pub mod npm;
pub mod openssl;
pub mod sort;
pub mod systemctl;
pub mod tar;
pub mod tex;
pub mod tools;

use crate::policy::trusted::getopt::{Grammar, Item};

/// The prefix of every rejection message.
pub const PREFIX: &str = "Command rejected by default security policy: ";

/// A closed rule's walk: `args` read with `grammar` under both readings of an ambiguous
/// abbreviation; `judge`'s reason for the first option it refuses, else the first option the
/// grammar does not have (a newer version of the program may load or run something with it),
/// named as `<program> option <option> is not known to the rule`.
pub fn closed(
    program: &str,
    grammar: &Grammar,
    args: &[String],
    judge: impl Fn(&Item<'_>) -> Option<String>,
) -> Result<(), String> {
    for items in grammar.readings(args) {
        for item in &items {
            if let Some(reason) = judge(item) {
                return Err(reason);
            }
            if let Some(option) = grammar.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "{program} option {option}"
                )));
            }
        }
    }
    Ok(())
}

/// A rule's examples: argument lists (after the program's name) it must accept and must
/// refuse. `harden`'s tests walk every rule's examples through the hardening's entry, by the
/// rule's program names, with the rule's hardening cases: its `.cases` file beside it
/// (`tar.cases` beside `tar.rs`), where each case also names the text of its refusal.
#[cfg(test)]
pub struct Examples {
    /// Must be accepted.
    pub accept: &'static [&'static [&'static str]],
    /// Must be refused.
    pub refuse: &'static [&'static [&'static str]],
}

/// The refusal of what a closed rule does not know (`subject`: "curl option --x", "go
/// subcommand y"), with what to do instead.
pub fn not_known(subject: &str) -> String {
    format!(
        "{subject} is not known to the rule (a newer version may load or run something with \
         it): leave it out, or write it in full as the program's manual does"
    )
}
