//! The audit log: one JSON line per execution attempt, accepted or rejected, in both modes.
//!
//! Lines go to stderr, or are appended to `YIELDSHELL_AUDIT_LOG`. Each line is built whole
//! and queued for a writer thread of its own (`base::sink`: a FIFO without a reader, a slow
//! reader or a full disk cost lost lines, counted and reported, never a call's answer), or
//! for the `stderr` thread; lines never interleave and every line in the file is whole.
//! Output bodies are never logged.
//!
//! Secrets are redacted the way MCP Shell Server did it: an argument whose text (or whose
//! option name, for `--name=value` and `--name value`) contains a secret-like marker
//! (`SECRET`, `TOKEN`, `PASSWORD`, `KEY`, ...) becomes `[REDACTED]`; values of variables
//! selected by `YIELDSHELL_REDACT_ENV_REGEX` become `[REDACTED:NAME]`.

use std::path::Path;
use std::time::SystemTime;

use crate::base::json::{write_str, write_str_visible};
use crate::base::sink::LineFile;
use crate::policy::redact::Secrets;

/// Which redirections a trusted-mode command line used.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redirections {
    /// `<`.
    pub stdin: bool,
    /// `>`.
    pub stdout: bool,
    /// `>>`.
    pub stdout_append: bool,
}

/// One execution attempt, as logged. Fields left `None` are not written; `exit_code` and
/// `signal` hold `Some(None)` for "known to be none" (written as `null`).
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// `exec` or `shell_execute`.
    pub tool: &'static str,
    /// `shell` or `trusted`.
    pub mode: &'static str,
    /// The command line (redacted), for `exec`.
    pub command: Option<String>,
    /// The argv (redacted), for `shell_execute`.
    pub argv: Option<Vec<String>>,
    /// The working directory, resolved when it could be.
    pub directory: Option<String>,
    /// `exec`'s runtime limit.
    pub timeout_ms: Option<u64>,
    /// `shell_execute`'s timeout in seconds.
    pub timeout: Option<u64>,
    /// The output limit, when one applies.
    pub output_limit: Option<u64>,
    /// Redirections (trusted mode).
    pub redirections: Option<Redirections>,
    /// Time from the call to its answer.
    pub duration_ms: u64,
    /// `success`, `rejected`, `backgrounded`, `timeout`, `process_error`, `output_cap`,
    /// `cancelled`.
    pub result_type: &'static str,
    /// The record started, if any.
    pub process_id: Option<String>,
    /// The exit code.
    pub exit_code: Option<Option<i32>>,
    /// The signal that ended the leader, by name.
    pub signal: Option<Option<String>>,
    /// Bytes of stdout.
    pub stdout_bytes: Option<u64>,
    /// Bytes of stderr.
    pub stderr_bytes: Option<u64>,
    /// Why the call was refused.
    pub rejection_reason: Option<String>,
    /// Why the command failed.
    pub error: Option<String>,
    /// The person approved the call (`approved`), or an earlier approval with `remember`
    /// covers it (`remembered`).
    pub approval: Option<&'static str>,
    /// The protected names the call created (`YIELDSHELL_PROTECTED_PATHS`), and what
    /// was protected when a write was refused.
    pub protected: Option<String>,
}

impl Record {
    /// The record as one JSON object (without a newline).
    fn to_json(&self, time: &str) -> Vec<u8> {
        let mut o = Obj(b"{".to_vec());
        o.str("event", "execution");
        o.str("time", time);
        o.str("tool", self.tool);
        o.str("mode", self.mode);
        if let Some(c) = &self.command {
            o.str("command", c);
        }
        if let Some(argv) = &self.argv {
            o.key("argv");
            o.0.push(b'[');
            for (i, a) in argv.iter().enumerate() {
                if i > 0 {
                    o.0.push(b',');
                }
                write_str_visible(&mut o.0, a);
            }
            o.0.push(b']');
        }
        if let Some(d) = &self.directory {
            o.str("directory", d);
        }
        if let Some(t) = self.timeout_ms {
            o.num("timeout_ms", t as i64);
        }
        if let Some(t) = self.timeout {
            o.num("timeout", t as i64);
        }
        if let Some(l) = self.output_limit {
            o.num("output_limit", l as i64);
        }
        if let Some(r) = self.redirections {
            o.key("redirections");
            o.0.extend_from_slice(
                format!(
                    "{{\"stdin\":{},\"stdout\":{},\"stdout_append\":{}}}",
                    r.stdin, r.stdout, r.stdout_append
                )
                .as_bytes(),
            );
        }
        o.num("duration_ms", self.duration_ms as i64);
        o.str("result_type", self.result_type);
        if let Some(p) = &self.process_id {
            o.str("process_id", p);
        }
        if let Some(code) = self.exit_code {
            o.key("exit_code");
            match code {
                Some(c) => o.0.extend_from_slice(c.to_string().as_bytes()),
                None => o.0.extend_from_slice(b"null"),
            }
        }
        if let Some(signal) = &self.signal {
            o.key("signal");
            match signal {
                Some(s) => write_str(&mut o.0, s),
                None => o.0.extend_from_slice(b"null"),
            }
        }
        if let Some(n) = self.stdout_bytes {
            o.num("stdout_bytes", n as i64);
        }
        if let Some(n) = self.stderr_bytes {
            o.num("stderr_bytes", n as i64);
        }
        if let Some(r) = &self.rejection_reason {
            o.str("rejection_reason", r);
        }
        if let Some(e) = &self.error {
            o.str("error", e);
        }
        if let Some(a) = self.approval {
            o.str("approval", a);
        }
        if let Some(p) = &self.protected {
            o.str("protected", p);
        }
        o.0.push(b'}');
        o.0
    }
}

