//! The trusted-mode command-line parser: words, quotes and the four operators `|`, `<`, `>`, `>>`.
//!
//! In trusted mode yieldshell never hands a command string to a shell. This module turns the
//! string into argv vectors itself, with a deliberately small grammar, and rejects every piece of
//! shell syntax it does not implement instead of guessing.
//!
//! Design decisions:
//!
//! - Words split on unquoted spaces and tabs only. Single quotes are literal. Double quotes honour
//!   the POSIX escapes `\"`, `\\`, `\$` and `` \` `` and keep every other backslash. An unquoted
//!   backslash escapes the next character. Adjacent quoted and unquoted parts join into one word,
//!   and `''` or `""` gives an empty word.
//! - Nothing is expanded: globs (`*`, `?`, `[..]`), `~` and braces (`{a,b}`) stay literal text.
//! - Variables are rejected, not passed literally. An unquoted or double-quoted `$NAME`, `${..}`,
//!   `$1` or `$?` would be expanded by every shell, so a model that writes `cat $HOME/x` expects
//!   expansion; silently passing the literal text would give a confusing result. The message says
//!   to write the value itself, or to use single quotes for a literal `$`. A `$` that no shell
//!   would expand (`a$`, `$.`, `'$HOME'`, `\$HOME`) stays literal.
//! - Rejected with a message that names the token and its byte offset: `;`, `&&`, `||`, `&`,
//!   `|&`, backticks, `$(`, `${`, `$'`, parentheses, a `#` that would start a comment, newline,
//!   carriage return and NUL (also inside quotes: one command line per call), unbalanced quotes,
//!   a trailing backslash, here-documents (`<<`, `<<<`), `<>`, `>|`, `<&`, `>&`, `&>`, process
//!   substitution and file-descriptor redirections (`2>`, `2>>`, `{fd}>`).
//! - Operators are recognised unquoted even when glued to words (`a|b`, `>out`, `'a'>b`).
//! - [`parse`] and [`from_argv`] share one structural check: no empty stage, every redirection
//!   has a file-name target, at most one `<` (first stage only) and one `>`/`>>` (last stage
//!   only), and redirections may sit anywhere inside their stage. Where MCP Shell Server had a
//!   message for the same fault (`Empty command`, `Empty command before pipe operator`,
//!   `Missing path for output redirection`, ...) ours starts with that exact text.
//! - [`from_argv`] is the `shell_execute` form: only elements that are exactly `|`, `<`, `>` or
//!   `>>` are operators; every other element is a word taken verbatim (no quote processing), and
//!   an element that contains `;`, `&&`, `||`, a backtick or a line break (or is exactly `&`) is
//!   rejected with the original's `Unexpected shell operator: <element>`.

use std::fmt;

/// One lexical unit of a trusted-mode command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word after quote removal; it may be empty (`''`).
    Word(String),
    /// `|`
    Pipe,
    /// `<`
    RedirIn,
    /// `>`
    RedirOut,
    /// `>>`
    RedirAppend,
}

/// Why a command string could not be split into tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenizeError {
    token: String,
    offset: usize,
    reason: String,
}

impl TokenizeError {
    fn new(token: impl Into<String>, offset: usize, reason: impl Into<String>) -> TokenizeError {
        TokenizeError {
            token: token.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// The offending token as it is shown in the message (control characters escaped).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The byte offset of the offending token in the input.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for TokenizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` at byte {} {}",
            self.token, self.offset, self.reason
        )
    }
}

impl std::error::Error for TokenizeError {}

/// An output redirection target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file name exactly as written (containment is checked by the executor).
    pub path: String,
    /// `>>` rather than `>`.
    pub append: bool,
}

/// A validated pipeline: one argv per stage plus the optional redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// The argv of each stage; never empty, and no stage is empty.
    pub stages: Vec<Vec<String>>,
    /// The file named by `<`, which feeds the first stage.
    pub stdin_path: Option<String>,
    /// The file named by `>` or `>>`, which receives the last stage's stdout.
    pub stdout: Option<Redirect>,
}

/// Splits a trusted-mode command string into tokens.
pub fn tokenize(input: &str) -> Result<Vec<Token>, TokenizeError> {
    Lexer::new(input).run()
}

/// Tokenizes a command string and checks the pipeline structure.
pub fn parse(input: &str) -> Result<Pipeline, String> {
    let tokens = tokenize(input).map_err(|e| e.to_string())?;
    build(tokens)
}

