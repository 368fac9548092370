//! The trusted-mode allowlist: `ALLOW_COMMANDS`, `ALLOWED_COMMANDS` and `ALLOW_PATTERNS`.
//!
//! Design decisions:
//!
//! - The two name variables are one list (their union), comma-separated, each item trimmed,
//!   empty items ignored, exactly as MCP Shell Server read them.
//! - `ALLOW_PATTERNS` items are regexes (regex-lite syntax) matched against the whole name: each
//!   is compiled as `^(?:pattern)$`, so `ls` admits `ls` but not `lsof`.
//! - Values are checked once, at startup, and a bad one is an error naming the variable, the
//!   value and what is accepted. A pattern may not contain whitespace, a control character, or
//!   the shell metacharacters the original refused (`;`, `&`, `|`, `<`, `>`, backtick), nor a
//!   quote; regex syntax such as `[0-9.]*`, `\d`, `(..)?` and the anchors `^`, `$` stays valid
//!   (`^cmd[0-9]+$` worked in the original). Names are stricter: no whitespace, control
//!   characters, `; & | < > ( ) $ ' " \ * ? { } ~ ! #` or backtick (`[`, the test program,
//!   stays possible).
//! - A program written without `/` is looked up in the name list, then matched against the
//!   patterns. A program written with `/` is allowed only when that exact string is in the
//!   name list: patterns never admit paths, and `/tmp/ls` is not `ls`.
//! - The rejection texts are the original's: `Command not allowed: <name>`, `Unsafe command
//!   name: <name>` and `No commands are allowed. Please set ALLOW_COMMANDS environment
//!   variable.`

use regex_lite::Regex;

/// The configured command names and patterns.
#[derive(Debug, Clone)]
pub struct Allowlist {
    names: Vec<String>,
    patterns: Vec<(String, Regex)>,
    configured: bool,
}

/// The message for an execution attempt when nothing is allowed.
pub const NOTHING_ALLOWED: &str =
    "No commands are allowed. Please set ALLOW_COMMANDS environment variable.";

impl Allowlist {
    /// Builds the allowlist from the raw values of `ALLOW_COMMANDS`, `ALLOWED_COMMANDS` and
    /// `ALLOW_PATTERNS` (`None` when a variable is unset).
    pub fn new(
        allow_commands: Option<&str>,
        allowed_commands: Option<&str>,
        allow_patterns: Option<&str>,
    ) -> Result<Allowlist, String> {
        let mut names: Vec<String> = Vec::new();
        for (variable, value) in [
            ("ALLOW_COMMANDS", allow_commands),
            ("ALLOWED_COMMANDS", allowed_commands),
        ] {
            for item in split_items(value) {
                if let Some(bad) = item.chars().find(|c| is_name_metacharacter(*c)) {
                    return Err(format!(
                        "invalid {variable} value {value:?}: command name {item:?} contains \
                         {}; give comma-separated program names (such as ls,cat,git) without \
                         whitespace or shell metacharacters",
                        describe(bad)
                    ));
                }
                if !names.iter().any(|n| n == item) {
                    names.push(item.to_string());
                }
            }
        }
        let mut patterns = Vec::new();
        for item in split_items(allow_patterns) {
            let value = allow_patterns.unwrap_or_default();
            if let Some(bad) = item.chars().find(|c| is_pattern_metacharacter(*c)) {
                return Err(format!(
                    "invalid ALLOW_PATTERNS value {value:?}: Unsafe allowed command pattern: \
                     {item} (it contains {}); give comma-separated regexes for command names \
                     (such as python[0-9.]*,node) without whitespace, quotes or the shell \
                     metacharacters ; & | < > `",
                    describe(bad)
                ));
            }
            let regex = Regex::new(&format!("^(?:{item})$")).map_err(|e| {
                format!(
                    "invalid ALLOW_PATTERNS value {value:?}: pattern {item:?} is not a valid \
                     regex ({e}); give comma-separated regexes in regex-lite syntax, such as \
                     python[0-9.]*"
                )
            })?;
            patterns.push((item.to_string(), regex));
        }
        Ok(Allowlist {
            names,
            patterns,
            configured: allow_commands.is_some()
                || allowed_commands.is_some()
                || allow_patterns.is_some(),
        })
    }

