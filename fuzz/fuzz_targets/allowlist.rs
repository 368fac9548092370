//! The trusted-mode allowlist (`ALLOW_COMMANDS`, `ALLOWED_COMMANDS`, `ALLOW_PATTERNS`).
//!
//! Properties:
//! - `Allowlist::new` and `Allowlist::check` never panic, whatever the configuration values
//!   and the program name.
//! - Every configured name is allowed, and nothing else is when no pattern is configured.
//! - A program written with a `/` is allowed only when it is exactly a configured name
//!   (patterns never admit paths).
//! - With nothing configured, everything is refused with the documented message.
//! - A name that contains whitespace, a control character or one of `;&|<>` and backtick is
//!   never allowed.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::internals::trusted::allow::{Allowlist, NOTHING_ALLOWED};

#[derive(Arbitrary, Debug)]
struct Input {
    allow_commands: Option<String>,
    allowed_commands: Option<String>,
    allow_patterns: Option<String>,
    programs: Vec<String>,
}

fuzz_target!(|input: Input| {
    let Ok(list) = Allowlist::new(
        input.allow_commands.as_deref(),
        input.allowed_commands.as_deref(),
        input.allow_patterns.as_deref(),
    ) else {
        return;
    };
    assert_eq!(
        list.is_configured(),
        input.allow_commands.is_some()
            || input.allowed_commands.is_some()
            || input.allow_patterns.is_some()
    );
    let has_patterns = list.patterns().next().is_some();
    for name in list.names() {
        assert!(list.check(name).is_ok(), "configured name {name:?} refused");
    }
    // Candidates: the given programs, and variations of the configured names.
    let mut candidates = input.programs.clone();
    for name in list.names() {
        candidates.push(format!("{name}x"));
        candidates.push(format!("/usr/bin/{name}"));
        candidates.push(format!("./{name}"));
        candidates.push(name.to_uppercase());
    }
    for program in &candidates {
        let verdict = list.check(program);
        if list.is_empty() {
            let refusal = verdict.map_err(|e| e.to_string());
            assert_eq!(refusal, Err(NOTHING_ALLOWED.to_string()));
            continue;
        }
        let listed = list.names().iter().any(|n| n == program);
        if !has_patterns || program.contains('/') {
            assert_eq!(
                verdict.is_ok(),
                listed,
                "{program:?} with names {:?} and patterns {:?}",
                list.names(),
                list.patterns().collect::<Vec<_>>()
            );
        }
        if program.is_empty()
            || program
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || ";&|<>`".contains(c))
        {
            assert!(verdict.is_err(), "unsafe name {program:?} allowed");
        }
    }
});
