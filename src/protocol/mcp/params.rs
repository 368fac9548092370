//! Typed parameter specs: each tool lists its arguments as `Param`s (name, JSON type,
//! default, ceiling, a few words, and the modes that offer it), and its input schema is
//! built from them for the configuration in force (`InForce`). A default or ceiling that
//! the configuration sets is read from it when the list is built, so the number a
//! description states is the one a call gets; a tool's own description names them
//! through the same spec (`Param::limits`).

use serde_json::{json, Map, Value};

use crate::base::config::{Config, Mode};

/// What the tool list is built for: the configuration and the default yield of the client
/// that asks (`describe::default_yield`).
pub(super) struct InForce<'a> {
    pub(super) config: &'a Config,
    pub(super) yield_ms: u64,
}

/// The values of the configuration in force that parameters take as their defaults and
/// ceilings (functions, so that a spec can name one in a `const`).
pub(super) mod in_force {
    use super::InForce;

    /// `exec`'s default `yield_ms` for this client.
    pub(in crate::protocol::mcp) fn yield_ms(f: &InForce) -> u64 {
        f.yield_ms
    }

    /// The ceiling of `yield_ms`.
    pub(in crate::protocol::mcp) fn max_yield_ms(f: &InForce) -> u64 {
        f.config.max_yield_ms
    }

    /// `exec`'s default `timeout_ms`.
    pub(in crate::protocol::mcp) fn timeout_ms(f: &InForce) -> u64 {
        f.config.default_timeout_ms
    }

    /// The default (and ceiling) of an answer's `max_output_bytes`.
    pub(in crate::protocol::mcp) fn max_output_bytes(f: &InForce) -> u64 {
        f.config.max_output_bytes as u64
    }

    /// The shell that runs `exec`'s command in shell mode.
    pub(in crate::protocol::mcp) fn shell(f: &InForce) -> String {
        f.config.shell.clone()
    }

    /// `shell_execute`'s default `timeout`, in seconds.
    pub(in crate::protocol::mcp) fn shell_timeout_s(f: &InForce) -> u64 {
        f.config.shell_default_timeout_s
    }

    /// The ceiling of `shell_execute`'s `timeout`, in seconds.
    pub(in crate::protocol::mcp) fn shell_max_timeout_s(f: &InForce) -> u64 {
        f.config.shell_max_timeout_s
    }
}

/// The JSON type of a parameter and its constraints.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Str,
    Bool,
    Int,
    /// An integer of at least this.
    IntFrom(u64),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A non-empty set of these strings.
    SetOf(&'static [&'static str]),
    /// An array of strings, with at least `min` and at most `max` items.
    Strings {
        min: Option<u64>,
        max: Option<u64>,
    },
    /// An object whose values are strings.
    StrMap,
}

/// What a call that leaves the parameter out gets.
#[derive(Clone, Copy)]
enum Default {
    /// Nothing a schema states (the tool's own description may say what happens).
    Unstated,
    /// A constant, stated as the schema's `default`.
    Bool(bool),
    Int(u64),
    Str(&'static str),
    /// A value of the configuration in force, stated in words in the description.
    Number(fn(&InForce) -> u64),
    Text(fn(&InForce) -> String),
}

/// The modes whose tool list offers a parameter. A parameter not offered is still parsed
/// when a call gives it (`names`), and the tool refuses it with its reason.
#[derive(Clone, Copy)]
enum Offered {
    Always,
    /// Shell mode only: trusted mode runs no shell and no terminal.
    ShellMode,
    /// Trusted mode only.
    TrustedMode,
    /// When the configuration says so.
    If(fn(&Config) -> bool),
}

/// One argument of a tool.
#[derive(Clone, Copy)]
pub(super) struct Param {
    name: &'static str,
    kind: Kind,
    required: bool,
    /// A few words the name and the type do not say (empty: none).
    doc: &'static str,
    /// The words, when they depend on the configuration (in place of `doc`).
    doc_in_force: Option<fn(&InForce) -> String>,
    default: Default,
    /// The ceiling a larger value is lowered to.
    max: Option<fn(&InForce) -> u64>,
    /// The default and ceiling are stated by the tool's description, not here.
    limits_in_tool: bool,
    offered: Offered,
}

impl Param {
    pub(super) const fn new(name: &'static str, kind: Kind) -> Param {
        Param {
            name,
            kind,
            required: false,
            doc: "",
            doc_in_force: None,
            default: Default::Unstated,
            max: None,
            limits_in_tool: false,
            offered: Offered::Always,
        }
    }

