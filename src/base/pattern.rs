//! Regexes compiled with a cap on their size. A regex's search costs up to its compiled
//! size times the text's length, so the size a pattern may compile to bounds the work any
//! one match can make: `until` (the caller's pattern, matched over output the caller's
//! commands write) and the command regexes (the operator's, matched over the caller's
//! command text) are capped far below the regex library's default (10 MiB).

use regex_lite::{Regex, RegexBuilder};

/// The cap of `wait`'s `until`: about 300 repetitions of an optional character, a search
/// of at most about 5 ms per KiB of output on a slow machine.
pub const UNTIL_LIMIT: usize = 32 << 10;
/// The cap of the command regexes (and of the redaction regex): room for an alternation
/// of a hundred words.
pub const COMMAND_LIMIT: usize = 64 << 10;

/// Why a pattern was not compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Not a valid regex: the library's reason, its last line.
    Invalid(String),
    /// Valid, but it compiles to more than `limit` bytes.
    TooBig { limit: usize },
}

/// What `regex_lite` says of a pattern over its size limit (the library has no error
/// kinds; a unit test holds this to its text).
const TOO_BIG: &str = "compiled regex exceeded size limit";

/// Compiles `pattern` with its compiled size capped at `limit` bytes.
pub fn compile(pattern: &str, limit: usize) -> Result<Regex, PatternError> {
    RegexBuilder::new(pattern)
        .size_limit(limit)
        .build()
        .map_err(|e| {
            let text = e.to_string();
            if text.trim() == TOO_BIG {
                PatternError::TooBig { limit }
            } else {
                PatternError::Invalid(text.lines().last().unwrap_or("").trim().to_string())
            }
        })
}

impl PatternError {
    /// The error in words, for a message that already named the pattern.
    pub fn describe(&self) -> String {
        match self {
            PatternError::Invalid(why) => format!("not a valid regex ({why})"),
            PatternError::TooBig { limit } => format!(
                "it compiles to more than the {} KiB this server allows a regex (its matching \
                 could take seconds); use fewer or smaller repetitions, or a shorter pattern",
                limit >> 10
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_over_the_cap_is_told_from_an_invalid_one() {
        assert!(compile("ready|listening on", UNTIL_LIMIT).is_ok());
        assert!(compile("(?i)error|warn|fail", UNTIL_LIMIT).is_ok());
        for big in ["(?:a?){100000}b", "(?:a?){20000}b", "(?:a?){500}b"] {
            assert_eq!(
                compile(big, UNTIL_LIMIT).err(),
                Some(PatternError::TooBig { limit: UNTIL_LIMIT }),
                "{big}"
            );
        }
        let words: Vec<String> = (0..100).map(|i| format!("command_{i}")).collect();
        assert!(compile(&format!(r"\b({})\b", words.join("|")), COMMAND_LIMIT).is_ok());
        match compile("(unclosed", UNTIL_LIMIT) {
            Err(PatternError::Invalid(why)) => assert!(!why.is_empty()),
            other => panic!("{other:?}"),
        }
        let e = PatternError::TooBig { limit: UNTIL_LIMIT }.describe();
        assert!(e.contains("32 KiB"), "{e}");
    }
}
