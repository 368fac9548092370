//! Scale bench of the real binary: 1,000 live `sleep 600` processes. Measures `ps` of all
//! of them, the server's resident memory with them, its idle resident memory right after
//! `initialize`, and that nothing it started survives its shutdown.
//!
//! Baselines, measured in the same run: `ps` on the same server before any process was
//! started; the resident memory of an idle `cat` (the floor of a small process here) for
//! the idle figure; the server's own idle memory for the 1,000-process figure.
//!
//! Parked waits: 1,000 and 10,000 concurrent `wait` calls on one quiet
//! process, then `ping` and `ps` latency (p99), threads and VmRSS while they are parked;
//! and 1,000 concurrent `exec` calls in their yield: threads and VmRSS. `YS_SCALE_PART`
//! (`processes`, `waits`, `execs`) runs one part only; `YS_WAIT_TIMEOUT_MS` sets the
//! timeout of the parked waits (default 30 s).
#![allow(clippy::print_stdout)]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ms, size, Figure, Report, Server, Stats, Target};
use serde_json::{json, Value};

const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    let mut report = Report::new("scale");
    let part = std::env::var("YS_SCALE_PART").unwrap_or_default();
    if part.is_empty() || part == "waits" {
        for n in [size(1000, 20), size(10_000, 50)] {
            parked_waits(&mut report, n);
        }
    }
    if part.is_empty() || part == "execs" {
        concurrent_execs(&mut report, size(1000, 20));
    }
    if part.is_empty() || part == "processes" {
        live_processes(&mut report);
    }
}

