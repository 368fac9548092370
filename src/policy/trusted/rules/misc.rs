//! Smaller rules: fd, rg, split, diff3/sdiff and wget, each refusing the option that runs a
//! command given in the arguments. These read every argument before a separate `--` as a
//! possible option (values included), which can only refuse more than the program would run.

/// True when `--name` (without `=value`) selects `option` by getopt_long-style abbreviation.
fn abbreviates(name: &str, option: &str) -> bool {
    !name.is_empty() && option.starts_with(name)
}

/// The arguments before a separate `--`; everything after it is an operand.
fn before_double_dash(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// The name of a long option (`--name` or `--name=value`); `None` for anything else.
fn long_name(arg: &str) -> Option<&str> {
    let body = arg.strip_prefix("--").filter(|b| !b.is_empty())?;
    Some(body.split_once('=').map_or(body, |(name, _)| name))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const FD_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["-e", "rs", "src"], &["-H", "pattern"], &["--", "-x"]],
    refuse: &[
        &["-x", "sh"],
        &["-Hx", "sh"],
        &["--exec", "sh"],
        &["--exec-batch=sh"],
    ],
};

/// `fd -x/-X/--exec/--exec-batch` runs a command for each match. Any single-dash cluster with
/// `x` or `X` is rejected, which also catches `-Hx cmd`. (fd's parser, clap, takes no
/// abbreviations.)
pub fn check_fd(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if let Some(name) = long_name(arg) {
            if name == "exec" || name == "exec-batch" {
                return Err("fd --exec".to_string());
            }
        } else if arg.starts_with('-') && arg[1..].contains(['x', 'X']) {
            return Err("fd --exec".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const RG_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-n", "TODO", "src"],
        &["--", "--pre"],
        &["-g", "*.rs", "x"],
    ],
    refuse: &[
        &["--pre", "sh", "x"],
        &["--pre=sh", "x"],
        &["--hostname-bin", "sh", "x"],
        &["--hostname-bin=sh", "x"],
    ],
};

/// `rg --pre COMMAND` runs a preprocessor on every searched file, `--hostname-bin COMMAND`
/// a program that prints the host name (no abbreviations).
pub fn check_rg(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg) == Some("pre") {
            return Err("rg --pre".to_string());
        }
        // ripgrep 14 runs this program to learn the host name for hyperlinks.
        if long_name(arg) == Some("hostname-bin") {
            return Err("rg --hostname-bin".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SPLIT_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["-l", "100", "f", "part-"], &["-b", "1M", "f"]],
    refuse: &[
        &["--filter=sh", "f"],
        &["--fil", "sh", "f"],
        &["-l", "1", "--filter", "id", "f"],
    ],
};

/// `split --filter=COMMAND` pipes every chunk through a shell command.
pub fn check_split(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| abbreviates(name, "filter")) {
            return Err("split --filter".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const DIFF_PROGRAM_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["a", "b", "c"], &["-m", "a", "b", "c"]],
    refuse: &[
        &["--diff-program=sh", "a", "b", "c"],
        &["--diff-p", "sh", "a", "b", "c"],
    ],
};

/// `diff3 --diff-program=PROGRAM` and `sdiff --diff-program=PROGRAM` run the named program.
pub fn check_diff_program(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| name.len() >= 2 && abbreviates(name, "diff-program")) {
            return Err("external diff program".to_string());
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SDIFF_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b"],
        &["-s", "-w", "80", "a", "b"],
        &["-sw80", "a", "b"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b"],
        &["-o", "out", "a", "b"],
        &["-so", "out", "a", "b"],
        &["--output=out", "a", "b"],
        &["--out", "out", "a", "b"],
    ],
};

/// sdiff runs `--diff-program`; with `-o`/`--output` it merges interactively, and its `e`
/// commands start an editor (`ed` by default, which runs shell commands from the same
/// stdin).
pub fn check_sdiff(args: &[String]) -> Result<(), String> {
    check_diff_program(args)?;
    let reject = || Err("interactive merge (its e command starts an editor)".to_string());
    for arg in before_double_dash(args) {
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output") {
                return reject();
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            for c in cluster.chars() {
                match c {
                    'o' => return reject(),
                    // The rest of the cluster is the option's value.
                    'I' | 'w' => break,
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// wget's short options that take a value (the value ends a cluster).
const WGET_SHORT_WITH_VALUE: &[char] = &[
    'O', 'o', 'a', 't', 'T', 'w', 'Q', 'P', 'U', 'e', 'B', 'i', 'l', 'A', 'R', 'D', 'I', 'X',
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const WGET_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-q", "-O", "out.html", "https://example.com"],
        &["https://example.com/f"],
    ],
    refuse: &[
        &["--use-askpass=sh", "https://example.com"],
        &["-e", "use_askpass=sh", "https://example.com"],
        &["--execute", "x=y"],
        &["--config", "rc", "https://example.com"],
        &["-qe", "x=y"],
    ],
};

/// `wget --use-askpass=COMMAND` runs a command; `-e`/`--execute` runs wgetrc commands (which
/// include `use_askpass`), and `--config` reads a wgetrc file.
pub fn check_wget(args: &[String]) -> Result<(), String> {
    let reject = || Err("wget command option".to_string());
    for arg in before_double_dash(args) {
        if let Some(name) = long_name(arg) {
            if ["use-askpass", "execute", "config"]
                .iter()
                .any(|o| abbreviates(name, o))
            {
                return reject();
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            if let Some(letter) = cluster.chars().find(|c| WGET_SHORT_WITH_VALUE.contains(c)) {
                if letter == 'e' {
                    return reject();
                }
            }
        }
    }
    Ok(())
}
