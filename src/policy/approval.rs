//! Which refusals a person may waive (`YIELDSHELL_APPROVALS=ask`), as a type.
//!
//! A refusal by one of these rules carries its `Rule`, set by the code that refuses (never
//! read back from the message's words); every other refusal carries none and is final.
//! This enum is the one place where a kind of refusal is classified: a new rule the person
//! may waive is a new variant here, returned by the check that makes it. Never approvable,
//! and so never a variant: a program not on the allowlist, `YIELDSHELL_DENY_COMMAND_REGEX`
//! and `YIELDSHELL_ALLOW_COMMAND_REGEX`, a working directory outside the allowed roots,
//! malformed arguments, limits. The checks that make them run before the approvable ones
//! (or, in trusted mode, an approvable refusal is held back until every other check
//! passed), so a call one of them refuses is never put to the person.

/// A rule the person may waive for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Declared side-effect categories the operator blocked (shell mode).
    SideEffects(Vec<String>),
    /// A trusted-mode argument rule (the hardening), with its refusal in its own words.
    Arguments(String),
    /// An allowlisted program without argument rules, not accepted by the operator
    /// (`YIELDSHELL_UNREVIEWED_COMMANDS`): the program as written, and the refusal's words.
    Unreviewed(String, String),
}

impl Rule {
    /// The rule's name in audit lines.
    pub fn name(&self) -> &'static str {
        match self {
            Rule::SideEffects(_) => "blocked_side_effect",
            Rule::Arguments(_) => "argument_rule",
            Rule::Unreviewed(..) => "unreviewed_program",
        }
    }

    /// The rule a person may waive for a trusted-mode refusal; `None` when it is final.
    pub fn of_trusted(refusal: &crate::policy::trusted::Refusal) -> Option<Rule> {
        use crate::policy::trusted::RefusalRule;
        match &refusal.rule {
            RefusalRule::Arguments => Some(Rule::Arguments(refusal.text.clone())),
            RefusalRule::Unreviewed(program) => {
                Some(Rule::Unreviewed(program.clone(), refusal.text.clone()))
            }
            RefusalRule::NotAllowed | RefusalRule::Launch => None,
        }
    }

    /// The refusal's own words, as the caller reads them when nobody is asked.
    pub fn message(&self) -> String {
        match self {
            Rule::Arguments(why) | Rule::Unreviewed(_, why) => why.clone(),
            other => other.describe(),
        }
    }

    /// What refused the call, as a clause a person reads in a dialog ("the declared side
    /// effect RUNS_INLINE_CODE is blocked").
    pub fn describe(&self) -> String {
        match self {
            Rule::SideEffects(hits) => format!(
                "the declared side effect{} {} {} blocked on this server",
                if hits.len() > 1 { "s" } else { "" },
                hits.join(", "),
                if hits.len() > 1 { "are" } else { "is" },
            ),
            Rule::Arguments(why) => {
                let why = why.trim_end_matches('.');
                format!("trusted mode's argument rules refuse it ({why})")
            }
            Rule::Unreviewed(program, _) => format!(
                "{program} is allowlisted but has no argument rules on this server \
                 (YIELDSHELL_UNREVIEWED_COMMANDS would accept it)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_as_a_clause() {
        let one = Rule::SideEffects(vec!["RUNS_INLINE_CODE".into()]);
        assert_eq!(
            one.describe(),
            "the declared side effect RUNS_INLINE_CODE is blocked on this server"
        );
        let two = Rule::SideEffects(vec!["DELETES_FILES".into(), "RUNS_INLINE_CODE".into()]);
        assert!(two
            .describe()
            .contains("effects DELETES_FILES, RUNS_INLINE_CODE are"));
        let arg = Rule::Arguments("find -exec runs a program.".into());
        assert_eq!(
            arg.describe(),
            "trusted mode's argument rules refuse it (find -exec runs a program)"
        );
        assert_eq!(arg.name(), "argument_rule");
    }
}