    pub(super) const fn required(mut self) -> Param {
        self.required = true;
        self
    }

    pub(super) const fn doc(mut self, doc: &'static str) -> Param {
        self.doc = doc;
        self
    }

    pub(super) const fn doc_in_force(mut self, doc: fn(&InForce) -> String) -> Param {
        self.doc_in_force = Some(doc);
        self
    }

    pub(super) const fn default_bool(mut self, value: bool) -> Param {
        self.default = Default::Bool(value);
        self
    }

    pub(super) const fn default_int(mut self, value: u64) -> Param {
        self.default = Default::Int(value);
        self
    }

    pub(super) const fn default_str(mut self, value: &'static str) -> Param {
        self.default = Default::Str(value);
        self
    }

    pub(super) const fn default_in_force(mut self, value: fn(&InForce) -> u64) -> Param {
        self.default = Default::Number(value);
        self
    }

    pub(super) const fn default_text(mut self, value: fn(&InForce) -> String) -> Param {
        self.default = Default::Text(value);
        self
    }

    pub(super) const fn max(mut self, value: fn(&InForce) -> u64) -> Param {
        self.max = Some(value);
        self
    }

    pub(super) const fn limits_in_tool(mut self) -> Param {
        self.limits_in_tool = true;
        self
    }

    pub(super) const fn shell_only(mut self) -> Param {
        self.offered = Offered::ShellMode;
        self
    }

    pub(super) const fn trusted_only(mut self) -> Param {
        self.offered = Offered::TrustedMode;
        self
    }

    pub(super) const fn offered_if(mut self, when: fn(&Config) -> bool) -> Param {
        self.offered = Offered::If(when);
        self
    }

    fn offered(&self, config: &Config) -> bool {
        match self.offered {
            Offered::Always => true,
            Offered::ShellMode => config.mode == Mode::Shell,
            Offered::TrustedMode => config.mode == Mode::Trusted,
            Offered::If(when) => when(config),
        }
    }

    /// The default in force, in words ("30000", "/bin/sh"), when the configuration sets it.
    pub(super) fn default_in_words(&self, f: &InForce) -> Option<String> {
        match self.default {
            Default::Number(value) => Some(value(f).to_string()),
            Default::Text(value) => Some(value(f)),
            _ => None,
        }
    }

    /// The ceiling in force.
    pub(super) fn max_value(&self, f: &InForce) -> Option<u64> {
        self.max.map(|max| max(f))
    }

    /// The default and the ceiling in force, as a description says them: "default 30000,
    /// at most 55000", "default and at most 55000", "default 20000".
    pub(super) fn limits(&self, f: &InForce) -> Option<String> {
        match (self.default_in_words(f), self.max_value(f)) {
            (Some(d), Some(m)) if d == m.to_string() => Some(format!("default and at most {m}")),
            (Some(d), Some(m)) => Some(format!("default {d}, at most {m}")),
            (Some(d), None) => Some(format!("default {d}")),
            (None, Some(m)) => Some(format!("at most {m}")),
            (None, None) => None,
        }
    }

    /// The description: the words, then the limits in force ("Runtime limit, 0 = none
    /// (default 3600000)."; "Default and at most 55000." without words).
    fn description(&self, f: &InForce) -> String {
        let words = match self.doc_in_force {
            Some(doc) => doc(f),
            None => self.doc.to_string(),
        };
        let limits = if self.limits_in_tool {
            None
        } else {
            self.limits(f)
        };
        match limits {
            None => words,
            Some(limits) if words.is_empty() => {
                let mut chars = limits.chars();
                let first = chars.next().map(|c| c.to_ascii_uppercase());
                format!(
                    "{}{}.",
                    first.map(String::from).unwrap_or_default(),
                    chars.as_str()
                )
            }
            Some(limits) => format!("{} ({limits}).", words.trim_end_matches('.')),
        }
    }

