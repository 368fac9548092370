//! The built-in client, for hosts with nothing else installed:
//!
//! - `yieldshell call TOOL ['JSON']` runs one tool call against an in-process server with
//!   the same configuration (`server::call_once`) and prints the result object;
//! - `yieldshell tools [--json]` lists the tools of the configuration;
//! - `yieldshell check COMMAND...` (argv) or `yieldshell check 'one string'` runs nothing and
//!   says whether the configuration allows the command, which rule refuses it (with the
//!   text a call would get), which file each program resolves to, and what the kernel
//!   sandbox enforces.
//!
//! Exit codes: 0 (done, allowed), 1 (the result is an error, the command is refused), 2 (bad
//! usage). What goes to stdout is returned to `main` (this is not the server: there is no
//! protocol stream), which prints it; notes and usage errors go to stderr. The JSON side
//! (arguments in, result out) is `mcp::client`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::policy::sandbox::Sandbox;
use crate::policy::trusted::{reviewed, tokenize, Policy, Redirects};
use crate::protocol::mcp;
use crate::tools::policy::{check_command_length, check_command_regex, resolve_dir};
use crate::{base::config, base::config::Config, base::config::Mode, protocol::options::Parsed};

/// What a subcommand prints on stdout, and its exit code.
pub(crate) struct Outcome {
    /// The text for stdout (possibly empty).
    pub stdout: String,
    /// 0, 1 or 2.
    pub code: u8,
}

impl Outcome {
    fn print(stdout: String, code: u8) -> Outcome {
        Outcome { stdout, code }
    }
}

/// Runs subcommand `name` with its arguments `rest`; `options` and `env` configure it as
/// they would configure the server.
pub(crate) fn main(
    name: &str,
    rest: &[OsString],
    options: &[OsString],
    env: Vec<(OsString, OsString)>,
) -> Outcome {
    let config = match crate::protocol::options::parse(options, env) {
        Ok(Parsed::Run(config)) => *config,
        Ok(Parsed::Print(text)) => return Outcome::print(text, 0),
        Err(message) => return usage(&message),
    };
    let mut words = Vec::with_capacity(rest.len());
    for (i, arg) in rest.iter().enumerate() {
        match arg.to_str() {
            Some(word) => words.push(word.to_string()),
            None => return usage(&format!("argument {} of {name} is not valid UTF-8", i + 1)),
        }
    }
    match name {
        "call" => call(config, &words),
        "tools" => tools(&config, &words),
        _ => check(&config, &words),
    }
}

fn call(mut config: Config, words: &[String]) -> Outcome {
    // The result only on stdout, and nothing else on stderr unless asked: audit lines go
    // to the audit log, or to stderr with --log.
    config.audit_to_stderr = config.log_explicit;
    let (tool, json) = match words {
        [tool] => (tool, "{}"),
        [tool, json] => (tool, json.as_str()),
        _ => {
            return usage(
                "usage: yieldshell call TOOL ['JSON'], for example: \
                 yieldshell call exec '{\"command\":\"ls\"}'",
            )
        }
    };
    let ours = config::Tool::from_wire(tool, config.api).filter(|t| config.tools.contains(t));
    let Some(ours) = ours else {
        return usage(&format!(
            "unknown tool {tool:?}; the tools of this configuration: {}",
            config::Tool::joined(&config.tools, config.api, ", ")
        ));
    };
    let (arguments, filled) = match mcp::client::call_arguments(ours, json) {
        Ok(parsed) => parsed,
        Err(message) => return usage(&message),
    };
    if let Some(message) = filled {
        note(&message);
    }
    let result = match crate::protocol::server::call_once(config, tool, arguments) {
        Ok(result) => result,
        Err(message) => return usage(&message),
    };
    let (text, is_error) = mcp::client::shown_result(&result);
    Outcome::print(text, if is_error { 1 } else { 0 })
}

fn tools(config: &Config, words: &[String]) -> Outcome {
    let json = match words {
        [] => false,
        [flag] if flag == "--json" => true,
        _ => return usage("usage: yieldshell tools [--json]"),
    };
    Outcome::print(mcp::client::tools_text(config, json), 0)
}

const CHECK_USAGE: &str = "usage: yieldshell check [--env NAME=VALUE]... COMMAND... (as argv) \
     or yieldshell check [--env NAME=VALUE]... 'one command line'";

/// A call's `env`, as `check --env` gives it.
type Overlay = Vec<(String, String)>;

/// `check`'s leading `--env NAME=VALUE` options (a call's `env`), and the command's words.
fn env_options(words: &[String]) -> Result<(Overlay, &[String]), String> {
    let mut overlay = Vec::new();
    let mut rest = words;
    while let [flag, more @ ..] = rest {
        let pair = if flag == "--env" {
            let [pair, after @ ..] = more else {
                return Err(format!("--env needs NAME=VALUE\n{CHECK_USAGE}"));
            };
            rest = after;
            pair.as_str()
        } else if let Some(pair) = flag.strip_prefix("--env=") {
            rest = more;
            pair
        } else {
            break;
        };
        match pair.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                overlay.push((name.to_string(), value.to_string()))
            }
            _ => return Err(format!("--env {pair}: expected NAME=VALUE\n{CHECK_USAGE}")),
        }
    }
    Ok((overlay, rest))
}