/// Builds a pipeline from the argv array of `shell_execute`.
///
/// Elements that are exactly `|`, `<`, `>` or `>>` are operators; every other element is a word,
/// verbatim. An element that is exactly `&`, or that contains `;`, `&&`, `||`, a backtick or
/// a line break, is rejected with MCP Shell Server's words (`Unexpected shell operator:
/// <element>`), because a caller who sends it expects a shell to chain commands; the check
/// runs on every element before any other.
pub fn from_argv(argv: &[String]) -> Result<Pipeline, String> {
    const FRAGMENTS: [&str; 6] = [";", "&&", "||", "`", "\n", "\r"];
    if argv.is_empty() {
        return Err(
            "No command provided: give a program and its arguments, for example \
             [\"ls\", \"-l\"]"
                .to_string(),
        );
    }
    let operator = |a: &&String| a.as_str() == "&" || FRAGMENTS.iter().any(|f| a.contains(f));
    if let Some(arg) = argv.iter().find(operator) {
        let hint = match arg.as_str() {
            ";" | "&&" | "||" | "&" => {
                "commands are not run by a shell: send one command per call, or join commands \
                 with a separate \"|\" element"
            }
            _ => {
                "commands are not run by a shell, and an argument holding ;, &&, ||, a backtick \
                 or a line break is refused as MCP Shell Server refused it: pass such text \
                 through stdin or a file"
            }
        };
        return Err(format!("Unexpected shell operator: {arg} ({hint})"));
    }
    let mut tokens = Vec::with_capacity(argv.len());
    for arg in argv {
        let token = match arg.as_str() {
            "|" => Token::Pipe,
            "<" => Token::RedirIn,
            ">" => Token::RedirOut,
            ">>" => Token::RedirAppend,
            _ => Token::Word(arg.clone()),
        };
        tokens.push(token);
    }
    build(tokens)
}

const SEQUENCE_HINT: &str = "is not supported: run one command per call, or join commands with |";
const CONDITIONAL_HINT: &str =
    "is not supported: run one command per call and check its result before the next";
const BACKGROUND_HINT: &str = "is not supported: commands cannot be sent to the background \
     with &; a long command keeps running and its output can be read later";
const SUBSTITUTION_HINT: &str = "is not supported: command substitution is not available; \
     run the inner command first and use its output";
const VARIABLE_HINT: &str = "is not expanded: variables are not available; write the value \
     itself, or use single quotes to pass the text literally";
const FD_HINT: &str = "is not supported: file-descriptor redirections are not available; only \
     < file, > file and >> file are (stderr is always returned separately)";
const HEREDOC_HINT: &str = "is not supported: here-documents are not available; pass input \
     through the stdin parameter or redirect from a file with <";
const PROCESS_SUBSTITUTION_HINT: &str =
    "is not supported: process substitution is not available; use a pipeline with |";
const GROUPING_HINT: &str = "is not supported: subshells and grouping are not available; \
     quote it to pass it literally";
const NEWLINE_HINT: &str =
    "is not supported: give a single command line (one command, or one pipeline, per call)";

struct Lexer<'a> {
    input: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    word: String,
    /// A word has started, even if it is still empty (after `''`).
    in_word: bool,
    /// Byte offset where the current word started.
    word_start: usize,
    /// Some part of the current word was quoted or escaped.
    word_quoted: bool,
}

