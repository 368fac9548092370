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

/// `rg --pre COMMAND` runs a preprocessor on every searched file (no abbreviations).
pub fn check_rg(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg) == Some("pre") {
            return Err("rg --pre".to_string());
        }
    }
    Ok(())
}

/// `split --filter=COMMAND` pipes every chunk through a shell command.
pub fn check_split(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| abbreviates(name, "filter")) {
            return Err("split --filter".to_string());
        }
    }
    Ok(())
}

/// `diff3 --diff-program=PROGRAM` and `sdiff --diff-program=PROGRAM` run the named program.
pub fn check_diff_program(args: &[String]) -> Result<(), String> {
    for arg in before_double_dash(args) {
        if long_name(arg).is_some_and(|name| name.len() >= 2 && abbreviates(name, "diff-program")) {
            return Err("external diff program".to_string());
        }
    }
    Ok(())
}

/// wget's short options that take a value (the value ends a cluster).
const WGET_SHORT_WITH_VALUE: &[char] = &[
    'O', 'o', 'a', 't', 'T', 'w', 'Q', 'P', 'U', 'e', 'B', 'i', 'l', 'A', 'R', 'D', 'I', 'X',
];

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
