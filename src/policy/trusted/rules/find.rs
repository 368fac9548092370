//! find: a closed grammar. The command line is read word by word as find reads its expression,
//! each primary, operator and option with its own number of arguments, so that `-name -exec`
//! (a pattern) is data and `-exec` is an action. The table is the union of GNU findutils
//! 4.9's (`find --help`, `man find`), bfs's (`bfind`, which takes its flags, paths and
//! expression in any order) and the BSD find of FreeBSD and macOS; where they disagree on a
//! word, the reading that examines more words is taken (`-depth` takes a following number only
//! where it looks like one, as bfs and BSD find read it). A word starting with `-` that none of
//! them has is refused, naming it: a newer find may run or load something through it (bfs
//! even offers, on a terminal, to run the primary an unknown word resembles).
//!
//! Refused: `-exec`, `-execdir` (the original), `-ok`, `-okdir` (they run the command after a
//! confirmation read from stdin, which the caller controls), and `-fprint`, `-fprint0`,
//! `-fprintf`, `-fls` (they write to any path). `-delete` (and bfs's `-rm`) stays allowed, as
//! in the original; `-printf` writes to stdout. `-files0-from FILE` is accepted: it reads the
//! starting points from a file (or stdin), which runs nothing. The values of `-D` (debug
//! output on stderr), `-O` (optimisation level), and bfs's `-S` and `-j` are checked against
//! their lists.
//!
//! Words that do not start with `-` (and `-` itself) are starting points or the operators
//! `(`, `)`, `!`, `,`: GNU find refuses a starting point after the expression, bfs takes it,
//! and neither runs anything with it.

const EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
const OUTPUT: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// The primaries, operators and options of GNU find, bfs and BSD find, with the number of
/// arguments each takes (the refused ones are in `EXEC` and `OUTPUT`; `-newerXY`, `-depth`,
/// `-exit` and the flag groups are read by `check`).
#[rustfmt::skip]
const PRIMARIES: &[(&str, usize)] = &[
    // GNU find reads a primary with or without its leading dash, so `-(` is `(`; `--` ends
    // GNU find's leading options and bfs ignores it.
    ("-!", 0), ("-(", 0), ("-)", 0), ("-,", 0), ("--", 0),
    ("--help", 0), ("--version", 0), ("-help", 0), ("-version", 0),
    // Operators.
    ("-a", 0), ("-and", 0), ("-not", 0), ("-o", 0), ("-or", 0), ("-exclude", 0),
    // Leading options and flags (bfs and BSD find: -E, -X, -s, -x, -d; -f takes a path).
    ("-H", 0), ("-L", 0), ("-P", 0), ("-E", 0), ("-X", 0), ("-d", 0), ("-s", 0), ("-x", 0),
    ("-f", 1),
    // Positional and global options.
    ("-daystart", 0), ("-files0-from", 1), ("-follow", 0), ("-ignore_readdir_race", 0),
    ("-maxdepth", 1), ("-mindepth", 1), ("-mount", 0), ("-noignore_readdir_race", 0),
    ("-noleaf", 0), ("-nowarn", 0), ("-regextype", 1), ("-warn", 0), ("-xdev", 0),
    ("-color", 0), ("-nocolor", 0), ("-noerror", 0), ("-status", 0), ("-unique", 0),
    // Tests.
    ("-acl", 0), ("-amin", 1), ("-anewer", 1), ("-asince", 1), ("-atime", 1), ("-Bmin", 1),
    ("-Bnewer", 1), ("-Bsince", 1), ("-Btime", 1), ("-capable", 0), ("-cmin", 1),
    ("-cnewer", 1), ("-context", 1), ("-csince", 1), ("-ctime", 1), ("-empty", 0),
    ("-executable", 0), ("-false", 0), ("-flags", 1), ("-fstype", 1), ("-gid", 1),
    ("-group", 1), ("-hidden", 0), ("-ilname", 1), ("-iname", 1), ("-inum", 1), ("-ipath", 1),
    ("-iregex", 1), ("-iwholename", 1), ("-links", 1), ("-lname", 1), ("-mmin", 1),
    ("-mnewer", 1), ("-msince", 1), ("-mtime", 1), ("-name", 1), ("-newer", 1),
    ("-nogroup", 0), ("-nohidden", 0), ("-nouser", 0), ("-path", 1), ("-perm", 1),
    ("-readable", 0), ("-regex", 1), ("-samefile", 1), ("-since", 1), ("-size", 1),
    ("-sparse", 0), ("-true", 0), ("-type", 1), ("-uid", 1), ("-used", 1), ("-user", 1),
    ("-wholename", 1), ("-writable", 0), ("-xattr", 0), ("-xattrname", 1), ("-xtype", 1),
    // Actions that print to stdout, stop or delete.
    ("-delete", 0), ("-limit", 1), ("-ls", 0), ("-print", 0), ("-print0", 0), ("-printf", 1),
    ("-printx", 0), ("-prune", 0), ("-quit", 0), ("-rm", 0),
];

