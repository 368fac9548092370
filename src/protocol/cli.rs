//! The built-in client, for hosts with nothing else installed (SPEC section 13):
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
use crate::policy::trusted::{tokenize, Policy};
use crate::protocol::mcp;
use crate::tools::policy::{check_command_regex, resolve_dir};
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
    let (ours, names): (Option<&str>, Vec<&str>) = match config.api {
        config::Api::V1_1 => (
            mcp::compat::our_tool(tool),
            config
                .tools
                .iter()
                .map(|t| mcp::compat::wire_tool(t))
                .collect(),
        ),
        config::Api::Current => (Some(tool.as_str()), config.tools.clone()),
    };
    if !ours.is_some_and(|t| config.tools.contains(&t)) {
        return usage(&format!(
            "unknown tool {tool:?}; the tools of this configuration: {}",
            names.join(", ")
        ));
    }
    let (arguments, filled) = match mcp::client::call_arguments(ours.unwrap_or(tool), json) {
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

fn check(config: &Config, words: &[String]) -> Outcome {
    if words.is_empty() {
        return usage(
            "usage: yieldshell check COMMAND... (as argv) or yieldshell check 'one command line'",
        );
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
        Mode::Trusted => check_trusted(config, words, &sandbox, cwd.as_deref(), &mut report),
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
    Outcome::print(report.text, code)
}

/// Trusted mode: the checks `shell_execute` and `exec` make before anything starts, and the
/// kernel sandbox's plan for the call.
fn check_trusted(
    config: &Config,
    words: &[String],
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
    let pipeline = pipeline?;
    let stages = policy.check(&pipeline)?;
    for (i, stage) in stages.iter().enumerate() {
        let real =
            std::fs::canonicalize(&stage.program).unwrap_or_else(|_| stage.program.clone().into());
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
        // The checks a call makes right before it starts: the git directories a git stage
        // would use, the paths a file-writing stage names. (The admission it returns is
        // released at once: nothing runs.)
        policy.check_git_use(
            dir,
            &stages,
            pipeline.stdout.as_ref().map(|r| r.path.as_str()),
        )?;
        sandbox.plan(dir, &stages)?;
    }
    report.line("redirection targets are checked when the call is made".into());
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
