//! Why trusted mode refuses a command, as a value: the rule that refused it and the text the
//! caller reads.
//!
//! The rule decides what may happen next without reading the text: a refusal by a rule the
//! person at the client may overrule ([`Rule::approvable`]: an argument rule, or an allowlisted
//! program that has no rules) is told from one nobody may overrule (a program not on the
//! allowlist, a command that is malformed or reaches outside its working directory). The
//! checks that make refusals nobody may overrule run first (`Policy::check`), so a command
//! that one of them refuses never carries an approvable rule.

use std::fmt;

/// A refusal of a trusted-mode command: the rule and the complete message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The rule that refused the command.
    pub rule: Rule,
    /// The message, complete (what refused it and what to do instead).
    pub text: String,
}

/// The rules that refuse a trusted-mode command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The allowlist: the program is not on it (or nothing is), its name is not a name, or a
    /// program it starts by itself is not allowed or not installed. Never approvable.
    NotAllowed,
    /// The program is allowlisted but has no argument rules and is not on the operator's
    /// `YIELDSHELL_UNREVIEWED_COMMANDS`. Approvable. Holds the program as written.
    Unreviewed(String),
    /// An argument rule: the program refused whatever its arguments (a shell, a runner), or
    /// an option, subcommand or value it would use to run or load something. Approvable.
    Arguments,
    /// Everything else about the launch: a malformed command (a control character in an
    /// argument), a redirection that leaves the working directory, a program not found.
    /// Never approvable.
    Launch,
}

impl Rule {
    /// True when a person may approve a command this rule refused.
    pub fn approvable(&self) -> bool {
        matches!(self, Rule::Unreviewed(_) | Rule::Arguments)
    }
}

impl Refusal {
    /// A refusal by `rule` with the message `text`.
    pub fn new(rule: Rule, text: impl Into<String>) -> Refusal {
        Refusal {
            rule,
            text: text.into(),
        }
    }

    /// A refusal of the launch (never approvable).
    pub fn launch(text: impl Into<String>) -> Refusal {
        Refusal::new(Rule::Launch, text)
    }

    /// A refusal by an argument rule.
    pub fn arguments(text: impl Into<String>) -> Refusal {
        Refusal::new(Rule::Arguments, text)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<Refusal> for String {
    fn from(refusal: Refusal) -> String {
        refusal.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_argument_rules_and_unreviewed_programs_are_approvable() {
        assert!(Rule::Arguments.approvable());
        assert!(Rule::Unreviewed("x".into()).approvable());
        assert!(!Rule::NotAllowed.approvable());
        assert!(!Rule::Launch.approvable());
    }
}