impl<'a> Lexer<'a> {
    fn new(input: &'a str) -> Lexer<'a> {
        Lexer {
            input,
            bytes: input.as_bytes(),
            pos: 0,
            tokens: Vec::new(),
            word: String::new(),
            in_word: false,
            word_start: 0,
            word_quoted: false,
        }
    }

    fn run(mut self) -> Result<Vec<Token>, TokenizeError> {
        while self.pos < self.bytes.len() {
            let at = self.pos;
            match self.bytes[at] {
                b' ' | b'\t' => {
                    self.flush();
                    self.pos += 1;
                }
                b'\n' | b'\r' | 0 => return Err(control_error(self.bytes[at], at)),
                b'|' => match self.peek(1) {
                    Some(b'|') => return Err(TokenizeError::new("||", at, CONDITIONAL_HINT)),
                    Some(b'&') => {
                        return Err(TokenizeError::new(
                            "|&",
                            at,
                            "is not supported: stderr cannot be piped; only | (stdout) is \
                             available, and stderr is always returned separately",
                        ))
                    }
                    _ => {
                        self.flush();
                        self.tokens.push(Token::Pipe);
                        self.pos += 1;
                    }
                },
                b'&' => {
                    return Err(match self.peek(1) {
                        Some(b'&') => TokenizeError::new("&&", at, CONDITIONAL_HINT),
                        Some(b'>') => TokenizeError::new("&>", at, FD_HINT),
                        _ => TokenizeError::new("&", at, BACKGROUND_HINT),
                    })
                }
                b';' => return Err(TokenizeError::new(";", at, SEQUENCE_HINT)),
                b'<' => self.redirect_in(at)?,
                b'>' => self.redirect_out(at)?,
                b'(' | b')' => {
                    let token = if self.bytes[at] == b'(' { "(" } else { ")" };
                    return Err(TokenizeError::new(token, at, GROUPING_HINT));
                }
                b'`' => return Err(TokenizeError::new("`", at, SUBSTITUTION_HINT)),
                b'#' if !self.in_word => {
                    return Err(TokenizeError::new(
                        "#",
                        at,
                        "would start a comment, which is not supported: quote it ('#') to \
                         pass it literally",
                    ))
                }
                b'$' => {
                    self.check_dollar(at, false)?;
                    self.push_char('$', at);
                    self.pos += 1;
                }
                b'\'' => self.single_quoted(at)?,
                b'"' => self.double_quoted(at)?,
                b'\\' => {
                    let Some(c) = self.input[at + 1..].chars().next() else {
                        return Err(TokenizeError::new(
                            "\\",
                            at,
                            "ends the command: a backslash must be followed by the character \
                             it escapes",
                        ));
                    };
                    if matches!(c, '\n' | '\r' | '\0') {
                        return Err(control_error(c as u8, at + 1));
                    }
                    self.push_char(c, at);
                    self.word_quoted = true;
                    self.pos += 1 + c.len_utf8();
                }
                _ => {
                    // The byte starts a character that has no special meaning.
                    let Some(c) = self.input[at..].chars().next() else {
                        break;
                    };
                    self.push_char(c, at);
                    self.pos += c.len_utf8();
                }
            }
        }
        self.flush();
        Ok(self.tokens)
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn push_char(&mut self, c: char, at: usize) {
        if !self.in_word {
            self.in_word = true;
            self.word_start = at;
            self.word_quoted = false;
        }
        self.word.push(c);
    }

    fn start_quoted(&mut self, at: usize) {
        if !self.in_word {
            self.in_word = true;
            self.word_start = at;
        }
        self.word_quoted = true;
    }

    fn flush(&mut self) {
        if self.in_word {
            self.tokens
                .push(Token::Word(std::mem::take(&mut self.word)));
            self.in_word = false;
            self.word_quoted = false;
        }
    }

    /// Rejects `2>`, `10<` and `{name}>`: a shell would read the word as a file descriptor.
    fn check_fd_prefix(&self, operator: &str) -> Result<(), TokenizeError> {
        if !self.in_word || self.word_quoted || self.word.is_empty() {
            return Ok(());
        }
        let digits = self.word.bytes().all(|b| b.is_ascii_digit());
        let named = self.word.len() > 2 && self.word.starts_with('{') && self.word.ends_with('}');
        if digits || named {
            let token = format!("{}{}", self.word, operator);
            return Err(TokenizeError::new(token, self.word_start, FD_HINT));
        }
        Ok(())
    }

    fn redirect_in(&mut self, at: usize) -> Result<(), TokenizeError> {
        self.check_fd_prefix("<")?;
        match self.peek(1) {
            Some(b'<') => {
                let token = if self.peek(2) == Some(b'<') {
                    "<<<"
                } else {
                    "<<"
                };
                return Err(TokenizeError::new(token, at, HEREDOC_HINT));
            }
            Some(b'>') => {
                return Err(TokenizeError::new(
                    "<>",
                    at,
                    "is not supported: read-write redirection is not available; use < file \
                     or > file",
                ))
            }
            Some(b'&') => return Err(TokenizeError::new("<&", at, FD_HINT)),
            Some(b'(') => return Err(TokenizeError::new("<(", at, PROCESS_SUBSTITUTION_HINT)),
            _ => (),
        }
        self.flush();
        self.tokens.push(Token::RedirIn);
        self.pos += 1;
        Ok(())
    }

    fn redirect_out(&mut self, at: usize) -> Result<(), TokenizeError> {
        let (operator, width) = if self.peek(1) == Some(b'>') {
            (">>", 2)
        } else {
            (">", 1)
        };
        self.check_fd_prefix(operator)?;
        match self.peek(width) {
            Some(b'|') => {
                return Err(TokenizeError::new(
                    format!("{operator}|"),
                    at,
                    "is not supported: use > file (existing files are overwritten) or >> file",
                ))
            }
            Some(b'&') => return Err(TokenizeError::new(format!("{operator}&"), at, FD_HINT)),
            Some(b'(') if width == 1 => {
                return Err(TokenizeError::new(">(", at, PROCESS_SUBSTITUTION_HINT))
            }
            _ => (),
        }
        self.flush();
        self.tokens.push(if width == 2 {
            Token::RedirAppend
        } else {
            Token::RedirOut
        });
        self.pos += width;
        Ok(())
    }

    /// Rejects a `$` that a shell would expand; `at` is the offset of the `$`.
    fn check_dollar(&self, at: usize, in_double_quotes: bool) -> Result<(), TokenizeError> {
        let Some(&next) = self.bytes.get(at + 1) else {
            return Ok(());
        };
        match next {
            b'(' => {
                let token = if self.bytes.get(at + 2) == Some(&b'(') {
                    "$(("
                } else {
                    "$("
                };
                Err(TokenizeError::new(token, at, SUBSTITUTION_HINT))
            }
            b'{' => Err(TokenizeError::new("${", at, VARIABLE_HINT)),
            b'[' => Err(TokenizeError::new("$[", at, SUBSTITUTION_HINT)),
            b'\'' | b'"' if !in_double_quotes => Err(TokenizeError::new(
                format!("${}", next as char),
                at,
                "is not supported: $'..' and $\"..\" quoting are not available; use plain \
                 single or double quotes",
            )),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let name_len = self.bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                let name = &self.input[at..at + 1 + name_len];
                Err(TokenizeError::new(name, at, VARIABLE_HINT))
            }
            b'0'..=b'9' | b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-' => Err(
                TokenizeError::new(format!("${}", next as char), at, VARIABLE_HINT),
            ),
            _ => Ok(()),
        }
    }

