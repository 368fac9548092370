//! A lexer for awk program text that finds the ways out of awk: `system`, pipes, `@`
//! directives and indirect calls, output redirection in `print`/`printf`, and `getline <`.
//! Comparisons (`$1 > 1`), `||`, and `|`, `>`, `<` inside strings and regex literals are
//! recognised as harmless.

/// The original's whole-text checks, kept for arguments that are not the program: `system(`
/// and a single `|`, and `@include`/`@load` directives.
pub fn raw_awk_danger(arg: &str) -> bool {
    let compact: String = arg.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("system(") || compact.contains("@include") || compact.contains("@load") {
        return true;
    }
    let bytes = compact.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'|' {
            if bytes.get(i + 1) == Some(&b'|') {
                i += 2;
                continue;
            }
            return true;
        }
        i += 1;
    }
    false
}

/// The result of lexing an awk program.
#[derive(Debug, PartialEq, Eq)]
pub enum AwkScan {
    /// No external access found.
    Clean,
    /// A pipe, `system`, `@`, output redirection in `print`, or `getline <` was found.
    Dangerous,
    /// The text could not be lexed with certainty (an unclosed string, regex or parenthesis,
    /// or a `/` inside a regex bracket expression, which awks treat differently).
    Ambiguous,
}

/// What the previous significant token allows next: a regex literal or a division.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AwkPrev {
    /// Start of the program or a statement, or after an operator or `print`: `/` opens a regex.
    ExpectOperand,
    /// After an operand: `/` divides.
    Operand,
}

/// Lexes an awk program and looks for ways out of awk.
///
/// Inside awk, `>` and `>>` in a `print`/`printf` statement (outside parentheses) write to a
/// file, `getline <` reads one, `|` and `|&` run commands, `system()` runs one, and `@`
/// introduces indirect calls (`@f()` with `f = "system"`) and `@load`/`@include`. A `>` or `<`
/// anywhere else is a comparison and is accepted, as are `||`, and `|`, `>` or `<` inside strings
/// and regex literals. Whether `/` opens a regex is decided as awk's grammar decides it: after an
/// operand it divides, elsewhere (including after the `)` of `if`, `while` and `for`) it opens a
/// regex.
pub fn scan_awk(text: &str) -> AwkScan {
    let bytes = text.as_bytes();
    let mut prev = AwkPrev::ExpectOperand;
    // One entry per open parenthesis: whether it holds an if/while/for condition.
    let mut parens: Vec<bool> = Vec::new();
    let mut next_paren_is_condition = false;
    let mut print_depth: Option<usize> = None;
    let mut getline_in_statement = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let condition_keyword = next_paren_is_condition;
        next_paren_is_condition = false;
        match b {
            b' ' | b'\t' => {
                next_paren_is_condition = condition_keyword;
                i += 1;
                continue;
            }
            b'"' => {
                let Some(end) = skip_awk_string(bytes, i) else {
                    return AwkScan::Ambiguous;
                };
                i = end;
                prev = AwkPrev::Operand;
                continue;
            }
            b'/' if prev == AwkPrev::ExpectOperand => {
                let Some(end) = skip_awk_regex(bytes, i) else {
                    return AwkScan::Ambiguous;
                };
                i = end;
                prev = AwkPrev::Operand;
                continue;
            }
            b'|' => {
                if bytes.get(i + 1) == Some(&b'|') {
                    i += 2;
                    prev = AwkPrev::ExpectOperand;
                    continue;
                }
                return AwkScan::Dangerous;
            }
            b'@' => return AwkScan::Dangerous,
            b'>' => {
                if bytes.get(i + 1) != Some(&b'=') && print_depth == Some(parens.len()) {
                    return AwkScan::Dangerous;
                }
                i += if bytes.get(i + 1) == Some(&b'=') {
                    2
                } else {
                    1
                };
                prev = AwkPrev::ExpectOperand;
                continue;
            }
            b'<' => {
                if bytes.get(i + 1) != Some(&b'=') && getline_in_statement {
                    return AwkScan::Dangerous;
                }
                prev = AwkPrev::ExpectOperand;
            }
            b'(' => {
                parens.push(condition_keyword);
                prev = AwkPrev::ExpectOperand;
            }
            b')' => {
                let Some(was_condition) = parens.pop() else {
                    return AwkScan::Ambiguous;
                };
                if print_depth.is_some_and(|d| d > parens.len()) {
                    print_depth = None;
                }
                prev = if was_condition {
                    AwkPrev::ExpectOperand
                } else {
                    AwkPrev::Operand
                };
            }
            b']' => prev = AwkPrev::Operand,
            b';' | b'{' | b'}' => {
                print_depth = None;
                getline_in_statement = false;
                prev = AwkPrev::ExpectOperand;
            }
            b'+' | b'-' if bytes.get(i + 1) == Some(&b) => {
                // `++` and `--` are treated as postfix, so a following `/` divides.
                i += 2;
                prev = AwkPrev::Operand;
                continue;
            }
            b'0'..=b'9' | b'.' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                    i += 1;
                }
                prev = AwkPrev::Operand;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match &text[start..i] {
                    "system" => return AwkScan::Dangerous,
                    "print" | "printf" => {
                        print_depth = Some(parens.len());
                        prev = AwkPrev::ExpectOperand;
                    }
                    "getline" => {
                        getline_in_statement = true;
                        prev = AwkPrev::Operand;
                    }
                    "if" | "while" | "for" => {
                        next_paren_is_condition = true;
                        prev = AwkPrev::ExpectOperand;
                    }
                    "else" | "do" | "return" | "case" | "exit" | "in" | "delete" => {
                        prev = AwkPrev::ExpectOperand;
                    }
                    _ => prev = AwkPrev::Operand,
                }
                continue;
            }
            _ if b >= 0x80 => {
                // Non-ASCII text outside strings is not awk syntax; treat it as an operand.
                prev = AwkPrev::Operand;
            }
            _ => prev = AwkPrev::ExpectOperand,
        }
        i += 1;
    }
    if !parens.is_empty() {
        return AwkScan::Ambiguous;
    }
    AwkScan::Clean
}

/// Returns the index after the closing quote of the string starting at `start`.
fn skip_awk_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Returns the index after the closing slash of the regex literal starting at `start`.
fn skip_awk_regex(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'/' => return Some(i + 1),
            b'[' => {
                // A bracket expression: `]` right after `[` or `[^` is literal. A `/` inside
                // one ends the regex for some awks and not for others, so it is ambiguous.
                i += 1;
                if bytes.get(i) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                }
                loop {
                    match bytes.get(i) {
                        None => return None,
                        Some(b']') => break,
                        Some(b'/') => return None,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awk_scanner() {
        let cases: &[(&str, AwkScan)] = &[
            ("$1 > 1", AwkScan::Clean),
            ("{print > \"f\"}", AwkScan::Dangerous),
            ("/unterminated", AwkScan::Ambiguous),
            ("/tmp/x", AwkScan::Clean),
            ("x=a|b", AwkScan::Dangerous),
        ];
        for (text, want) in cases {
            assert_eq!(scan_awk(text), *want, "{text:?}");
        }
    }
}
