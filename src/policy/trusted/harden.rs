//! Default argument hardening: argv forms of allowlisted programs that reach past the allowlist.
//!
//! Allowlisting a program name does not make every use of it safe: `find -exec sh`, `awk
//! 'BEGIN{system("sh")}'`, `git -c core.pager=sh` and friends run arbitrary commands. This
//! module rejects them before anything is spawned, for every stage of a pipeline, even when
//! the name is on the allowlist. It is one of two layers: the kernel sandbox
//! is the other, and neither excuses a gap in the other.
//!
//! Design decisions:
//!
//! - Which rule applies is decided by `identity` on the name as written and, once the program
//!   is resolved, on the file it resolves to with symlinks followed ([`check_resolved`]):
//!   `/usr/bin/editor` is `vim.basic`, whatever the allowlist calls it.
//! - Each hardened program's arguments are read the way that program reads them (`getopt`,
//!   `rules::*`): clusters, values that look like options, `--` as a value, abbreviations,
//!   tar's bundled first argument, awk's `-W` lists, git's global and per-subcommand options.
//!   The decision is on what the program will do; when unsure, refuse.
//! - Rejection texts are MCP Shell Server's where it had one: `Command rejected by default
//!   security policy: <reason>` with the reasons `<name>`, `find -exec`, `find file output`, `awk
//!   external access`, `tar command execution option`, `sort external program or path option`,
//!   `git command-scoped config`, `git config` and `git external program`. New rules use new
//!   reasons in the same form.
//! - Every argument containing a newline, carriage return or NUL is rejected, naming its index.

use super::identity::{self, Policy};
use super::rules::PREFIX;

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
    if let Some(why) = malformed(argv) {
        return Err(why);
    }
    if program.chars().any(is_name_metacharacter) {
        return Err(format!("Unsafe command name: {program}"));
    }
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    crate::policy::trusted::git::writers::check_writer_text(program, &argv[1..])
        .map_err(|reason| format!("{PREFIX}{reason}"))?;
    if let Some(verdict) = super::git::rules::check_dashed(&base, &argv[1..]) {
        return verdict.map_err(|reason| format!("{PREFIX}{reason}"));
    }
    apply(identity::classify(program), &argv[1..]).map_err(|reason| {
        match identity::why_denied(&reason) {
            Some(why) => format!("{PREFIX}{reason} ({why})"),
            None => format!("{PREFIX}{reason}"),
        }
    })
}

/// Why `argv` is malformed, when it is: an argument holding a control character that no
/// program reads as one argument the way it was meant (a newline, a carriage return, NUL).
pub fn malformed(argv: &[String]) -> Option<String> {
    argv.iter().enumerate().find_map(|(index, arg)| {
        control_character(arg).map(|what| format!("{PREFIX}argument {index} contains {what}"))
    })
}

/// Why the allowlisted name `name` is refused whatever its arguments, when it is.
pub fn always_refused(name: &str) -> Option<String> {
    match identity::classify(name) {
        (shown, Some(Policy::Deny)) => Some(match identity::why_denied(&shown) {
            Some(why) => format!("{PREFIX}{shown} ({why})"),
            None => format!("{PREFIX}{shown}"),
        }),
        _ => None,
    }
}

/// Checks a stage again under the name of the file its program resolves to (symlinks
/// followed), for programs known by another name than the one written: `editor` is
/// `vim.basic`, `x86_64` is `setarch`. Multi-call binaries (busybox) act on the name they are
/// run under, which [`check`] has judged.
pub fn check_resolved(argv: &[String], resolved: &str) -> Result<(), String> {
    let (name, policy) = identity::classify(resolved);
    if identity::is_multi_call(&name) {
        return Ok(());
    }
    let written = argv.first().map(String::as_str).unwrap_or("");
    if !crate::policy::trusted::git::writers::is_multi_call(resolved) {
        crate::policy::trusted::git::writers::check_writer_text(resolved, &argv[1..])
            .map_err(|reason| format!("{PREFIX}{reason} ({written} is {resolved})"))?;
    }
    apply((name.clone(), policy), &argv[1..]).map_err(|reason| {
        if reason == name {
            format!("{PREFIX}{name} ({written} is {resolved})")
        } else {
            format!("{PREFIX}{reason} ({written} is {resolved})")
        }
    })
}

