//! npm: a closed rule. Its command line is read as npm 11 reads it (nopt): options anywhere,
//! `--name=value` or `--name value` for an option that takes a value, `--no-name` for a
//! boolean, a boolean's `true`/`false` taken from the next argument, single-dash words read as
//! the long option of that name (`-json`), shorthands (`-g`, `-ws`, `--reg`) and clusters of
//! one-letter shorthands (`-gl`); the first operand is the subcommand. The option list and
//! each option's type come from npm's own definitions (`@npmcli/config`, npm 11.19); only the
//! options that change what is printed, where the registry is, and which dependencies are
//! looked at are known, each by its exact name (npm also takes abbreviations of its ~200
//! options, which would make the meaning of a prefix depend on npm's version).
//!
//! Only the subcommands that look at packages are accepted: `ls` (and its aliases), `view`
//! (of a registry name), `outdated` (which fetches only registry dependencies), `search`,
//! `explain`, `query`, `sbom`, `fund` without a package (with one it opens a browser),
//! `prefix`, `root`, `whoami`, `ping`, `config get`/`list`, `cache ls`/`verify` and `version`
//! without operands. Everything else is refused, in particular:
//!
//! - `install`, `ci`, `add`, `update` and everything else that builds or changes
//!   `node_modules`, even with `--ignore-scripts`: a git dependency (of the project, or of
//!   any registry package) is cloned and prepared with a nested `npm install` that runs its
//!   dependencies' lifecycle scripts (pacote's git fetcher does not pass `--ignore-scripts`
//!   on), and it is fetched with the `git` program that a `.npmrc` in the working directory
//!   (which a redirection can write) names;
//! - `audit`: with `package-lock=false` (a `.npmrc` can set it) it builds the dependency tree
//!   from `package.json`, fetching git dependencies the same way;
//! - `run`, `test`, `start`, `exec`, `x`, `explore`, `rebuild`, `pack`, `publish`, `version`
//!   with an operand, `init` (lifecycle scripts, the `shell`, `script-shell` and
//!   `init-module` that a `.npmrc` names), `help`, `docs`, `repo`, `bugs`, `edit` (the
//!   `browser`, `viewer` and `editor` a `.npmrc` names) and `doctor` (it runs the `git` a
//!   `.npmrc` names).
//!
//! yarn and pnpm are not closed (see `reviewed`): yarn runs the script a `.yarnrc`/`.yarnrc.yml`
//! in the working directory names (`yarn-path`, `yarnPath`) for every command, and pnpm
//! downloads and runs the pnpm version `package.json`'s `packageManager` names, and loads
//! `.pnpmfile.cjs`. Their deny-list below still refuses what runs package scripts.

use crate::policy::trusted::words::Words;

/// How an accepted option reads its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A boolean: `--no-name`, and `true`, `false` or `null` taken from the next argument.
    Bool,
    /// `--color`: a boolean that also takes `always` from the next argument.
    Color,
    /// A boolean that may be `null`, which it also takes from the next argument.
    NullBool,
    /// A value: attached with `=`, or the next argument.
    Value,
    /// A string value: the next argument, unless it looks like an option (`-x`, `--x`).
    Str,
}

/// The accepted options, by exact name, with their types in npm's definitions.
#[rustfmt::skip]
const OPTIONS: &[(&str, Kind)] = &[
    ("all", Kind::Bool), ("audit-level", Kind::Value), ("before", Kind::Value),
    ("color", Kind::Color), ("depth", Kind::Value), ("description", Kind::Bool),
    ("dev", Kind::Bool), ("fetch-timeout", Kind::Value), ("global", Kind::Bool),
    ("include", Kind::Value), ("include-workspace-root", Kind::Bool), ("json", Kind::Bool),
    ("link", Kind::Bool), ("loglevel", Kind::Value), ("long", Kind::Bool),
    ("offline", Kind::Bool), ("omit", Kind::Value), ("package-lock-only", Kind::Bool),
    ("parseable", Kind::Bool), ("prefer-offline", Kind::Bool), ("prefer-online", Kind::Bool),
    ("production", Kind::NullBool), ("progress", Kind::Bool), ("registry", Kind::Value),
    ("sbom-format", Kind::Value), ("sbom-type", Kind::Value), ("scope", Kind::Str),
    ("searchexclude", Kind::Str), ("searchlimit", Kind::Value), ("searchopts", Kind::Str),
    ("tag", Kind::Str), ("unicode", Kind::Bool), ("update-notifier", Kind::Bool),
    ("usage", Kind::Bool), ("version", Kind::Bool), ("workspace", Kind::Value),
    ("workspaces", Kind::NullBool),
];

