//! Default argument hardening: argv forms of allowlisted programs that reach past the allowlist.
//!
//! Allowlisting a program name does not make every use of it safe: `find -exec sh`, `awk
//! 'BEGIN{system("sh")}'`, `git -c core.pager=sh` and friends run arbitrary commands. This
//! module rejects the known forms before anything is spawned, for every stage of a pipeline,
//! even when the name is on the allowlist. It is defense in depth, not a sandbox.
//!
//! Design decisions:
//!
//! - One table, [`RULES`], maps program names to a [`Policy`]: either always rejected, or a
//!   per-program argument check. Names are matched on the lowercased basename of `argv[0]`
//!   (`/usr/bin/gawk` is `gawk`), then through [`ALIASES`] (`gawk` → `awk`), then with a trailing
//!   version stripped (`python3.12` → `python`, `pip3` → `pip`, `lua5.4` → `lua`). Every name
//!   starting with `python` or `pypy` counts as an interpreter, and every `ld-linux*`/`ld.so*`
//!   name as the dynamic loader (which runs any program given to it).
//! - Rejection texts are MCP Shell Server's where it had one: `Command rejected by default
//!   security policy: <reason>` with the reasons `<name>`, `find -exec`, `find file output`, `awk
//!   external access`, `tar command execution option`, `sort external program or path option`,
//!   `git command-scoped config`, `git config` and `git external program`. New rules use new
//!   reasons in the same form.
//! - Long options are matched the way `getopt_long` and git's parse-options match them: any
//!   non-empty prefix of a prohibited option counts (`--to-com`, `--use-comp`, `--upl`), except
//!   where the prefix is itself an exact, harmless option (`tar --checkpoint`). An ambiguous
//!   prefix is rejected too, which costs nothing: the program would refuse it anyway.
//! - Short options are walked as clusters (`sort -ro FILE`, `tar -xvI prog`): a letter that
//!   takes a value ends the cluster, and the value is data, never rescanned as options.
//! - GNU programs permute options after operands (`sort file -o out`), so option scans run over
//!   every argument until a separate `--`; after it everything is an operand.
//! - Where the original was wrong in a way that cost users nothing in safety it is improved:
//!   `awk '$1 > 1'` (a comparison) and `awk '/a|b/'` (regex alternation) are accepted, because
//!   the awk program is lexed (strings, regex literals, parentheses, `print` statements) instead
//!   of searched for `>`, `<` and `|`; `print > "file"`, `getline < file`, pipes, `system`, `@`
//!   directives and anything the lexer cannot classify with certainty stay rejected.
//! - Every argument containing a newline, carriage return or NUL is rejected, naming its index.

/// The prefix of every rejection message.
const PREFIX: &str = "Command rejected by default security policy: ";

/// Checks one argv (one pipeline stage) against the default hardening rules.
///
/// `argv[0]` is the program as written. `Err` holds the complete message.
pub fn check(argv: &[String]) -> Result<(), String> {
    let Some(program) = argv.first() else {
        return Err("Empty command".to_string());
    };
    if program.is_empty() {
        return Err("Empty command".to_string());
    }
    for (index, arg) in argv.iter().enumerate() {
        if let Some(what) = control_character(arg) {
            return Err(format!("{PREFIX}argument {index} contains {what}"));
        }
    }
    if program.chars().any(is_name_metacharacter) {
        return Err(format!("Unsafe command name: {program}"));
    }
    let (name, policy) = classify(program);
    let args = &argv[1..];
    let verdict = match policy {
        None => Ok(()),
        Some(Policy::Deny) => Err(name),
        Some(Policy::Args(check_args)) => check_args(args),
    };
    verdict.map_err(|reason| format!("{PREFIX}{reason}"))
}

/// What happens to a program that is in [`RULES`].
#[derive(Clone, Copy)]
enum Policy {
    /// Always rejected: the program exists to run other programs or code, or has a trivial
    /// shell escape through its arguments or its stdin.
    Deny,
    /// Rejected when an argument check finds a dangerous form; `Err` holds the reason.
    Args(fn(&[String]) -> Result<(), String>),
}

use Policy::{Args, Deny};

/// The rule table. Names are lowercase; see [`ALIASES`] for alternate names.
///
/// Entries marked "original" are MCP Shell Server's; the others are additions, each with the
/// reason it was added.
const RULES: &[(&str, Policy)] = &[
    // Shells (original: sh, bash, zsh, fish, csh, ksh). The rest are the same thing under
    // other names.
    ("sh", Deny),
    ("bash", Deny),
    ("zsh", Deny),
    ("fish", Deny),
    ("csh", Deny),
    ("ksh", Deny),
    ("dash", Deny),
    ("ash", Deny),
    ("tcsh", Deny),
    ("mksh", Deny),
    ("pdksh", Deny),
    ("oksh", Deny),
    ("loksh", Deny),
    ("yash", Deny),
    ("posh", Deny),
    ("rbash", Deny),
    ("elvish", Deny),
    ("nu", Deny),
    ("xonsh", Deny),
    ("pwsh", Deny),
    ("powershell", Deny),
    ("osh", Deny),
    // Multi-call binaries whose applets include a shell, awk, sed and find.
    ("busybox", Deny),
    ("toybox", Deny),
    // Interpreters (original: python, python3, perl, ruby, node, php, lua). The others run
    // code given on the command line, on stdin or in a file the caller can write.
    ("python", Deny),
    ("pypy", Deny),
    ("perl", Deny),
    ("ruby", Deny),
    ("irb", Deny),
    ("node", Deny),
    ("nodejs", Deny),
    ("deno", Deny),
    ("bun", Deny),
    ("php", Deny),
    ("php-cgi", Deny),
    ("lua", Deny),
    ("luajit", Deny),
    ("tclsh", Deny),
    ("wish", Deny),
    ("expect", Deny),
    ("r", Deny),
    ("rscript", Deny),
    ("julia", Deny),
    ("guile", Deny),
    ("racket", Deny),
    ("sbcl", Deny),
    ("clisp", Deny),
    ("ocaml", Deny),
    ("ghci", Deny),
    ("runghc", Deny),
    ("runhaskell", Deny),
    ("scala", Deny),
    ("groovy", Deny),
    ("jshell", Deny),
    // `java Main.java` runs a source file directly (JDK 11 and later).
    ("java", Deny),
    ("osascript", Deny),
    ("cscript", Deny),
    ("wscript", Deny),
    // Package runners: they download or build code and run it (`pip install ./dir` runs the
    // package's build scripts).
    ("pip", Deny),
    ("pipx", Deny),
    ("npx", Deny),
    ("uvx", Deny),
    ("bunx", Deny),
    // `dc` has `!cmd`; `ed` has `!cmd`; both read commands from stdin, which the caller sets.
    ("dc", Deny),
    ("ed", Deny),
    // Wrappers that run the program named in their arguments (original: env, xargs, chroot,
    // flock, ionice, nice, nohup, setsid, stdbuf, taskset, time, timeout, unshare, watch,
    // script, gdb).
    ("env", Deny),
    ("xargs", Deny),
    ("chroot", Deny),
    ("flock", Deny),
    ("gdb", Deny),
    ("ionice", Deny),
    ("nice", Deny),
    ("nohup", Deny),
    ("script", Deny),
    ("setsid", Deny),
    ("stdbuf", Deny),
    ("taskset", Deny),
    ("time", Deny),
    ("timeout", Deny),
    ("unshare", Deny),
    ("watch", Deny),
    ("sudo", Deny),
    ("su", Deny),
    ("doas", Deny),
    ("pkexec", Deny),
    ("runuser", Deny),
    ("sg", Deny),
    ("newgrp", Deny),
    ("nsenter", Deny),
    ("chrt", Deny),
    ("numactl", Deny),
    ("cpulimit", Deny),
    ("prlimit", Deny),
    ("setarch", Deny),
    ("linux32", Deny),
    ("linux64", Deny),
    ("setpriv", Deny),
    ("capsh", Deny),
    ("chpst", Deny),
    ("unbuffer", Deny),
    ("faketime", Deny),
    ("fakeroot", Deny),
    ("fakechroot", Deny),
    ("proot", Deny),
    ("bwrap", Deny),
    ("firejail", Deny),
    ("flatpak-spawn", Deny),
    ("systemd-run", Deny),
    ("systemd-nspawn", Deny),
    ("strace", Deny),
    ("ltrace", Deny),
    ("lldb", Deny),
    ("valgrind", Deny),
    ("perf", Deny),
    ("daemonize", Deny),
    ("start-stop-daemon", Deny),
    ("run-parts", Deny),
    ("parallel", Deny),
    ("entr", Deny),
    ("screen", Deny),
    ("tmux", Deny),
    // Schedulers run their input as shell commands later.
    ("at", Deny),
    ("batch", Deny),
    ("crontab", Deny),
    // Shell builtins that also exist as executables on some systems and run their arguments.
    ("command", Deny),
    ("exec", Deny),
    ("eval", Deny),
    ("builtin", Deny),
    ("source", Deny),
    // `make` runs recipe lines through the shell, and `make -f - ` or `--eval` take them from
    // the caller; it is a shell by another name.
    ("make", Deny),
    ("gmake", Deny),
    ("bmake", Deny),
    // Editors, pagers and viewers with shell escapes (original: ex, less, man, more, pg, sed,
    // vi, view, vim). They read commands from stdin, which the caller sets.
    ("ex", Deny),
    ("less", Deny),
    ("man", Deny),
    ("more", Deny),
    ("pg", Deny),
    ("sed", Deny),
    ("vi", Deny),
    ("view", Deny),
    ("vim", Deny),
    ("nvim", Deny),
    ("gvim", Deny),
    ("rvim", Deny),
    ("vimdiff", Deny),
    ("nano", Deny),
    ("pico", Deny),
    ("emacs", Deny),
    ("emacsclient", Deny),
    ("joe", Deny),
    ("mc", Deny),
    ("mcedit", Deny),
    ("most", Deny),
    // Database shells with `\!`, `.shell` or `system` commands (original: mysql, psql,
    // sqlite3).
    ("mysql", Deny),
    ("psql", Deny),
    ("sqlite3", Deny),
    ("mariadb", Deny),
    ("duckdb", Deny),
    // Remote and network tools that run local commands (`ProxyCommand`, `-e`, `exec:`, `!`,
    // tilde escapes) (original: ssh, rsync, zip).
    ("ssh", Deny),
    ("rsync", Deny),
    ("zip", Deny),
    ("scp", Deny),
    ("sftp", Deny),
    ("ftp", Deny),
    ("telnet", Deny),
    ("nc", Deny),
    ("ncat", Deny),
    ("netcat", Deny),
    ("socat", Deny),
    ("mail", Deny),
    ("mailx", Deny),
    // `nmap --script` runs Lua; `tcpdump -z` runs a program after each file rotation.
    ("nmap", Deny),
    ("tcpdump", Deny),
    // Programs with argument checks.
    ("find", Args(check_find)),
    ("awk", Args(check_awk)),
    ("tar", Args(check_tar)),
    ("sort", Args(check_sort)),
    ("git", Args(check_git)),
    // Additions: `fd -x/--exec`, `rg --pre`, `split --filter`, and `diff3`/`sdiff
    // --diff-program` each run a command given in the arguments.
    ("fd", Args(check_fd)),
    ("rg", Args(check_rg)),
    ("split", Args(check_split)),
    ("diff3", Args(check_diff_program)),
    ("sdiff", Args(check_diff_program)),
];