fn check(config: &Config, words: &[String]) -> Outcome {
    let (overlay, words) = match env_options(words) {
        Ok(parsed) => parsed,
        Err(message) => return usage(&message),
    };
    if words.is_empty() {
        return usage(CHECK_USAGE);
    }
    let sandbox = match Sandbox::new(config) {
        Ok((sandbox, _warning)) => sandbox,
        Err(message) => return Outcome::print(format!("refused: {message}\n"), 1),
    };
    let cwd = resolve_dir(config, None, "cwd");
    let mut report = Report::default();
    report.line(format!(
        "working directory: {}",
        match &cwd {
            Ok(dir) => dir.display().to_string(),
            Err(e) => format!("refused ({e})"),
        }
    ));
    let verdict = match config.mode {
        Mode::Trusted => check_trusted(
            config,
            (words, &overlay),
            &sandbox,
            cwd.as_deref(),
            &mut report,
        ),
        Mode::Shell => check_shell(config, words, &mut report),
    };
    report.line(sandbox.status());
    let code = match verdict.and(cwd.map(|_| ())) {
        Ok(()) => {
            report.line("allowed".into());
            0
        }
        Err(reason) => {
            report.line(format!("refused: {reason}"));
            1
        }
    };
    // The report shows resolved paths and the command: the server's secrets are hidden
    // there as in a call's answer.
    let secrets = crate::policy::redact::Secrets::new(crate::policy::secrets::server_pairs(config));
    Outcome::print(secrets.redact_str(&report.text), code)
}

/// Trusted mode: the checks `shell_execute` and `exec` make before anything starts, and the
/// kernel sandbox's plan for the call.
fn check_trusted(
    config: &Config,
    (words, overlay): (&[String], &[(String, String)]),
    sandbox: &Sandbox,
    cwd: Result<&Path, &String>,
    report: &mut Report,
) -> Result<(), String> {
    let policy = Policy::new(config)?;
    let (pipeline, form) = match words {
        [line] => (tokenize::parse(line), "a command line, as exec splits it"),
        argv => (
            tokenize::from_argv(argv),
            "an argv, as shell_execute takes it",
        ),
    };
    report.line(format!(
        "mode: trusted (allowlist: {}); checked as {form}",
        allowlist_text(config)
    ));
    let named: Vec<String> = [&config.allow_commands, &config.allowed_commands]
        .iter()
        .filter_map(|v| v.as_deref())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    let refused = reviewed::always_unreviewed(&named, &config.unreviewed_commands);
    if !refused.is_empty() {
        report.line(format!(
            "always refused (allowlisted, but without argument rules; \
             YIELDSHELL_UNREVIEWED_COMMANDS accepts them): {}",
            refused.join(", ")
        ));
    }
    if !config.unreviewed_commands.is_empty() {
        report.line(format!(
            "accepted without argument rules (only the kernel layer confines them): {}",
            config.unreviewed_commands.join(", ")
        ));
    }
    // The command regexes come first, as in a call: on the words joined with spaces (an
    // argv reads as `shell_execute` reads it, a command line as it is).
    check_command_regex(config, &words.join(" "), "command")?;
    let mut pipeline = pipeline?;
    let written = pipeline.stages.len();
    // What a call would decide, in the server's working directory when it has one: the
    // same preparation, with the redirections judged instead of opened.
    let stages = match cwd {
        Ok(dir) => {
            if let Some(r) = &pipeline.stdout {
                sandbox.refuse_protected_redirect(dir, &r.path)?;
            }
            policy
                .prepare(&mut pipeline, dir, overlay, Redirects::Judge, false)?
                .stages
        }
        Err(_) => {
            let stages = policy.check(&mut pipeline)?;
            policy.env(overlay)?;
            stages
        }
    };
    if stages.len() > written {
        report.line(
            "tar's compressor runs as a stage of its own, writing the archive (GNU tar would \
             start it through /bin/sh -c, which the kernel sandbox does not let run)"
                .into(),
        );
    }
    for (i, stage) in stages.iter().enumerate() {
        let real = crate::base::sys::canonicalize(Path::new(&stage.program))
            .unwrap_or_else(|_| stage.program.clone().into());
        let shown = if real == Path::new(&stage.program) {
            stage.program.clone()
        } else {
            format!("{} -> {}", stage.program, real.display())
        };
        report.line(format!(
            "stage {}: {} resolves to {shown}",
            i + 1,
            stage.arg0
        ));
    }
    if let Ok(dir) = cwd {
        sandbox.plan(dir, &stages)?;
    }
    report.line(
        match cwd {
            Ok(_) => "redirection targets judged as the call opens them (nothing opened or made)",
            Err(_) => "redirection targets are checked when the call is made",
        }
        .into(),
    );
    Ok(())
}

