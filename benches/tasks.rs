//! What five everyday agent tasks cost the model, in characters read and calls made, in the
//! two views clients show: the text (a plain client, such as Gemini CLI) and
//! `JSON.stringify(structuredContent)` (Claude Code and Codex, here with
//! `YIELDSHELL_STRUCTURED=on` so that structuredContent is sent to them).
//!
//! A scripted agent does each task the way a model would with these tools:
//! 1. a dev server (`python3 -m http.server`): start it in the background, wait until it
//!    is ready, hit it twice with curl, read its new log lines, stop it;
//! 2. a 3,000-line build that fails at its end: run it, fix (a file the build looks for),
//!    run it again; the error line must be in the first answer;
//! 3. a script that asks `Continue? [y/N]`: run it, answer, wait for its end;
//! 4. a test suite that outlives the yield (stands for a 70 s suite against the 30 s
//!    default: the server's default yield is 1 s here, and the suite takes 2.5 s);
//! 5. five jobs of different lengths: start all five, wait for all of them.
//!
//! Figures: characters of tasks 1, 3, 4 and 5 together (target at most 2,500), of task 2
//! (at most 8,000), calls of task 5 (at most 6). The build is run as an agent asks for a
//! long build's end (`tail_lines: 40`); the same build with default arguments is reported
//! beside it.
#![allow(clippy::print_stdout)]

mod common;

use common::{full, Figure, Report, Server, Target};
use serde_json::{json, Value};

/// How a model is shown results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    /// The text blocks (a plain client).
    Text,
    /// `JSON.stringify(structuredContent)` (Claude Code, Codex).
    Structured,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Text => "text",
            View::Structured => "structuredContent",
        }
    }
}

/// The scripted agent: calls tools, counts what its model reads.
struct Agent {
    server: Server,
    view: View,
    chars: usize,
    calls: usize,
    /// Every answer as the model read it (shown with `YS_TASKS_SHOW=1`).
    read: Vec<String>,
}

impl Agent {
    fn new(view: View) -> Agent {
        let mut env = vec![("YIELDSHELL_DEFAULT_YIELD_MS", "1000".to_string())];
        let client = match view {
            View::Text => "gemini-cli-mcp-client",
            View::Structured => {
                env.push(("YIELDSHELL_STRUCTURED", "on".to_string()));
                "claude-code"
            }
        };
        let mut server = Server::spawn(&env);
        server.initialize_as("2025-11-25", client);
        Agent {
            server,
            view,
            chars: 0,
            calls: 0,
            read: Vec::new(),
        }
    }

    /// Calls `tool`; returns the result object (for the script's own decisions) and what
    /// the model read.
    fn call(&mut self, tool: &str, args: Value) -> (Value, String) {
        let r = self
            .server
            .request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &r["result"];
        let structured = result.get("structuredContent").cloned();
        let text: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let shown = match (self.view, &structured) {
            (View::Structured, Some(s)) => s.to_string(),
            _ => text,
        };
        self.calls += 1;
        self.chars += shown.chars().count();
        self.read.push(format!("{tool}: {shown}"));
        (structured.unwrap_or(Value::Null), shown)
    }

    fn exec(&mut self, command: &str, extra: Value) -> (Value, String) {
        let mut args = json!({"command": command, "side_effects": ["NONE"]});
        if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                a.insert(k.clone(), v.clone());
            }
        }
        self.call("exec", args)
    }
}

fn id(r: &Value) -> String {
    r["process_id"].as_str().expect("process_id").to_string()
}

/// Task 1: dev server. Returns (characters, calls).
fn dev_server(view: View) -> (usize, usize) {
    let mut a = Agent::new(view);
    let (r, _) = a.exec(
        "exec python3 -u -m http.server 0 --bind 127.0.0.1",
        json!({"yield_ms": 0}),
    );
    let server = id(&r);
    let (r, _) = a.call(
        "wait",
        json!({"process_id": server, "until": "Serving HTTP", "timeout_ms": 20000}),
    );
    let out = r["stdout"].as_str().unwrap_or_default();
    let port: String = out
        .split(" port ")
        .nth(1)
        .expect("the port in the banner")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    for _ in 0..2 {
        let (r, _) = a.exec(
            &format!("curl -s -o /dev/null -w '%{{http_code}}\\n' http://127.0.0.1:{port}/"),
            json!({}),
        );
        assert_eq!(r["stdout"], "200\n", "{r}");
    }
    // The new log lines: a wait until the second request's line is there.
    let (r, _) = a.call(
        "wait",
        json!({"process_id": server, "until": "(?s)GET /.*GET /", "timeout_ms": 5000}),
    );
    assert_eq!(r["wait_result"], "matched", "{r}");
    a.call("stop", json!({"process_id": server}));
    finish(a, "dev server")
}

/// The build script of task 2: `lines` progress lines, then (until `fixed` exists) an
/// error on stderr and exit status 2.
fn build_script(lines: u32) -> String {
    format!(
        "i=1; while [ $i -le {lines} ]; do echo \"[$((i*100/{lines}))%] Compiling src/module_$i.c\"; \
         i=$((i+1)); done; if [ ! -f fixed ]; then \
         echo \"src/parser.c:42:7: error: expected ';' before '}}' token\" >&2; \
         echo 'make: *** [Makefile:12: all] Error 1' >&2; exit 2; fi; \
         echo 'Build finished: {lines} modules'"
    )
}