/// Alternate names, mapped to the name used in [`RULES`].
///
/// The original had bfind, gfind, gawk, mawk, nawk, gtar, bsdtar and gsort.
const ALIASES: &[(&str, &str)] = &[
    ("bfind", "find"),
    ("gfind", "find"),
    ("gawk", "awk"),
    ("mawk", "awk"),
    ("nawk", "awk"),
    ("original-awk", "awk"),
    ("onetrue-awk", "awk"),
    ("bwk-awk", "awk"),
    ("goawk", "awk"),
    ("gtar", "tar"),
    ("bsdtar", "tar"),
    ("gsort", "sort"),
    ("gsed", "sed"),
    ("fdfind", "fd"),
    ("gsplit", "split"),
    ("gdiff3", "diff3"),
    ("gsdiff", "sdiff"),
    ("ripgrep", "rg"),
    // GNU coreutils and findutils installed with a `g` prefix (Homebrew on macOS).
    ("genv", "env"),
    ("gtimeout", "timeout"),
    ("gnice", "nice"),
    ("gnohup", "nohup"),
    ("gstdbuf", "stdbuf"),
    ("gchroot", "chroot"),
    ("gxargs", "xargs"),
    ("gtime", "time"),
];

/// Finds the rule for a program and the name to show in a rejection.
fn classify(program: &str) -> (String, Option<Policy>) {
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    if base.starts_with("python") {
        return ("python".to_string(), Some(Deny));
    }
    if base.starts_with("pypy") {
        return ("pypy".to_string(), Some(Deny));
    }
    if base.starts_with("ld-linux") || base.starts_with("ld.so") || base.starts_with("ld-musl") {
        return (base, Some(Deny));
    }
    if let Some(policy) = lookup(&base) {
        return (canonical(&base).to_string(), Some(policy));
    }
    if let Some(stripped) = strip_version(&base) {
        if let Some(policy) = lookup(stripped) {
            return (canonical(stripped).to_string(), Some(policy));
        }
    }
    (base, None)
}

fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, target)| target)
}

fn lookup(name: &str) -> Option<Policy> {
    let name = canonical(name);
    RULES
        .iter()
        .find(|(rule, _)| *rule == name)
        .map(|(_, policy)| *policy)
}

/// `python3.12` → `python`, `lua-5.4` → `lua`, `pip3` → `pip`; `None` when nothing to strip.
fn strip_version(name: &str) -> Option<&str> {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.len() == name.len() || !name[trimmed.len()..].contains(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let trimmed = trimmed
        .strip_suffix('-')
        .or_else(|| trimmed.strip_suffix('_'))
        .unwrap_or(trimmed);
    if trimmed.is_empty() {
        return None;
    }
    Some(trimmed)
}

fn control_character(arg: &str) -> Option<&'static str> {
    if arg.contains('\n') {
        Some("a newline")
    } else if arg.contains('\r') {
        Some("a carriage return")
    } else if arg.contains('\0') {
        Some("a NUL character")
    } else {
        None
    }
}

/// The characters MCP Shell Server refused in a command name: whitespace and `;&|<>` and the
/// backtick.
fn is_name_metacharacter(c: char) -> bool {
    c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '`')
}

/// The arguments before a separate `--`; GNU tools treat everything after it as operands.
fn before_double_dash(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// True when `--name` (without `=value`) selects `option` by getopt_long-style abbreviation.
fn abbreviates(name: &str, option: &str) -> bool {
    !name.is_empty() && option.starts_with(name)
}

/// Splits `--name=value` into `("name", Some("value"))`; `None` when `arg` is not a long option.
fn long_option(arg: &str) -> Option<(&str, Option<&str>)> {
    let body = arg.strip_prefix("--")?;
    if body.is_empty() {
        return None;
    }
    Some(match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    })
}

// ---------------------------------------------------------------------------------------------
// find

const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
const FIND_OUTPUT: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// `find -exec`, `-execdir` (original) and `-ok`, `-okdir` (added: they run the command after
/// reading a confirmation from stdin, which the caller controls); `-fprint*` and `-fls` write
/// to any path (original). `-delete` stays allowed, as in the original.
fn check_find(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| FIND_EXEC.contains(&a.as_str())) {
        return Err("find -exec".to_string());
    }
    if args.iter().any(|a| FIND_OUTPUT.contains(&a.as_str())) {
        return Err("find file output".to_string());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// awk

const AWK_REASON: &str = "awk external access";

/// The long options of gawk plus mawk's `-W` names, for abbreviation matching.
const AWK_LONG_OPTIONS: &[&str] = &[
    "assign",
    "bignum",
    "characters-as-bytes",
    "copyright",
    "csv",
    "debug",
    "dump",
    "dump-variables",
    "exec",
    "field-separator",
    "file",
    "gen-pot",
    "help",
    "include",
    "interactive",
    "lint",
    "lint-old",
    "load",
    "locale",
    "no-optimize",
    "non-decimal-data",
    "optimize",
    "persist",
    "posix",
    "posix_space",
    "pretty-print",
    "profile",
    "random",
    "re-interval",
    "sandbox",
    "source",
    "sprintf",
    "trace",
    "traditional",
    "usage",
    "use-lc-numeric",
    "version",
];

/// Program sources other than the checked program argument (original: exec, file, include,
/// load, source), and `debug`, added because gawk's debugger reads commands, including `eval`
/// of arbitrary awk, from stdin.
const AWK_PROHIBITED_LONG: &[&str] = &["debug", "exec", "file", "include", "load", "source"];
/// Options that write a file named by their optional value (added: `--dump-variables=PATH`,
/// `--profile=PATH`, `--pretty-print=PATH` write to any path).
const AWK_FILE_OUTPUT_LONG: &[&str] = &["dump-variables", "pretty-print", "profile"];
/// Long options whose value may come as the next argument.
const AWK_LONG_WITH_VALUE: &[&str] = &["assign", "field-separator", "locale"];

/// Short options: prohibited, taking a required value, and taking an optional attached value.
const AWK_PROHIBITED_SHORT: &[char] = &['E', 'e', 'f', 'i', 'l', 'D'];
const AWK_SHORT_WITH_VALUE: &[char] = &['E', 'e', 'f', 'F', 'i', 'l', 'v', 'W', 'Z'];
const AWK_SHORT_OPTIONAL_VALUE: &[char] = &['d', 'D', 'L', 'o', 'p'];
/// Optional-value short options whose value names an output file.
const AWK_SHORT_FILE_OUTPUT: &[char] = &['d', 'o', 'p'];

/// The long options `name` can select: itself when exact, else every option it abbreviates.
fn awk_long_candidates(name: &str) -> Vec<&'static str> {
    match AWK_LONG_OPTIONS.iter().find(|o| **o == name) {
        Some(exact) => vec![*exact],
        None => AWK_LONG_OPTIONS
            .iter()
            .copied()
            .filter(|o| abbreviates(name, o))
            .collect(),
    }
}

fn awk_long_prohibited(name: &str, has_value: bool) -> bool {
    awk_long_candidates(name)
        .iter()
        .any(|c| AWK_PROHIBITED_LONG.contains(c) || (has_value && AWK_FILE_OUTPUT_LONG.contains(c)))
}

