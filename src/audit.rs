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

use crate::jsonrpc::write_str;
use crate::redact::Secrets;

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
#[derive(Debug, Default)]
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
                write_str(&mut o.0, a);
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

    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        write_str(&mut self.0, value);
    }

    fn num(&mut self, key: &str, value: i64) {
        self.key(key);
        self.0.extend_from_slice(value.to_string().as_bytes());
    }
}

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
        } else if let Some((name, _)) = arg
            .split_once('=')
            .filter(|(n, _)| n.starts_with('-') && secret_like(n))
        {
            format!("{name}=[REDACTED]")
        } else if i > 0 && secret_like(arg) && !arg.starts_with('-') {
            "[REDACTED]".to_string()
        } else {
            secrets.redact_str(arg)
        };
        hide_next = arg.starts_with('-') && !arg.contains('=') && secret_like(arg);
        out.push(shown);
    }
    out
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
    pub fn record(&self, record: &Record) {
        let mut line = record.to_json(&crate::stamp::rfc3339(SystemTime::now()));
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
                "plain"
            ]
        );
    }
}