    fn single_quoted(&mut self, at: usize) -> Result<(), TokenizeError> {
        self.start_quoted(at);
        let body_start = at + 1;
        let Some(len) = memchr::memchr(b'\'', &self.bytes[body_start..]) else {
            return Err(unclosed_quote('\'', at));
        };
        let body = &self.input[body_start..body_start + len];
        if let Some(i) = memchr::memchr3(b'\n', b'\r', 0, body.as_bytes()) {
            return Err(control_error(body.as_bytes()[i], body_start + i));
        }
        self.word.push_str(body);
        self.pos = body_start + len + 1;
        Ok(())
    }

    fn double_quoted(&mut self, at: usize) -> Result<(), TokenizeError> {
        self.start_quoted(at);
        let mut i = at + 1;
        loop {
            let Some(&b) = self.bytes.get(i) else {
                return Err(unclosed_quote('"', at));
            };
            match b {
                b'"' => break,
                b'\n' | b'\r' | 0 => return Err(control_error(b, i)),
                b'`' => return Err(TokenizeError::new("`", i, SUBSTITUTION_HINT)),
                b'$' => {
                    self.check_dollar(i, true)?;
                    self.word.push('$');
                    i += 1;
                }
                b'\\' => match self.bytes.get(i + 1) {
                    Some(&e @ (b'"' | b'\\' | b'$' | b'`')) => {
                        self.word.push(e as char);
                        i += 2;
                    }
                    Some(&e @ (b'\n' | b'\r' | 0)) => return Err(control_error(e, i + 1)),
                    _ => {
                        self.word.push('\\');
                        i += 1;
                    }
                },
                _ => {
                    let Some(c) = self.input[i..].chars().next() else {
                        return Err(unclosed_quote('"', at));
                    };
                    self.word.push(c);
                    i += c.len_utf8();
                }
            }
        }
        self.pos = i + 1;
        Ok(())
    }
}

fn control_error(byte: u8, at: usize) -> TokenizeError {
    match byte {
        b'\n' => TokenizeError::new("\\n", at, format!("(a newline) {NEWLINE_HINT}")),
        b'\r' => TokenizeError::new("\\r", at, format!("(a carriage return) {NEWLINE_HINT}")),
        _ => TokenizeError::new("\\0", at, "(a NUL character) is not allowed in a command"),
    }
}

fn unclosed_quote(quote: char, at: usize) -> TokenizeError {
    TokenizeError::new(
        quote.to_string(),
        at,
        format!("is never closed: add the matching {quote} (quotes must be balanced)"),
    )
}