/// Options that load code from elsewhere, the program text itself, and every other operand.
fn check_awk(args: &[String]) -> Result<(), String> {
    let reject = || Err(AWK_REASON.to_string());
    // Options and the values of -F, -v and their long forms are data: a field separator of `|`
    // is harmless.
    let mut data_values: Vec<usize> = Vec::new();
    let mut program: Option<usize> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            if i < args.len() {
                program = Some(i);
            }
            break;
        }
        if arg == "-" || !arg.starts_with('-') {
            program = Some(i - 1);
            break;
        }
        // The option itself, with any attached value, has been checked here; it is data.
        data_values.push(i - 1);
        if let Some((name, value)) = long_option(arg) {
            if awk_long_prohibited(name, value.is_some()) {
                return reject();
            }
            let candidates = awk_long_candidates(name);
            let takes_value = candidates.len() == 1 && AWK_LONG_WITH_VALUE.contains(&candidates[0]);
            if value.is_none() && takes_value && i < args.len() {
                data_values.push(i);
                i += 1;
            }
            continue;
        }
        let letters: Vec<char> = arg[1..].chars().collect();
        for (position, &letter) in letters.iter().enumerate() {
            let rest: String = letters[position + 1..].iter().collect();
            if letter == 'W' {
                // `-W name[=value]` or `-Wname`: gawk and mawk long options.
                let spec = if rest.is_empty() {
                    let next = args.get(i).map(String::as_str).unwrap_or("");
                    i += 1;
                    next
                } else {
                    rest.as_str()
                };
                let (name, value) = match spec.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (spec, None),
                };
                if awk_long_prohibited(name, value.is_some()) {
                    return reject();
                }
                break;
            }
            if AWK_PROHIBITED_SHORT.contains(&letter) {
                return reject();
            }
            if AWK_SHORT_OPTIONAL_VALUE.contains(&letter) {
                if AWK_SHORT_FILE_OUTPUT.contains(&letter) && !rest.is_empty() {
                    return reject();
                }
                break;
            }
            if AWK_SHORT_WITH_VALUE.contains(&letter) {
                if rest.is_empty() && i < args.len() {
                    data_values.push(i);
                    i += 1;
                }
                break;
            }
        }
    }
    if let Some(index) = program {
        if scan_awk(&args[index]) != AwkScan::Clean {
            return reject();
        }
    }
    for (index, arg) in args.iter().enumerate() {
        if Some(index) == program || data_values.contains(&index) {
            continue;
        }
        // Operands are file names or `var=value` assignments, but if this parser and awk ever
        // disagree about which argument is the program, the real one must not slip through.
        if raw_awk_danger(arg) || scan_awk(arg) == AwkScan::Dangerous {
            return reject();
        }
    }
    Ok(())
}

/// The original's whole-text checks, kept for arguments that are not the program: `system(`
/// and a single `|`, and `@include`/`@load` directives.
fn raw_awk_danger(arg: &str) -> bool {
    let compact: String = arg.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("system(") || compact.contains("@include") || compact.contains("@load") {
        return true;
    }
    let bytes = compact.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'|' {
            if bytes.get(i + 1) == Some(&b'|') {
                i += 2;
                continue;
            }
            return true;
        }
        i += 1;
    }
    false
}

/// The result of lexing an awk program.
#[derive(Debug, PartialEq, Eq)]
enum AwkScan {
    /// No external access found.
    Clean,
    /// A pipe, `system`, `@`, output redirection in `print`, or `getline <` was found.
    Dangerous,
    /// The text could not be lexed with certainty (an unclosed string, regex or parenthesis,
    /// or a `/` inside a regex bracket expression, which awks treat differently).
    Ambiguous,
}

/// What the previous significant token allows next: a regex literal or a division.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AwkPrev {
    /// Start of the program or a statement, or after an operator or `print`: `/` opens a regex.
    ExpectOperand,
    /// After an operand: `/` divides.
    Operand,
}

/// Lexes an awk program and looks for ways out of awk.
///
/// Inside awk, `>` and `>>` in a `print`/`printf` statement (outside parentheses) write to a
/// file, `getline <` reads one, `|` and `|&` run commands, `system()` runs one, and `@`
/// introduces indirect calls (`@f()` with `f = "system"`) and `@load`/`@include`. A `>` or `<`
/// anywhere else is a comparison and is accepted, as are `||`, and `|`, `>` or `<` inside strings
/// and regex literals. Whether `/` opens a regex is decided as awk's grammar decides it: after an
/// operand it divides, elsewhere (including after the `)` of `if`, `while` and `for`) it opens a
/// regex.
fn scan_awk(text: &str) -> AwkScan {
    let bytes = text.as_bytes();
    let mut prev = AwkPrev::ExpectOperand;
    // One entry per open parenthesis: whether it holds an if/while/for condition.
    let mut parens: Vec<bool> = Vec::new();
    let mut next_paren_is_condition = false;
    let mut print_depth: Option<usize> = None;
    let mut getline_in_statement = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let condition_keyword = next_paren_is_condition;
        next_paren_is_condition = false;
        match b {
            b' ' | b'\t' => {
                next_paren_is_condition = condition_keyword;
                i += 1;
                continue;
            }
            b'"' => {
                let Some(end) = skip_awk_string(bytes, i) else {
                    return AwkScan::Ambiguous;
                };
                i = end;
                prev = AwkPrev::Operand;
                continue;
            }
            b'/' if prev == AwkPrev::ExpectOperand => {
                let Some(end) = skip_awk_regex(bytes, i) else {
                    return AwkScan::Ambiguous;
                };
                i = end;
                prev = AwkPrev::Operand;
                continue;
            }
            b'|' => {
                if bytes.get(i + 1) == Some(&b'|') {
                    i += 2;
                    prev = AwkPrev::ExpectOperand;
                    continue;
                }
                return AwkScan::Dangerous;
            }
            b'@' => return AwkScan::Dangerous,
            b'>' => {
                if bytes.get(i + 1) != Some(&b'=') && print_depth == Some(parens.len()) {
                    return AwkScan::Dangerous;
                }
                i += if bytes.get(i + 1) == Some(&b'=') {
                    2
                } else {
                    1
                };
                prev = AwkPrev::ExpectOperand;
                continue;
            }
            b'<' => {
                if bytes.get(i + 1) != Some(&b'=') && getline_in_statement {
                    return AwkScan::Dangerous;
                }
                prev = AwkPrev::ExpectOperand;
            }
            b'(' => {
                parens.push(condition_keyword);
                prev = AwkPrev::ExpectOperand;
            }
            b')' => {
                let Some(was_condition) = parens.pop() else {
                    return AwkScan::Ambiguous;
                };
                if print_depth.is_some_and(|d| d > parens.len()) {
                    print_depth = None;
                }
                prev = if was_condition {
                    AwkPrev::ExpectOperand
                } else {
                    AwkPrev::Operand
                };
            }
            b']' => prev = AwkPrev::Operand,
            b';' | b'{' | b'}' => {
                print_depth = None;
                getline_in_statement = false;
                prev = AwkPrev::ExpectOperand;
            }
            b'+' | b'-' if bytes.get(i + 1) == Some(&b) => {
                // `++` and `--` are treated as postfix, so a following `/` divides.
                i += 2;
                prev = AwkPrev::Operand;
                continue;
            }
            b'0'..=b'9' | b'.' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                    i += 1;
                }
                prev = AwkPrev::Operand;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match &text[start..i] {
                    "system" => return AwkScan::Dangerous,
                    "print" | "printf" => {
                        print_depth = Some(parens.len());
                        prev = AwkPrev::ExpectOperand;
                    }
                    "getline" => {
                        getline_in_statement = true;
                        prev = AwkPrev::Operand;
                    }
                    "if" | "while" | "for" => {
                        next_paren_is_condition = true;
                        prev = AwkPrev::ExpectOperand;
                    }
                    "else" | "do" | "return" | "case" | "exit" | "in" | "delete" => {
                        prev = AwkPrev::ExpectOperand;
                    }
                    _ => prev = AwkPrev::Operand,
                }
                continue;
            }
            _ if b >= 0x80 => {
                // Non-ASCII text outside strings is not awk syntax; treat it as an operand.
                prev = AwkPrev::Operand;
            }
            _ => prev = AwkPrev::ExpectOperand,
        }
        i += 1;
    }
    if !parens.is_empty() {
        return AwkScan::Ambiguous;
    }
    AwkScan::Clean
}

