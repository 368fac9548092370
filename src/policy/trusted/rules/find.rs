//! find: the expression is read as find reads it, primary by primary, each with its own
//! number of arguments, so that `-name -exec` (a pattern) is data and `-exec` is an action.
//!
//! Refused: `-exec`, `-execdir` (the original), `-ok`, `-okdir` (they run the command after a
//! confirmation read from stdin, which the caller controls), and `-fprint`, `-fprint0`,
//! `-fprintf`, `-fls` (they write to any path). `-delete` stays allowed, as in the original.
//! A word find does not know is taken for a primary without arguments, so the words after it
//! are still examined (the stricter reading); find itself refuses unknown primaries. This
//! serves every find: a primary of BSD or busybox find that the table does not list
//! (`-flags`, `-Bnewer`, BSD's leading `-f path`...) is read as taking nothing, so its
//! argument is examined too, and the primaries whose arguments are skipped take one in each.

const EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
const OUTPUT: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// Primaries (and expression options) that take one argument.
const ONE_ARGUMENT: &[&str] = &[
    "-amin",
    "-anewer",
    "-atime",
    "-cmin",
    "-cnewer",
    "-context",
    "-ctime",
    "-files0-from",
    "-fstype",
    "-gid",
    "-group",
    "-ilname",
    "-iname",
    "-inum",
    "-ipath",
    "-iregex",
    "-iwholename",
    "-links",
    "-lname",
    "-maxdepth",
    "-mindepth",
    "-mmin",
    "-mtime",
    "-name",
    "-newer",
    "-path",
    "-perm",
    "-printf",
    "-regex",
    "-regextype",
    "-samefile",
    "-size",
    "-type",
    "-uid",
    "-used",
    "-user",
    "-wholename",
    "-xtype",
];

fn argument_count(primary: &str) -> usize {
    if ONE_ARGUMENT.contains(&primary) {
        return 1;
    }
    // -newerXY REFERENCE, with X and Y among a, B, c, m, t.
    if let Some(xy) = primary.strip_prefix("-newer") {
        if xy.len() == 2 && xy.chars().all(|c| "aBcmt".contains(c)) {
            return 1;
        }
    }
    0
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[".", "-name", "*.rs"],
        &[".", "-type", "f", "-newer", "x"],
        &[".", "-maxdepth", "2", "-print0"],
    ],
    refuse: &[
        &[".", "-exec", "sh", "-c", "id", "+"],
        &[".", "-execdir", "id", ";"],
        &[".", "-ok", "rm", "{}", ";"],
        &[".", "-fprint", "/tmp/x"],
        &[".", "-fls", "x"],
        &[".", "-delete", "-exec", "id", "+"],
    ],
};

/// Checks find's arguments.
pub fn check(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    // Leading options: -H, -L, -P, -D debugopts, -Olevel.
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if arg.starts_with("-O") && arg.len() > 2 => i += 1,
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
    }
    // Starting points: up to the first word that begins the expression.
    while i < args.len() {
        let arg = args[i].as_str();
        if arg.starts_with('-') && arg.len() > 1 || arg == "(" || arg == "!" {
            break;
        }
        i += 1;
    }
    // The expression.
    while i < args.len() {
        let primary = args[i].as_str();
        i += 1;
        if EXEC.contains(&primary) {
            return Err("find -exec".to_string());
        }
        if OUTPUT.contains(&primary) {
            return Err("find file output".to_string());
        }
        i += argument_count(primary);
    }
    Ok(())
}