fn apply((name, policy): (String, Option<Policy>), args: &[String]) -> Result<(), String> {
    match policy {
        None => Ok(()),
        Some(Policy::Deny) => Err(name),
        Some(Policy::Args(check_args)) => check_args(args),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::trusted::rules;

    /// Every rule with examples, by the names it is known by.
    const WITH_EXAMPLES: &[(&[&str], &rules::Examples)] = &[
        (&["find", "gfind", "bfind"], &rules::find::EXAMPLES),
        (&["awk", "gawk", "mawk", "nawk"], &rules::awk::EXAMPLES),
        (&["tar", "gtar"], &rules::tar::EXAMPLES),
        (&["bsdtar"], &rules::tar::BSD_EXAMPLES),
        (&["sort", "gsort"], &rules::sort::EXAMPLES),
        (&["git"], &crate::policy::trusted::git::rules::EXAMPLES),
        (&["fd", "fdfind"], &rules::misc::FD_EXAMPLES),
        (&["rg", "ripgrep"], &rules::misc::RG_EXAMPLES),
        (&["split", "gsplit"], &rules::misc::SPLIT_EXAMPLES),
        (&["diff3"], &rules::misc::DIFF_PROGRAM_EXAMPLES),
        (&["sdiff"], &rules::misc::SDIFF_EXAMPLES),
        (&["wget"], &rules::misc::WGET_EXAMPLES),
        (
            &[
                "cc",
                "gcc",
                "c++",
                "g++",
                "cpp",
                "clang",
                "clang++",
                "clang-cpp",
                "gfortran",
                "tcc",
            ],
            &rules::cc::CC_EXAMPLES,
        ),
        (
            &["ld", "lld", "ld.lld", "ld.bfd", "ld.gold", "mold"],
            &rules::ld::LD_EXAMPLES,
        ),
        (&["openssl"], &rules::openssl::OPENSSL_EXAMPLES),
        (&["curl"], &rules::curl::EXAMPLES),
        (&["ssh-keygen"], &rules::tools::SSH_KEYGEN_EXAMPLES),
        (&["gpg", "gpg2"], &rules::gpg::GPG_EXAMPLES),
        (&["gpgv"], &rules::gpg::GPGV_EXAMPLES),
        (&["cpio"], &rules::tools::CPIO_EXAMPLES),
        (&["go"], &rules::go::GO_EXAMPLES),
        (&["npm"], &rules::npm::NPM_EXAMPLES),
        (
            &["yarn", "yarnpkg", "pnpm"],
            &rules::npm::PACKAGE_MANAGER_EXAMPLES,
        ),
        (&["systemctl"], &rules::systemctl::SYSTEMCTL_EXAMPLES),
        (&["pandoc"], &rules::apps::PANDOC_EXAMPLES),
        (&["bat", "batcat"], &rules::apps::BAT_EXAMPLES),
        (&["aria2c"], &rules::aria2c::ARIA2C_EXAMPLES),
        (&["rclone", "restic", "borg"], &rules::apps::BACKUP_EXAMPLES),
        (
            &[
                "convert",
                "magick",
                "mogrify",
                "identify",
                "composite",
                "montage",
                "compare",
                "stream",
                "display",
                "animate",
                "import",
                "gm",
            ],
            &rules::apps::MAGICK_EXAMPLES,
        ),
        (
            &[
                "tex", "etex", "pdftex", "xetex", "latex", "pdflatex", "xelatex", "ptex", "uptex",
                "platex", "uplatex",
            ],
            &rules::tex::TEX_EXAMPLES,
        ),
        (&["xetex", "xelatex"], &rules::tex::XETEX_EXAMPLES),
    ];

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_texts() {
        let cases: &[(&[&str], &str)] = &[
            (&["env"], "Command rejected by default security policy: env"),
            (
                &["python3.12"],
                "Command rejected by default security policy: python (an interpreter runs \
                 whatever code it is given, inline, on stdin or in a file, which no allowlist \
                 can check: call allowlisted programs directly, or run scripts on a shell-mode \
                 server)",
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
    fn resolved_names() {
        let cases: &[(&[&str], &str, Option<&str>)] = &[
            (
                &["editor", "f"],
                "/usr/bin/vim.basic",
                Some("Command rejected by default security policy: vim (editor is /usr/bin/vim.basic)"),
            ),
            (
                &["x86_64", "sh"],
                "/usr/bin/setarch",
                Some("Command rejected by default security policy: setarch (x86_64 is /usr/bin/setarch)"),
            ),
            (
                &["awk", "BEGIN{system(\"x\")}"],
                "/usr/bin/mawk",
                Some("Command rejected by default security policy: awk external access (awk is /usr/bin/mawk)"),
            ),
            (&["awk", "{print}"], "/usr/bin/mawk", None),
            (&["ls"], "/bin/busybox", None),
            (&["cat", ".git/config"], "/usr/bin/coreutils", None),
            (
                &["cp", "x", ".git/config"],
                "/usr/bin/coreutils",
                None,
            ),
            (&["cat"], "/usr/bin/cat", None),
        ];
        for (items, resolved, want) in cases {
            let got = check_resolved(&argv(items), resolved);
            assert_eq!(
                got,
                want.map_or(Ok(()), |w| Err(w.to_string())),
                "{items:?}"
            );
        }
    }

    /// Which programs a case file's cases may name.
    enum Home {
        /// The programs of these rules: one name of each `WITH_EXAMPLES` entry whose cases the
        /// file holds.
        Rules(&'static [&'static str]),
        /// Programs without an argument rule: refused by their name alone, or accepted.
        Names,
        /// Any program: a write into a git directory is refused before any rule reads the
        /// arguments.
        Writers,
    }

    /// The hardening cases, each file beside the rule it holds the cases of. A line is a case:
    /// the argv (the program as written first) as a JSON array of strings, then `accepted`, or
    /// `refused` and a JSON string that the refusal's message contains; a line starting with
    /// `#` is a comment. A file holds refused forms and the accepted forms next to them:
    /// over-strictness is a defect too.
    const CASE_FILES: &[(&str, &str, Home)] = &[
        (
            "rules/find.cases",
            include_str!("rules/find.cases"),
            Home::Rules(&["find"]),
        ),
        (
            "rules/awk.cases",
            include_str!("rules/awk.cases"),
            Home::Rules(&["awk"]),
        ),
        (
            "rules/tar.cases",
            include_str!("rules/tar.cases"),
            Home::Rules(&["tar", "bsdtar"]),
        ),
        (
            "rules/sort.cases",
            include_str!("rules/sort.cases"),
            Home::Rules(&["sort"]),
        ),
        (
            "git/rules.cases",
            include_str!("git/rules.cases"),
            Home::Rules(&["git"]),
        ),
        (
            "rules/go.cases",
            include_str!("rules/go.cases"),
            Home::Rules(&["go"]),
        ),
        (
            "rules/curl.cases",
            include_str!("rules/curl.cases"),
            Home::Rules(&["curl"]),
        ),
        (
            "identity.cases",
            include_str!("identity.cases"),
            Home::Names,
        ),
        ("names.cases", include_str!("names.cases"), Home::Names),
        (
            "git/writers.cases",
            include_str!("git/writers.cases"),
            Home::Writers,
        ),
        (
            "rules/cc.cases",
            include_str!("rules/cc.cases"),
            Home::Rules(&["cc", "ld"]),
        ),
        (
            "rules/tools.cases",
            include_str!("rules/tools.cases"),
            Home::Rules(&["openssl", "ssh-keygen", "gpg", "gpgv", "cpio"]),
        ),
        (
            "rules/misc.cases",
            include_str!("rules/misc.cases"),
            Home::Rules(&["fd", "rg", "split", "diff3", "sdiff", "wget"]),
        ),
        (
            "rules/apps.cases",
            include_str!("rules/apps.cases"),
            Home::Rules(&[
                "npm",
                "yarn",
                "systemctl",
                "pandoc",
                "bat",
                "aria2c",
                "rclone",
                "convert",
                "tex",
                "xetex",
            ]),
        ),
    ];

    /// One line of a case file: the argv, and `None` when it must be accepted or the text its
    /// refusal must contain.
    fn parse_case(line: &str) -> Result<(Vec<String>, Option<String>), String> {
        let mut values = serde_json::Deserializer::from_str(line).into_iter::<Vec<String>>();
        let argv = match values.next() {
            Some(Ok(argv)) => argv,
            Some(Err(e)) => return Err(format!("not an argv: {e}")),
            None => return Err("no argv".to_string()),
        };
        let verdict = line[values.byte_offset()..].trim();
        if verdict == "accepted" {
            return Ok((argv, None));
        }
        match verdict.strip_prefix("refused ") {
            Some(text) => match serde_json::from_str::<String>(text) {
                Ok(text) => Ok((argv, Some(text))),
                Err(e) => Err(format!("not a refusal's text: {e}")),
            },
            None => Err(format!(
                "{verdict:?} is neither `accepted` nor `refused \"text\"`"
            )),
        }
    }

    /// The rule a program's cases belong to: its name in `identity`'s table of argument
    /// checks, or git for a `git-<subcommand>` program (`git::rules::check_dashed`).
    fn rule_of(program: &str) -> Option<String> {
        let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
        if base.starts_with("git-") {
            return Some("git".to_string());
        }
        match identity::classify(program) {
            (name, Some(Policy::Args(_))) => Some(name),
            _ => None,
        }
    }

    /// Whether a case naming `program` belongs in a file of this home.
    fn belongs(home: &Home, program: &str) -> bool {
        match (home, rule_of(program)) {
            (Home::Writers, _) => true,
            (Home::Names, rule) => rule.is_none(),
            (Home::Rules(rules), Some(rule)) => WITH_EXAMPLES.iter().any(|(names, _)| {
                names.contains(&rule.as_str()) && rules.iter().any(|r| names.contains(r))
            }),
            (Home::Rules(_), None) => false,
        }
    }

    /// Walks every case file: how many cases it walked, and what was wrong (a rule without a
    /// case file of its own or without cases in it too).
    fn walk_cases() -> (usize, Vec<String>) {
        let mut walked = 0;
        let mut wrong = Vec::new();
        let mut per_rule = vec![0; WITH_EXAMPLES.len()];
        for (file, text, home) in CASE_FILES {
            let before = walked;
            for (at, line) in text.lines().enumerate() {
                if line.trim().is_empty() || line.starts_with('#') {
                    continue;
                }
                let at = format!("{file}:{}", at + 1);
                let (argv, refused) = match parse_case(line) {
                    Ok(case) => case,
                    Err(why) => {
                        wrong.push(format!("{at}: {why}"));
                        continue;
                    }
                };
                walked += 1;
                let program = argv.first().map_or("", String::as_str);
                if !belongs(home, program) {
                    wrong.push(format!("{at}: {program:?} has no place in this file"));
                } else if let (Home::Rules(_), Some(rule)) = (home, rule_of(program)) {
                    for (count, (names, _)) in per_rule.iter_mut().zip(WITH_EXAMPLES) {
                        *count += usize::from(names.contains(&rule.as_str()));
                    }
                }
                let verdict = match (refused, check(&argv)) {
                    (None, Ok(())) => None,
                    (Some(want), Err(msg)) if msg.contains(&want) => None,
                    (Some(want), Err(msg)) => Some(format!("{msg:?} lacks {want:?}")),
                    (None, Err(msg)) => Some(format!("expected acceptance, got {msg:?}")),
                    (Some(want), Ok(())) => {
                        Some(format!("expected refusal {want:?}, got acceptance"))
                    }
                };
                if let Some(why) = verdict {
                    wrong.push(format!("{at}: {argv:?}: {why}"));
                }
            }
            if walked == before {
                wrong.push(format!("{file} holds no case"));
            }
        }
        for ((names, _), cases) in WITH_EXAMPLES.iter().zip(per_rule) {
            let files = CASE_FILES
                .iter()
                .filter(|(_, _, home)| {
                    matches!(home, Home::Rules(rules) if rules.iter().any(|r| names.contains(r)))
                })
                .count();
            if files != 1 {
                wrong.push(format!(
                    "{names:?}: {files} case files hold this rule's cases (one Home::Rules must)"
                ));
            } else if cases == 0 {
                wrong.push(format!("{names:?}: a rule without cases in its case file"));
            }
        }
        (walked, wrong)
    }

    #[test]
    fn case_lines_are_read_and_placed() {
        assert!(belongs(&Home::Rules(&["tar"]), "/usr/bin/gtar"));
        assert!(!belongs(&Home::Rules(&["tar"]), "bsdtar"));
        assert!(belongs(&Home::Rules(&["tar", "bsdtar"]), "bsdtar"));
        assert!(belongs(&Home::Rules(&["awk"]), "gawk5"));
        assert!(belongs(&Home::Rules(&["git"]), "git-upload-pack"));
        assert!(!belongs(&Home::Rules(&["find"]), "ls"));
        assert!(belongs(&Home::Names, "sh"));
        assert!(belongs(&Home::Names, "ls"));
        assert!(!belongs(&Home::Names, "find"));
        assert!(belongs(&Home::Writers, "tar"));
        assert!(belongs(&Home::Writers, "cp"));
        assert_eq!(
            parse_case(r#"["a", "b c"] refused "policy: a""#),
            Ok((argv(&["a", "b c"]), Some("policy: a".to_string())))
        );
        assert_eq!(parse_case(r#"[] accepted"#), Ok((Vec::new(), None)));
        assert!(parse_case(r#"["a"] refused policy"#).is_err());
        assert!(parse_case(r#"["a"]"#).is_err());
        assert!(parse_case(r#"["a", 1] accepted"#).is_err());
    }

    #[test]
    fn every_rule_accepts_and_refuses_its_examples() {
        let mut walked = 0;
        let mut wrong: Vec<String> = Vec::new();
        for (names, examples) in WITH_EXAMPLES {
            for name in *names {
                for (args, accept) in examples
                    .accept
                    .iter()
                    .map(|a| (a, true))
                    .chain(examples.refuse.iter().map(|a| (a, false)))
                {
                    let argv: Vec<String> = std::iter::once(*name)
                        .chain(args.iter().copied())
                        .map(String::from)
                        .collect();
                    let got = check(&argv);
                    if got.is_ok() != accept {
                        wrong.push(format!("{argv:?}: {got:?}"));
                    }
                    walked += 1;
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "examples judged wrongly:\n{}",
            wrong.join("\n")
        );
        assert!(walked > 20, "{walked} examples");
        let (cases, wrong) = walk_cases();
        assert!(
            wrong.is_empty(),
            "{} wrong in {cases} cases:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
        assert!(cases >= 3399, "{cases} cases");
        // Every program with an argument check has examples.
        for name in crate::policy::trusted::identity::checked_names() {
            assert!(
                WITH_EXAMPLES.iter().any(|(names, _)| names.contains(&name)),
                "{name} has a rule but no examples"
            );
        }
    }
}