/// Returns the index after the closing quote of the string starting at `start`.
fn skip_awk_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Returns the index after the closing slash of the regex literal starting at `start`.
fn skip_awk_regex(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'/' => return Some(i + 1),
            b'[' => {
                // A bracket expression: `]` right after `[` or `[^` is literal. A `/` inside
                // one ends the regex for some awks and not for others, so it is ambiguous.
                i += 1;
                if bytes.get(i) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                }
                loop {
                    match bytes.get(i) {
                        None => return None,
                        Some(b']') => break,
                        Some(b'/') => return None,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// tar

const TAR_REASON: &str = "tar command execution option";

/// Long options that run a program (original: checkpoint-action=exec, to-command,
/// use-compress-program, rsh-command; added: rmt-command, info-script, new-volume-script).
const TAR_PROHIBITED_LONG: &[&str] = &[
    "to-command",
    "use-compress-program",
    "rsh-command",
    "rmt-command",
    "info-script",
    "new-volume-script",
];
/// Short options that run a program: `-I PROG` (original) and `-F SCRIPT` (added).
const TAR_PROHIBITED_SHORT: &[char] = &['I', 'F'];
/// Short options that take a value; the value ends a cluster.
const TAR_SHORT_WITH_VALUE: &[char] = &[
    'b', 'C', 'f', 'F', 'g', 'H', 'I', 'K', 'L', 'N', 'T', 'V', 'X',
];

/// `tar` options that run external programs, in long, abbreviated, clustered and old-style
/// forms, and remote archives (`-f host:file`, which runs rsh/ssh with a caller-chosen host
/// that can be an ssh option such as `-oProxyCommand=...`) unless `--force-local` is given.
fn check_tar(args: &[String]) -> Result<(), String> {
    let reject = || Err(TAR_REASON.to_string());
    let options = before_double_dash(args);
    let mut archives: Vec<&str> = Vec::new();
    let mut force_local = false;
    let mut i = 0;
    // Old-style options: a first argument without a dash is a cluster of option letters whose
    // values are the following arguments, in order.
    if let Some(first) = options.first() {
        if !first.starts_with('-') {
            let mut value_index = 1;
            for letter in first.chars() {
                if TAR_PROHIBITED_SHORT.contains(&letter) {
                    return reject();
                }
                if TAR_SHORT_WITH_VALUE.contains(&letter) {
                    if letter == 'f' {
                        if let Some(value) = options.get(value_index) {
                            archives.push(value);
                        }
                    }
                    value_index += 1;
                }
            }
            i = 1;
        }
    }
    while i < options.len() {
        let arg = options[i].as_str();
        i += 1;
        if let Some((name, value)) = long_option(arg) {
            if abbreviates(name, "force-local") && name.len() >= "force-l".len() {
                force_local = true;
            }
            if abbreviates(name, "checkpoint-action") && name.len() > "checkpoint".len() {
                let value = match value {
                    Some(v) => Some(v),
                    None => options.get(i).map(String::as_str),
                };
                if value.is_some_and(|v| v.contains("exec")) {
                    return reject();
                }
                continue;
            }
            if TAR_PROHIBITED_LONG.iter().any(|o| abbreviates(name, o)) {
                return reject();
            }
            if abbreviates(name, "file") && name.len() >= 3 {
                match value {
                    Some(v) => archives.push(v),
                    None => {
                        if let Some(v) = options.get(i) {
                            archives.push(v);
                        }
                    }
                }
            }
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-') else {
            continue;
        };
        for (position, letter) in cluster.char_indices() {
            if TAR_PROHIBITED_SHORT.contains(&letter) {
                return reject();
            }
            if TAR_SHORT_WITH_VALUE.contains(&letter) {
                let rest = &cluster[position + letter.len_utf8()..];
                if letter == 'f' {
                    if !rest.is_empty() {
                        archives.push(rest);
                    } else if let Some(v) = options.get(i) {
                        archives.push(v);
                    }
                }
                break;
            }
        }
    }
    if !force_local && archives.iter().any(|a| is_remote_archive(a)) {
        return reject();
    }
    Ok(())
}

/// GNU tar treats `host:file` (a colon before any slash) as a remote archive.
fn is_remote_archive(name: &str) -> bool {
    match name.find(':') {
        Some(colon) => !name[..colon].contains('/'),
        None => false,
    }
}

// ---------------------------------------------------------------------------------------------
// sort

const SORT_REASON: &str = "sort external program or path option";

/// GNU sort's long options and whether each takes a separate value (the original's table).
const SORT_LONG_OPTIONS: &[(&str, bool)] = &[
    ("batch-size", true),
    ("buffer-size", true),
    ("check", false),
    ("compress-program", true),
    ("debug", false),
    ("dictionary-order", false),
    ("field-separator", true),
    ("files0-from", true),
    ("general-numeric-sort", false),
    ("help", false),
    ("human-numeric-sort", false),
    ("ignore-case", false),
    ("ignore-leading-blanks", false),
    ("ignore-nonprinting", false),
    ("key", true),
    ("merge", false),
    ("month-sort", false),
    ("numeric-sort", false),
    ("output", true),
    ("parallel", true),
    ("random-sort", false),
    ("random-source", true),
    ("reverse", false),
    ("sort", true),
    ("stable", false),
    ("temporary-directory", true),
    ("unique", false),
    ("version", false),
    ("version-sort", false),
    ("zero-terminated", false),
];
/// An external program, an output path, an external file list, an external temporary
/// directory (original).
const SORT_PROHIBITED_LONG: &[&str] = &[
    "compress-program",
    "files0-from",
    "output",
    "temporary-directory",
];
const SORT_PROHIBITED_SHORT: &[char] = &['o', 'T'];
const SORT_SHORT_WITH_VALUE: &[char] = &['k', 'o', 'S', 't', 'T'];

/// `sort` options that run a program or reach paths outside the contained redirections.
fn check_sort(args: &[String]) -> Result<(), String> {
    let reject = || Err(SORT_REASON.to_string());
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            return Ok(());
        }
        if arg == "-" || !arg.starts_with('-') {
            continue;
        }
        if let Some((name, value)) = long_option(arg) {
            let candidates: Vec<(&str, bool)> =
                match SORT_LONG_OPTIONS.iter().find(|(o, _)| *o == name) {
                    Some(exact) => vec![*exact],
                    None => SORT_LONG_OPTIONS
                        .iter()
                        .copied()
                        .filter(|(o, _)| abbreviates(name, o))
                        .collect(),
                };
            if candidates
                .iter()
                .any(|(o, _)| SORT_PROHIBITED_LONG.contains(o))
            {
                return reject();
            }
            if value.is_none() && candidates.len() == 1 && candidates[0].1 {
                i += 1;
            }
            continue;
        }
        let cluster = &arg[1..];
        for (position, letter) in cluster.char_indices() {
            if SORT_PROHIBITED_SHORT.contains(&letter) {
                return reject();
            }
            if SORT_SHORT_WITH_VALUE.contains(&letter) {
                // The value is the rest of this argument or the next one; either way it is
                // data and is not rescanned as option letters.
                if position + letter.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// git

const GIT_CONFIG_OVERRIDE: &str = "git command-scoped config";
const GIT_CONFIG: &str = "git config";
const GIT_EXTERNAL: &str = "git external program";
const GIT_OUTPUT: &str = "git file output";

/// Global options that take their value as the next argument.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
    "--shallow-file",
];

/// Options anywhere on the line that run or locate external programs (original: exact or
/// `=value`, plus any argument starting with `--upl` or `--rece`).
const GIT_EXTERNAL_ANYWHERE: &[&str] = &[
    "--config-env",
    "--exec",
    "--exec-path",
    "--receive-pack",
    "--upload-pack",
];

/// Subcommands that exist to run external programs or commands: difftool and mergetool run
/// diff/merge tools (editors with shell escapes), filter-branch and filter-repo run filter
/// code, send-email runs `--sendmail-cmd`/`--to-cmd`/`--smtp-server` programs, instaweb and
/// web--browse start servers and browsers.
const GIT_DENIED_SUBCOMMANDS: &[&str] = &[
    "difftool",
    "mergetool",
    "filter-branch",
    "filter-repo",
    "send-email",
    "instaweb",
    "web--browse",
    // `git daemon --access-hook=CMD` runs a command per connection.
    "daemon",
];

/// Per-subcommand options that run a program: long names (matched with abbreviations) and
/// short letters (matched inside clusters, until a letter in the third list, which takes a
/// value).
struct GitSubcommandRule {
    subcommands: &'static [&'static str],
    long: &'static [&'static str],
    short: &'static [char],
    short_with_value: &'static [char],
}

const GIT_SUBCOMMAND_RULES: &[GitSubcommandRule] = &[
    // clone: `-u`/`--upload-pack` runs a program, `-c`/`--config` sets config such as
    // core.fsmonitor or core.hooksPath for the new repository (original), `--template` copies
    // hooks that run during the clone (added).
    GitSubcommandRule {
        subcommands: &["clone"],
        long: &["upload-pack", "config", "template"],
        short: &['u', 'c'],
        short_with_value: &['o', 'b', 'j'],
    },
    GitSubcommandRule {
        subcommands: &["init"],
        long: &["template"],
        short: &[],
        short_with_value: &[],
    },
    GitSubcommandRule {
        subcommands: &["fetch", "pull"],
        long: &["upload-pack"],
        short: &[],
        short_with_value: &[],
    },
    GitSubcommandRule {
        subcommands: &["ls-remote"],
        long: &["upload-pack"],
        short: &['u'],
        short_with_value: &['o'],
    },
    GitSubcommandRule {
        subcommands: &["fetch-pack"],
        long: &["upload-pack", "exec"],
        short: &[],
        short_with_value: &[],
    },
    GitSubcommandRule {
        subcommands: &["push", "send-pack"],
        long: &["receive-pack", "exec"],
        short: &[],
        short_with_value: &['o'],
    },
    GitSubcommandRule {
        subcommands: &["archive"],
        long: &["exec"],
        short: &[],
        short_with_value: &[],
    },
    // rebase `-x`/`--exec` runs a shell command after each commit (added).
    GitSubcommandRule {
        subcommands: &["rebase"],
        long: &["exec"],
        short: &['x'],
        short_with_value: &['s', 'X', 'C'],
    },
    // grep `-O`/`--open-files-in-pager` runs the named pager (added).
    GitSubcommandRule {
        subcommands: &["grep"],
        long: &["open-files-in-pager"],
        short: &['O'],
        short_with_value: &['e', 'f', 'A', 'B', 'C', 'm'],
    },
];

/// Finds the subcommand: the first argument that is not a global option or a global option's
/// value. A separate `--` ends the global options; the next argument is the subcommand.
fn git_subcommand(args: &[String]) -> Result<Option<usize>, String> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return Ok(if i + 1 < args.len() {
                Some(i + 1)
            } else {
                None
            });
        }
        if arg.starts_with("-c") {
            return Err(GIT_CONFIG_OVERRIDE.to_string());
        }
        if !arg.starts_with('-') {
            return Ok(Some(i));
        }
        i += if GIT_GLOBAL_WITH_VALUE.contains(&arg) {
            2
        } else {
            1
        };
    }
    Ok(None)
}

