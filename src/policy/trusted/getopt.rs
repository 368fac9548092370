//! A model of GNU `getopt_long` (and of git's parse-options, which reads options the same way
//! for everything the hardening cares about), so that the rules judge options as the program
//! will read them, never by how an argument looks.
//!
//! What is modelled:
//!
//! - Short options cluster (`-xvf`); a letter that takes a value ends the cluster, and its value
//!   is the rest of the cluster or, when that is empty, the next argument, whatever it looks
//!   like (`--`, `-x`, empty). An optional value is only ever attached (`-d/tmp/x`).
//! - Long options are matched exactly first, else by any prefix (`--checkpoint-a`); a prefix of
//!   several options is ambiguous and carries every candidate, so a rule can refuse when any
//!   of them is dangerous. A required value is `--opt=value` or the next argument; an optional
//!   one only `--opt=value`.
//! - `--` ends the options only where it is not a value; `-` alone is an operand.
//! - GNU programs permute: options after operands are still options, unless the grammar stops
//!   at the first operand (an optstring starting with `+`, as gawk's does).
//! - `-W foo` reads as `--foo` where the optstring says `W;` (gawk).
//! - git's `--no-<option>` negation, where the grammar says so.

use crate::policy::trusted::words::Words;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// No value.
    No,
    /// A value, attached or the next argument.
    Required,
    /// A value only when attached.
    Optional,
}

/// A program's option grammar.
#[derive(Clone, Copy, Debug)]
pub struct Grammar {
    /// Short options and whether each takes a value.
    pub short: &'static [(char, Arg)],
    /// Long options (without the dashes) and whether each takes a value.
    pub long: Longs,
    /// Options end at the first operand.
    pub stop_at_operand: bool,
    /// `-W name[=value]` means `--name[=value]`.
    pub w_long: bool,
    /// `--no-name` negates the long option `name` (git's parse-options).
    pub negation: bool,
    /// An ambiguous abbreviation whose every candidate takes a value takes the next
    /// argument. The program itself refuses the abbreviation, so neither reading is the
    /// real one: [`Grammar::readings`] gives both.
    pub ambiguous_takes_value: bool,
}

/// A grammar's long options.
#[derive(Clone, Copy, Debug)]
pub enum Longs {
    /// The names as words ([`Words`]: no relocation per option), each followed by `=` when
    /// it takes a required value, `?` when it takes an optional one: `file= color? verbose`.
    Words(Words),
    /// Pairs made at run time (git's tables, read from their text once).
    Pairs(&'static [(&'static str, Arg)]),
}

impl Longs {
    /// A table written as words (see [`Longs::Words`]).
    pub const fn words(text: &'static str) -> Longs {
        Longs::Words(Words(text))
    }

    /// The options and whether each takes a value, in the table's order.
    pub fn iter(self) -> LongIter {
        match self {
            Longs::Words(words) => LongIter::Words(words.iter()),
            Longs::Pairs(pairs) => LongIter::Pairs(pairs.iter()),
        }
    }

    /// The options whose names start with `prefix`, in the table's order.
    pub fn with_prefix<'p>(
        self,
        prefix: &'p str,
    ) -> impl Iterator<Item = (&'static str, Arg)> + 'p {
        let (words, pairs) = match self {
            Longs::Words(words) => (Some(words), &[][..]),
            Longs::Pairs(pairs) => (None, pairs),
        };
        words
            .into_iter()
            .flat_map(move |words| words.starting_with(prefix).map(long_word))
            .chain(pairs.iter().copied())
            .filter(move |(name, _)| name.starts_with(prefix))
    }

    /// The option named exactly `name`.
    pub fn get(self, name: &str) -> Option<(&'static str, Arg)> {
        self.with_prefix(name).find(|(o, _)| *o == name)
    }

    /// The table's first fault, if any: a name that is not plain (an unknown suffix, a
    /// stray character) or a name written twice.
    #[cfg(test)]
    pub fn fault(self) -> Option<String> {
        match self {
            Longs::Words(words) => {
                words.fault(|w| crate::policy::trusted::words::plain_name(long_word(w).0))
            }
            Longs::Pairs(pairs) => {
                let mut names: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
                names.sort_unstable();
                let twice = names.windows(2).find(|w| w[0] == w[1]);
                twice.map(|w| format!("{:?} is written twice", w[0]))
            }
        }
    }
}