/// Task 2: build, fix, rebuild, in a directory of its own. `extra`: the build call's own
/// arguments. Returns (characters, calls, whether the first answer held the error line).
fn build(view: View, lines: u32, extra: Value) -> (usize, usize, bool) {
    let dir = std::env::temp_dir().join(format!(
        "yieldshell-tasks-{}-{}",
        std::process::id(),
        view.name()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("build directory");
    let cwd = dir.to_string_lossy().to_string();
    let mut a = Agent::new(view);
    let mut args = extra.clone();
    args["cwd"] = json!(cwd);
    let (r, shown) = a.exec(&build_script(lines), args.clone());
    assert_eq!(r["exit_code"], 2, "{r}");
    let error_seen = shown.contains("error: expected ';'");
    a.exec("touch fixed", json!({"cwd": cwd}));
    let (r, _) = a.exec(&build_script(lines), args);
    assert_eq!(r["exit_code"], 0, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
    let (chars, calls) = finish(a, "build");
    (chars, calls, error_seen)
}

/// Task 3: a script that asks before it goes on.
fn prompt(view: View) -> (usize, usize) {
    let mut a = Agent::new(view);
    let (r, _) = a.exec(
        "printf 'Continue? [y/N] '; read answer; echo \"answer: $answer\"",
        json!({"close_stdin": false, "yield_ms": 20000}),
    );
    assert_eq!(r["awaiting_input"], true, "{r}");
    let p = id(&r);
    a.call(
        "write",
        json!({"process_id": p, "input": "y", "newline": true}),
    );
    let (r, _) = a.call("wait", json!({"process_id": p}));
    assert!(
        r["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("answer: y"),
        "{r}"
    );
    finish(a, "prompt")
}

/// Task 4: a test suite that outlives the yield.
fn suite(view: View, tests: u32) -> (usize, usize) {
    let mut a = Agent::new(view);
    let (r, _) = a.exec(
        &format!(
            "echo 'collected {tests} items'; i=0; while [ $i -lt {tests} ]; do printf .; \
             sleep 0.1; i=$((i+1)); done; echo; echo '{tests} passed'"
        ),
        json!({}),
    );
    let mut status = r["status"].clone();
    let p = id(&r);
    while status == "backgrounded" || status == "running" {
        let (r, _) = a.call("wait", json!({"process_id": p}));
        status = r["status"].clone();
    }
    finish(a, "suite")
}

/// Task 5: five jobs of different lengths.
fn jobs(view: View) -> (usize, usize) {
    let mut a = Agent::new(view);
    let mut ids = Vec::new();
    for (k, secs) in ["0.6", "0.2", "1.0", "0.4", "0.8"].iter().enumerate() {
        let (r, _) = a.exec(
            &format!("sleep {secs}; echo 'job {k} done'"),
            json!({"yield_ms": 0}),
        );
        ids.push(id(&r));
    }
    let (r, _) = a.call(
        "wait",
        json!({"process_ids": ids, "all": true, "timeout_ms": 20000}),
    );
    assert_eq!(r["wait_result"], "exited", "{r}");
    for p in &ids {
        assert_eq!(r["statuses"][p]["exit_code"], 0, "{r}");
    }
    finish(a, "jobs")
}

fn finish(a: Agent, task: &str) -> (usize, usize) {
    if std::env::var_os("YS_TASKS_SHOW").is_some() {
        println!("--- {task} ({})", a.view.name());
        for r in &a.read {
            println!("{r}");
        }
    }
    (a.chars, a.calls)
}

fn main() {
    let mut report = Report::new("tasks");
    let (lines, tests) = if full() { (3000, 25) } else { (300, 3) };
    for view in [View::Text, View::Structured] {
        let name = view.name();
        let parts = [
            ("dev server", dev_server(view)),
            ("prompt", prompt(view)),
            ("suite", suite(view, tests)),
            ("jobs", jobs(view)),
        ];
        let small: usize = parts.iter().map(|(_, (c, _))| c).sum();
        let detail: Vec<String> = parts
            .iter()
            .map(|(n, (c, k))| format!("{n} {c} in {k} calls"))
            .collect();
        report.add(
            Figure::new(
                &format!("tasks 1, 3, 4, 5 read ({name})"),
                "chars",
                small as f64,
            )
            .target(Target::AtMost(2500.0))
            .note(detail.join(", ")),
        );
        let (chars, calls, seen) = build(view, lines, json!({"tail_lines": 40}));
        assert!(seen, "the first build answer shows the error line ({name})");
        let (default_chars, _, default_seen) = build(view, lines, json!({}));
        report.add(
            Figure::new(
                &format!("task 2 build read ({name})"),
                "chars",
                chars as f64,
            )
            .target(Target::AtMost(8000.0))
            .note(format!(
                "{calls} calls, tail_lines 40, error line in the first answer: {seen}; \
                     with default arguments {default_chars} chars (error line shown: \
                     {default_seen})"
            )),
        );
        let job_calls = parts[3].1 .1;
        report.add(
            Figure::new(&format!("task 5 calls ({name})"), "calls", job_calls as f64)
                .target(Target::AtMost(6.0)),
        );
    }
}