    /// The property of the input schema.
    fn schema(&self, f: &InForce) -> Value {
        let mut p = Map::new();
        match self.kind {
            Kind::Str => {
                p.insert("type".into(), json!("string"));
            }
            Kind::Bool => {
                p.insert("type".into(), json!("boolean"));
            }
            Kind::Int => {
                p.insert("type".into(), json!("integer"));
            }
            Kind::IntFrom(min) => {
                p.insert("type".into(), json!("integer"));
                p.insert("minimum".into(), json!(min));
            }
            Kind::OneOf(values) => {
                p.insert("type".into(), json!("string"));
                p.insert("enum".into(), json!(values));
            }
            Kind::SetOf(values) => {
                p.insert("type".into(), json!("array"));
                p.insert("minItems".into(), json!(1));
                p.insert("uniqueItems".into(), json!(true));
                p.insert("items".into(), json!({"type": "string", "enum": values}));
            }
            Kind::Strings { min, max } => {
                p.insert("type".into(), json!("array"));
                p.insert("items".into(), json!({"type": "string"}));
                if let Some(min) = min {
                    p.insert("minItems".into(), json!(min));
                }
                if let Some(max) = max {
                    p.insert("maxItems".into(), json!(max));
                }
            }
            Kind::StrMap => {
                p.insert("type".into(), json!("object"));
                p.insert("additionalProperties".into(), json!({"type": "string"}));
            }
        }
        match self.default {
            Default::Bool(v) => {
                p.insert("default".into(), json!(v));
            }
            Default::Int(v) => {
                p.insert("default".into(), json!(v));
            }
            Default::Str(v) => {
                p.insert("default".into(), json!(v));
            }
            Default::Unstated | Default::Number(_) | Default::Text(_) => (),
        }
        let description = self.description(f);
        if !description.is_empty() {
            p.insert("description".into(), Value::from(description));
        }
        Value::Object(p)
    }
}

/// The input schema of a tool with `params`, as the configuration in force offers them.
pub(super) fn input_schema(params: &[Param], f: &InForce) -> Value {
    let offered = || params.iter().filter(|p| p.offered(f.config));
    let props: Map<String, Value> = offered()
        .map(|p| (p.name.to_string(), p.schema(f)))
        .collect();
    let required: Vec<&str> = offered().filter(|p| p.required).map(|p| p.name).collect();
    let mut schema = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The names of `params` in any mode: the members of a call's `arguments` that are parsed.
pub(super) fn names(params: &[Param]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(params.len());
    for p in params {
        if !names.iter().any(|n| n == p.name) {
            names.push(p.name.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: &[(&str, &str)]) -> Config {
        let env = env.iter().map(|(k, v)| (k.into(), v.into())).collect();
        match crate::protocol::options::parse(&[], env) {
            Ok(crate::protocol::options::Parsed::Run(c)) => *c,
            _ => panic!("no configuration"),
        }
    }

    const YIELD: Param = Param::new("yield_ms", Kind::Int)
        .doc("Wait before backgrounding")
        .default_in_force(in_force::yield_ms)
        .max(in_force::max_yield_ms);

    #[test]
    fn a_default_of_the_configuration_is_the_one_in_force() {
        let config = config(&[("YIELDSHELL_MAX_YIELD_MS", "40000")]);
        let f = InForce {
            config: &config,
            yield_ms: 7000,
        };
        assert_eq!(
            YIELD.schema(&f),
            json!({"type": "integer", "description": "Wait before backgrounding (default 7000, at most 40000)."})
        );
        assert_eq!(
            YIELD.limits(&f).as_deref(),
            Some("default 7000, at most 40000")
        );
        let same = Param::new("t", Kind::Int)
            .default_in_force(in_force::max_yield_ms)
            .max(in_force::max_yield_ms);
        assert_eq!(same.description(&f), "Default and at most 40000.");
        assert_eq!(
            YIELD.limits_in_tool().description(&f),
            "Wait before backgrounding"
        );
    }

    #[test]
    fn a_parameter_of_one_mode_is_listed_in_that_mode_only_and_parsed_in_both() {
        let params = [
            Param::new("command", Kind::Str).required().shell_only(),
            Param::new("command", Kind::Str)
                .required()
                .doc("A line.")
                .trusted_only(),
            Param::new("tty", Kind::Bool)
                .default_bool(false)
                .shell_only(),
        ];
        let shell = config(&[]);
        let f = InForce {
            config: &shell,
            yield_ms: 1,
        };
        assert_eq!(
            input_schema(&params, &f),
            json!({"type": "object", "properties": {
                "command": {"type": "string"},
                "tty": {"type": "boolean", "default": false}
            }, "required": ["command"]})
        );
        let trusted = config(&[("ALLOW_COMMANDS", "ls")]);
        let f = InForce {
            config: &trusted,
            yield_ms: 1,
        };
        assert_eq!(
            input_schema(&params, &f),
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "A line."}
            }, "required": ["command"]})
        );
        assert_eq!(names(&params), ["command", "tty"]);
    }
}
