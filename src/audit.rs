//! The audit log: one JSON line per execution attempt, accepted or rejected, in both modes.
//!
//! Lines go to stderr, or are appended to `YIELDSHELL_AUDIT_LOG`. Each line is built whole
//! and written with a single `write_all` under a lock, on a file opened with `O_APPEND`, so
//! lines never interleave, also under concurrent calls. Output bodies are never logged.
//!
//! Secrets are redacted the way MCP Shell Server did it: an argument whose text (or whose
//! option name, for `--name=value` and `--name value`) contains a secret-like marker
//! (`SECRET`, `TOKEN`, `PASSWORD`, `KEY`, ...) becomes `[REDACTED]`; values of variables
//! selected by `YIELDSHELL_REDACT_ENV_REGEX` become `[REDACTED:NAME]`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::redact::Secrets;

/// Where audit lines go.
pub struct Audit {
    sink: Mutex<Option<File>>,
}

const MARKERS: &[&str] = &[
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "KEY",
    "CREDENTIAL",
    "AUTH",
];

/// Whether a name or value looks secret.
pub fn secret_like(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    MARKERS.iter().any(|m| upper.contains(m))
}

/// Redacts an argv for the log.
pub fn redact_argv(argv: &[String], secrets: &Secrets) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for (i, arg) in argv.iter().enumerate() {
        let shown = if hide_next {
            "[REDACTED]".to_string()
        } else if let Some(hidden) = hide_value(arg) {
            hidden
        } else if i > 0 && secret_like(arg) && !arg.starts_with('-') {
            "[REDACTED]".to_string()
        } else {
            secrets.redact_str(arg)
        };
        hide_next = takes_secret_value(arg);
        out.push(shown);
    }
    out
}

/// Redacts a command string (`exec`) for the log: the values of secret-looking options and
/// assignments, passwords in URLs, and the values of redacted variables. Words are split
/// at unquoted blanks; the text between them is kept as it was.
pub fn redact_command(text: &str, secrets: &Secrets) -> String {
    let mut out = String::with_capacity(text.len());
    let mut hide_next = false;
    for (gap, word) in words(text) {
        out.push_str(gap);
        if word.is_empty() {
            continue;
        }
        match hide_value(word) {
            _ if hide_next => out.push_str("[REDACTED]"),
            Some(hidden) => out.push_str(&hidden),
            None => out.push_str(word),
        }
        hide_next = takes_secret_value(word);
    }
    secrets.redact_str(&out)
}

/// An option that names a secret and takes its value as the next word (`--password X`).
fn takes_secret_value(arg: &str) -> bool {
    arg.starts_with('-') && !arg.contains('=') && secret_like(arg)
}

/// The argument with its secret part hidden, when it has one: `--token=X`,
/// `API_KEY=X` (an assignment to a secret-looking name), `scheme://user:pass@host`.
fn hide_value(arg: &str) -> Option<String> {
    if let Some((name, _)) = arg.split_once('=') {
        let bare = name.trim_start_matches(['\'', '"']);
        let is_option = bare.starts_with('-');
        let is_assignment =
            !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if (is_option || is_assignment) && secret_like(bare) {
            return Some(format!("{name}=[REDACTED]"));
        }
    }
    let scheme_end = arg.find("://")? + 3;
    let rest = &arg[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some(format!(
        "{}{}:[REDACTED]{}",
        &arg[..scheme_end],
        &rest[..colon],
        &rest[at..]
    ))
}

/// Splits a command string into (separator, word) pairs at blanks outside quotes.
fn words(text: &str) -> Vec<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let gap_start = i;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let word_start = i;
        let mut quote: Option<u8> = None;
        while i < bytes.len() {
            let b = bytes[i];
            match quote {
                Some(q) if b == q => quote = None,
                Some(b'"') if b == b'\\' => i += 1,
                Some(_) => (),
                None if b.is_ascii_whitespace() => break,
                None if b == b'\'' || b == b'"' => quote = Some(b),
                None if b == b'\\' => i += 1,
                None => (),
            }
            i += 1;
        }
        let i_clamped = i.min(bytes.len());
        pieces.push((&text[gap_start..word_start], &text[word_start..i_clamped]));
        i = i_clamped;
    }
    pieces
}

impl Audit {
    /// Opens the sink: the file (appending, created with mode 0600) or stderr.
    pub fn open(path: Option<&Path>) -> Result<Audit, String> {
        let file = match path {
            Some(p) => {
                use std::os::unix::fs::OpenOptionsExt;
                let f = OpenOptions::new()
                    .append(true)
                    .create(true)
                    .mode(0o600)
                    .open(p)
                    .map_err(|e| {
                        format!("cannot open YIELDSHELL_AUDIT_LOG={}: {e}", p.display())
                    })?;
                Some(f)
            }
            None => None,
        };
        Ok(Audit {
            sink: Mutex::new(file),
        })
    }

    /// Writes one record, adding the time.
    pub fn record(&self, mut fields: Map<String, Value>) {
        fields.insert(
            "time".into(),
            Value::from(crate::stamp::rfc3339(SystemTime::now())),
        );
        fields.insert("event".into(), Value::from("execution"));
        let mut line = serde_json::to_vec(&Value::Object(fields)).unwrap_or_default();
        line.push(b'\n');
        let mut sink = self.sink.lock();
        let result = match sink.as_mut() {
            Some(f) => f.write_all(&line),
            None => {
                let mut prefixed = b"yieldshell: AUDIT ".to_vec();
                prefixed.extend_from_slice(&line);
                std::io::stderr().lock().write_all(&prefixed)
            }
        };
        if let Err(e) = result {
            crate::warn!("cannot write the audit log: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_redaction() {
        let s = Secrets::new([("GH_TOKEN", "ghp_abcdefghijkl")]);
        let argv: Vec<String> = [
            "curl",
            "--token",
            "abc",
            "--api-key=xyz",
            "-H",
            "x: ghp_abcdefghijkl",
            "MY_SECRET",
            "plain",
            "https://user:pw@host/path",
            "API_KEY=x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            redact_argv(&argv, &s),
            vec![
                "curl",
                "--token",
                "[REDACTED]",
                "--api-key=[REDACTED]",
                "-H",
                "x: [REDACTED:GH_TOKEN]",
                "[REDACTED]",
                "plain",
                "https://user:[REDACTED]@host/path",
                "API_KEY=[REDACTED]",
            ]
        );
    }

    #[test]
    fn command_string_redaction() {
        let s = Secrets::new([("GH_TOKEN", "ghp_abcdefghijkl")]);
        let check = |text: &str, expected: &str| {
            assert_eq!(redact_command(text, &s), expected, "{text}");
        };
        check(
            "curl --password hunter2 -u x https://bob:pa55@example.com/x",
            "curl --password [REDACTED] -u x https://bob:[REDACTED]@example.com/x",
        );
        check(
            "API_KEY=abc123 ./deploy --token=xyz  --Api-Key 'two words'",
            "API_KEY=[REDACTED] ./deploy --token=[REDACTED]  --Api-Key [REDACTED]",
        );
        check("echo ghp_abcdefghijkl", "echo [REDACTED:GH_TOKEN]");
        check(
            "export MY_SECRET=\"a b\"; echo done",
            "export MY_SECRET=[REDACTED] echo done",
        );
        // Ordinary words that merely contain a marker stay readable in a command string.
        check("echo monkey keyboard", "echo monkey keyboard");
        check(
            "git clone https://example.com/a@b",
            "git clone https://example.com/a@b",
        );
    }
}