/// `n` concurrent `wait` calls on one `sleep`: ping and ps p99, threads and VmRSS while
/// they are parked; then every wait answers when the process is killed.
fn parked_waits(report: &mut Report, n: usize) {
    let timeout_ms: u64 = std::env::var("YS_WAIT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000);
    let mut s = Server::start(&[]);
    let idle_rss = s.rss();
    let r = s.exec("sleep 600", json!({"yield_ms": 0}));
    let target = r["process_id"].as_str().expect("process_id").to_string();
    let t = Instant::now();
    let ids: Vec<u64> = (0..n)
        .map(|_| {
            let args =
                json!({"process_id": target, "timeout_ms": timeout_ms, "max_output_bytes": 1});
            s.send(
                "tools/call",
                Some(json!({"name": "wait", "arguments": args})),
            )
        })
        .collect();
    let sent_ms = ms(t.elapsed());
    // Calls are taken in order: once this ps answers, every wait reached a worker.
    let first_ps = common::time_ms(|| {
        s.call("ps", json!({"limit": 5}));
    });
    let threads = common::threads(s.pid());
    let samples = size(200, 3);
    let pings = Stats::new((0..samples).map(|_| common::time_ms(|| s.ping())).collect());
    let ps = Stats::new(
        (0..samples)
            .map(|_| {
                common::time_ms(|| {
                    s.call("ps", json!({"limit": 50}));
                })
            })
            .collect(),
    );
    let rss = s.rss();
    report.add(
        Figure::new(
            &format!("ping p99 with {n} parked waits"),
            "ms",
            pings.pct(99.0),
        )
        .min(pings.min())
        .target(Target::AtMost(5.0))
        .note(format!("median {} ms", common::num(pings.median()))),
    );
    report.add(
        Figure::new(&format!("ps p99 with {n} parked waits"), "ms", ps.pct(99.0))
            .min(ps.min())
            .target(Target::AtMost(5.0))
            .note(format!(
                "median {} ms; the first ps, queued behind the {n} calls, took {} ms; sending them took {} ms",
                common::num(ps.median()),
                common::num(first_ps),
                common::num(sent_ms)
            )),
    );
    report.add(
        Figure::new(
            &format!("threads with {n} parked waits"),
            "",
            threads as f64,
        )
        .target(Target::AtMost(16.0)),
    );
    report.add(
        Figure::new(
            &format!("VmRSS with {n} parked waits"),
            "MiB",
            rss as f64 / MIB,
        )
        .baseline(idle_rss as f64 / MIB, "idle server")
        .target(Target::AtMost(64.0)),
    );
    s.call("stop", json!({"process_id": target, "signal": "SIGKILL"}));
    let t = Instant::now();
    let mut answered = 0;
    for id in ids {
        let v = s.recv(id);
        if common::tool_result(&v).is_ok() {
            answered += 1;
        }
    }
    report.add(
        Figure::new(
            &format!("  waits answered after the kill, of {n}"),
            "",
            answered as f64,
        )
        .target(Target::AtLeast(n as f64))
        .note(format!("all read in {} ms", common::num(ms(t.elapsed())))),
    );
}

/// `n` concurrent `exec` calls of `sleep 600` in their yield: threads and VmRSS.
fn concurrent_execs(report: &mut Report, n: usize) {
    let mut s = Server::start(&[("YIELDSHELL_MAX_PROCESSES", (n + 10).to_string())]);
    let idle_rss = s.rss();
    let t = Instant::now();
    let ids: Vec<u64> = (0..n)
        .map(|_| {
            let args = json!({"command": "sleep 600", "side_effects": ["NONE"], "yield_ms": 30000});
            s.send(
                "tools/call",
                Some(json!({"name": "exec", "arguments": args})),
            )
        })
        .collect();
    let first_ps = common::time_ms(|| {
        s.call("ps", json!({"limit": 1}));
    });
    let sent_ms = ms(t.elapsed());
    let threads = common::threads(s.pid());
    let rss = s.rss();
    let ps = Stats::new(
        (0..size(50, 3))
            .map(|_| {
                common::time_ms(|| {
                    s.call("ps", json!({"limit": 50}));
                })
            })
            .collect(),
    );
    report.add(
        Figure::new(&format!("threads with {n} execs in their yield"), "", threads as f64)
            .target(Target::AtMost(16.0))
            .note(format!(
                "{n} execs sent and started in {} ms (the ps behind them took {} ms); ps p99 then {} ms",
                common::num(sent_ms),
                common::num(first_ps),
                common::num(ps.pct(99.0))
            )),
    );
    report.add(
        Figure::new(
            &format!("VmRSS with {n} execs in their yield"),
            "MiB",
            rss as f64 / MIB,
        )
        .baseline(idle_rss as f64 / MIB, "idle server"),
    );
    let done = s.shutdown();
    done.report(report, &format!("{n} execs in their yield"));
    drop(ids);
}

/// 1,000 live processes: ps, VmRSS, shutdown.
fn live_processes(report: &mut Report) {
    let procs: usize = size(1000, 20);
    let samples = size(30, 1);
    let mut s = Server::start(&[("YIELDSHELL_MAX_PROCESSES", procs.to_string())]);

    // Idle memory right after initialize (after a moment for the threads to settle).
    std::thread::sleep(Duration::from_millis(size(200, 20)));
    let idle_rss = s.rss();
    let cat_rss = idle_cat_rss();
    report.add(
        Figure::new("idle VmRSS after initialize", "MiB", idle_rss as f64 / MIB)
            .baseline(cat_rss as f64 / MIB, "idle `cat`")
            .target(Target::AtMost(4.0))
            .note(format!("server threads {}", common::threads(s.pid()))),
    );

    let empty = Stats::new((0..samples).map(|_| ps_wire_ms(&mut s, 0).0).collect());

    let t = Instant::now();
    let mut execs = Vec::with_capacity(procs);
    for _ in 0..procs {
        let e = Instant::now();
        let r = s.exec("sleep 600", json!({"yield_ms": 0}));
        execs.push(ms(e.elapsed()));
        assert_eq!(r["status"], "backgrounded", "{r}");
    }
    let spawn_ms = ms(t.elapsed());
    let tenth = (procs / 10).max(1);
    let first = Stats::new(execs[..tenth].to_vec());
    let last = Stats::new(execs[procs - tenth..].to_vec());
    report.add(
        Figure::new(
            &format!("exec (yield_ms 0), last {tenth} of {procs}"),
            "ms",
            last.median(),
        )
        .min(last.min())
        .baseline(first.median(), "first execs")
        .note("the cost of a spawn as the number of live processes grows"),
    );
    std::thread::sleep(Duration::from_millis(size(300, 20)));

    // The same records on a server without a cgroup per command, measured in turn with it.
    let mut off = Server::start(&[
        ("YIELDSHELL_MAX_PROCESSES", procs.to_string()),
        ("YIELDSHELL_CGROUP", "off".to_string()),
    ]);
    for _ in 0..procs {
        let r = off.exec("sleep 600", json!({"yield_ms": 0}));
        assert_eq!(r["status"], "backgrounded", "{r}");
    }
    std::thread::sleep(Duration::from_millis(size(300, 20)));

    let mut wire = Vec::new();
    let mut parse = Vec::new();
    let mut wire_off = Vec::new();
    for _ in 0..samples {
        wire_off.push(ps_wire_ms(&mut off, procs).0);
        let (w, p) = ps_wire_ms(&mut s, procs);
        wire.push(w);
        parse.push(p);
    }
    let (wire, parse, wire_off) = (Stats::new(wire), Stats::new(parse), Stats::new(wire_off));
    let cgroups = s.call("ps", json!({"limit": 1}))["processes"][0]["processes"].is_u64();
    report.add(
        Figure::new(
            &format!("ps of {procs} live processes"),
            "ms",
            wire.median(),
        )
        .min(wire.min())
        .baseline(empty.median(), "ps of 0 processes")
        .target(Target::AtMost(10.0))
        .note(format!(
            "request to response line; parsing it in the bench adds {} ms; cgroup per command: {}",
            common::num(parse.median()),
            if cgroups { "on" } else { "not available here" }
        )),
    );
    report.add(
        Figure::new(
            &format!("ps of {procs} live processes, cgroups on against off"),
            "ms",
            wire.median(),
        )
        .min(wire.min())
        .baseline(wire_off.median(), "YIELDSHELL_CGROUP=off, same run")
        .target(Target::RatioAtMost(1.5)),
    );
    off.shutdown();

    let loaded_rss = s.rss();
    let threads = common::threads(s.pid());
    report.add(
        Figure::new(
            &format!("VmRSS with {procs} idle processes"),
            "MiB",
            loaded_rss as f64 / MIB,
        )
        .baseline(idle_rss as f64 / MIB, "idle server")
        .target(Target::AtMost(64.0))
        .note(format!(
            "{} KiB per process, server threads {threads}, {procs} execs took {} ms ({} ms each)",
            common::num((loaded_rss.saturating_sub(idle_rss)) as f64 / 1024.0 / procs as f64),
            common::num(spawn_ms),
            common::num(spawn_ms / procs as f64)
        )),
    );

    let live = common::tagged_pids(&s.tag).len() - 1; // minus the server itself
    let done = s.shutdown();
    done.report(report, &format!("{procs} records ({live} pids)"));
}

/// One `ps` (limit 1000): milliseconds from request to response line, then to parse it.
fn ps_wire_ms(s: &mut Server, expect: usize) -> (f64, f64) {
    let t = Instant::now();
    let id = s.send(
        "tools/call",
        Some(json!({"name": "ps", "arguments": {"limit": 1000}})),
    );
    let line = s.read_line();
    let wire = ms(t.elapsed());
    let t = Instant::now();
    let v: Value = serde_json::from_slice(&line).expect("json");
    let parse = ms(t.elapsed());
    assert_eq!(v["id"].as_u64(), Some(id), "one request at a time");
    let r = common::tool_result(&v).expect("ps");
    let n = r["processes"].as_array().map_or(0, Vec::len);
    assert_eq!(n, expect, "ps lists every live process");
    (wire, parse)
}

/// VmRSS of an idle `cat` blocked on its stdin.
fn idle_cat_rss() -> u64 {
    let mut cat = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn cat");
    std::thread::sleep(Duration::from_millis(20));
    let rss = common::proc_status_kib(cat.id(), "VmRSS:").unwrap_or(0) * 1024;
    drop(cat.stdin.take());
    let _ = cat.wait();
    rss
}