/// Shell mode: the command regexes on the command and the shell.
fn check_shell(config: &Config, words: &[String], report: &mut Report) -> Result<(), String> {
    let command = words.join(" ");
    report.line(format!(
        "mode: shell; runs as {} -c '{}'",
        config.shell,
        command.replace('\'', "'\\''")
    ));
    let shell = match which(&config.shell, &config.env) {
        Some(path) => path.display().to_string(),
        None => "not found".into(),
    };
    report.line(format!("shell {} resolves to {shell}", config.shell));
    if !config.blocked.is_empty() {
        let names: Vec<&str> = config
            .blocked
            .iter()
            .map(|&i| config::SIDE_EFFECTS[i])
            .collect();
        report.line(format!(
            "a call declaring any of these side_effects is refused: {}",
            names.join(", ")
        ));
    }
    check_command_length(&command)?;
    check_command_regex(config, &command, "command")?;
    check_command_regex(config, &config.shell, "shell")
}

fn allowlist_text(config: &Config) -> String {
    let mut items: Vec<&str> = Vec::new();
    for list in [
        &config.allow_commands,
        &config.allowed_commands,
        &config.allow_patterns,
    ] {
        items.extend(list.as_deref().unwrap_or("").split(',').map(str::trim));
    }
    items.retain(|s| !s.is_empty());
    if items.is_empty() {
        "empty".into()
    } else {
        items.join(", ")
    }
}

/// Finds `program` as the server's spawn would: a path as it is, a name in `PATH`.
fn which(program: &str, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    if program.contains('/') {
        return std::fs::canonicalize(program).ok();
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .and_then(|(_, v)| v.to_str())
        .unwrap_or("/usr/bin:/bin");
    path.split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|found| std::fs::canonicalize(found).ok())
}

#[derive(Default)]
struct Report {
    text: String,
}

impl Report {
    fn line(&mut self, line: String) {
        self.text.push_str(&line);
        self.text.push('\n');
    }
}

fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "yieldshell: {text}");
}

fn usage(message: &str) -> Outcome {
    note(message);
    Outcome::print(String::new(), 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::trusted::refusal::Rule;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn env_options_come_before_the_command_in_both_spellings() {
        let given = words(&["--env", "A=1", "--env=B=x=y", "cat", "--env", "C=3"]);
        let (overlay, rest) = env_options(&given).expect("parsed");
        assert_eq!(
            overlay,
            vec![("A".into(), "1".into()), ("B".into(), "x=y".into())]
        );
        assert_eq!(rest, &given[3..]);
        for bad in [
            &["--env"][..],
            &["--env", "A"],
            &["--env", "=v", "ls"],
            &["--env=A"],
        ] {
            let err = env_options(&words(bad)).expect_err("refused");
            assert!(err.contains("NAME=VALUE"), "{bad:?}: {err}");
        }
    }

    fn policy(env: &[(&str, &str)]) -> Policy {
        let env = env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        let Ok(Parsed::Run(config)) = crate::protocol::options::parse(&[], env) else {
            panic!("a configuration");
        };
        Policy::new(&config).expect("a policy")
    }

    fn rule(policy: &Policy, argv: &[&str]) -> Option<Rule> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let mut pipeline = tokenize::from_argv(&argv).expect("an argv");
        policy.check(&mut pipeline).err().map(|r| r.rule)
    }

    /// The rule of a refusal tells an approvable one from one nobody may overrule, and the
    /// latter wins when both would refuse.
    #[test]
    fn a_refusal_carries_its_rule() {
        let p = policy(&[("ALLOW_COMMANDS", "ls,sh,install,no-such-program-here")]);
        assert_eq!(rule(&p, &["ls", "-l"]), None);
        assert_eq!(rule(&p, &["sh", "-c", "id"]), Some(Rule::Arguments));
        assert_eq!(rule(&p, &["bash", "-c", "id"]), Some(Rule::NotAllowed));
        assert_eq!(
            rule(&p, &["sh", "-c", "id", "|", "bash"]),
            Some(Rule::NotAllowed)
        );
        assert_eq!(
            rule(&p, &["install", "-s", "a", "b"]),
            Some(Rule::Unreviewed("install".into()))
        );
        assert_eq!(rule(&p, &["ls", ">", "/tmp/x"]), Some(Rule::Launch));
        assert_eq!(rule(&p, &["no-such-program-here"]), Some(Rule::Launch));
        let accepted = policy(&[
            ("ALLOW_COMMANDS", "ls,install"),
            ("YIELDSHELL_UNREVIEWED_COMMANDS", "install"),
        ]);
        assert_eq!(rule(&accepted, &["install", "-s", "a", "b"]), None);
        for r in [Rule::Arguments, Rule::Unreviewed("install".into())] {
            assert!(r.approvable());
        }
        assert!(!Rule::NotAllowed.approvable() && !Rule::Launch.approvable());
    }
}