/// `-D`'s debug options (GNU find's, and bfs's `cost`).
const DEBUG: &[&str] = &[
    "all", "cost", "exec", "help", "opt", "rates", "search", "stat", "tree",
];

/// bfs's search strategies (`-S`).
const STRATEGIES: &[&str] = &["bfs", "dfs", "eds", "ids", "help"];

/// `-newerXY`, with X and Y among a, B, c, m, t.
fn is_newer_xy(word: &str) -> bool {
    word.strip_prefix("-newer")
        .is_some_and(|xy| xy.len() == 2 && xy.chars().all(|c| "aBcmt".contains(c)))
}

/// A number as bfs and BSD find take it after `-depth` (`3`, `-3`, `+3`).
fn looks_like_number(word: &str) -> bool {
    let digits = word.trim_start_matches(['+', '-']);
    word.len() - digits.len() <= 2 && digits.starts_with(|c: char| c.is_ascii_digit())
}

fn all_digits(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

fn not_known(what: &str) -> String {
    crate::policy::trusted::rules::not_known(&format!("find {what}"))
}

/// A flag's value: `-D` debug options, `-O` level, bfs's `-S` strategy and `-j` jobs.
fn check_flag_value(flag: char, value: &str) -> Result<(), String> {
    let known = match flag {
        'D' => value
            .split(',')
            .all(|option| option.is_empty() || DEBUG.contains(&option)),
        'O' => all_digits(value) || value == "fast",
        'S' => STRATEGIES.contains(&value),
        _ => all_digits(value),
    };
    if known {
        Ok(())
    } else {
        Err(not_known(&format!("option -{flag} {value}")))
    }
}

/// A group of single-letter flags, as bfs reads one (`-HE`, `-LD exec`, `-O3`, `-Sdfs`,
/// `-Lf PATH`: at least one capital letter, `-D`, `-O`, `-S` and `-j` taking the rest as
/// their value, `-D` and `-S` the next argument when nothing is left, `-f` the next argument
/// and only last): how many of the following arguments it takes, or `None` when the word is
/// no such group.
fn flag_group(word: &str, next: Option<&str>) -> Option<Result<usize, String>> {
    let letters = word.strip_prefix('-')?;
    if !letters.contains(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    for (position, flag) in letters.char_indices() {
        let rest = &letters[position + 1..];
        match flag {
            'E' | 'H' | 'L' | 'P' | 'X' | 'd' | 's' | 'x' => {}
            'f' if rest.is_empty() => return Some(Ok(1)),
            'D' | 'S' if rest.is_empty() => {
                let value = next.unwrap_or_default();
                return Some(check_flag_value(flag, value).map(|()| 1));
            }
            'D' | 'O' | 'S' | 'j' if !rest.is_empty() => {
                return Some(check_flag_value(flag, rest).map(|()| 0));
            }
            _ => return None,
        }
    }
    Some(Ok(0))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[".", "-name", "*.rs"],
        &[".", "-type", "f", "-newer", "x"],
        &[".", "-maxdepth", "2", "-print0"],
        &["-L", ".", "-iname", "*.md", "-printf", "%p\\n"],
        &["-D", "stat", ".", "-depth", "2"],
    ],
    refuse: &[
        &[".", "-exec", "sh", "-c", "id", "+"],
        &[".", "-execdir", "id", ";"],
        &[".", "-ok", "rm", "{}", ";"],
        &[".", "-fprint", "/tmp/x"],
        &[".", "-fls", "x"],
        &[".", "-delete", "-exec", "id", "+"],
        &[".", "-from-the-future"],
        &["-D", "future", "."],
    ],
};

/// Checks find's arguments.
pub fn check(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        i += 1;
        if EXEC.contains(&word) {
            return Err("find -exec".to_string());
        }
        if OUTPUT.contains(&word) {
            return Err("find file output".to_string());
        }
        if word == "-" || !word.starts_with('-') {
            continue;
        }
        if let Some((_, count)) = PRIMARIES.iter().find(|(name, _)| *name == word) {
            i += count;
        } else if is_newer_xy(word) {
            i += 1;
        } else if word == "-depth" {
            i += usize::from(next.is_some_and(looks_like_number));
        } else if word == "-exit" {
            i += usize::from(next.is_some_and(all_digits));
        } else if let Some(jobs) = word.strip_prefix("-j") {
            check_flag_value('j', jobs)?;
        } else {
            match flag_group(word, next) {
                Some(taken) => i += taken?,
                None => return Err(not_known(&format!("primary {word}"))),
            }
        }
    }
    Ok(())
}
