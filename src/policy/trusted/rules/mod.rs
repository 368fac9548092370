//! Per-program argument rules for the hardened programs: each reads the arguments with the
//! program's own grammar (`getopt`) and decides on what the program will do. Each `check`
//! returns `Err(reason)`; the caller adds the `Command rejected by default security policy: `
//! prefix.

pub mod apps;
pub mod awk;
pub mod awk_scan;
pub mod find;
pub mod misc;
pub mod sort;
pub mod tar;
pub mod tools;

/// The prefix of every rejection message.
pub const PREFIX: &str = "Command rejected by default security policy: ";
