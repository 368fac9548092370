//! Lenient typed access to a tool's arguments: integers as numeric strings or integral
//! floats, booleans as "true"/"false", `null` for an optional field; each error names the
//! field, the value received and what is accepted.

use serde_json::{Map, Value};

use crate::base::config::SIDE_EFFECTS;

/// Argument names of other shell servers (and slips) and ours: a call that gives the first
/// is told the second, when its tool has it.
const OTHER_NAMES: &[(&str, &str)] = &[
    // Seconds in MCP Shell Server and several others; milliseconds here.
    ("timeout", "timeout_ms"),
    ("yield", "yield_ms"),
    ("yield_time_ms", "yield_ms"),
    // shell_execute's name for the working directory, and exec's.
    ("directory", "cwd"),
    ("cwd", "directory"),
    ("workdir", "cwd"),
    ("working_directory", "cwd"),
    // shell_execute takes seconds.
    ("timeout_ms", "timeout"),
    ("cmd", "command"),
    ("input", "stdin"),
    ("execution_id", "process_id"),
    ("id", "process_id"),
    ("since", "since_seq"),
    ("max_bytes", "max_output_bytes"),
];

/// The sentence that names the arguments a call gave that its tool does not know
/// (`unknown`), with this tool's name for each where another server's name was used;
/// `known` are the tool's own. `None` when there are none.
pub(crate) fn unknown_arguments(unknown: &[String], known: &[String]) -> Option<String> {
    if unknown.is_empty() {
        return None;
    }
    let named: Vec<String> = unknown
        .iter()
        .map(|name| {
            let ours = OTHER_NAMES
                .iter()
                .find(|(other, ours)| other == name && known.iter().any(|k| k == ours));
            match ours {
                Some((_, ours)) => format!("{name} (this tool's is {ours})"),
                None => name.clone(),
            }
        })
        .collect();
    Some(format!(
        "ignored unknown argument{}: {}",
        if unknown.len() == 1 { "" } else { "s" },
        named.join(", "),
    ))
}

pub(super) fn missing(field: &str, what: &str) -> String {
    format!("missing required argument {field}: expected {what}")
}

/// Lenient typed access to a tool's arguments.
pub(super) struct Args<'a> {
    pub(super) map: &'a Map<String, Value>,
}

pub(super) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

impl Args<'_> {
    /// The value, with `null` meaning absent.
    pub(super) fn get(&self, name: &str) -> Option<&Value> {
        match self.map.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    pub(super) fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "invalid argument {name}: expected a string, got {}",
                show(other)
            )),
        }
    }

    /// A signal: a name (`"SIGTERM"`, `"term"`), or a number given as a JSON integer or a
    /// numeric string (`9`, `"9"`), returned as text for `sys::signal_from_name`.
    pub(super) fn signal(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(Some(n.to_string())),
            Some(other) => Err(format!(
                "invalid argument {name}: expected a signal name such as \"SIGTERM\" or a \
                 signal number such as 9, got {}",
                show(other)
            )),
        }
    }

    pub(super) fn int(&self, name: &str) -> Result<Option<i64>, String> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let parsed = match v {
            Value::Number(n) => n.as_i64().or_else(|| {
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
            }),
            Value::String(s) => {
                let t = s.trim();
                t.parse::<i64>().ok().or_else(|| {
                    let f: f64 = t.parse().ok()?;
                    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
                })
            }
            _ => None,
        };
        parsed.map(Some).ok_or_else(|| {
            format!(
                "invalid argument {name}: expected an integer, got {}",
                show(v)
            )
        })
    }

    pub(super) fn uint(&self, name: &str) -> Result<Option<u64>, String> {
        match self.int(name) {
            Ok(Some(n)) if n < 0 => Err(format!(
                "invalid argument {name}: expected a non-negative integer, got {n}"
            )),
            Ok(n) => Ok(n.map(|n| n as u64)),
            Err(_) => {
                let shown = self.get(name).map(show).unwrap_or_default();
                // Huge integers are clamped rather than refused: they mean "as much as allowed".
                if let Some(Value::Number(n)) = self.get(name) {
                    if n.as_u64().is_some() {
                        return Ok(n.as_u64());
                    }
                    if n.as_f64().is_some_and(|f| f >= 9.0e15 && f.is_finite()) {
                        return Ok(Some(u64::MAX / 4));
                    }
                }
                Err(format!(
                    "invalid argument {name}: expected a non-negative integer, got {shown}"
                ))
            }
        }
    }

    pub(super) fn boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(other) => Err(format!(
                "invalid argument {name}: expected true or false, got {}",
                show(other)
            )),
        }
    }

    pub(super) fn string_map(&self, name: &str) -> Result<Vec<(String, String)>, String> {
        let Some(v) = self.get(name) else {
            return Ok(Vec::new());
        };
        let Value::Object(m) = v else {
            return Err(format!(
                "invalid argument {name}: expected an object of strings, got {}",
                show(v)
            ));
        };
        let mut out = Vec::new();
        for (k, v) in m {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(format!(
                    "invalid argument {name}: {k:?} is not a valid variable name"
                ));
            }
            let value = match v {
                Value::String(s) => s.clone(),
                other => {
                    return Err(format!(
                        "invalid argument {name}.{k}: expected a string, got {}",
                        show(other)
                    ))
                }
            };
            if value.contains('\0') {
                return Err(format!(
                    "invalid argument {name}.{k}: a value cannot contain a NUL character"
                ));
            }
            out.push((k.clone(), value));
        }
        Ok(out)
    }

    pub(super) fn side_effects(&self) -> Result<Vec<String>, String> {
        let name = "side_effects";
        let items: Vec<Value> = match self.get(name) {
            None => {
                return Err(format!(
                    "missing required argument side_effects: expected a non-empty array of categories such as [\"NONE\"]; one or more of {}",
                    SIDE_EFFECTS.join(", ")
                ))
            }
            Some(Value::Array(a)) => a.clone(),
            Some(other) => return Err(format!("invalid argument side_effects: expected an array of strings, got {}", show(other))),
        };
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let Value::String(s) = &item else {
                return Err(format!(
                    "invalid argument side_effects: expected strings, got {}",
                    show(&item)
                ));
            };
            if !SIDE_EFFECTS.contains(&s.as_str()) {
                return Err(format!(
                    "invalid argument side_effects: unknown category {s:?}; expected one or more of {}",
                    SIDE_EFFECTS.join(", ")
                ));
            }
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lenient_numbers_and_booleans() {
        let m =
            json!({"a": "100", "b": 100.0, "c": -1, "d": "x", "e": "true", "f": null, "g": 1.5});
        let Value::Object(m) = m else { unreachable!() };
        let a = Args { map: &m };
        assert_eq!(a.uint("a").unwrap(), Some(100));
        assert_eq!(a.uint("b").unwrap(), Some(100));
        assert!(a.uint("c").unwrap_err().contains("got -1"));
        assert!(a.uint("d").unwrap_err().contains("\"x\""));
        assert_eq!(a.boolean("e").unwrap(), Some(true));
        assert_eq!(a.uint("f").unwrap(), None);
        assert!(a.uint("g").is_err());
        assert_eq!(a.uint("missing").unwrap(), None);
    }
}