    /// True when no name and no pattern is configured: every execution is then rejected.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.patterns.is_empty()
    }

    /// True when any of the three variables was set, even to an empty value; this selects
    /// trusted mode.
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// The allowed names, in configuration order, without duplicates.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The allowed patterns as written.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|(source, _)| source.as_str())
    }

    /// Checks a program as written in `argv[0]`.
    pub fn check(&self, program: &str) -> Result<(), NotAllowed> {
        if self.is_empty() {
            return Err(NotAllowed::NothingIs);
        }
        if program.is_empty() {
            return Err(NotAllowed::Empty);
        }
        if program
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || ";&|<>`".contains(c))
        {
            return Err(NotAllowed::Unsafe(program.to_string()));
        }
        if self.names.iter().any(|n| n == program) {
            return Ok(());
        }
        if !program.contains('/') && self.patterns.iter().any(|(_, re)| re.is_match(program)) {
            return Ok(());
        }
        Err(NotAllowed::NotListed(program.to_string()))
    }
}

/// Why the allowlist refuses a program; the text is made by `Display`.
#[derive(Debug, PartialEq, Eq)]
pub enum NotAllowed {
    /// The allowlist is empty.
    NothingIs,
    /// `argv[0]` is empty.
    Empty,
    /// The name holds a space, a control character or shell syntax.
    Unsafe(String),
    /// A name the allowlist does not name or match.
    NotListed(String),
}

impl std::fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAllowed::NothingIs => f.write_str(NOTHING_ALLOWED),
            NotAllowed::Empty => f.write_str("Empty command"),
            NotAllowed::Unsafe(program) => write!(f, "Unsafe command name: {program}"),
            NotAllowed::NotListed(program) => write!(f, "Command not allowed: {program}"),
        }
    }
}

/// Splits a comma-separated value into trimmed, non-empty items.
fn split_items(value: Option<&str>) -> impl Iterator<Item = &str> {
    value
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
}

fn is_name_metacharacter(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            ';' | '&'
                | '|'
                | '<'
                | '>'
                | '('
                | ')'
                | '$'
                | '\''
                | '"'
                | '\\'
                | '*'
                | '?'
                | '{'
                | '}'
                | '~'
                | '!'
                | '#'
                | '`'
        )
}

fn is_pattern_metacharacter(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, ';' | '&' | '|' | '<' | '>' | '`' | '\'' | '"')
}