/// npm's shorthands (its `shorthands` table) that expand to accepted options.
#[rustfmt::skip]
const SHORTHANDS: &[(&str, &[&str])] = &[
    ("a", &["--all"]), ("d", &["--loglevel", "info"]), ("dd", &["--loglevel", "verbose"]),
    ("ddd", &["--loglevel", "silly"]), ("desc", &["--description"]), ("g", &["--global"]),
    ("h", &["--usage"]), ("H", &["--usage"]), ("?", &["--usage"]), ("help", &["--usage"]),
    ("iwr", &["--include-workspace-root"]), ("l", &["--long"]), ("local", &["--no-global"]),
    ("p", &["--parseable"]), ("porcelain", &["--parseable"]), ("q", &["--loglevel", "warn"]),
    ("quiet", &["--loglevel", "warn"]), ("reg", &["--registry"]),
    ("s", &["--loglevel", "silent"]), ("silent", &["--loglevel", "silent"]),
    ("v", &["--version"]), ("verbose", &["--loglevel", "verbose"]), ("w", &["--workspace"]),
    ("ws", &["--workspaces"]),
];

/// Subcommands that look and print, with the operands each takes.
#[derive(Clone, Copy)]
enum Operands {
    /// Any operands (names to filter by, search terms, selectors).
    Any,
    /// None.
    None,
    /// A registry package name first, then field names.
    RegistrySpec,
    /// One of these words first.
    OneOf(&'static [&'static str]),
}

#[rustfmt::skip]
const SUBCOMMANDS: &[(&str, Operands)] = &[
    ("ls", Operands::Any), ("list", Operands::Any), ("ll", Operands::Any),
    ("la", Operands::Any), ("view", Operands::RegistrySpec), ("info", Operands::RegistrySpec),
    ("show", Operands::RegistrySpec), ("v", Operands::RegistrySpec),
    ("outdated", Operands::Any), ("search", Operands::Any), ("explain", Operands::Any),
    ("why", Operands::Any), ("query", Operands::Any), ("sbom", Operands::Any),
    ("fund", Operands::None), ("prefix", Operands::None), ("root", Operands::None),
    ("whoami", Operands::None), ("ping", Operands::None), ("version", Operands::None),
    ("config", Operands::OneOf(&["get", "list", "ls"])), ("get", Operands::Any),
    ("cache", Operands::OneOf(&["ls", "verify"])),
];

/// Subcommands that build `node_modules`, run scripts or programs, or open a browser, pager
/// or editor: refused with the reason.
pub(crate) const RUNS: &[(Words, &str)] = &[
    (
        Words(
            "install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install ic
             install-clean isntall-clean update up upgrade udpate dedupe ddp prune uninstall
             remove rm r un unlink link ln install-test it install-ci-test cit clean-install-test
             sit rebuild rb audit find-dupes shrinkwrap",
        ),
        "it builds the dependency tree: git dependencies are prepared with a nested npm \
         install that runs lifecycle scripts, with the git a .npmrc names",
    ),
    (
        Words(
            "run run-script rum urn test tst t start stop restart exec x explore pack publish
             init create innit diff",
        ),
        "it runs package scripts or programs",
    ),
    (
        Words("help docs home repo bugs issues edit doctor"),
        "it runs the browser, viewer, editor or git that a .npmrc names",
    ),
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const NPM_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[],
        &["ls"],
        &["ls", "--all", "--depth=2", "--json"],
        &["-g", "ls", "--depth", "0"],
        &["ll", "-gl"],
        &["view", "react"],
        &["view", "@types/node@^20", "version", "dependencies"],
        &["info", "react@latest", "--json"],
        &["outdated"],
        &["outdated", "--long", "--omit", "dev"],
        &["--version"],
        &["-v"],
        &["version", "--json"],
        &["search", "left", "pad"],
        &["why", "lodash"],
        &["config", "get", "registry"],
        &["config", "list", "--json"],
        &["cache", "verify"],
        &["prefix", "-g"],
        &["--registry", "https://registry.example.com/", "view", "x"],
        &["-json", "ls"],
        &["ls", "--json", "true"],
        &["ls", "--no-unicode"],
        &["fund"],
        &["--registry", "--json=run", "ls"],
        &["--no-color", "always", "ls"],
    ],
    refuse: &[
        &["install"],
        &["install", "--ignore-scripts"],
        &["ci", "--ignore-scripts"],
        &["i", "--ignore-scripts", "x"],
        &["audit"],
        &["audit", "fix"],
        &["run", "build"],
        &["run-script", "build"],
        &["test"],
        &["exec", "x"],
        &["x", "y"],
        &["explore", "x"],
        &["help", "install"],
        &["docs", "react"],
        &["fund", "react"],
        &["version", "patch"],
        &["config", "set", "script-shell", "x"],
        &["config", "edit"],
        &["cache", "add", "github:a/b"],
        &["view", "github:a/b"],
        &["view", "a/b"],
        &["view", "git+https://example.com/x.git"],
        &["view", "./dir"],
        &["view", "x@npm:y"],
        &["doctor"],
        &["my-script"],
        &["--editor", "sh", "ls"],
        &["ls", "--script-shell=sh"],
        &["ls", "-editor=sh"],
        &["ls", "--jso"],
        &["ls", "-c", "x"],
        &["--userconfig", "c", "ls"],
        &["--json", "run", "x"],
        &["-w", "ls", "run"],
        &["ins"],
        &["--tag", "--json=run", "ls"],
        &["--depth=--", "run"],
        &["--json=exec", "ls"],
        &["-d=exec", "ls"],
    ],
};

