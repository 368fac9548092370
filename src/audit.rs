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