fn is_ext_url(text: &str) -> bool {
    text.get(..5)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("ext::"))
}

/// git: command-scoped configuration, `git config`, and options, transports and subcommands
/// that run external programs.
fn check_git(args: &[String]) -> Result<(), String> {
    let subcommand = git_subcommand(args)?;
    // Checks on every argument, as the original made them.
    for arg in args {
        let external = GIT_EXTERNAL_ANYWHERE
            .iter()
            .any(|o| arg == o || arg.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
            || arg.starts_with("--upl")
            || arg.starts_with("--rece")
            // The `ext::` transport runs its address as a command (any `<helper>::` address
            // runs git-remote-<helper>, and ext is the one that takes a command), whether the
            // URL is an argument of its own or an option value (`--remote=ext::...`).
            || is_ext_url(arg)
            || arg.split_once('=').is_some_and(|(_, value)| is_ext_url(value));
        if external {
            return Err(GIT_EXTERNAL.to_string());
        }
    }
    let Some(index) = subcommand else {
        return Ok(());
    };
    let name = args[index].as_str();
    let rest = &args[index + 1..];
    if name == "config" {
        return Err(GIT_CONFIG.to_string());
    }
    if GIT_DENIED_SUBCOMMANDS.contains(&name) {
        return Err(GIT_EXTERNAL.to_string());
    }
    let options = before_double_dash(rest);
    // `git submodule foreach CMD` and `git bisect run CMD` run commands (added).
    if name == "submodule" && options.iter().any(|a| a == "foreach") {
        return Err(GIT_EXTERNAL.to_string());
    }
    if name == "bisect"
        && options
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|a| a == "run")
    {
        return Err(GIT_EXTERNAL.to_string());
    }
    for rule in GIT_SUBCOMMAND_RULES {
        if !rule.subcommands.contains(&name) {
            continue;
        }
        for arg in options {
            if let Some((option, _)) = long_option(arg) {
                if rule.long.iter().any(|o| abbreviates(option, o)) {
                    return Err(GIT_EXTERNAL.to_string());
                }
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-') else {
                continue;
            };
            for letter in cluster.chars() {
                if rule.short.contains(&letter) {
                    return Err(GIT_EXTERNAL.to_string());
                }
                if rule.short_with_value.contains(&letter) {
                    break;
                }
            }
        }
    }
    // `--output=FILE` (diff family, log, show, format-patch, archive) and `archive -o FILE`
    // write to any path (added, like sort -o in the original).
    for arg in options {
        if let Some((option, _)) = long_option(arg) {
            if abbreviates(option, "output") {
                return Err(GIT_OUTPUT.to_string());
            }
        } else if name == "archive" && arg.starts_with('-') && arg[1..].contains('o') {
            return Err(GIT_OUTPUT.to_string());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Smaller rules: fd, rg, split, diff3/sdiff.

/// `fd -x/-X/--exec/--exec-batch` runs a command for each match. Any single-dash cluster with
/// `x` or `X` is rejected, which also catches `-Hx cmd`.
fn check_fd(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if let Some((name, _)) = long_option(arg) {
            if name == "exec" || name == "exec-batch" {
                return Err("fd --exec".to_string());
            }
        } else if arg.starts_with('-') && arg[1..].contains(['x', 'X']) {
            return Err("fd --exec".to_string());
        }
    }
    Ok(())
}

/// `rg --pre COMMAND` runs a preprocessor on every searched file.
fn check_rg(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if let Some((name, _)) = long_option(arg) {
            if name == "pre" {
                return Err("rg --pre".to_string());
            }
        }
    }
    Ok(())
}

/// `split --filter=COMMAND` pipes every chunk through a shell command.
fn check_split(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if let Some((name, _)) = long_option(arg) {
            if abbreviates(name, "filter") {
                return Err("split --filter".to_string());
            }
        }
    }
    Ok(())
}