/// The options of a [`Longs`], one `(name, Arg)` at a time.
pub enum LongIter {
    Words(std::str::SplitAsciiWhitespace<'static>),
    Pairs(std::slice::Iter<'static, (&'static str, Arg)>),
}

impl Iterator for LongIter {
    type Item = (&'static str, Arg);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            LongIter::Words(words) => words.next().map(long_word),
            LongIter::Pairs(pairs) => pairs.next().copied(),
        }
    }
}

/// A word of a [`Longs::Words`] table: the name and its value's kind.
fn long_word(word: &'static str) -> (&'static str, Arg) {
    if let Some(name) = word.strip_suffix('=') {
        (name, Arg::Required)
    } else if let Some(name) = word.strip_suffix('?') {
        (name, Arg::Optional)
    } else {
        (word, Arg::No)
    }
}

/// One parsed element of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A short option letter and its value, if it took one.
    Short(char, Option<&'a str>),
    /// A long option: every option the written name can select (one when exact or
    /// unambiguous, several when ambiguous, none when unknown), the name as written, its value
    /// and whether it was a `--no-` negation.
    Long {
        /// The options the name selects.
        candidates: Vec<&'static str>,
        /// The name as written, without dashes and value.
        written: &'a str,
        /// The value, attached or taken from the next argument.
        value: Option<&'a str>,
        /// True for a `--no-name` negation.
        negated: bool,
    },
    /// An operand (not an option, not an option's value).
    Operand(&'a str),
}

impl Item<'_> {
    /// True when this is a long option any of whose candidates is in `names` (a negation
    /// never is).
    pub fn long_is(&self, names: &[&str]) -> bool {
        match self {
            Item::Long {
                candidates,
                negated: false,
                ..
            } => candidates.iter().any(|c| names.contains(c)),
            _ => false,
        }
    }

    /// True when this is the short option `letter`.
    pub fn short_is(&self, letters: &[char]) -> bool {
        matches!(self, Item::Short(c, _) if letters.contains(c))
    }

    /// The option's value, if any.
    pub fn value(&self) -> Option<&str> {
        match self {
            Item::Short(_, v) => *v,
            Item::Long { value, .. } => *value,
            Item::Operand(_) => None,
        }
    }
}

impl Grammar {
    /// The option as written (`--name` or `-x`) when `item` is one this grammar does not
    /// have: a closed rule refuses it, since a newer program may load or run something
    /// through it.
    pub fn unknown(&self, item: &Item<'_>) -> Option<String> {
        match item {
            Item::Long {
                candidates,
                written,
                ..
            } if candidates.is_empty() => Some(format!("--{written}")),
            Item::Short(letter, _) if !self.short.iter().any(|(c, _)| c == letter) => {
                Some(format!("-{letter}"))
            }
            _ => None,
        }
    }

    fn short_arg(&self, letter: char) -> Option<Arg> {
        self.short
            .iter()
            .find(|(c, _)| *c == letter)
            .map(|(_, a)| *a)
    }

