//! What `YIELDSHELL_LOG=debug` shows of a message: the line with every string redacted with
//! the secrets in force, and every value of an `env` object whose name selects it (the
//! message's own call secrets, which have not joined the set) hidden whole, cut to 500
//! bytes. A line over 64 KiB is named by its size only (parsing it to redact it would cost
//! more than the log is worth); a line that is not JSON is redacted as text.

use serde_json::Value;

use crate::policy::redact::Secrets;
use crate::policy::secrets::LiveSecrets;

/// The log text of `line`.
pub(super) fn text(secrets: &LiveSecrets, line: &[u8]) -> String {
    if line.len() > 64 << 10 {
        return format!("({} bytes, not shown)", line.len());
    }
    let text = match serde_json::from_slice::<Value>(line) {
        Ok(mut value) => {
            let mut overlay = Vec::new();
            env_values(&value, &mut overlay);
            redact(secrets, &mut value, &secrets.with_overlay(&overlay));
            value.to_string()
        }
        Err(_) => secrets.current().redact_str(&String::from_utf8_lossy(line)),
    };
    let mut cut = text.len().min(500);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text[..cut].to_string()
}

/// Every string of `value` redacted with `with`; the selected values of `env` objects
/// hidden whole (`[REDACTED:NAME]`), also those shorter than a redacted value must be.
fn redact(secrets: &LiveSecrets, value: &mut Value, with: &Secrets) {
    match value {
        Value::String(s) => {
            let redacted = with.redact_str(s);
            if redacted != *s {
                *s = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(secrets, v, with)),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v) {
                    ("env", Value::Object(env)) => {
                        for (name, v) in env.iter_mut() {
                            if secrets.selects(name) {
                                *v = Value::String(format!("[REDACTED:{name}]"));
                            } else {
                                redact(secrets, v, with);
                            }
                        }
                    }
                    (_, v) => redact(secrets, v, with),
                }
            }
        }
        _ => (),
    }
}

/// The name and value pairs of every `env` object in `value`.
fn env_values(value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| env_values(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                if let ("env", Value::Object(env)) = (key.as_str(), v) {
                    out.extend(
                        env.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))),
                    );
                } else {
                    env_values(v, out);
                }
            }
        }
        _ => (),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_env_secret_is_hidden_wherever_it_shows() {
        let set = LiveSecrets::new(Vec::new(), Some(regex_lite::Regex::new("TOKEN").unwrap()));
        let line = serde_json::json!({"params": {"arguments": {
            "command": "echo hunter2-long-secret",
            "env": {"MY_TOKEN": "hunter2-long-secret", "SHORT_TOKEN": "abc", "X": "y"}}}})
        .to_string();
        let shown = text(&set, line.as_bytes());
        assert!(
            !shown.contains("hunter2") && !shown.contains("\"abc\""),
            "{shown}"
        );
        assert!(
            shown.contains("echo [REDACTED:MY_TOKEN]")
                && shown.contains("[REDACTED:SHORT_TOKEN]")
                && shown.contains("\"X\":\"y\""),
            "{shown}"
        );
        let big = vec![b'x'; 70 << 10];
        assert_eq!(text(&set, &big), "(71680 bytes, not shown)");
    }
}