/// `diff3 --diff-program=PROGRAM` and `sdiff --diff-program=PROGRAM` run the named program.
fn check_diff_program(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if let Some((name, _)) = long_option(arg) {
            if name.len() >= 2 && abbreviates(name, "diff-program") {
                return Err("external diff program".to_string());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hardening case expects.
    #[derive(Debug)]
    enum Expect {
        /// Accepted.
        Ok,
        /// Rejected with a message containing this text.
        Err(&'static str),
    }
    use Expect::{Err as E, Ok as A};

    fn check_case(argv: &[&str], expect: &Expect) {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        match (expect, check(&argv)) {
            (A, Ok(())) => (),
            (E(want), Err(msg)) => {
                assert!(msg.contains(want), "{argv:?}: {msg:?} lacks {want:?}");
            }
            (A, Err(msg)) => panic!("{argv:?}: expected acceptance, got {msg:?}"),
            (E(want), Ok(())) => panic!("{argv:?}: expected rejection {want:?}, got acceptance"),
        }
    }

    const FIND_EXEC_R: Expect = E("policy: find -exec");
    const FIND_OUT_R: Expect = E("policy: find file output");
    const AWK_R: Expect = E("policy: awk external access");
    const TAR_R: Expect = E("policy: tar command execution option");
    const SORT_R: Expect = E("policy: sort external program or path option");
    const GIT_CFG_R: Expect = E("policy: git command-scoped config");
    const GIT_CONFIG_R: Expect = E("policy: git config");
    const GIT_EXT_R: Expect = E("policy: git external program");
    const GIT_OUT_R: Expect = E("policy: git file output");

    const CASES: &[(&[&str], Expect)] = &[
        // Always-rejected programs, with the original's exact message form.
        (
            &["sh", "-c", "id"],
            E("Command rejected by default security policy: sh"),
        ),
        (
            &["bash"],
            E("Command rejected by default security policy: bash"),
        ),
        (&["/bin/bash", "-c", "id"], E("security policy: bash")),
        (&["/usr/bin/zsh"], E("policy: zsh")),
        (&["dash", "-c", "id"], E("policy: dash")),
        (&["ash"], E("policy: ash")),
        (&["fish"], E("policy: fish")),
        (&["csh"], E("policy: csh")),
        (&["tcsh"], E("policy: tcsh")),
        (&["ksh"], E("policy: ksh")),
        (&["mksh"], E("policy: mksh")),
        (&["rbash"], E("policy: rbash")),
        (&["pwsh", "-c", "x"], E("policy: pwsh")),
        (&["BASH"], E("policy: bash")),
        (&["./bash"], E("policy: bash")),
        (&["bash5"], E("policy: bash")),
        (&["busybox", "sh"], E("policy: busybox")),
        (&["/bin/busybox", "awk", "BEGIN{}"], E("policy: busybox")),
        (&["toybox"], E("policy: toybox")),
        (
            &["python", "-c", "1"],
            E("Command rejected by default security policy: python"),
        ),
        (&["python3"], E("policy: python")),
        (&["python3.12", "-c", "1"], E("policy: python")),
        (&["/usr/bin/python3.11"], E("policy: python")),
        (&["python3-dbg"], E("policy: python")),
        (&["pythonw"], E("policy: python")),
        (&["pypy3"], E("policy: pypy")),
        (&["perl", "-e", "1"], E("policy: perl")),
        (&["perl5.36"], E("policy: perl")),
        (&["ruby"], E("policy: ruby")),
        (&["ruby3.2"], E("policy: ruby")),
        (&["irb"], E("policy: irb")),
        (&["node", "-e", "1"], E("policy: node")),
        (&["nodejs"], E("policy: nodejs")),
        (&["deno"], E("policy: deno")),
        (&["bun"], E("policy: bun")),
        (&["php", "-r", "1;"], E("policy: php")),
        (&["php8.2"], E("policy: php")),
        (&["lua"], E("policy: lua")),
        (&["lua5.4"], E("policy: lua")),
        (&["lua-5.4"], E("policy: lua")),
        (&["luajit"], E("policy: luajit")),
        (&["tclsh8.6"], E("policy: tclsh")),
        (&["expect"], E("policy: expect")),
        (&["Rscript", "-e", "1"], E("policy: rscript")),
        (&["R"], E("policy: r")),
        (&["julia"], E("policy: julia")),
        (&["osascript"], E("policy: osascript")),
        (&["java", "Main.java"], E("policy: java")),
        (&["pip", "install", "."], E("policy: pip")),
        (&["pip3"], E("policy: pip")),
        (&["pip3.12"], E("policy: pip")),
        (&["npx", "cowsay"], E("policy: npx")),
        (&["uvx", "x"], E("policy: uvx")),
        (&["dc"], E("policy: dc")),
        (&["ed"], E("policy: ed")),
        (
            &["env", "sh"],
            E("Command rejected by default security policy: env"),
        ),
        (&["/usr/bin/env"], E("policy: env")),
        (&["xargs", "rm"], E("policy: xargs")),
        (&["timeout", "5", "sh"], E("policy: timeout")),
        (&["nice", "sh"], E("policy: nice")),
        (&["nohup", "sh"], E("policy: nohup")),
        (&["setsid", "sh"], E("policy: setsid")),
        (&["stdbuf", "-o0", "sh"], E("policy: stdbuf")),
        (&["chroot", "/", "sh"], E("policy: chroot")),
        (&["sudo", "ls"], E("policy: sudo")),
        (&["su"], E("policy: su")),
        (&["doas", "ls"], E("policy: doas")),
        (&["pkexec"], E("policy: pkexec")),
        (&["strace", "ls"], E("policy: strace")),
        (&["ltrace", "ls"], E("policy: ltrace")),
        (&["gdb", "-batch"], E("policy: gdb")),
        (&["unshare", "sh"], E("policy: unshare")),
        (&["nsenter"], E("policy: nsenter")),
        (&["flock", "x", "sh"], E("policy: flock")),
        (&["watch", "ls"], E("policy: watch")),
        (&["time", "ls"], E("policy: time")),
        (&["command", "ls"], E("policy: command")),
        (&["exec", "ls"], E("policy: exec")),
        (&["eval", "ls"], E("policy: eval")),
        (&["script", "-c", "id"], E("policy: script")),
        (&["ionice", "sh"], E("policy: ionice")),
        (&["taskset", "1", "sh"], E("policy: taskset")),
        (&["chrt", "0", "sh"], E("policy: chrt")),
        (&["systemd-run", "sh"], E("policy: systemd-run")),
        (&["parallel", "sh"], E("policy: parallel")),
        (&["at", "now"], E("policy: at")),
        (&["crontab", "-"], E("policy: crontab")),
        (&["make", "-f", "-"], E("policy: make")),
        (&["gmake"], E("policy: gmake")),
        (&["tmux"], E("policy: tmux")),
        (
            &["/lib64/ld-linux-x86-64.so.2", "/bin/sh"],
            E("policy: ld-linux-x86-64.so.2"),
        ),
        (&["vi"], E("policy: vi")),
        (&["vim", "-c", ":!sh"], E("policy: vim")),
        (&["view"], E("policy: view")),
        (&["ex"], E("policy: ex")),
        (&["nvim"], E("policy: nvim")),
        (&["emacs"], E("policy: emacs")),
        (&["nano"], E("policy: nano")),
        (&["less", "f"], E("policy: less")),
        (&["more", "f"], E("policy: more")),
        (&["man", "ls"], E("policy: man")),
        (&["pg"], E("policy: pg")),
        (&["sed", "s/a/b/"], E("policy: sed")),
        (&["gsed", "-n", "p"], E("policy: sed")),
        (&["/usr/bin/sed"], E("policy: sed")),
        (&["mysql"], E("policy: mysql")),
        (&["psql"], E("policy: psql")),
        (&["sqlite3", "db"], E("policy: sqlite3")),
        (&["ssh", "host"], E("policy: ssh")),
        (&["scp", "-S", "x", "a", "b"], E("policy: scp")),
        (&["sftp"], E("policy: sftp")),
        (&["ftp"], E("policy: ftp")),
        (&["rsync", "-e", "sh", "a", "b"], E("policy: rsync")),
        (&["zip", "-TT", "sh", "a.zip", "f"], E("policy: zip")),
        (&["nc", "-e", "/bin/sh"], E("policy: nc")),
        (&["socat", "exec:sh", "-"], E("policy: socat")),
        (&["nmap", "--script", "x"], E("policy: nmap")),
        (&["mail"], E("policy: mail")),
        // Names that merely look like denied ones are accepted.
        (&["ls"], A),
        (&["/usr/bin/ls", "-la"], A),
        (&["sha256sum", "f"], A),
        (&["bzip2", "-d", "f"], A),
        (&["shellcheck", "x.sh"], A),
        (&["shred", "-u", "f"], A),
        (&["perltidy", "x.pl"], A),
        (&["envsubst"], A),
        (&["printenv"], A),
        (&["nodemon-like"], A),
        (&["timeoutx"], A),
        (&["sedx"], A),
        (&["grep", "-e", "-exec", "f"], A),
        (&["echo", "sh", "-c", "id"], A),
        (&["cat", "python3"], A),
        (&["unzip", "a.zip"], A),
        (&["wc", "-l"], A),
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
        // find.
        (&["find", ".", "-name", "*.rs"], A),
        (&["find", ".", "-type", "f", "-print0"], A),
        (&["find", ".", "-printf", "%p\\n"], A),
        (&["find", ".", "-delete"], A),
        (&["find", ".", "-name", "-exec"], FIND_EXEC_R),
        (&["find", ".", "-exec", "sh", "-c", "id", ";"], FIND_EXEC_R),
        (&["find", ".", "-execdir", "id", "+"], FIND_EXEC_R),
        (&["find", ".", "-ok", "id", ";"], FIND_EXEC_R),
        (&["find", ".", "-okdir", "id", ";"], FIND_EXEC_R),
        (&["/usr/bin/find", ".", "-exec", "id", ";"], FIND_EXEC_R),
        (&["gfind", ".", "-exec", "id", ";"], FIND_EXEC_R),
        (&["bfind", ".", "-exec", "id", ";"], FIND_EXEC_R),
        (
            &["/opt/homebrew/bin/gfind", ".", "-execdir", "id", ";"],
            FIND_EXEC_R,
        ),
        (&["find", ".", "-fprint", "/tmp/x"], FIND_OUT_R),
        (&["find", ".", "-fprint0", "x"], FIND_OUT_R),
        (&["find", ".", "-fprintf", "x", "%p"], FIND_OUT_R),
        (&["find", ".", "-fls", "x"], FIND_OUT_R),
        (&["find", "-exec-like"], A),
        (&["find", ".", "-newer", "f", "!", "-name", "x"], A),
        // awk: programs that are accepted.
        (&["awk", "{print $1}"], A),
        (&["awk", "$1 > 1"], A),
        (&["awk", "$1 > 1 { print $2 }"], A),
        (&["awk", "NR>1"], A),
        (&["awk", "$1 >= 10 && $2 < 5"], A),
        (&["awk", "{ if ($1 > 5) print $2 }"], A),
        (&["awk", "{ x = $1 > 5; print x }"], A),
        (&["awk", "{ print ($1 > 0) }"], A),
        (&["awk", "{ print ($1 > 0), $2 }"], A),
        (&["awk", "/a|b/ { print }"], A),
        (&["awk", "/>/"], A),
        (&["awk", "{ print \"a > b\" }"], A),
        (&["awk", "{ print \"a | b\" }"], A),
        (&["awk", "$1 == \"x\" || $2 == \"y\""], A),
        (&["awk", "{ s += $1 } END { print s / NR }"], A),
        (&["awk", "{ print $1 / 2 }"], A),
        (&["awk", "-F", ":", "{print $1}", "/etc/passwd"], A),
        (&["awk", "-F|", "{print $1}"], A),
        (&["awk", "-F", "|", "{print $1}"], A),
        (&["awk", "-v", "n=3", "NR > n"], A),
        (&["awk", "-vn=3", "NR > n"], A),
        (&["awk", "--", "$1 > 1", "f"], A),
        (
            &["awk", "{ print length($0) > 10 ? \"long\" : \"short\" }"],
            AWK_R,
        ),
        (
            &["awk", "{ print (length($0) > 10 ? \"long\" : \"short\") }"],
            A,
        ),
        (&["awk", "BEGIN { while ((getline line) > 0) n++ }"], A),
        (
            &["awk", "{ a[$1]++ } END { for (k in a) print k, a[k] }"],
            A,
        ),
        (&["awk", "{ gsub(/x/, \"y\"); print }"], A),
        (&["awk", "{ if ($0 ~ /[|]/) print }"], A),
        (&["gawk", "$3 > 100"], A),
        (&["/usr/bin/mawk", "NR > 1 { print $1 }"], A),
        (&["awk", "{print}", "a>b.txt"], A),
        // awk: rejected programs.
        (&["awk", "BEGIN{system(\"id\")}"], AWK_R),
        (&["awk", "BEGIN { system (\"id\") }"], AWK_R),
        (&["awk", "BEGIN { f = \"system\"; @f(\"id\") }"], AWK_R),
        (&["awk", "{ print | \"sh\" }"], AWK_R),
        (&["awk", "BEGIN { \"id\" | getline x; print x }"], AWK_R),
        (&["awk", "BEGIN { print \"id\" |& \"sh\" }"], AWK_R),
        (&["awk", "{ print > \"/tmp/x\" }"], AWK_R),
        (&["awk", "{ print >> \"log\" }"], AWK_R),
        (&["awk", "{print $1 > 0}"], AWK_R),
        (&["awk", "{ printf \"%s\", $1 > \"f\" }"], AWK_R),
        (&["awk", "{ printf(\"%s\", $1) > \"f\" }"], AWK_R),
        (&["awk", "{ print(\"a\") > \"f\" }"], AWK_R),
        (&["awk", "{ if (1) print > \"f\" }"], AWK_R),
        (&["awk", "{ print \"a;\" > \"f\" }"], AWK_R),
        (&["awk", "BEGIN { getline line < \"/etc/shadow\" }"], AWK_R),
        (&["awk", "BEGIN { getline < \"f\" }"], AWK_R),
        (&["awk", "@include \"x.awk\""], AWK_R),
        (&["awk", "@load \"filefuncs\"; BEGIN{}"], AWK_R),
        (&["awk", "{ if (1) /\"/; print > \"f\"; x = \"/\" }"], AWK_R),
        (&["awk", "{ x = 1 / 2; print | \"sh\"; y = 3 / 4 }"], AWK_R),
        (&["awk", "/[/]/ { print }"], AWK_R),
        (&["awk", "{ print \"unterminated }"], AWK_R),
        (&["awk", "{ print (1 }"], AWK_R),
        (&["awk", "-f", "prog.awk"], AWK_R),
        (&["awk", "--file=prog.awk"], AWK_R),
        (&["awk", "--fi", "prog.awk"], AWK_R),
        (&["awk", "-e", "BEGIN{}"], AWK_R),
        (&["awk", "--source=BEGIN{}"], AWK_R),
        (&["awk", "-E", "x"], AWK_R),
        (&["awk", "--exec", "x"], AWK_R),
        (&["awk", "-i", "inc"], AWK_R),
        (&["awk", "--include=inc"], AWK_R),
        (&["awk", "-l", "filefuncs"], AWK_R),
        (&["awk", "--load", "ext"], AWK_R),
        (&["awk", "-nf", "prog.awk"], AWK_R),
        (&["awk", "-W", "exec", "x"], AWK_R),
        (&["awk", "-Wexec=x"], AWK_R),
        (&["mawk", "-W", "e", "x"], AWK_R),
        (&["awk", "-D", "BEGIN{}"], AWK_R),
        (&["awk", "--debug", "BEGIN{}"], AWK_R),
        (&["awk", "-d/tmp/vars", "BEGIN{}"], AWK_R),
        (&["awk", "--dump-variables=/tmp/vars", "BEGIN{}"], AWK_R),
        (&["awk", "--profile=/tmp/p", "BEGIN{}"], AWK_R),
        (&["awk", "-o/tmp/pretty", "BEGIN{}"], AWK_R),
        (&["awk", "-d", "BEGIN{}"], A),
        (&["awk", "-v", "x=1", "BEGIN{system(\"id\")}"], AWK_R),
        (&["gawk", "BEGIN{system(\"id\")}"], AWK_R),
        (&["mawk", "BEGIN{system(\"id\")}"], AWK_R),
        (&["nawk", "BEGIN{system(\"id\")}"], AWK_R),
        (&["/usr/bin/gawk", "{print|\"sh\"}"], AWK_R),
        (&["original-awk", "{print > \"f\"}"], AWK_R),
        (&["awk", "{print}", "x", "BEGIN{system(\"id\")}"], AWK_R),
        // tar.
        (&["tar", "-tf", "a.tar"], A),
        (&["tar", "-czf", "out.tgz", "dir"], A),
        (&["tar", "xzf", "a.tgz"], A),
        (&["tar", "--checkpoint=10", "-cf", "a.tar", "d"], A),
        (&["tar", "--checkpoint-action=dot", "-cf", "a.tar", "d"], A),
        (&["tar", "-xf", "a.tar", "-C", "out"], A),
        (&["tar", "--force-local", "-xf", "c:/a.tar"], A),
        (&["tar", "-xf", "dir/a:b.tar"], A),
        (
            &["tar", "--checkpoint-action=exec=sh", "-cf", "a.tar", "d"],
            TAR_R,
        ),
        (
            &["tar", "--checkpoint-action", "exec=sh", "-cf", "a.tar", "d"],
            TAR_R,
        ),
        (
            &["tar", "--checkpoint-a=exec=sh", "-cf", "a.tar", "d"],
            TAR_R,
        ),
        (&["tar", "--checkpoint-act", "exec=id"], TAR_R),
        (&["tar", "--to-command=sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "--to-command", "sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "--to-com=sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "--use-compress-program=sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "--use-comp", "sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "--rsh-command=/bin/sh", "-xf", "h:a"], TAR_R),
        (&["tar", "--rsh", "x"], TAR_R),
        (&["tar", "--rmt-command=x", "-xf", "a"], TAR_R),
        (&["tar", "--info-script=x", "-cf", "a", "d"], TAR_R),
        (&["tar", "--new-volume-script", "x"], TAR_R),
        (&["tar", "-I", "sh", "-xf", "a.tar"], TAR_R),
        (&["tar", "-Ish", "-xf", "a.tar"], TAR_R),
        (&["tar", "-xvIsh", "-f", "a.tar"], TAR_R),
        (&["tar", "-xvI", "sh", "-f", "a.tar"], TAR_R),
        (&["tar", "-F", "x", "-cf", "a", "d"], TAR_R),
        (&["tar", "xIf", "sh", "a.tar"], TAR_R),
        (&["tar", "cFf", "x", "a.tar", "d"], TAR_R),
        (&["gtar", "--to-command=sh", "-xf", "a"], TAR_R),
        (&["bsdtar", "--use-compress-program=sh", "-xf", "a"], TAR_R),
        (&["/usr/bin/tar", "-I", "sh", "-xf", "a"], TAR_R),
        (&["tar", "-xf", "-oProxyCommand=id:x"], TAR_R),
        (&["tar", "-xf", "host:archive.tar"], TAR_R),
        (&["tar", "--file=host:a.tar", "-x"], TAR_R),
        (&["tar", "xf", "host:a.tar"], TAR_R),
        (&["tar", "-xfhost:a.tar"], TAR_R),
        (&["tar", "-cf", "a.tar", "--", "-I"], A),
        // A separate value that looks like an option is scanned as one: a harmless false
        // rejection, which keeps a misjudged value from hiding a real option.
        (&["tar", "-cf", "-If.tar", "d"], TAR_R),
        // sort.
        (&["sort", "-r", "file"], A),
        (&["sort", "-n", "-k", "2", "f"], A),
        (&["sort", "-k", "-o", "f"], A),
        (&["sort", "-t", "o", "f"], A),
        (&["sort", "-to", "f"], A),
        (&["sort", "-k2o", "f"], A),
        (&["sort", "--key", "-o", "f"], A),
        (&["sort", "--reverse", "--unique", "f"], A),
        (&["sort", "--", "--output=data"], A),
        (&["sort", "--", "-o"], A),
        (&["sort", "-", "f"], A),
        (&["sort", "--debug", "f"], A),
        (&["sort", "--random-source=/dev/urandom", "-R", "f"], A),
        (&["sort", "-o", "out", "in"], SORT_R),
        (&["sort", "-oout", "in"], SORT_R),
        (&["sort", "-o/tmp/x", "in"], SORT_R),
        (&["sort", "-ro", "out", "in"], SORT_R),
        (&["sort", "-rofile", "in"], SORT_R),
        (&["sort", "-nro", "f"], SORT_R),
        (&["sort", "-T", "/tmp", "f"], SORT_R),
        (&["sort", "-rT", "/tmp", "f"], SORT_R),
        (&["sort", "file", "-o", "out"], SORT_R),
        (&["sort", "--output=out", "f"], SORT_R),
        (&["sort", "--output", "out", "f"], SORT_R),
        (&["sort", "--o", "out", "f"], SORT_R),
        (&["sort", "--out=x", "f"], SORT_R),
        (&["sort", "--compress-program=sh", "f"], SORT_R),
        (&["sort", "--co", "sh", "f"], SORT_R),
        (&["sort", "--comp=sh", "f"], SORT_R),
        (&["sort", "--c", "f"], SORT_R),
        (&["sort", "--files0-from=list"], SORT_R),
        (&["sort", "--files0", "list"], SORT_R),
        (&["sort", "--f=list"], SORT_R),
        (&["sort", "--temporary-directory=/tmp", "f"], SORT_R),
        (&["sort", "--te", "/tmp", "f"], SORT_R),
        (&["gsort", "-o", "x", "f"], SORT_R),
        (&["/usr/local/bin/gsort", "-ro", "x", "f"], SORT_R),
        (&["sort", "-k", "1", "f", "-o", "x"], SORT_R),
        // git: accepted.
        (&["git", "status"], A),
        (&["git", "log", "-p"], A),
        (&["git", "log", "--oneline", "-n", "5"], A),
        (&["git", "-C", "sub", "status"], A),
        (&["git", "-C", "-c", "status"], A),
        (&["git", "--git-dir=.git", "status"], A),
        (&["git", "--no-pager", "diff"], A),
        (&["git", "-P", "log"], A),
        (&["git", "diff", "--stat"], A),
        (&["git", "commit", "-c", "HEAD"], A),
        (&["git", "commit", "-m", "msg"], A),
        (&["git", "fetch", "-u", "origin"], A),
        (&["git", "fetch", "--update-head-ok", "origin"], A),
        (&["git", "clone", "https://example.com/r.git"], A),
        (&["git", "clone", "-b", "main", "--depth", "1", "url"], A),
        (&["git", "clone", "-bcu", "url"], A),
        (&["git", "push", "origin", "main"], A),
        (&["git", "rebase", "main"], A),
        (&["git", "rebase", "-i", "HEAD~3"], A),
        (&["git", "grep", "-n", "foo"], A),
        // As for tar, a separate value is scanned like an option (a harmless false rejection).
        (&["git", "grep", "-e", "-O", "x"], GIT_EXT_R),
        (&["git", "grep", "-e", "O", "x"], A),
        (&["git", "show", "HEAD:next::thing"], A),
        (&["git", "log", "--output-indicator-new=+"], A),
        (&["git", "submodule", "update", "--init"], A),
        (&["git", "bisect", "start"], A),
        (&["git", "archive", "--format=tar", "HEAD"], A),
        (&["git", "log", "--", "config"], A),
        // git: command-scoped config and git config.
        (&["git", "-c", "user.name=x", "status"], GIT_CFG_R),
        (&["git", "-c", "core.pager=sh", "log"], GIT_CFG_R),
        (
            &["git", "-c", "alias.pwn=!sh -c 'touch m'", "pwn"],
            GIT_CFG_R,
        ),
        (&["git", "-cdiff.external=touch m", "diff"], GIT_CFG_R),
        (&["git", "--git-dir=x", "-c", "a=b", "status"], GIT_CFG_R),
        (&["git", "-C", "dir", "-c", "a=b", "status"], GIT_CFG_R),
        (&["/usr/bin/git", "-c", "a=b", "status"], GIT_CFG_R),
        (&["git", "--config-env=core.pager=X", "log"], GIT_EXT_R),
        (&["git", "--config-env", "core.pager=X", "log"], GIT_EXT_R),
        (&["git", "config", "alias.x", "!sh"], GIT_CONFIG_R),
        (&["git", "config", "--get", "user.name"], GIT_CONFIG_R),
        (&["git", "config", "--list"], GIT_CONFIG_R),
        (
            &["git", "-C", "dir", "config", "core.pager", "sh"],
            GIT_CONFIG_R,
        ),
        (&["git", "--git-dir", "x", "config", "a", "b"], GIT_CONFIG_R),
        (
            &["git", "--work-tree", "x", "config", "a", "b"],
            GIT_CONFIG_R,
        ),
        (
            &["git", "--attr-source", "x", "config", "a", "b"],
            GIT_CONFIG_R,
        ),
        (&["git", "--no-pager", "config", "a", "b"], GIT_CONFIG_R),
        (&["git", "--", "config", "a", "b"], GIT_CONFIG_R),
        // git: external programs.
        (&["git", "--exec-path=/tmp", "status"], GIT_EXT_R),
        (&["git", "--exec-path"], GIT_EXT_R),
        (
            &["git", "fetch", "--upload-pack=sh -c id", "origin"],
            GIT_EXT_R,
        ),
        (
            &["git", "fetch", "--upload-pack", "sh", "origin"],
            GIT_EXT_R,
        ),
        (&["git", "fetch", "--upl=sh", "origin"], GIT_EXT_R),
        (&["git", "pull", "--upload-pack=x"], GIT_EXT_R),
        (&["git", "ls-remote", "--upload-pack=x", "."], GIT_EXT_R),
        (&["git", "ls-remote", "-u", "x", "."], GIT_EXT_R),
        (&["git", "ls-remote", "--u=x", "."], GIT_EXT_R),
        (&["git", "ls-remote", "-qux", "."], GIT_EXT_R),
        (&["git", "clone", "-u", "x", "url"], GIT_EXT_R),
        (&["git", "clone", "-ux", "url"], GIT_EXT_R),
        (&["git", "clone", "-qu", "x", "url"], GIT_EXT_R),
        (&["git", "clone", "--u=x", "url"], GIT_EXT_R),
        (
            &["git", "clone", "-c", "core.hooksPath=x", "url"],
            GIT_EXT_R,
        ),
        (&["git", "clone", "--config", "a=b", "url"], GIT_EXT_R),
        (&["git", "clone", "--con=a=b", "url"], GIT_EXT_R),
        (&["git", "clone", "--template=t", "url"], GIT_EXT_R),
        (&["git", "init", "--template", "t"], GIT_EXT_R),
        (&["git", "clone", "ext::sh -c id", "d"], GIT_EXT_R),
        (&["git", "clone", "EXT::sh -c id", "d"], GIT_EXT_R),
        (&["git", "fetch", "ext::sh -c id"], GIT_EXT_R),
        (&["git", "remote", "add", "x", "ext::sh -c id"], GIT_EXT_R),
        (
            &["git", "archive", "--remote=ext::sh -c id", "HEAD"],
            GIT_EXT_R,
        ),
        (
            &["git", "archive", "--exec=x", "--remote=r", "HEAD"],
            GIT_EXT_R,
        ),
        (&["git", "push", "--receive-pack=x", "origin"], GIT_EXT_R),
        (&["git", "push", "--rece=x", "origin"], GIT_EXT_R),
        (&["git", "push", "--exec=x", "origin"], GIT_EXT_R),
        (&["git", "push", "--e=x", "origin"], GIT_EXT_R),
        (&["git", "send-pack", "--receive-pack=x", "r"], GIT_EXT_R),
        (&["git", "fetch-pack", "--exec=x", "r"], GIT_EXT_R),
        (&["git", "rebase", "--exec", "id", "main"], GIT_EXT_R),
        (&["git", "rebase", "-x", "id", "main"], GIT_EXT_R),
        (&["git", "rebase", "-ix", "id", "main"], GIT_EXT_R),
        (&["git", "rebase", "--ex=id", "main"], GIT_EXT_R),
        (&["git", "grep", "--open-files-in-pager=sh", "x"], GIT_EXT_R),
        (&["git", "grep", "-Osh", "x"], GIT_EXT_R),
        (&["git", "grep", "-nO", "x"], GIT_EXT_R),
        (&["git", "grep", "--open=sh", "x"], GIT_EXT_R),
        (&["git", "difftool", "-x", "sh"], GIT_EXT_R),
        (&["git", "difftool"], GIT_EXT_R),
        (&["git", "mergetool"], GIT_EXT_R),
        (&["git", "filter-branch", "--tree-filter", "id"], GIT_EXT_R),
        (&["git", "send-email", "--sendmail-cmd=sh", "x"], GIT_EXT_R),
        (&["git", "instaweb"], GIT_EXT_R),
        (&["git", "daemon", "--access-hook=sh"], GIT_EXT_R),
        (&["gtimeout", "5", "sh"], E("policy: timeout")),
        (&["genv", "sh"], E("policy: env")),
        (&["gxargs", "sh"], E("policy: xargs")),
        (&["gawk5", "BEGIN{system(\"id\")}"], AWK_R),
        (&["tar", "--to-stdout", "-xf", "a.tar"], A),
        (&["tar", "--use-compress", "x", "-xf", "a.tar"], TAR_R),
        (&["awk", "BEGIN { awk::system(\"id\") }"], AWK_R),
        (&["awk", "BEGIN { split(s, a, /,/) }"], A),
        (&["git", "submodule", "foreach", "id"], GIT_EXT_R),
        (&["git", "submodule", "--quiet", "foreach", "id"], GIT_EXT_R),
        (&["git", "bisect", "run", "sh", "-c", "id"], GIT_EXT_R),
        (&["git", "-C", "d", "bisect", "run", "x"], GIT_EXT_R),
        (&["git", "log", "--output=/tmp/x"], GIT_OUT_R),
        (&["git", "diff", "--output", "x"], GIT_OUT_R),
        (&["git", "format-patch", "--outp=x", "HEAD~1"], GIT_OUT_R),
        (&["git", "archive", "-o", "/tmp/a.tar", "HEAD"], GIT_OUT_R),
        (&["git", "archive", "--o=/tmp/a.tar", "HEAD"], GIT_OUT_R),
        // fd, rg, split, diff3, sdiff.
        (&["fd", "-e", "rs"], A),
        (&["fd", "-x", "sh"], E("policy: fd --exec")),
        (&["fd", "-Hx", "sh"], E("policy: fd --exec")),
        (&["fd", "--exec", "sh"], E("policy: fd --exec")),
        (&["fdfind", "--exec-batch=sh"], E("policy: fd --exec")),
        (&["fd", "--", "-x"], A),
        (&["rg", "foo"], A),
        (&["rg", "--pre-glob", "*.gz", "foo"], A),
        (&["rg", "--pre", "sh", "foo"], E("policy: rg --pre")),
        (&["rg", "--pre=sh", "foo"], E("policy: rg --pre")),
        (&["rg", "-e", "x", "--", "--pre"], A),
        (&["split", "-l", "10", "f"], A),
        (&["split", "--filter=sh", "f"], E("policy: split --filter")),
        (&["split", "--fil", "sh", "f"], E("policy: split --filter")),
        (&["gsplit", "--filter=sh", "f"], E("policy: split --filter")),
        (&["diff3", "a", "b", "c"], A),
        (
            &["diff3", "--diff-program=sh", "a", "b", "c"],
            E("external diff program"),
        ),
        (
            &["sdiff", "--diff-prog", "sh", "a", "b"],
            E("external diff program"),
        ),
        (&["diff", "a", "b"], A),
    ];

    #[test]
    fn hardening_table() {
        assert!(CASES.len() >= 300, "only {} hardening cases", CASES.len());
        for (argv, expect) in CASES {
            check_case(argv, expect);
        }
    }

    #[test]
    fn exact_texts() {
        let argv = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: &[(&[&str], &str)] = &[
            (&["env"], "Command rejected by default security policy: env"),
            (
                &["python3.12"],
                "Command rejected by default security policy: python",
            ),
            (
                &["find", "-exec"],
                "Command rejected by default security policy: find -exec",
            ),
            (
                &["sort", "-o", "x"],
                "Command rejected by default security policy: sort external program or path option",
            ),
            (
                &["git", "-c", "a=b"],
                "Command rejected by default security policy: git command-scoped config",
            ),
            (
                &["awk", "BEGIN{system(\"x\")}"],
                "Command rejected by default security policy: awk external access",
            ),
            (&["ls;x"], "Unsafe command name: ls;x"),
        ];
        for (items, want) in cases {
            assert_eq!(check(&argv(items)), Err(want.to_string()), "{items:?}");
        }
    }

    #[test]
    fn awk_scanner() {
        let cases: &[(&str, AwkScan)] = &[
            ("$1 > 1", AwkScan::Clean),
            ("{print > \"f\"}", AwkScan::Dangerous),
            ("/unterminated", AwkScan::Ambiguous),
            ("/tmp/x", AwkScan::Clean),
            ("x=a|b", AwkScan::Dangerous),
        ];
        for (text, want) in cases {
            assert_eq!(scan_awk(text), *want, "{text:?}");
        }
    }

    #[test]
    fn version_stripping() {
        let cases: &[(&str, Option<&str>)] = &[
            ("python3.12", Some("python")),
            ("lua-5.4", Some("lua")),
            ("pip3", Some("pip")),
            ("sqlite3", Some("sqlite")),
            ("ls", None),
            ("123", None),
            ("x.", None),
        ];
        for (name, want) in cases {
            assert_eq!(strip_version(name), *want, "{name:?}");
        }
    }
}
