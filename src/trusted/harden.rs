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

fn awk_long_prohibited(name: &str, has_value: bool) -> bool {
    let candidates: Vec<&str> = if AWK_LONG_OPTIONS.contains(&name) {
        vec![name]
    } else {
        AWK_LONG_OPTIONS
            .iter()
            .copied()
            .filter(|o| abbreviates(name, o))
            .collect()
    };
    candidates.iter().any(|c| {
        AWK_PROHIBITED_LONG.contains(c) || (has_value && AWK_FILE_OUTPUT_LONG.contains(c))
    })
}

/// Options that load code from elsewhere, the program text itself, and every other operand.
fn check_awk(args: &[String]) -> Result<(), String> {
    let reject = || Err(AWK_REASON.to_string());
    // Values of -F, -v and their long forms are data: a field separator of `|` is harmless.
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
        if let Some((name, value)) = long_option(arg) {
            if awk_long_prohibited(name, value.is_some()) {
                return reject();
            }
            let takes_value = AWK_LONG_WITH_VALUE.iter().any(|o| *o == name)
                || (!AWK_LONG_OPTIONS.contains(&name)
                    && AWK_LONG_OPTIONS.iter().filter(|o| abbreviates(name, o)).count() == 1
                    && AWK_LONG_WITH_VALUE.iter().any(|o| abbreviates(name, o)));
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
                i += if bytes.get(i + 1) == Some(&b'=') { 2 } else { 1 };
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
            return Ok(if i + 1 < args.len() { Some(i + 1) } else { None });
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
    if name == "bisect" && options.iter().find(|a| !a.starts_with('-')).is_some_and(|a| a == "run")
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
