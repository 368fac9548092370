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
pub mod misc;
pub mod npm;
pub mod sort;
pub mod systemctl;
pub mod tar;
pub mod tex;
pub mod tools;

/// The prefix of every rejection message.
pub const PREFIX: &str = "Command rejected by default security policy: ";

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