    /// The long options `name` selects: itself when exact, else every option it prefixes.
    pub fn candidates(&self, name: &str) -> Vec<&'static str> {
        self.selected(name).into_iter().map(|(o, _)| o).collect()
    }

    /// [`Grammar::candidates`] with whether each takes a value, found in one pass over the
    /// table.
    fn selected(&self, name: &str) -> Vec<(&'static str, Arg)> {
        if name.is_empty() {
            return Vec::new();
        }
        let found: Vec<(&'static str, Arg)> = self.long.with_prefix(name).collect();
        match found.iter().find(|(o, _)| *o == name) {
            Some(&exact) => vec![exact],
            None => found,
        }
    }

    pub fn long_arg(&self, name: &str) -> Option<Arg> {
        self.long.get(name).map(|(_, a)| a)
    }

    /// Both readings of an ambiguous abbreviation: it takes the next argument as its value,
    /// or it takes none and the next argument is read on its own. A check that refuses when
    /// either reading is dangerous never lets a value hide an option.
    pub fn readings<'a>(&self, args: &'a [String]) -> [Vec<Item<'a>>; 2] {
        let other = Grammar {
            ambiguous_takes_value: !self.ambiguous_takes_value,
            ..*self
        };
        [self.parse(args), other.parse(args)]
    }

    /// Parses `args` (without `argv[0]`).
    pub fn parse<'a>(&self, args: &'a [String]) -> Vec<Item<'a>> {
        let mut items = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_str();
            i += 1;
            // git's parse-options ends the options at `--end-of-options` too.
            if arg == "--" || (self.negation && arg == "--end-of-options") {
                items.extend(args[i..].iter().map(|a| Item::Operand(a.as_str())));
                break;
            }
            if let Some(body) = arg.strip_prefix("--") {
                i = self.parse_long(body, args, i, &mut items);
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                items.push(Item::Operand(arg));
                if self.stop_at_operand {
                    items.extend(args[i..].iter().map(|a| Item::Operand(a.as_str())));
                    break;
                }
                continue;
            };
            i = self.parse_cluster(cluster, args, i, &mut items);
        }
        items
    }

    /// Parses a short-option cluster (without the dash); returns the next argument index.
    pub fn parse_cluster<'a>(
        &self,
        cluster: &'a str,
        args: &'a [String],
        mut i: usize,
        items: &mut Vec<Item<'a>>,
    ) -> usize {
        for (position, letter) in cluster.char_indices() {
            let rest = &cluster[position + letter.len_utf8()..];
            if letter == 'W' && self.w_long {
                let spec = attached_or_next(rest, args, &mut i);
                match spec {
                    Some(spec) => i = self.parse_long(spec, args, i, items),
                    None => items.push(Item::Short('W', None)),
                }
                return i;
            }
            match self.short_arg(letter) {
                Some(Arg::Required) => {
                    let value = attached_or_next(rest, args, &mut i);
                    items.push(Item::Short(letter, value));
                    return i;
                }
                Some(Arg::Optional) => {
                    items.push(Item::Short(letter, (!rest.is_empty()).then_some(rest)));
                    return i;
                }
                // Unknown letters are errors that getopt reports and skips; the cluster goes
                // on, which is also the stricter reading.
                Some(Arg::No) | None => items.push(Item::Short(letter, None)),
            }
        }
        i
    }

    /// Parses a long option (without the dashes); returns the next argument index.
    fn parse_long<'a>(
        &self,
        body: &'a str,
        args: &'a [String],
        mut i: usize,
        items: &mut Vec<Item<'a>>,
    ) -> usize {
        let (written, mut value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let mut selected = self.selected(written);
        let mut negated = false;
        if selected.is_empty() && self.negation {
            if let Some(positive) = written.strip_prefix("no-") {
                selected = self.selected(positive);
                negated = !selected.is_empty();
            }
        }
        let candidates: Vec<&'static str> = selected.iter().map(|(o, _)| *o).collect();
        if !negated && value.is_none() {
            // The value's kind is known when every candidate agrees (one option, or aliases).
            let kinds: Vec<Arg> = selected.iter().map(|(_, a)| *a).collect();
            let takes = candidates.len() == 1 || self.ambiguous_takes_value;
            if takes
                && kinds.first() == Some(&Arg::Required)
                && kinds.iter().all(|k| *k == Arg::Required)
            {
                value = args.get(i).map(String::as_str);
                if value.is_some() {
                    i += 1;
                }
            }
        }
        items.push(Item::Long {
            candidates,
            written,
            value,
            negated,
        });
        i
    }
}

