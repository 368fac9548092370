//! `git send-email`: its options as Perl's Getopt::Long reads them (git-send-email.perl), so
//! that the data options run and the ones that name a program are refused.
//!
//! Getopt::Long's rules, as read here: an option starts with `--`, `-` or `+`; names are
//! case-insensitive and may be abbreviated to any unique prefix; `name=s` takes the next
//! argument whatever it looks like, `name:s` only when it does not look like an option,
//! `name=i`/`name:i` only an integer; `--` ends the options, and operands may come between
//! options. git-send-email reads its options in three passes (`--identity`, then `-h` and
//! `--dump-aliases`, then the rest); one pass over all of them is read here, which takes the
//! same values or refuses more.
//!
//! Refused: `--sendmail-cmd`, `--to-cmd`, `--cc-cmd`, `--header-cmd` (each runs its value
//! through the shell), `--smtp-server` with no value or a value that is a path (git runs it as
//! the sendmail program), and an ambiguous abbreviation that could be one of these;
//! `--compose` and `--annotate` (they start an editor, refused like git's other editor
//! forms). What send-email does not take goes to `git format-patch`, whose rules the caller
//! applies to it.

/// One option: its canonical name (aliases and negations share it) and what value it takes.
struct Spec {
    /// The names, canonical first, separated by `|` as Getopt::Long writes them: one string,
    /// so that the table costs the loader no relocation per name.
    names: &'static str,
    value: Value,
    negatable: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Value {
    None,
    /// `=s`: the next argument, whatever it is.
    Required,
    /// `:s`: the next argument unless it looks like an option.
    Optional,
    /// `=i` / `:i`: the next argument when it is an integer.
    Integer,
}

const fn spec(names: &'static str, value: Value, negatable: bool) -> Spec {
    Spec {
        names,
        value,
        negatable,
    }
}

use Value::{Integer as I, None as N, Optional as O, Required as R};

const SPECS: &[Spec] = &[
    spec("identity", R, false),
    spec("no-identity", N, false),
    spec("h", N, false),
    spec("dump-aliases", N, false),
    spec("translate-aliases", N, false),
    spec("sender|from", R, false),
    spec("in-reply-to", R, false),
    spec("reply-to", R, false),
    spec("subject", R, false),
    spec("to", R, false),
    spec("to-cmd", R, false),
    spec("no-to", N, false),
    spec("cc", R, false),
    spec("no-cc", N, false),
    spec("bcc", R, false),
    spec("no-bcc", N, false),
    spec("chain-reply-to", N, true),
    spec("sendmail-cmd", R, false),
    spec("smtp-server", R, false),
    spec("smtp-server-option", R, false),
    spec("smtp-server-port", R, false),
    spec("smtp-user", R, false),
    spec("smtp-pass", O, false),
    spec("smtp-ssl", N, false),
    spec("smtp-encryption", R, false),
    spec("smtp-ssl-cert-path", R, false),
    spec("smtp-debug", I, false),
    spec("smtp-domain", O, false),
    spec("smtp-auth", R, false),
    spec("no-smtp-auth", N, false),
    spec("imap-sent-folder", R, false),
    spec("use-imap-only", N, true),
    spec("annotate", N, true),
    spec("compose", N, false),
    spec("quiet", N, false),
    spec("cc-cmd", R, false),
    spec("header-cmd", R, false),
    spec("no-header-cmd", N, false),
    spec("suppress-from", N, true),
    spec("suppress-cc", R, false),
    spec("signed-off-cc|signed-off-by-cc", N, true),
    spec("cc-cover", N, true),
    spec("to-cover", N, true),
    spec("confirm", R, false),
    spec("dry-run", N, false),
    spec("envelope-sender", R, false),
    spec("thread", N, true),
    spec("validate", N, true),
    spec("transfer-encoding", R, false),
    spec("mailmap", N, true),
    spec("use-mailmap", N, true),
    spec("format-patch", N, true),
    spec("8bit-encoding", R, false),
    spec("compose-encoding", R, false),
    spec("force", N, false),
    spec("xmailer", N, true),
    spec("batch-size", I, false),
    spec("relogin-delay", I, false),
    spec("git-completion-helper", N, false),
    spec("v", R, false),
    spec("outlook-id-fix", N, true),
];

/// Options whose value is a command run through the shell.
const PROGRAM: &[&str] = &["sendmail-cmd", "to-cmd", "cc-cmd", "header-cmd"];

/// An option as matched: the canonical name (`no` + it for a negation) and its value kind.
#[derive(Clone, Copy, PartialEq)]
struct Match {
    canonical: &'static str,
    negated: bool,
    value: Value,
}

/// Every spelling of the options of one pass with what it selects.
fn spellings(specs: &[Spec]) -> Vec<(String, Match)> {
    let mut out = Vec::new();
    for s in specs {
        let canonical = s.names.split('|').next().unwrap_or_default();
        for name in s.names.split('|') {
            out.push((
                name.to_string(),
                Match {
                    canonical,
                    negated: false,
                    value: s.value,
                },
            ));
            if s.negatable {
                let negation = Match {
                    canonical,
                    negated: true,
                    value: N,
                };
                out.push((format!("no{name}"), negation));
                out.push((format!("no-{name}"), negation));
            }
        }
    }
    out
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn looks_like_option(text: &str, in_order: bool) -> bool {
    text.len() > 1 && (text.starts_with('-') || (!in_order && text.starts_with('+')))
}

/// True when an `--smtp-server` value makes git run it as a program: a path (or no value).
fn smtp_server_is_program(value: Option<&str>) -> bool {
    match value {
        None | Some("") => true,
        Some(v) => {
            let b = v.as_bytes();
            v.starts_with(['/', '\\'])
                || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
        }
    }
}

fn selects_program(m: &Match, value: Option<&str>) -> bool {
    !m.negated
        && (PROGRAM.contains(&m.canonical)
            || (m.canonical == "smtp-server" && smtp_server_is_program(value)))
}

/// What a refusal says.
pub struct Reasons<'a> {
    /// An option that runs a program.
    pub program: &'a str,
    /// `--compose` or `--annotate`, which start an editor.
    pub editor: &'a str,
}

/// Checks `git send-email`'s arguments (after the subcommand). `Ok` holds what is left once
/// send-email has taken its own options (revisions, patch files and the options it hands to
/// `git format-patch`), in the permuting reading; `Err` holds the reason.
///
/// Getopt::Long permutes by default and stops at the first operand under `POSIXLY_CORRECT`
/// (which the environment may set): both readings must pass.
pub fn check(args: &[String], reasons: &Reasons) -> Result<Vec<String>, String> {
    let mut left = Vec::new();
    for in_order in [true, false] {
        let residual: Vec<&str> = args.iter().map(String::as_str).collect();
        let residual = pass(&residual, &SPECS[..2], None, in_order)?;
        let residual = pass(&residual, &SPECS[2..5], None, in_order)?;
        left = pass(&residual, &SPECS[5..], Some(reasons), in_order)?;
    }
    Ok(left.into_iter().map(str::to_string).collect())
}

/// One Getopt::Long pass (`pass_through`): removes the options of `specs` it recognises
/// with their values and returns what is left. In the main pass (`refuse` given) an option
/// that selects a program is refused.
/// With `in_order`, the pass stops at the first argument it does not take (the rest is left
/// as it is), `+` starts no option and names are not abbreviated.
fn pass<'a>(
    args: &[&'a str],
    specs: &[Spec],
    refuse: Option<&Reasons>,
    in_order: bool,
) -> Result<Vec<&'a str>, String> {
    let table = spellings(specs);
    let mut residual = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if arg == "--" {
            residual.extend_from_slice(&args[i - 1..]);
            break;
        }
        let body = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .or_else(|| arg.strip_prefix('+').filter(|_| !in_order));
        let (name, attached) = match body.map(|b| b.split_once('=').unwrap_or((b, ""))) {
            Some((n, _)) if !n.is_empty() => {
                (n, body.and_then(|b| b.split_once('=')).map(|(_, v)| v))
            }
            _ => {
                // Not an option: kept; a pass in order stops here.
                residual.push(arg);
                if in_order {
                    residual.extend_from_slice(&args[i..]);
                    break;
                }
                continue;
            }
        };
        let name = name.to_ascii_lowercase();
        let mut found: Vec<Match> = match table.iter().find(|(s, _)| *s == name) {
            Some((_, m)) => vec![*m],
            None => table
                .iter()
                .filter(|(s, _)| !in_order && s.starts_with(&name))
                .map(|(_, m)| *m)
                .collect(),
        };
        found.sort_by_key(|m| (m.canonical, m.negated));
        found.dedup();
        if found.len() != 1 {
            // Getopt::Long refuses an ambiguous name; it may still be read as any of them.
            let program = found.iter().any(|m| {
                !m.negated && (PROGRAM.contains(&m.canonical) || m.canonical == "smtp-server")
            });
            if let (true, Some(reasons)) = (program, refuse) {
                return Err(reasons.program.to_string());
            }
            residual.push(arg);
            if in_order {
                residual.extend_from_slice(&args[i..]);
                break;
            }
            continue;
        }
        let m = found[0];
        let mut value = attached;
        if attached.is_none() {
            if let Some(next) = args.get(i).copied() {
                let takes = match m.value {
                    N => false,
                    R => true,
                    O => next != "--" && !looks_like_option(next, in_order),
                    I => is_integer(next),
                };
                if takes {
                    value = Some(next);
                    i += 1;
                }
            }
        }
        if let Some(reasons) = refuse {
            if selects_program(&m, value) {
                return Err(reasons.program.to_string());
            }
            if !m.negated && (m.canonical == "compose" || m.canonical == "annotate") {
                return Err(reasons.editor.to_string());
            }
        }
        // An invalid use (a value on a flag, a missing or empty required value, a non-integer)
        // is left for the next pass, which reads it as one of its own options.
        let invalid = match (m.value, attached) {
            (R, None) => value.is_none(),
            (R, Some(v)) => v.is_empty(),
            (N, Some(_)) => true,
            (I, Some(v)) => !is_integer(v),
            _ => false,
        };
        if invalid {
            residual.push(arg);
            if in_order {
                residual.extend_from_slice(&args[i..]);
                break;
            }
        }
    }
    Ok(residual)
}

#[cfg(test)]
mod tests {
    use super::SPECS;
    use crate::policy::trusted::words::plain_name;

    #[test]
    fn every_name_is_plain_and_written_once() {
        let mut seen = std::collections::HashSet::new();
        for spec in SPECS {
            for name in spec.names.split('|') {
                assert!(plain_name(name).is_some(), "{:?}", spec.names);
                assert!(seen.insert(name), "{name} is written twice");
            }
        }
    }
}