/// Checks the structure of a token stream and groups it into stages.
fn build(tokens: Vec<Token>) -> Result<Pipeline, String> {
    if tokens.is_empty() {
        return Err(
            "Empty command: give a program and its arguments, for example `ls -l`".to_string(),
        );
    }
    let stage_count = 1 + tokens.iter().filter(|t| **t == Token::Pipe).count();
    let mut pipeline = Pipeline {
        stages: Vec::with_capacity(stage_count),
        stdin_path: None,
        stdout: None,
    };
    let mut stage: Vec<String> = Vec::new();
    let mut stage_had_redirect = false;
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        let operator = match token {
            Token::Word(word) => {
                stage.push(word);
                continue;
            }
            Token::Pipe => {
                if stage.is_empty() {
                    return Err(empty_stage_message(stage_had_redirect, "before"));
                }
                pipeline.stages.push(std::mem::take(&mut stage));
                stage_had_redirect = false;
                continue;
            }
            Token::RedirIn => "<",
            Token::RedirOut => ">",
            Token::RedirAppend => ">>",
        };
        stage_had_redirect = true;
        let target = match iter.next() {
            Some(Token::Word(path)) => path,
            Some(_) => {
                return Err(format!(
                    "Invalid redirection target: operator found after {operator}; give a file \
                     name, for example `sort data.txt > sorted.txt`"
                ))
            }
            None if operator == "<" => {
                return Err(
                    "Missing path for input redirection: < must be followed by a file \
                            name, for example `sort < data.txt`"
                        .to_string(),
                )
            }
            None => {
                return Err(format!(
                    "Missing path for output redirection: {operator} must be followed by a \
                     file name, for example `sort data.txt {operator} sorted.txt`"
                ))
            }
        };
        if target.is_empty() {
            return Err(format!(
                "empty redirection target: {operator} must be followed by a non-empty file name"
            ));
        }
        let stage_index = pipeline.stages.len();
        if operator == "<" {
            if pipeline.stdin_path.is_some() {
                return Err("only one input redirection (<) is supported per command".to_string());
            }
            if stage_index != 0 {
                return Err(
                    "input redirection (<) is only supported in the first command of a \
                            pipeline, for example `sort < data.txt | uniq`"
                        .to_string(),
                );
            }
            pipeline.stdin_path = Some(target);
        } else {
            if pipeline.stdout.is_some() {
                return Err(
                    "only one output redirection (> or >>) is supported per command".to_string(),
                );
            }
            if stage_index + 1 != stage_count {
                return Err(format!(
                    "output redirection ({operator}) is only supported in the last command of a \
                     pipeline, for example `sort data.txt | uniq {operator} out.txt`"
                ));
            }
            pipeline.stdout = Some(Redirect {
                path: target,
                append: operator == ">>",
            });
        }
    }
    if stage.is_empty() {
        if pipeline.stages.is_empty() {
            return Err(empty_stage_message(stage_had_redirect, "alone"));
        }
        return Err(empty_stage_message(stage_had_redirect, "after"));
    }
    pipeline.stages.push(stage);
    Ok(pipeline)
}

