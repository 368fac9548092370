//! The hardening cases that belong to no program's rule: empty and malformed names, control
//! characters in any argument, metacharacters in a name. Each is `(argv, expected)`, run
//! through `trusted::harden::check` (the name as written), from the crate's `internals`.
//! Every program's cases sit beside its rule, in the `.cases` files under
//! `src/policy/trusted/`, walked by `harden`'s tests.

use yieldshell::internals::trusted::harden::check;

/// What a hardening case expects.
#[derive(Debug)]
enum Expect {
    /// Accepted.
    Ok,
    /// Rejected with a message containing this text.
    Err(&'static str),
}
use Expect::{Err as E, Ok as A};

fn check_case(argv: &[&str], expect: &Expect) -> Result<(), String> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match (expect, check(&argv)) {
        (A, Ok(())) => Ok(()),
        (E(want), Err(msg)) if msg.contains(want) => Ok(()),
        (E(want), Err(msg)) => Err(format!("{argv:?}: {msg:?} lacks {want:?}")),
        (A, Err(msg)) => Err(format!("{argv:?}: expected acceptance, got {msg:?}")),
        (E(want), Ok(())) => Err(format!(
            "{argv:?}: expected rejection {want:?}, got acceptance"
        )),
    }
}

const CASES: &[(&[&str], Expect)] = &[
    // Empty and malformed names, control characters.
    (&[], E("Empty command")),
    (&[""], E("Empty command")),
    (&["ls\n"], E("argument 0 contains a newline")),
    (&["ls", "a\nb"], E("argument 1 contains a newline")),
    (
        &["echo", "ok", "x\ry"],
        E("argument 2 contains a carriage return"),
    ),
    (&["echo", "a\0b"], E("argument 1 contains a NUL character")),
    (
        &["grep", "-e", "x", "f\n;id"],
        E("argument 3 contains a newline"),
    ),
    (&["ls -la"], E("Unsafe command name: ls -la")),
    (&[" ls"], E("Unsafe command name")),
    (&["ls;id"], E("Unsafe command name: ls;id")),
    (&["ls|id"], E("Unsafe command name")),
    (&["ls&"], E("Unsafe command name")),
    (&["a>b"], E("Unsafe command name")),
    (&["`id`"], E("Unsafe command name")),
    (&["ls", "a;b", "c&&d", "`x`", "$(y)"], A),
];

#[test]
fn hardening_table() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(argv, expect)| check_case(argv, expect).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(CASES.len() >= 15, "only {} hardening cases", CASES.len());
}
