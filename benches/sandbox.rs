//! What the kernel sandbox costs: the round trip of a fast command with the sandbox on and
//! off, in the same run, interleaved (one call on each server in turn, so noise hits all
//! alike).
//!
//! - Trusted mode, `echo hi` with a ten-name allowlist, through `exec` and through
//!   `shell_execute`: `YIELDSHELL_SANDBOX=off` (the baseline) against `on` (the allowlist is
//!   resolved, the call's kept Landlock ruleset found, and each child drops its
//!   capabilities and restricts itself before it executes; the seccomp filter is the
//!   server's own, inherited). Both with the default per-command cgroup (as root here) and
//!   with `YIELDSHELL_CGROUP=off`, as a server that is not root runs.
//!   And `on` without the seccomp filter (`YIELDSHELL_TEST_NO_SECCOMP=1`), for the filter's
//!   own share (the filter on every system call of the server and of the command).
//! - Shell mode, `echo hi`: `off` against `workspace`.
//! - Protected paths (`YIELDSHELL_PROTECTED_PATHS`), trusted `exec` with the sandbox on,
//!   `none` against the default list: in a repository (its `.git` and `.envrc` bound
//!   read-only in the call's own mount namespace, target at most 0.3 ms added), and in a
//!   directory with nothing to protect (only the names looked up, nothing bound).
//!
//! `cargo bench --bench sandbox -- protected` runs only the parts whose name holds the word
//! (`trusted`, `shell`, `protected`).
//!
//! Target: at most 0.15 ms added to a round trip (the kernel layer's cost budget
//! per call), the median with the sandbox on minus the median with it off, same run.
#![allow(clippy::print_stdout)]

mod common;

use std::time::Instant;

use common::{ms, size, Figure, Report, Server, Stats, Target};
use serde_json::json;

const ALLOW: &str = "echo,cat,ls,grep,head,tail,wc,sort,git,printf";
/// Most ms the sandbox may add to an `exec` round trip.
const TARGET: f64 = 0.15;

fn main() {
    if !cfg!(target_os = "linux") {
        eprintln!("sandbox: skipped (the kernel sandbox exists only on Linux)");
        return;
    }
    // Cargo passes `--bench`; a word of the person's picks the parts.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runs = |part: &str| only.is_empty() || only.iter().any(|w| part.contains(w.as_str()));
    let mut report = Report::new("sandbox");
    if runs("trusted") {
        trusted(&mut report, "shell_execute", true);
        trusted(&mut report, "exec", true);
        trusted(&mut report, "exec", false);
    }
    if runs("shell") {
        shell(&mut report);
    }
    if runs("protected") {
        protected(&mut report);
    }
}

/// A server of the sandbox figures: without protected paths, whose own cost is measured
/// apart (`protected`), so that these figures stay the sandbox's alone (the bench runs in
/// a repository, whose `.git` the default list would bind in every call).
fn server(env: &[(&str, &str)], cgroup: bool) -> Server {
    let mut env: Vec<(&str, String)> = env.iter().map(|(k, v)| (*k, v.to_string())).collect();
    env.push(("YIELDSHELL_PROTECTED_PATHS", "none".to_string()));
    if !cgroup {
        env.push(("YIELDSHELL_CGROUP", "off".to_string()));
    }
    Server::start(&env)
}

/// CPU time (user and system, every thread, ended ones included) the process `pid` used so
/// far, in ms, from `/proc/<pid>/stat` (clock ticks of 10 ms).
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

/// Round trips of `command` on each server in turn: one `Vec` of samples per server, and
/// each server's CPU time per measured call (ms), which the load of a shared machine
/// disturbs far less than the round trip.
fn interleaved(servers: &mut [Server], tool: &str) -> (Vec<Vec<f64>>, Vec<f64>) {
    let n = size(300, 1);
    let warmup = size(20, 0);
    let mut samples = vec![Vec::with_capacity(n); servers.len()];
    let mut cpu = vec![0.0; servers.len()];
    for i in 0..warmup + n {
        if i == warmup {
            for (s, c) in servers.iter().zip(cpu.iter_mut()) {
                *c = cpu_ms(s.pid());
            }
        }
        for (s, out) in servers.iter_mut().zip(samples.iter_mut()) {
            let t = Instant::now();
            let r = if tool == "exec" {
                s.exec("echo hi", json!({}))
            } else {
                s.call("shell_execute", json!({"command": ["echo", "hi"]}))
            };
            let e = ms(t.elapsed());
            if tool == "exec" {
                assert_eq!(r["status"], "completed", "{r}");
            }
            assert_eq!(r["stdout"], "hi\n", "{r}");
            if i >= warmup {
                out.push(e);
            }
        }
    }
    for (s, c) in servers.iter().zip(cpu.iter_mut()) {
        *c = (cpu_ms(s.pid()) - *c) / n as f64;
    }
    (samples, cpu)
}

/// The server's CPU time per call with the sandbox on against off (same run).
fn cpu_added(report: &mut Report, name: &str, on: f64, off: f64) {
    report.add(
        Figure::new(&format!("{name}: server CPU added"), "ms", on - off).note(format!(
            "server CPU per exec {} ms on vs {} ms off (10 ms ticks over all calls)",
            common::num(on),
            common::num(off)
        )),
    );
}

fn added(report: &mut Report, name: &str, on: &Stats, off: &Stats, target: Target) {
    report.add(
        Figure::new(name, "ms", on.median())
            .min(on.min())
            .baseline(off.median(), "sandbox off, same run")
            .note(format!(
                "added per exec (median) {} ms, p90 on {} ms vs off {} ms",
                common::num(on.median() - off.median()),
                common::num(on.pct(90.0)),
                common::num(off.pct(90.0))
            )),
    );
    report.add(
        Figure::new(&format!("{name}: added"), "ms", on.median() - off.median()).target(target),
    );
}

