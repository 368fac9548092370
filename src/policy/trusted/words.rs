//! Tables written as one string of words. A static table of `&'static str`s is an array of
//! pointers that the loader rewrites at every start (one relocation per entry, kept in memory
//! by the idle server); one string is one pointer, whatever it holds. The words are separated
//! by white space, so a table wraps as source lines do; slices of the string are
//! `&'static str`s, so what a lookup finds lives as long as the table did.
//!
//! Every word table is checked by a unit test (`word_tables`), never on a request: a
//! malformed word or a word written twice fails the tests, not a call.

/// A table of words separated by white space.
#[derive(Clone, Copy, Debug)]
pub struct Words(pub &'static str);

impl Words {
    /// The words, in the table's order.
    pub fn iter(self) -> std::str::SplitAsciiWhitespace<'static> {
        self.0.split_ascii_whitespace()
    }

    /// The words that start with `prefix`, in the table's order. They are found with a
    /// substring search (memchr's, vectorised) rather than by walking every word: a lookup
    /// in a table of hundreds of words stays well under a microsecond.
    pub fn starting_with<'p>(self, prefix: &'p str) -> impl Iterator<Item = &'static str> + 'p {
        let text = self.0;
        let bytes = text.as_bytes();
        memchr::memmem::find_iter(bytes, prefix.as_bytes())
            .filter(move |&at| at == 0 || bytes[at - 1].is_ascii_whitespace())
            .filter_map(move |at| {
                let len = bytes[at..].iter().position(u8::is_ascii_whitespace);
                text.get(at..len.map_or(bytes.len(), |len| at + len))
            })
            // A match that runs over white space is no word of the table.
            .filter(move |word| !word.is_empty() && word.starts_with(prefix))
    }

    /// True when `word` is one of the table's words.
    pub fn contains(self, word: &str) -> bool {
        self.starting_with(word).any(|w| w == word)
    }

    /// The table's first fault, if any: a word that `key` refuses (`None`), or two words
    /// with the same key. `key` gives what must be unique in a word (the whole word, or a
    /// name without its suffix).
    #[cfg(test)]
    pub fn fault(self, key: impl Fn(&'static str) -> Option<&'static str>) -> Option<String> {
        let mut seen = std::collections::HashSet::new();
        for word in self.iter() {
            let Some(k) = key(word) else {
                return Some(format!("malformed word {word:?}"));
            };
            if !seen.insert(k) {
                return Some(format!("{k:?} is written twice"));
            }
        }
        None
    }
}

impl IntoIterator for Words {
    type Item = &'static str;
    type IntoIter = std::str::SplitAsciiWhitespace<'static>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A name made of letters, digits, `-`, `_` and `.`, the characters of the tables' option,
/// program and subcommand names: a stray suffix or punctuation is a typo.
#[cfg(test)]
pub fn plain_name(word: &'static str) -> Option<&'static str> {
    let ok = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_any_white_space() {
        let w = Words("a  b\n        c-d e.f");
        assert_eq!(w.iter().collect::<Vec<_>>(), ["a", "b", "c-d", "e.f"]);
        assert!(w.contains("c-d"));
        assert!(!w.contains("c"));
        assert!(!w.contains(""));
    }

    #[test]
    fn words_are_found_by_their_start() {
        let w = Words("file= filter\n   output? fil a b");
        let found = |p: &str| w.starting_with(p).collect::<Vec<_>>();
        assert_eq!(found("fil"), ["file=", "filter", "fil"]);
        assert_eq!(found("filter"), ["filter"]);
        assert_eq!(found("ilter"), Vec::<&str>::new());
        assert_eq!(found("a b"), Vec::<&str>::new());
        assert_eq!(found(""), ["file=", "filter", "output?", "fil", "a", "b"]);
        assert!(w.contains("fil") && w.contains("b") && !w.contains("a b"));
    }

    #[test]
    fn a_fault_is_found() {
        assert_eq!(Words("a b c").fault(plain_name), None);
        assert_eq!(
            Words("a b a").fault(plain_name),
            Some("\"a\" is written twice".into())
        );
        assert_eq!(
            Words("a b+ c").fault(plain_name),
            Some("malformed word \"b+\"".into())
        );
    }
}