fn empty_stage_message(had_redirect: bool, place: &str) -> String {
    if had_redirect {
        return "Empty command: a redirection needs a command, for example `sort < data.txt`"
            .to_string();
    }
    match place {
        "before" => "Empty command before pipe operator: put a command on both sides of |, for \
                     example `ls | wc -l`"
            .to_string(),
        "after" => "Empty command after pipe operator: put a command on both sides of |, for \
                    example `ls | wc -l`"
            .to_string(),
        _ => "Empty command: give a program and its arguments, for example `ls -l`".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a tokenizer case expects: the tokens in a compact notation, or an error substring.
    enum Expect {
        /// Tokens written as words, with `|`, `<`, `>` and `>>` standing for the operators and
        /// a word wrapped in brackets (`[>]`) for a word whose text is an operator.
        Tokens(&'static [&'static str]),
        /// A substring of the error message.
        Err(&'static str),
    }
    use Expect::{Err as E, Tokens as T};

    fn render(tokens: &[Token]) -> Vec<String> {
        tokens
            .iter()
            .map(|t| match t {
                Token::Word(w) if matches!(w.as_str(), "|" | "<" | ">" | ">>") => format!("[{w}]"),
                Token::Word(w) => w.clone(),
                Token::Pipe => "|".to_string(),
                Token::RedirIn => "<".to_string(),
                Token::RedirOut => ">".to_string(),
                Token::RedirAppend => ">>".to_string(),
            })
            .collect()
    }

    fn check(input: &str, expect: &Expect) {
        let got = tokenize(input);
        match (expect, got) {
            (T(want), Ok(tokens)) => {
                assert_eq!(render(&tokens), *want, "input: {input:?}");
            }
            (E(want), Err(e)) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(want),
                    "input {input:?}: {msg:?} lacks {want:?}"
                );
            }
            (T(want), Err(e)) => panic!("input {input:?}: expected {want:?}, got error {e}"),
            (E(want), Ok(tokens)) => {
                panic!(
                    "input {input:?}: expected error {want:?}, got {:?}",
                    render(&tokens)
                )
            }
        }
    }

    const CASES: &[(&str, Expect)] = &[
        // Plain words and whitespace.
        ("ls", T(&["ls"])),
        ("ls -l", T(&["ls", "-l"])),
        ("  ls   -l  ", T(&["ls", "-l"])),
        ("ls\t-la\t/tmp", T(&["ls", "-la", "/tmp"])),
        ("", T(&[])),
        ("   ", T(&[])),
        // Single quotes.
        ("echo 'a b'", T(&["echo", "a b"])),
        ("echo 'a\"b'", T(&["echo", "a\"b"])),
        ("echo 'a\\nb'", T(&["echo", "a\\nb"])),
        ("echo '$HOME'", T(&["echo", "$HOME"])),
        ("echo '`id`'", T(&["echo", "`id`"])),
        ("echo 'a;b|c&d'", T(&["echo", "a;b|c&d"])),
        ("echo '>'", T(&["echo", "[>]"])),
        ("echo '|'", T(&["echo", "[|]"])),
        ("echo ''", T(&["echo", ""])),
        ("echo '' ''", T(&["echo", "", ""])),
        ("echo a''", T(&["echo", "a"])),
        ("echo 'unclosed", E("`'` at byte 5 is never closed")),
        // Double quotes.
        ("echo \"a b\"", T(&["echo", "a b"])),
        ("echo \"\"", T(&["echo", ""])),
        ("echo \"a\\\"b\"", T(&["echo", "a\"b"])),
        ("echo \"a\\\\b\"", T(&["echo", "a\\b"])),
        ("echo \"\\$HOME\"", T(&["echo", "$HOME"])),
        ("echo \"\\`x\\`\"", T(&["echo", "`x`"])),
        ("echo \"a\\nb\"", T(&["echo", "a\\nb"])),
        ("echo \"it's\"", T(&["echo", "it's"])),
        ("echo \"a|b>c\"", T(&["echo", "a|b>c"])),
        ("echo \"$HOME\"", E("`$HOME` at byte 6 is not expanded")),
        ("echo \"$(id)\"", E("`$(` at byte 6")),
        ("echo \"`id`\"", E("``` at byte 6")),
        ("echo \"cost: 5$\"", T(&["echo", "cost: 5$"])),
        ("echo \"unclosed", E("`\"` at byte 5 is never closed")),
        // Joining adjacent parts.
        ("a'b'\"c\"", T(&["abc"])),
        ("'a'\"b\"c d", T(&["abc", "d"])),
        ("--name='x y'", T(&["--name=x y"])),
        // Backslash outside quotes.
        ("echo a\\ b", T(&["echo", "a b"])),
        ("echo \\'", T(&["echo", "'"])),
        ("echo \\|", T(&["echo", "[|]"])),
        ("echo \\;", T(&["echo", ";"])),
        ("echo \\$HOME", T(&["echo", "$HOME"])),
        ("echo \\\\", T(&["echo", "\\"])),
        ("echo a\\", E("`\\` at byte 6 ends the command")),
        // Unicode.
        ("echo héllo wörld", T(&["echo", "héllo", "wörld"])),
        ("echo '日本語 テキスト'", T(&["echo", "日本語 テキスト"])),
        ("grep ü\\ é", T(&["grep", "ü é"])),
        ("echo a\u{a0}b", T(&["echo", "a\u{a0}b"])),
        ("echo 🦀|wc", T(&["echo", "🦀", "|", "wc"])),
        // Operators, spaced and glued.
        ("a | b", T(&["a", "|", "b"])),
        ("a|b", T(&["a", "|", "b"])),
        ("a|b|c", T(&["a", "|", "b", "|", "c"])),
        ("sort >out", T(&["sort", ">", "out"])),
        ("sort>out", T(&["sort", ">", "out"])),
        ("sort >>out", T(&["sort", ">>", "out"])),
        ("sort<in", T(&["sort", "<", "in"])),
        ("< in sort", T(&["<", "in", "sort"])),
        ("'a'|'b'", T(&["a", "|", "b"])),
        ("echo \"x\">'y z'", T(&["echo", "x", ">", "y z"])),
        ("a2>b", T(&["a2", ">", "b"])),
        ("echo '2'>x", T(&["echo", "2", ">", "x"])),
        ("echo \\2>x", T(&["echo", "2", ">", "x"])),
        // Nothing is expanded.
        ("ls *.rs", T(&["ls", "*.rs"])),
        ("ls ~/x", T(&["ls", "~/x"])),
        ("echo {a,b}", T(&["echo", "{a,b}"])),
        ("echo a$", T(&["echo", "a$"])),
        ("echo $", T(&["echo", "$"])),
        ("echo $.", T(&["echo", "$."])),
        ("echo a#b", T(&["echo", "a#b"])),
        ("echo '#'", T(&["echo", "#"])),
        ("echo !x", T(&["echo", "!x"])),
        // Rejected sequencing and background operators.
        (
            "ls; rm x",
            E("`;` at byte 2 is not supported: run one command per call"),
        ),
        ("ls;", E("`;` at byte 2")),
        ("a && b", E("`&&` at byte 2")),
        ("a&&b", E("`&&` at byte 1")),
        ("a || b", E("`||` at byte 2")),
        ("sleep 1 &", E("`&` at byte 8")),
        ("a & b", E("`&` at byte 2")),
        ("a |& b", E("`|&` at byte 2")),
        // Rejected substitutions and expansions.
        (
            "echo `id`",
            E("``` at byte 5 is not supported: command substitution"),
        ),
        ("echo $(id)", E("`$(` at byte 5 is not supported")),
        ("echo $((1+2))", E("`$((` at byte 5")),
        ("echo ${HOME}", E("`${` at byte 5 is not expanded")),
        ("echo $HOME", E("`$HOME` at byte 5 is not expanded")),
        ("cat $HOME/.ssh/id_rsa", E("`$HOME` at byte 4")),
        ("echo $1", E("`$1` at byte 5")),
        ("echo $?", E("`$?` at byte 5")),
        ("echo $'a\\nb'", E("`$'` at byte 5")),
        ("echo $[1+1]", E("`$[` at byte 5")),
        ("echo (a)", E("`(` at byte 5")),
        ("(ls)", E("`(` at byte 0")),
        ("echo a)", E("`)` at byte 6")),
        ("ls # comment", E("`#` at byte 3 would start a comment")),
        // Rejected control characters, also inside quotes.
        ("ls\nrm x", E("`\\n` at byte 2 (a newline)")),
        ("echo 'a\nb'", E("`\\n` at byte 7")),
        ("echo \"a\nb\"", E("`\\n` at byte 7")),
        ("echo a\\\nb", E("`\\n` at byte 7")),
        ("ls\r", E("`\\r` at byte 2 (a carriage return)")),
        ("ls\0x", E("`\\0` at byte 2 (a NUL character)")),
        ("echo 'a\0b'", E("`\\0` at byte 7")),
        // Rejected redirection forms.
        (
            "cat <<EOF",
            E("`<<` at byte 4 is not supported: here-documents"),
        ),
        ("cat <<< hi", E("`<<<` at byte 4")),
        ("cat <> f", E("`<>` at byte 4")),
        ("echo >| f", E("`>|` at byte 5")),
        ("echo >>| f", E("`>>|` at byte 5")),
        (
            "echo x 2> err",
            E("`2>` at byte 7 is not supported: file-descriptor"),
        ),
        ("echo x 2>&1", E("`2>` at byte 7")),
        ("echo x 2>>err", E("`2>>` at byte 7")),
        ("echo x 1>out", E("`1>` at byte 7")),
        ("cat 0<in", E("`0<` at byte 4")),
        ("echo x >&2", E("`>&` at byte 7")),
        ("echo x &> f", E("`&>` at byte 7")),
        ("cat <&3", E("`<&` at byte 4")),
        ("echo {fd}>x", E("`{fd}>` at byte 5")),
        (
            "diff <(ls) x",
            E("`<(` at byte 5 is not supported: process substitution"),
        ),
        ("tee >(wc)", E("`>(` at byte 4")),
        // Redirection tokens glued to quotes.
        ("sort\">\"x", T(&["sort>x"])),
        ("sort \\> x", T(&["sort", "[>]", "x"])),
        ("sort '>>' x", T(&["sort", "[>>]", "x"])),
    ];

    #[test]
    fn tokenizer_table() {
        assert!(CASES.len() >= 60, "only {} cases", CASES.len());
        for (input, expect) in CASES {
            check(input, expect);
        }
    }

    #[test]
    fn error_accessors() {
        let Err(e) = tokenize("echo a; b") else {
            panic!("expected an error");
        };
        assert_eq!(e.token(), ";");
        assert_eq!(e.offset(), 6);
        assert_eq!(
            e.to_string(),
            "`;` at byte 6 is not supported: run one command per call, or join commands with |"
        );
    }

    fn stages(p: &Pipeline) -> Vec<Vec<&str>> {
        p.stages
            .iter()
            .map(|s| s.iter().map(String::as_str).collect())
            .collect()
    }

    fn check_parse(
        input: &str,
        want_stages: &[&[&str]],
        want_in: Option<&str>,
        want_out: Option<(&str, bool)>,
    ) {
        let p = match parse(input) {
            Ok(p) => p,
            Err(e) => panic!("input {input:?}: {e}"),
        };
        assert_eq!(stages(&p), want_stages, "input {input:?}");
        assert_eq!(p.stdin_path.as_deref(), want_in, "input {input:?}");
        let out = p.stdout.as_ref().map(|r| (r.path.as_str(), r.append));
        assert_eq!(out, want_out, "input {input:?}");
    }

    fn check_parse_err(input: &str, want: &str) {
        match parse(input) {
            Ok(p) => panic!("input {input:?}: expected error {want:?}, got {p:?}"),
            Err(e) => assert!(e.contains(want), "input {input:?}: {e:?} lacks {want:?}"),
        }
    }

    #[test]
    fn parse_valid() {
        check_parse("ls -l", &[&["ls", "-l"]], None, None);
        check_parse("ls | wc -l", &[&["ls"], &["wc", "-l"]], None, None);
        check_parse("sort < in", &[&["sort"]], Some("in"), None);
        check_parse("< in sort", &[&["sort"]], Some("in"), None);
        check_parse("sort <in -r", &[&["sort", "-r"]], Some("in"), None);
        check_parse("sort > out", &[&["sort"]], None, Some(("out", false)));
        check_parse("sort >> out", &[&["sort"]], None, Some(("out", true)));
        check_parse(">out sort x", &[&["sort", "x"]], None, Some(("out", false)));
        check_parse(
            "sort < in | uniq -c | sort -rn > out",
            &[&["sort"], &["uniq", "-c"], &["sort", "-rn"]],
            Some("in"),
            Some(("out", false)),
        );
        check_parse("a|b>c", &[&["a"], &["b"]], None, Some(("c", false)));
        check_parse("echo '' x", &[&["echo", "", "x"]], None, None);
        check_parse("grep 'a|b' f", &[&["grep", "a|b", "f"]], None, None);
    }

    #[test]
    fn parse_invalid() {
        check_parse_err("", "Empty command: give a program");
        check_parse_err("   ", "Empty command");
        check_parse_err("| wc", "Empty command before pipe operator");
        check_parse_err("a | | b", "Empty command before pipe operator");
        check_parse_err("a ||b", "`||` at byte 2");
        check_parse_err("ls |", "Empty command after pipe operator");
        check_parse_err("sort >", "Missing path for output redirection");
        check_parse_err("sort >>", "Missing path for output redirection: >>");
        check_parse_err("sort <", "Missing path for input redirection");
        check_parse_err(
            "sort > | x",
            "Invalid redirection target: operator found after >",
        );
        check_parse_err(
            "sort < > x",
            "Invalid redirection target: operator found after <",
        );
        check_parse_err("sort > ''", "empty redirection target");
        check_parse_err("sort < a < b", "only one input redirection");
        check_parse_err("sort > a > b", "only one output redirection");
        check_parse_err("sort > a >> b", "only one output redirection");
        check_parse_err("a | sort < in", "only supported in the first command");
        check_parse_err("sort > out | wc", "only supported in the last command");
        check_parse_err("< in", "Empty command: a redirection needs a command");
        check_parse_err("a | > out", "Empty command: a redirection needs a command");
        check_parse_err("> out | b", "only supported in the last command");
        check_parse_err("ls; ls", "`;` at byte 2");
    }

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn from_argv_cases() {
        let p = from_argv(&argv(&["ls", "-l", "|", "grep", "a|b", ">", "out"]));
        let Ok(p) = p else {
            panic!("expected success: {p:?}");
        };
        assert_eq!(stages(&p), vec![vec!["ls", "-l"], vec!["grep", "a|b"]]);
        assert_eq!(
            p.stdout,
            Some(Redirect {
                path: "out".to_string(),
                append: false
            })
        );

        let Ok(p) = from_argv(&argv(&["sort", "<", "in", "2>", "$HOME", "'q'", ""])) else {
            panic!("expected success");
        };
        assert_eq!(stages(&p), vec![vec!["sort", "2>", "$HOME", "'q'", ""]]);
        assert_eq!(p.stdin_path.as_deref(), Some("in"));

        let Ok(p) = from_argv(&argv(&["cat", ">>", "log"])) else {
            panic!("expected success");
        };
        assert_eq!(p.stdout.map(|r| r.append), Some(true));

        let cases: &[(&[&str], &str)] = &[
            (&[], "No command provided"),
            (&["|", "wc"], "Empty command before pipe operator"),
            (&["echo", "a;b"], "Unexpected shell operator: a;b"),
            (&["echo", "x&&y"], "Unexpected shell operator: x&&y"),
            (&["grep", "a||b", "f"], "Unexpected shell operator: a||b"),
            (&["echo", "`id`"], "Unexpected shell operator: `id`"),
            (&["echo", "a\nb"], "Unexpected shell operator: a\nb"),
            (&["echo", "a\rb"], "Unexpected shell operator: a\rb"),
            (
                &["cat", "f", "|", "grep", "a;b"],
                "Unexpected shell operator: a;b",
            ),
            (&["ls", "|"], "Empty command after pipe operator"),
            (&["ls", ";", "id"], "Unexpected shell operator: ;"),
            (&["ls", "&&", "id"], "Unexpected shell operator: &&"),
            (&["ls", "||", "id"], "Unexpected shell operator: ||"),
            (&["ls", "&"], "Unexpected shell operator: &"),
            (&["sort", ">"], "Missing path for output redirection"),
            (&["sort", "<"], "Missing path for input redirection"),
            (
                &["sort", ">", ">>", "x"],
                "Invalid redirection target: operator found",
            ),
            (
                &["a", "|", "b", "<", "in"],
                "only supported in the first command",
            ),
        ];
        for (items, want) in cases {
            match from_argv(&argv(items)) {
                Ok(p) => panic!("{items:?}: expected {want:?}, got {p:?}"),
                Err(e) => assert!(e.contains(want), "{items:?}: {e:?} lacks {want:?}"),
            }
        }
    }
}