fn trusted(report: &mut Report, tool: &str, cgroup: bool) {
    let base = ("ALLOW_COMMANDS", ALLOW);
    let mut servers = vec![
        server(&[base, ("YIELDSHELL_SANDBOX", "off")], cgroup),
        server(&[base, ("YIELDSHELL_SANDBOX", "on")], cgroup),
        server(
            &[
                base,
                ("YIELDSHELL_SANDBOX", "on"),
                ("YIELDSHELL_TEST_NO_SECCOMP", "1"),
            ],
            cgroup,
        ),
    ];
    let (samples, cpu) = interleaved(&mut servers, tool);
    drop(servers);
    let [off, on, no_filter]: [Stats; 3] = samples
        .into_iter()
        .map(Stats::new)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| unreachable!("three servers"));
    let name = format!("trusted {tool}{}", if cgroup { "" } else { ", no cgroup" });
    report.add(
        Figure::new(
            &format!("{name}: the seccomp filter's share"),
            "ms",
            on.median() - no_filter.median(),
        )
        .note(format!(
            "sandbox on {} ms vs on without the filter {} ms (median, same run)",
            common::num(on.median()),
            common::num(no_filter.median())
        )),
    );
    let name = format!("{name}, sandbox on");
    added(report, &name, &on, &off, Target::AtMost(TARGET));
    cpu_added(report, &name, cpu[1], cpu[0]);
}

fn shell(report: &mut Report) {
    let mut servers = vec![
        server(&[("YIELDSHELL_SANDBOX", "off")], true),
        // A project directory: the repository is refused (an ancestor of the server's
        // own executable, target/...).
        server(
            &[
                ("YIELDSHELL_SANDBOX", "workspace"),
                ("YIELDSHELL_DEFAULT_CWD", env!("CARGO_TARGET_TMPDIR")),
            ],
            true,
        ),
    ];
    let (samples, cpu) = interleaved(&mut servers, "exec");
    drop(servers);
    let mut it = samples.into_iter().map(Stats::new);
    let (off, on) = (
        it.next().expect("off samples"),
        it.next().expect("on samples"),
    );
    added(
        report,
        "shell exec, workspace",
        &on,
        &off,
        Target::AtMost(TARGET),
    );
    cpu_added(report, "shell exec, workspace", cpu[1], cpu[0]);
}

/// Protected paths: the default list against `none`, in a repository and in a directory
/// with nothing to protect, trusted `exec` with the sandbox on (interleaved, same run).
fn protected(report: &mut Report) {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-protected-{}", std::process::id()));
    let repo = base.join("repo");
    let plain = base.join("plain");
    for d in [&repo, &plain] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init");
    std::fs::write(repo.join(".envrc"), "export A=1\n").expect("write .envrc");
    // The server keeps a call's protected paths for the next call where every directory
    // it read has been unchanged for 2 s: measured once that holds, as for an agent's calls
    // in a repository it reads (a directory written at every call is looked up afresh, as
    // before: the figure's note gives both).
    let git = repo.join(".git");
    {
        use yieldshell::internals::protected::{wait_unchanged, QUIET};
        let paths = [&base, &repo, &git, &plain].map(std::path::PathBuf::as_path);
        let margin = QUIET + std::time::Duration::from_millis(500);
        assert!(wait_unchanged(
            &paths,
            margin,
            std::time::Duration::from_secs(30)
        ));
    }
    // `None`: the default list.
    let env = |dir: &std::path::Path, list: Option<&str>| -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("ALLOW_COMMANDS", ALLOW.to_string()),
            ("YIELDSHELL_SANDBOX", "on".to_string()),
            ("YIELDSHELL_DEFAULT_CWD", dir.display().to_string()),
            ("YIELDSHELL_CGROUP", "off".to_string()),
        ];
        env.extend(list.map(|l| ("YIELDSHELL_PROTECTED_PATHS", l.to_string())));
        env
    };
    let mut servers: Vec<Server> = [
        env(&repo, Some("none")),
        env(&repo, None),
        env(&plain, Some("none")),
        env(&plain, None),
    ]
    .iter()
    .map(|e| Server::start(e))
    .collect();
    let (samples, cpu) = interleaved(&mut servers, "exec");
    drop(servers);
    let _ = std::fs::remove_dir_all(&base);
    let [repo_off, repo_on, plain_off, plain_on]: [Stats; 4] = samples
        .into_iter()
        .map(Stats::new)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| unreachable!("four servers"));
    let name = "trusted exec, protected paths in a repository (.git, .envrc)";
    report.add(
        Figure::new(name, "ms", repo_on.median())
            .baseline(
                repo_off.median(),
                "YIELDSHELL_PROTECTED_PATHS=none, same run",
            )
            .note(format!(
                "p90 {} ms vs {} ms",
                common::num(repo_on.pct(90.0)),
                common::num(repo_off.pct(90.0))
            )),
    );
    report.add(
        Figure::new(
            &format!("{name}: added"),
            "ms",
            repo_on.median() - repo_off.median(),
        )
        .target(Target::AtMost(0.3)),
    );
    cpu_added(report, name, cpu[1], cpu[0]);
    let name = "trusted exec, protected paths with nothing to protect";
    report.add(
        Figure::new(
            &format!("{name}: added"),
            "ms",
            plain_on.median() - plain_off.median(),
        )
        .note(format!(
            "{} ms vs {} ms with none (median, same run): the names looked up, nothing bound",
            common::num(plain_on.median()),
            common::num(plain_off.median())
        )),
    );
    cpu_added(report, name, cpu[3], cpu[2]);
}