/// Checks npm's arguments.
pub fn check_npm(args: &[String]) -> Result<(), String> {
    let (operands, unknown) = read_options(args);
    // A subcommand that runs things is named first: it is the refusal that says what to do.
    if let Some((_, why)) = operands
        .first()
        .and_then(|sub| RUNS.iter().find(|(names, _)| names.contains(sub)))
    {
        return Err(format!(
            "package manager subcommand {} ({why})",
            operands[0]
        ));
    }
    if let Some(option) = unknown {
        return Err(crate::policy::trusted::rules::not_known(&format!(
            "npm option {option}"
        )));
    }
    let Some((sub, rest)) = operands.split_first() else {
        return Ok(());
    };
    let Some((_, takes)) = SUBCOMMANDS.iter().find(|(name, _)| name == sub) else {
        return Err(format!(
            "package manager subcommand {sub} is not known to the rule (it may run package \
             scripts or programs)"
        ));
    };
    match (takes, rest.first()) {
        (_, None) | (Operands::Any, _) => Ok(()),
        (Operands::None, Some(_)) => Err(format!(
            "package manager subcommand {sub} with an operand (it changes the package, runs \
             scripts or opens a browser; only the form without one is accepted)"
        )),
        (Operands::RegistrySpec, Some(spec)) if is_registry_spec(spec) => Ok(()),
        (Operands::RegistrySpec, Some(spec)) => Err(format!(
            "package manager subcommand {sub} of {spec} (only a registry name is accepted: a \
             git, URL or directory spec is fetched with the git a .npmrc names)"
        )),
        (Operands::OneOf(words), Some(word)) if words.contains(word) => Ok(()),
        (Operands::OneOf(words), Some(word)) => Err(format!(
            "package manager subcommand {sub} {word} (only {} are accepted)",
            words.join(", ")
        )),
    }
}

/// Reads the options and returns the operands, and the first option the rule does not know
/// (read as a boolean, so the subcommand found past it is only a guess, used to word the
/// refusal). As nopt does, an option written `-x=value` is split when it is read, into `-x`
/// and a next argument `value`, which is then read as any next argument would be: a boolean
/// takes only `true` or `false` (`--json=run` leaves `run` an operand), an option with a
/// value takes it whole (`--tag --json=run` is the tag `--json=run`), and a `--` ends the
/// options instead (`--depth=--`).
fn read_options(args: &[String]) -> (Vec<&str>, Option<&str>) {
    let mut words: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut operands = Vec::new();
    let mut unknown = None;
    let mut i = 0;
    while i < words.len() {
        let mut arg = words[i];
        i += 1;
        if arg == "--" {
            operands.extend(words[i..].iter().copied());
            break;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            if let Some((head, value)) = arg.split_once('=') {
                words.insert(i, value);
                arg = head;
            }
        }
        let Some(body) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else {
            operands.push(arg);
            continue;
        };
        let expanded: Vec<String> = match body.strip_prefix('-') {
            Some(long) => shorthand(long).unwrap_or_else(|| vec![arg.to_string()]),
            None => match single_dash(body) {
                Some(expanded) => expanded,
                None => {
                    unknown = unknown.or(Some(arg));
                    continue;
                }
            },
        };
        let mut k = 0;
        while k < expanded.len() {
            let name = expanded[k].trim_start_matches('-');
            k += 1;
            let last = k == expanded.len();
            let kind = match kind_of(name) {
                Some(kind) => kind,
                None => match name.strip_prefix("no-").and_then(kind_of) {
                    Some(Kind::Value | Kind::Str) | None => {
                        unknown = unknown.or(Some(arg));
                        continue;
                    }
                    Some(kind) => kind,
                },
            };
            let next = words.get(i).copied();
            let dashes = |n: &str| n.len() >= 2 && n.bytes().all(|b| b == b'-');
            let option_like = |n: &str| {
                let rest = n.strip_prefix("--").or_else(|| n.strip_prefix('-'));
                rest.is_some_and(|r| r.chars().next().is_some_and(|c| c != '-'))
            };
            match kind {
                // A value written in the expansion (`-d` is `--loglevel info`) comes next.
                Kind::Value | Kind::Str if !last => k += 1,
                // nopt leaves a `--` (or `---`) that follows to end the options, and a
                // string option leaves what looks like an option.
                Kind::Value if next.is_some_and(dashes) => {}
                Kind::Str if next.is_some_and(|n| dashes(n) || option_like(n)) => {}
                Kind::Value | Kind::Str => i += 1,
                _ if !last => {}
                _ if matches!(next, Some("true" | "false")) => i += 1,
                Kind::Color if next == Some("always") => i += 1,
                Kind::NullBool if next == Some("null") => i += 1,
                _ => {}
            }
        }
    }
    (operands, unknown)
}

