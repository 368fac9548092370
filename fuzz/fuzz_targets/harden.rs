//! Trusted mode's argument hardening (`trusted::harden::check`) on arbitrary argv.
//!
//! Properties:
//! - `check` never panics.
//! - An argument containing a newline or NUL (or a carriage return) is always rejected.
//! - A program whose basename (lowercased, as documented) is `sh`, `bash`, `env`, `xargs` or
//!   `python3` is always rejected, whatever its directory and arguments.
//! - Every rejection is one of the documented messages (`Empty command`, `Unsafe command
//!   name: …`, `Command rejected by default security policy: …`).
//! - The verdict depends on the basename only: putting the program under `/usr/bin/` does not
//!   change it; nor does ASCII upper-casing the name.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::internals::trusted::harden::check;

/// Names the fuzzer would take a long time to spell: the always-denied ones of the property,
/// and programs with argument rules.
const NAMES: &[&str] = &[
    "sh",
    "bash",
    "env",
    "xargs",
    "python3",
    "python3.12",
    "SH",
    "Bash",
    "ENV",
    "find",
    "awk",
    "gawk",
    "tar",
    "gtar",
    "sort",
    "gsort",
    "git",
    "ls",
    "cat",
    "grep",
    "sed",
    "timeout",
    "nice",
    "busybox",
    "perl",
    "node",
    "vi",
    "less",
    "make",
    "ssh",
    "ld-linux-x86-64.so.2",
];

const ARGS: &[&str] = &[
    "-exec",
    "-execdir",
    "-ok",
    "-fprint",
    "-o",
    "--output",
    "--compress-program",
    "-c",
    "config",
    "--upload-pack",
    "--checkpoint-action=exec=sh",
    "--to-command",
    "-I",
    "BEGIN{system(\"sh\")}",
    "{print > \"f\"}",
    "$1 > 1",
    "--",
    "-ro",
    "foreach",
    "run",
    "--exec",
    "difftool",
    "-F",
    "--use-compress-program",
    "-T",
    "--files0-from",
];

#[derive(Arbitrary, Debug)]
enum Program {
    Known(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Arg {
    Known(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    dir: Option<String>,
    program: Program,
    args: Vec<Arg>,
    raw: Vec<String>,
}

fn pick(list: &[&str], i: u8) -> String {
    list[i as usize % list.len()].to_string()
}

const PREFIX: &str = "Command rejected by default security policy: ";

fn check_argv(argv: &[String]) {
    let verdict = check(argv);
    if let Err(message) = &verdict {
        assert!(
            message == "Empty command"
                || message.starts_with(PREFIX)
                || message.starts_with("Unsafe command name: "),
            "undocumented rejection {message:?} for {argv:?}"
        );
    }
    if argv.iter().any(|a| a.contains(['\n', '\0', '\r'])) {
        assert!(verdict.is_err(), "control character accepted: {argv:?}");
    }
    let Some(program) = argv.first() else {
        assert!(verdict.is_err(), "empty argv accepted");
        return;
    };
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    if matches!(base.as_str(), "sh" | "bash" | "env" | "xargs" | "python3") {
        assert!(verdict.is_err(), "{base} accepted: {argv:?}");
    }
    if program.is_empty() {
        return;
    }
    // Only the basename counts.
    let mut moved = argv.to_vec();
    moved[0] = format!("/usr/bin/{program}");
    assert_eq!(
        check(&moved).is_ok(),
        verdict.is_ok(),
        "verdict changes with the directory: {argv:?}"
    );
    // Names are matched case-insensitively.
    if program.is_ascii() {
        let mut upper = argv.to_vec();
        upper[0] = program.to_ascii_uppercase();
        assert_eq!(
            check(&upper).is_ok(),
            verdict.is_ok(),
            "verdict changes with the case of the name: {argv:?}"
        );
    }
}

fuzz_target!(|input: Input| {
    // Fully arbitrary argv.
    check_argv(&input.raw);

    // Structured argv: an interesting name, maybe with a directory, interesting arguments.
    let name = match input.program {
        Program::Known(i) => pick(NAMES, i),
        Program::Raw(s) => s,
    };
    let program = match input.dir {
        Some(dir) => format!("{dir}/{name}"),
        None => name,
    };
    let mut argv = vec![program];
    for arg in input.args {
        argv.push(match arg {
            Arg::Known(i) => pick(ARGS, i),
            Arg::Raw(s) => s,
        });
    }
    check_argv(&argv);
});
