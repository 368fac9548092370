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

use crate::policy::trusted::words::Words;

const EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
const OUTPUT: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// The primaries, operators and options of GNU find, bfs and BSD find, each followed by `=`
/// when it takes an argument (the refused ones are in `EXEC` and `OUTPUT`; `-newerXY`, `-depth`,
/// `-exit` and the flag groups are read by `check`).
#[rustfmt::skip]
pub(crate) const PRIMARIES: Words = Words(concat!(
    // GNU find reads a primary with or without its leading dash, so `-(` is `(`; `--` ends
    // GNU find's leading options and bfs ignores it.
    "-! -( -) -, -- --help --version -help -version",
    // Operators.
    " -a -and -not -o -or -exclude",
    // Leading options and flags (bfs and BSD find: -E, -X, -s, -x, -d; -f takes a path).
    " -H -L -P -E -X -d -s -x -f=",
    // Positional and global options.
    " -daystart -files0-from= -follow -ignore_readdir_race -maxdepth= -mindepth= -mount
     -noignore_readdir_race -noleaf -nowarn -regextype= -warn -xdev -color -nocolor -noerror
     -status -unique",
    // Tests.
    " -acl -amin= -anewer= -asince= -atime= -Bmin= -Bnewer= -Bsince= -Btime= -capable -cmin=
     -cnewer= -context= -csince= -ctime= -empty -executable -false -flags= -fstype= -gid= -group=
     -hidden -ilname= -iname= -inum= -ipath= -iregex= -iwholename= -links= -lname= -mmin=
     -mnewer= -msince= -mtime= -name= -newer= -nogroup -nohidden -nouser -path= -perm= -readable
     -regex= -samefile= -since= -size= -sparse -true -type= -uid= -used= -user= -wholename=
     -writable -xattr -xattrname= -xtype=",
    // Actions that print to stdout, stop or delete.
    " -delete -limit= -ls -print -print0 -printf= -printx -prune -quit -rm",
));

/// How many arguments the primary `word` takes, when it is one of [`PRIMARIES`].
fn primary_arguments(word: &str) -> Option<usize> {
    PRIMARIES
        .starting_with(word)
        .find_map(|w| match w.strip_suffix('=') {
            Some(name) => (name == word).then_some(1),
            None => (w == word).then_some(0),
        })
}

/// A word of [`PRIMARIES`], for its test: the primary's name.
#[cfg(test)]
pub(crate) fn primary_name(word: &'static str) -> Option<&'static str> {
    let name = word.strip_suffix('=').unwrap_or(word);
    (name.starts_with('-') && !name.contains('=')).then_some(name)
}

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
        if let Some(count) = primary_arguments(word) {
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
