//! The reference's own test suite as a comparison: every argv that MCP Shell Server 1.1.14's
//! tests send through its default argument policy, with its verdict, run through
//! `trusted::harden::check`. The vectors live in `tests/data/reference_cases.jsonl` (extracted
//! by `scripts/extract-reference-cases.sh`); the disagreements that remain are pinned below and
//! explained in SECURITY.md ("Where trusted mode and MCP Shell Server disagree"), so a new one
//! fails this test.

use yieldshell::internals::trusted::harden::check;
use yieldshell::internals::trusted::reviewed::{review, Review};

/// The cases where the reference refuses and yieldshell accepts. Must stay empty.
const ACCEPTED_WHERE_REFERENCE_REFUSES: &[&str] = &[];

/// The cases where yieldshell refuses and the reference accepts, each as its argv in JSON;
/// SECURITY.md gives the reason for each.
const REFUSED_WHERE_REFERENCE_ACCEPTS: &[&str] = &[
    "[\"gawk\",\"-o/tmp/profile\",\"BEGIN { print \\\"safe\\\" }\"]",
    "[\"gawk\",\"-p/tmp/profile\",\"BEGIN { print \\\"safe\\\" }\"]",
    "[\"gawk\",\"-d/tmp/variables\",\"BEGIN { print \\\"safe\\\" }\"]",
    "[\"gawk\",\"-D/tmp/debug\",\"BEGIN { print \\\"safe\\\" }\"]",
    "[\"git\",\"send-emai\",\"--sendmail-cmd=P\"]",
    "[\"git\",\"log\",\"--sendmail-cmd=P\"]",
    "[\"git\",\"-C\",\"send-email\",\"status\",\"--sendmail-cmd=P\"]",
    "[\"git\",\"status\",\"send-email\",\"--sendmail-cmd=P\"]",
    "[\"make\",\"build\"]",
    "[\"make\",\"-C\",\"subdir\",\"test\"]",
    "[\"tar\",\"-c\",\"-L\",\"IF-data\",\"x.tar\"]",
    "[\"sudo\",\"reboot\"]",
    "[\"echo\",\"hello\\nworld\"]",
    "[\"make\",\"built\"]",
];

/// The programs of the reference's accepted cases that trusted mode refuses for want of
/// argument rules (unless the operator accepts them with `YIELDSHELL_UNREVIEWED_COMMANDS`):
/// the made-up names of the reference's tests, which name no real program.
const UNREVIEWED_IN_ACCEPTED_CASES: &[&str] = &[
    "/tmp/pytest-of-root/pytest-1/test_executor_marker_probe_run0/bin/probe",
    "allowed_cmd",
    "disallowed_cmd",
    "invalid_cmd",
    "invalid_command",
    "parentonly",
    "probea",
    "probeb",
];

struct Case {
    argv: Vec<String>,
    accepted: bool,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/reference_cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let argv = v["argv"]
                .as_array()
                .expect("argv")
                .iter()
                .map(|a| a.as_str().expect("a string").to_string())
                .collect();
            let accepted = match v["verdict"].as_str() {
                Some("accepted") => true,
                Some("refused") => false,
                other => panic!("unknown verdict {other:?} in {line}"),
            };
            Case { argv, accepted }
        })
        .collect()
}

#[test]
fn agreement_with_the_reference() {
    let cases = cases();
    let mut we_accept = Vec::new();
    let mut we_refuse = Vec::new();
    for case in &cases {
        let ours = check(&case.argv).is_ok();
        let key = serde_json::to_string(&case.argv).expect("JSON");
        match (case.accepted, ours) {
            (false, true) => we_accept.push(key),
            (true, false) => we_refuse.push(key),
            _ => (),
        }
    }
    let accepted_by_reference = cases.iter().filter(|c| c.accepted).count();
    eprintln!(
        "{} cases: {} agree, {} accepted where the reference refuses, {} refused where it accepts (of {} it accepts)",
        cases.len(),
        cases.len() - we_accept.len() - we_refuse.len(),
        we_accept.len(),
        we_refuse.len(),
        accepted_by_reference
    );
    for k in &we_accept {
        eprintln!("ACCEPTS {k}");
    }
    for k in &we_refuse {
        eprintln!("REFUSES {k}");
    }
    assert!(cases.len() > 1400, "the data file lost cases");
    let pinned_accept: Vec<String> = ACCEPTED_WHERE_REFERENCE_REFUSES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let pinned_refuse: Vec<String> = REFUSED_WHERE_REFERENCE_ACCEPTS
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        we_accept, pinned_accept,
        "accepted where the reference refuses"
    );
    assert_eq!(
        we_refuse, pinned_refuse,
        "refused where the reference accepts"
    );
    assert!(
        we_refuse.len() * 50 <= cases.len(),
        "more than 2% refused where the reference accepts"
    );
}

/// The closed world: of the cases the reference accepts and the hardening accepts, those
/// whose program has no rules and is not inert are refused too; they are pinned, and with
/// the hardening's own disagreements they stay within 2% of the cases.
#[test]
fn the_closed_world_refuses_only_made_up_names_of_the_accepted_cases() {
    let cases = cases();
    let mut unreviewed: Vec<&str> = cases
        .iter()
        .filter(|c| c.accepted && check(&c.argv).is_ok())
        .map(|c| c.argv[0].as_str())
        .filter(|p| review(p) == Review::Unreviewed)
        .collect();
    unreviewed.sort_unstable();
    unreviewed.dedup();
    assert_eq!(unreviewed, UNREVIEWED_IN_ACCEPTED_CASES);
    let refused_accepted = cases
        .iter()
        .filter(|c| c.accepted)
        .filter(|c| check(&c.argv).is_err() || review(&c.argv[0]) == Review::Unreviewed)
        .count();
    let accepted = cases.iter().filter(|c| c.accepted).count();
    eprintln!("closed world: {refused_accepted} of the {accepted} accepted cases refused");
    assert!(
        refused_accepted * 50 <= cases.len(),
        "more than 2% of the cases refused where the reference accepts"
    );
}
