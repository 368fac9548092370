//! Characters a person cannot see in a text, and the text with them made visible.
//!
//! A question put to a person, or a line they read in the audit log, quotes what a call
//! sent. A terminal or a dialog acts on some characters instead of showing them: C0 and C1
//! controls (an `ESC [2K` erases the line before it, a `\r` starts it over), DEL, the line
//! and paragraph separators, the bidirectional controls that show a text in another order
//! than it runs (`U+202E`), and the invisible format characters (zero-width spaces and
//! joiners, tags). `visible` writes each of them as an escape (`\u{202e}`), so what a
//! person reads is what runs.

use std::borrow::Cow;

/// Whether `c` is a character a person cannot see as itself.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\0'..='\x1f' | '\x7f'..='\u{9f}'
        // Soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
        // Khmer inherent vowels, Mongolian vowel separator.
        | '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180e}'
        // Zero-width space, joiners, the marks LRM and RLM.
        | '\u{200b}'..='\u{200f}'
        // Line and paragraph separators, the embeddings and overrides.
        | '\u{2028}'..='\u{202e}'
        // Word joiner, invisible operators, the isolates, deprecated format characters.
        | '\u{2060}'..='\u{206f}'
        | '\u{3164}' | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}'
        // Shorthand format controls, musical symbol format controls, tags.
        | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}' | '\u{e0000}'..='\u{e007f}'
    )
}

/// `text` with every invisible character written as an escape: `\n`, `\r`, `\t`, and
/// `\u{…}` for the others. Unchanged (borrowed) when it has none.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_format_characters_become_escapes() {
        assert!(matches!(visible("ls -l /tmp"), Cow::Borrowed(_)));
        assert_eq!(visible("a\x1b[2K\rb\n"), "a\\u{1b}[2K\\rb\\n");
        assert_eq!(visible("x\u{7f}\u{85}\u{9b}y"), "x\\u{7f}\\u{85}\\u{9b}y");
        assert_eq!(
            visible("rm \u{202e}txt.exe\u{202c}"),
            "rm \\u{202e}txt.exe\\u{202c}"
        );
        for c in [
            '\u{200e}',
            '\u{200f}',
            '\u{61c}',
            '\u{2066}',
            '\u{2069}',
            '\u{2028}',
            '\u{2029}',
            '\u{200b}',
            '\u{feff}',
            '\u{e0041}',
        ] {
            let shown = visible(&c.to_string()).into_owned();
            assert_eq!(shown, format!("\\u{{{:x}}}", c as u32));
        }
        // Letters of every script stay as they are.
        assert_eq!(visible("écho Привет 日本 ✓"), "écho Привет 日本 ✓");
    }
}