/// A short option's value: what follows the letter in its cluster, or else the next
/// argument (taken: `i` moves past it), which may be anything, `--` included.
fn attached_or_next<'a>(rest: &'a str, args: &'a [String], i: &mut usize) -> Option<&'a str> {
    if !rest.is_empty() {
        return Some(rest);
    }
    let next = args.get(*i).map(String::as_str);
    if next.is_some() {
        *i += 1;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Grammar = Grammar {
        short: &[
            ('a', Arg::No),
            ('b', Arg::No),
            ('f', Arg::Required),
            ('o', Arg::Optional),
        ],
        long: Longs::words("file= filter output? verbose"),
        stop_at_operand: false,
        w_long: true,
        negation: true,
        ambiguous_takes_value: true,
    };

    #[test]
    fn unknown_names_only_what_the_grammar_lacks() {
        let owned: Vec<String> = ["-a", "-z", "--verbose", "--fil", "--none", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let unknown: Vec<Option<String>> = G.parse(&owned).iter().map(|i| G.unknown(i)).collect();
        // `--fil` is ambiguous (file, filter): known, with every candidate for the rule.
        assert_eq!(
            unknown,
            vec![
                None,
                Some("-z".into()),
                None,
                None,
                Some("--none".into()),
                None
            ]
        );
    }

    fn parse(args: &[&str]) -> Vec<String> {
        let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        G.parse(&owned)
            .iter()
            .map(|item| match item {
                Item::Short(c, v) => {
                    format!("-{c}{}", v.map(|v| format!("[{v}]")).unwrap_or_default())
                }
                Item::Long {
                    candidates,
                    value,
                    negated,
                    ..
                } => format!(
                    "--{}{}{}",
                    if *negated { "no-" } else { "" },
                    candidates.join("|"),
                    value.map(|v| format!("[{v}]")).unwrap_or_default()
                ),
                Item::Operand(o) => format!("<{o}>"),
            })
            .collect()
    }

    #[test]
    fn getopt_long_rules() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["-ab"], &["-a", "-b"]),
            (&["-abfx", "y"], &["-a", "-b", "-f[x]", "<y>"]),
            (&["-af", "--", "-b"], &["-a", "-f[--]", "-b"]),
            (&["-f", "-b", "x"], &["-f[-b]", "<x>"]),
            (&["x", "-a"], &["<x>", "-a"]),
            (&["--", "-a"], &["<-a>"]),
            (&["-"], &["<->"]),
            (&["-o", "x"], &["-o", "<x>"]),
            (&["-ox"], &["-o[x]"]),
            (&["--fil"], &["--file|filter"]),
            (&["--fi", "x"], &["--file|filter", "<x>"]),
            (&["--file", "--", "x"], &["--file[--]", "<x>"]),
            (&["--fil=x"], &["--file|filter[x]"]),
            (&["--filt", "x"], &["--filter", "<x>"]),
            (&["--out", "x"], &["--output", "<x>"]),
            (&["--out=x"], &["--output[x]"]),
            (&["--no-verbose"], &["--no-verbose"]),
            (&["--nothing"], &["--"]),
            (&["-W", "file=x"], &["--file[x]"]),
            (&["-Wfile", "x"], &["--file[x]"]),
            (&["-aW", "out"], &["-a", "--output"]),
            (&["--end-of-options", "-a"], &["<-a>"]),
            (
                &["-f", "--end-of-options", "-a"],
                &["-f[--end-of-options]", "-a"],
            ),
        ];
        for (args, want) in cases {
            assert_eq!(parse(args), *want, "{args:?}");
        }
    }

    #[test]
    fn an_ambiguous_abbreviation_is_read_both_ways() {
        const TWO: Grammar = Grammar {
            short: &[('x', Arg::No)],
            long: Longs::words("max-count= max-depth="),
            stop_at_operand: false,
            w_long: false,
            negation: false,
            ambiguous_takes_value: true,
        };
        let args: Vec<String> = ["--max", "-x"].iter().map(|s| s.to_string()).collect();
        let [taking, not_taking] = TWO.readings(&args);
        assert_eq!(taking.len(), 1);
        assert_eq!(taking[0].value(), Some("-x"));
        assert_eq!(not_taking.len(), 2);
        assert!(not_taking[1].short_is(&['x']));
        // An exact or unique name takes its value in both readings.
        let args: Vec<String> = ["--max-d", "-x"].iter().map(|s| s.to_string()).collect();
        for reading in TWO.readings(&args) {
            assert_eq!(reading.len(), 1);
        }
    }
}