fn describe(c: char) -> String {
    if c.is_whitespace() || c.is_control() {
        format!("the character U+{:04X}", c as u32)
    } else {
        format!("`{c}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(commands: Option<&str>, alias: Option<&str>, patterns: Option<&str>) -> Allowlist {
        match Allowlist::new(commands, alias, patterns) {
            Ok(list) => list,
            Err(e) => panic!("unexpected configuration error: {e}"),
        }
    }

    /// Checks each program against the list: `Ok` or an exact error text.
    fn check(list: &Allowlist, cases: &[(&str, Result<(), &str>)]) {
        for (program, want) in cases {
            let got = list.check(program).map_err(|e| e.to_string());
            let want = want.map_err(str::to_string);
            assert_eq!(got, want, "program {program:?}");
        }
    }

    fn check_config_error(
        commands: Option<&str>,
        alias: Option<&str>,
        patterns: Option<&str>,
        want: &[&str],
    ) {
        match Allowlist::new(commands, alias, patterns) {
            Ok(_) => panic!("expected an error for {commands:?} {alias:?} {patterns:?}"),
            Err(e) => {
                for part in want {
                    assert!(e.contains(part), "{e:?} lacks {part:?}");
                }
            }
        }
    }

    #[test]
    fn names_are_trimmed_and_unioned() {
        let l = list(Some("ls ,  cat,,echo "), Some("git, ls"), None);
        assert_eq!(l.names(), ["ls", "cat", "echo", "git"]);
        check(
            &l,
            &[
                ("ls", Ok(())),
                ("cat", Ok(())),
                ("echo", Ok(())),
                ("git", Ok(())),
                ("rm", Err("Command not allowed: rm")),
                ("LS", Err("Command not allowed: LS")),
                ("ls ", Err("Unsafe command name: ls ")),
                (" ls", Err("Unsafe command name:  ls")),
                ("ls;rm", Err("Unsafe command name: ls;rm")),
                ("", Err("Empty command")),
            ],
        );
    }

    #[test]
    fn empty_and_unset() {
        let unset = list(None, None, None);
        assert!(unset.is_empty());
        assert!(!unset.is_configured());
        check(&unset, &[("ls", Err(NOTHING_ALLOWED))]);

        let blank = list(Some(" , ,"), None, Some(""));
        assert!(blank.is_empty());
        assert!(blank.is_configured());
        check(&blank, &[("ls", Err(NOTHING_ALLOWED))]);

        let alias_only = list(None, Some("cat"), None);
        assert!(!alias_only.is_empty());
        assert!(alias_only.is_configured());
        check(&alias_only, &[("cat", Ok(()))]);
    }

    #[test]
    fn patterns_match_the_whole_name() {
        let l = list(
            None,
            None,
            Some("ls, python[0-9.]*,^cmd[0-9]+$ ,node(js)?,git-\\w+"),
        );
        assert_eq!(
            l.patterns().collect::<Vec<_>>(),
            [
                "ls",
                "python[0-9.]*",
                "^cmd[0-9]+$",
                "node(js)?",
                "git-\\w+"
            ]
        );
        check(
            &l,
            &[
                ("ls", Ok(())),
                ("lsof", Err("Command not allowed: lsof")),
                ("xls", Err("Command not allowed: xls")),
                ("python", Ok(())),
                ("python3.12", Ok(())),
                ("python3-config", Err("Command not allowed: python3-config")),
                ("cmd12", Ok(())),
                ("cmdx", Err("Command not allowed: cmdx")),
                ("node", Ok(())),
                ("nodejs", Ok(())),
                ("git-lfs", Ok(())),
            ],
        );
    }

    #[test]
    fn alternation_inside_a_group_is_still_full_match() {
        // `a|b` is refused (| is a shell metacharacter), but a group keeps anchoring honest.
        let l = list(None, None, Some("(ls)"));
        check(
            &l,
            &[("ls", Ok(())), ("lsx", Err("Command not allowed: lsx"))],
        );
    }

    #[test]
    fn paths_need_an_exact_name_entry() {
        let l = list(Some("ls,/usr/bin/cat"), None, Some(".*"));
        check(
            &l,
            &[
                ("ls", Ok(())),
                ("/usr/bin/cat", Ok(())),
                ("anything", Ok(())),
                ("/bin/ls", Err("Command not allowed: /bin/ls")),
                ("./ls", Err("Command not allowed: ./ls")),
                ("/usr/bin//cat", Err("Command not allowed: /usr/bin//cat")),
                ("../x/cat", Err("Command not allowed: ../x/cat")),
                ("cat", Ok(())),
            ],
        );
        let names_only = list(Some("ls"), None, None);
        check(
            &names_only,
            &[("/bin/ls", Err("Command not allowed: /bin/ls"))],
        );
    }

    #[test]
    fn unsafe_patterns_are_configuration_errors() {
        for pattern in [
            "ls -la", "a;b", "a&b", "a|b", "a<b", "a>b", "a`b", "a'b", "a\"b", "a\tb", "a\nb",
        ] {
            check_config_error(
                None,
                None,
                Some(pattern),
                &["ALLOW_PATTERNS", "Unsafe allowed command pattern"],
            );
        }
        check_config_error(
            None,
            None,
            Some("ok,ls -la"),
            &[
                "invalid ALLOW_PATTERNS value \"ok,ls -la\"",
                "pattern: ls -la",
                "regexes",
            ],
        );
    }

    #[test]
    fn bad_regexes_are_configuration_errors() {
        check_config_error(
            None,
            None,
            Some("python[0-9"),
            &["ALLOW_PATTERNS", "\"python[0-9\"", "not a valid regex"],
        );
        check_config_error(None, None, Some("(ls"), &["not a valid regex"]);
        check_config_error(None, None, Some("\\k"), &["not a valid regex"]);
    }

    #[test]
    fn unsafe_names_are_configuration_errors() {
        for (commands, alias, variable) in [
            (Some("ls -la"), None, "ALLOW_COMMANDS"),
            (Some("ls;rm"), None, "ALLOW_COMMANDS"),
            (None, Some("a|b"), "ALLOWED_COMMANDS"),
            (Some("$(id)"), None, "ALLOW_COMMANDS"),
            (Some("a*"), None, "ALLOW_COMMANDS"),
            (Some("`id`"), None, "ALLOW_COMMANDS"),
            (Some("'ls'"), None, "ALLOW_COMMANDS"),
            (Some("a\\b"), None, "ALLOW_COMMANDS"),
        ] {
            check_config_error(commands, alias, None, &[variable, "command name"]);
        }
        let l = list(Some("[,clang++,git-lfs,/usr/bin/x"), None, None);
        check(
            &l,
            &[("[", Ok(())), ("clang++", Ok(())), ("/usr/bin/x", Ok(()))],
        );
    }
}
