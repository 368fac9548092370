//! git's command line read once, into one value that every check reads: its global options
//! before the subcommand (`-C`, `--git-dir`, `--work-tree`, the flags), and where the
//! subcommand is. `rules` decides on it (a global option git does not have is refused) and
//! `guard` finds the git directories from it, so the two never read the same argv two ways.

/// Global options that take a value, as the next argument or after `=` (`-C` only as the
/// next argument).
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
];

/// Global options without a value.
const GLOBAL_FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--bare",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
    "--html-path",
    "--man-path",
    "--info-path",
    "-h",
    "--help",
    "-v",
    "--version",
];

/// git's argv (after `argv[0]`), read once.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GitArgv<'a> {
    /// `-C` directories, in order.
    pub chdirs: Vec<&'a str>,
    /// `--git-dir` (true) and `--work-tree` (false) values, in order.
    pub dirs: Vec<(bool, &'a str)>,
    /// `--git-dir` or `--bare` was given.
    pub repository_chosen: bool,
    /// The index of the subcommand in the arguments, when there is one.
    pub subcommand: Option<usize>,
}

/// A global option the reading refuses.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused<'a> {
    /// `-c` (command-scoped configuration).
    ConfigOverride,
    /// `--exec-path` or `--config-env`: a program or configuration named on the command line.
    External,
    /// An option git does not accept before the subcommand.
    Unknown(&'a str),
}

/// Reads git's global options (`args` after `argv[0]`).
pub fn parse(args: &[String]) -> Result<GitArgv<'_>, Refused<'_>> {
    let mut out = GitArgv::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            out.subcommand = (i + 1 < args.len()).then_some(i + 1);
            return Ok(out);
        }
        if arg.starts_with("-c") {
            return Err(Refused::ConfigOverride);
        }
        if !arg.starts_with('-') {
            out.subcommand = Some(i);
            return Ok(out);
        }
        let (name, attached) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg, None),
        };
        if name == "--exec-path" || name == "--config-env" {
            return Err(Refused::External);
        }
        if name == "--git-dir" || arg == "--bare" {
            out.repository_chosen = true;
        }
        if GLOBAL_WITH_VALUE.contains(&name) && (attached.is_none() || name != "-C") {
            let value = match attached {
                Some(v) => v,
                None => args.get(i + 1).map_or("", String::as_str),
            };
            match name {
                "-C" => out.chdirs.push(value),
                "--git-dir" => out.dirs.push((true, value)),
                "--work-tree" => out.dirs.push((false, value)),
                _ => (),
            }
            i += if attached.is_some() { 1 } else { 2 };
        } else if GLOBAL_FLAGS.contains(&arg) || name == "--list-cmds" {
            i += 1;
        } else {
            return Err(Refused::Unknown(arg));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn globals_are_read_once() {
        let args = s(&[
            "-C",
            "a",
            "--git-dir=g",
            "--work-tree",
            "w",
            "--no-pager",
            "log",
            "-C",
        ]);
        let got = parse(&args).expect("accepted");
        assert_eq!(got.chdirs, ["a"]);
        assert_eq!(got.dirs, [(true, "g"), (false, "w")]);
        assert!(got.repository_chosen);
        assert_eq!(got.subcommand, Some(6));
        let args = s(&["--", "status"]);
        assert_eq!(parse(&args).expect("accepted").subcommand, Some(1));
        assert_eq!(
            parse(&s(&["-c", "a=b", "log"])),
            Err(Refused::ConfigOverride)
        );
        assert_eq!(
            parse(&s(&["--exec-path=/x", "log"])),
            Err(Refused::External)
        );
        assert_eq!(
            parse(&s(&["--frobnicate", "log"])),
            Err(Refused::Unknown("--frobnicate"))
        );
        // `-C=x` is not a -C git reads (it would be the directory "=x"): refused.
        assert!(parse(&s(&["-C=x", "log"])).is_err());
    }
}