/// One step of putting a refused call to the person (`YIELDSHELL_APPROVALS=ask`): the
/// question, the answer, or why no answer counts. Its line has `"event":"approval"`.
#[derive(Clone, Debug, Default)]
pub struct ApprovalStep<'a> {
    /// `exec` or `shell_execute`.
    pub tool: &'static str,
    /// `asked`, `answered`, `remembered` (run without asking), `timed_out`, `cancelled`
    /// (the call was), `refused_state` (a 2026-07-28 state that does not verify),
    /// `client_error` (the client answered the question with an error).
    pub step: &'static str,
    /// `elicitation` (legacy eras) or `input_required` (2026-07-28).
    pub via: &'static str,
    /// The command as asked about (redacted here).
    pub command: &'a str,
    /// The working directory.
    pub directory: &'a str,
    /// The rule that refused the call (`Rule::name`).
    pub rule: &'static str,
    /// The person's answer: `accept`, `decline` or `cancel`.
    pub answer: Option<&'a str>,
    /// Whether the answer asked to remember the approval.
    pub remember: bool,
    /// More, in words (why a state was refused, the client's error).
    pub detail: Option<&'a str>,
}

impl ApprovalStep<'_> {
    fn to_json(&self, time: &str, secrets: &Secrets) -> Vec<u8> {
        let mut o = Obj(b"{".to_vec());
        o.str("event", "approval");
        o.str("time", time);
        o.str("tool", self.tool);
        o.str("step", self.step);
        o.str("via", self.via);
        o.str("command", &redact_command(self.command, secrets));
        o.str("directory", &secrets.redact_str(self.directory));
        o.str("rule", self.rule);
        if let Some(a) = self.answer {
            o.str("answer", a);
        }
        if self.remember {
            o.key("remember");
            o.0.extend_from_slice(b"true");
        }
        if let Some(d) = self.detail {
            o.str("detail", &secrets.redact_str(d));
        }
        o.0.push(b'}');
        o.0
    }
}

/// A JSON object being written, field by field.
struct Obj(Vec<u8>);

impl Obj {
    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(b',');
        }
        write_str(&mut self.0, key);
        self.0.push(b':');
    }

    /// A text field; what a person reading the line could not see is a JSON escape.
    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        write_str_visible(&mut self.0, value);
    }

    fn num(&mut self, key: &str, value: i64) {
        self.key(key);
        self.0.extend_from_slice(value.to_string().as_bytes());
    }
}

/// Where audit lines go.
pub struct Audit {
    sink: Option<LineFile>,
    /// Without a file: whether lines go to stderr (`yieldshell call` keeps them off unless
    /// `--log` is given, so that it prints the result only).
    to_stderr: bool,
    /// The secrets in force (the server's and every kept record's): every free text of a
    /// record (a refusal's reason, an error, a directory as given) is redacted with them
    /// before it is written.
    secrets: std::sync::Arc<crate::policy::secrets::LiveSecrets>,
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
    pub fn open(
        path: Option<&Path>,
        to_stderr: bool,
        secrets: std::sync::Arc<crate::policy::secrets::LiveSecrets>,
    ) -> Result<Audit, String> {
        let file = match path {
            Some(p) => Some(LineFile::open(p).map_err(|e| {
                if e.raw_os_error() == Some(libc::ELOOP) {
                    format!(
                        "YIELDSHELL_AUDIT_LOG={} is a symbolic link, which the server does \
                             not follow (a command could have planted it): name the file itself",
                        p.display()
                    )
                } else {
                    format!("cannot open YIELDSHELL_AUDIT_LOG={}: {e}", p.display())
                }
            })?),
            None => None,
        };
        Ok(Audit {
            sink: file,
            to_stderr,
            secrets,
        })
    }

    /// Writes one record, adding the time.
    pub fn record(&self, record: &Record) {
        if !self.to_stderr && self.sink.is_none() {
            return;
        }
        let time = crate::base::stamp::rfc3339(SystemTime::now());
        let secrets = self.secrets.current();
        let mut line = if secrets.is_empty() {
            record.to_json(&time)
        } else {
            // `command` and `argv` were redacted when the record was made (with the call's
            // own secrets too); the texts that quote what a call sent are redacted here.
            let hide = |t: &Option<String>| t.as_deref().map(|t| secrets.redact_str(t));
            let texts = Record {
                directory: hide(&record.directory),
                rejection_reason: hide(&record.rejection_reason),
                error: hide(&record.error),
                ..record.clone()
            };
            texts.to_json(&time)
        };
        line.push(b'\n');
        self.write(line);
    }

    /// Writes one step of an approval, adding the time.
    pub fn approval(&self, step: &ApprovalStep<'_>) {
        if !self.to_stderr && self.sink.is_none() {
            return;
        }
        let time = crate::base::stamp::rfc3339(SystemTime::now());
        let mut line = step.to_json(&time, &self.secrets.current());
        line.push(b'\n');
        self.write(line);
    }

    fn write(&self, line: Vec<u8>) {
        match &self.sink {
            Some(file) => file.write_line(line),
            None => {
                let mut prefixed = b"yieldshell: AUDIT ".to_vec();
                prefixed.extend_from_slice(&line);
                crate::base::log::stderr_line(prefixed);
            }
        }
    }

    /// Waits up to `limit` for the audit file's queue to be written, and reports what it
    /// lost (before the process exits).
    pub fn flush(&self, limit: std::time::Duration) {
        if let Some(file) = &self.sink {
            file.flush(limit);
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