fn kind_of(name: &str) -> Option<Kind> {
    OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

fn shorthand(name: &str) -> Option<Vec<String>> {
    SHORTHANDS
        .iter()
        .find(|(short, _)| *short == name)
        .map(|(_, long)| long.iter().map(|s| s.to_string()).collect())
}

/// A single-dash word: a long option's exact name, a shorthand, or a cluster of one-letter
/// shorthands, as nopt tries them in turn.
fn single_dash(body: &str) -> Option<Vec<String>> {
    if kind_of(body).is_some() {
        return Some(vec![format!("--{body}")]);
    }
    if let Some(expanded) = shorthand(body) {
        return Some(expanded);
    }
    let mut out = Vec::new();
    for letter in body.chars() {
        let one = shorthand(letter.encode_utf8(&mut [0; 4]))?;
        if one.len() != 1 || kind_of(one[0].trim_start_matches("--")) == Some(Kind::Value) {
            return None;
        }
        out.extend(one);
    }
    Some(out)
}

/// A registry package spec: `[@scope/]name[@version|range|tag]`, nothing npm would read as
/// a git repository, URL, alias or directory (no `/` but the scope's, no `:`, `#`, leading
/// `.` or `~`).
fn is_registry_spec(spec: &str) -> bool {
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, rest)) => (Some(scope), rest),
            None => return false,
        },
        None => (None, spec),
    };
    let (name, range) = match rest.split_once('@') {
        Some((name, range)) => (name, Some(range)),
        None => (rest, None),
    };
    let name_ok = |s: &str| {
        !s.is_empty()
            && !s.starts_with(['.', '_', '~'])
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
    };
    scope.is_none_or(name_ok)
        && name_ok(name)
        && range.is_none_or(|r| {
            r.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '-' | '^' | '<' | '>' | '=' | '*')
                    || matches!(c, '|' | ' ' | '+' | '_')
            })
        })
}

/// Accepted and refused examples of yarn's and pnpm's deny-list, walked by `harden`'s tests.
#[cfg(test)]
pub const PACKAGE_MANAGER_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["ls"],
        &["view", "react"],
        &["install", "--ignore-scripts"],
        &["audit"],
    ],
    refuse: &[
        &["run", "build"],
        &["test"],
        &["install"],
        &["exec", "x"],
        &["audit", "fix"],
        &["help", "install"],
        &["my-script"],
    ],
};

/// yarn and pnpm, which are not closed (see the module's comment): everything that runs
/// package scripts (`run`, `test`, `start`, `exec`, an unknown name, which yarn and pnpm run
/// as a script, `install` without `--ignore-scripts`) is refused, and so is `help`.
pub fn check_node_package_manager(args: &[String]) -> Result<(), String> {
    const SAFE: &[&str] = &[
        "ls", "list", "ll", "la", "view", "info", "show", "v", "outdated", "search", "whoami",
        "ping", "fund", "explain", "why", "query", "prefix", "root", "bin", "cache", "licenses",
        "audit",
    ];
    const INSTALL: &[&str] = &["install", "i", "ci", "add", "update", "up", "upgrade"];
    let ignore_scripts = args.iter().any(|a| a == "--ignore-scripts");
    let subcommand = args
        .iter()
        .map(String::as_str)
        .find(|a| !a.starts_with('-'));
    match subcommand {
        None => Ok(()),
        Some(s) if SAFE.contains(&s) && !args.iter().any(|a| a == "fix") => Ok(()),
        Some(s) if INSTALL.contains(&s) && ignore_scripts => Ok(()),
        Some(s) => Err(format!(
            "package manager subcommand {s} (it can run package scripts; inspection \
             subcommands and install --ignore-scripts are accepted)"
        )),
    }
}
