//! Latency benches of the real binary over pipes: start-up (spawn to the `initialize`
//! response), the `exec` round trip of a fast command, and `ping` under load.
//!
//! Baselines, measured in the same run and interleaved with the samples so that noise hits
//! both alike: spawning and reaping `/bin/true`; fork/exec/wait of `/bin/sh -c 'echo hi'`
//! with its output read, done by this process; `ping` on an idle server.
#![allow(clippy::print_stdout)]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ms, size, Figure, Report, Server, Stats, Target};
use serde_json::json;

fn main() {
    let mut report = Report::new("latency");
    startup(&mut report);
    exec_round_trip(&mut report);
    exec_steps(&mut report);
    exec_spaced(&mut report);
    responsiveness(&mut report);
}

/// Spawn to `initialize` response, against spawn and reap of `/bin/true`.
fn startup(report: &mut Report) {
    let n = size(40, 1);
    let mut server = Vec::with_capacity(n);
    let mut base = Vec::with_capacity(n);
    let mut exits = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let status = Command::new("/bin/true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("spawn /bin/true");
        base.push(ms(t.elapsed()));
        assert!(status.success());

        let mut s = Server::spawn(&[]);
        s.initialize();
        server.push(ms(s.spawned_at.elapsed()));
        let done = s.shutdown();
        assert!(done.exited && done.survivors.is_empty(), "{done:?}");
        exits.push(ms(done.took));
    }
    let (server, base, exits) = (Stats::new(server), Stats::new(base), Stats::new(exits));
    report.add(
        Figure::new("start-up to initialize response", "ms", server.median())
            .min(server.min())
            .baseline(base.median(), "spawn+reap /bin/true")
            .target(Target::RatioAtMost(3.0)),
    );
    report.add(
        Figure::new("idle shutdown (stdin EOF to exit)", "ms", exits.median())
            .min(exits.min())
            .target(Target::AtMost(2000.0)),
    );
}

/// `exec` of `echo hi` on one long-lived server, against fork/exec/wait of the same shell
/// command in this process.
fn exec_round_trip(report: &mut Report) {
    let n = size(300, 1);
    let warmup = size(20, 0);
    let mut s = Server::start(&[]);
    let mut server = Vec::with_capacity(n);
    let mut base = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let t = Instant::now();
        let out = Command::new("/bin/sh")
            .args(["-c", "echo hi"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .expect("spawn /bin/sh");
        let b = ms(t.elapsed());
        assert_eq!(out.stdout, b"hi\n");

        let t = Instant::now();
        let r = s.exec("echo hi", json!({}));
        let e = ms(t.elapsed());
        assert_eq!(r["status"], "completed", "{r}");
        assert_eq!(r["stdout"], "hi\n", "{r}");
        if i >= warmup {
            base.push(b);
            server.push(e);
        }
    }
    drop(s);
    let (server, base) = (Stats::new(server), Stats::new(base));
    report.add(
        Figure::new("exec `echo hi` round trip", "ms", server.median())
            .min(server.min())
            .baseline(base.median(), "sh -c 'echo hi' fork/exec/wait")
            .target(Target::RatioAtMost(1.3))
            .note(format!(
                "p99 {} ms, overhead over baseline (median) {} ms",
                common::num(server.pct(99.0)),
                common::num(server.median() - base.median())
            )),
    );
}

/// What each step of an `exec` costs (the server's debug timings of its launch and its
/// answer), and the round trip with and without a cgroup per command, in the same run.
fn exec_steps(report: &mut Report) {
    let n = size(300, 2);
    let mut timed = Server::start(&[("YIELDSHELL_LOG", "debug".to_string())]);
    let mut plain = Server::start(&[]);
    let mut off = Server::start(&[("YIELDSHELL_CGROUP", "off".to_string())]);
    let (mut on_ms, mut off_ms) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let r = timed.exec("echo hi", json!({}));
        assert_eq!(r["stdout"], "hi\n", "{r}");
        let t = Instant::now();
        plain.exec("echo hi", json!({}));
        on_ms.push(ms(t.elapsed()));
        let t = Instant::now();
        off.exec("echo hi", json!({}));
        off_ms.push(ms(t.elapsed()));
    }
    timed.shutdown();
    let lines = timed.steps.lock().map(|l| l.clone()).unwrap_or_default();
    let mut steps: Vec<(String, Vec<f64>)> = Vec::new();
    for line in &lines {
        let Some((_, list)) = line.split_once(" steps (µs): ") else {
            continue;
        };
        for item in list.split(", ") {
            let Some((name, value)) = item.rsplit_once(' ') else {
                continue;
            };
            let Ok(us) = value.parse::<f64>() else {
                continue;
            };
            match steps.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(us / 1000.0),
                None => steps.push((name.to_string(), vec![us / 1000.0])),
            }
        }
    }
    assert!(!steps.is_empty(), "no step timings in the debug log");
    for (name, values) in steps {
        let stats = Stats::new(values);
        report.add(
            Figure::new(&format!("exec step: {name}"), "ms", stats.median())
                .min(stats.min())
                .note(format!("p99 {} ms", common::num(stats.pct(99.0)))),
        );
    }
    let (on, off) = (Stats::new(on_ms), Stats::new(off_ms));
    report.add(
        Figure::new("exec `echo hi`, cgroup per command", "ms", on.median())
            .min(on.min())
            .baseline(off.median(), "YIELDSHELL_CGROUP=off, same run"),
    );
}

/// `exec` of `echo hi` as an agent calls it, a while after the last command, with a cgroup
/// per command, against the same on a server without cgroups, interleaved. Moving a
/// process into a cgroup by a write to `cgroup.procs` waits for an RCU grace period when
/// nothing moved for a few milliseconds; back-to-back calls (above) never see it.
fn exec_spaced(report: &mut Report) {
    let n = size(20, 1);
    let gap = Duration::from_millis(100);
    let mut on = Server::start(&[]);
    let mut off = Server::start(&[("YIELDSHELL_CGROUP", "off".to_string())]);
    let (mut on_ms, mut off_ms) = (Vec::new(), Vec::new());
    for _ in 0..n {
        for (server, samples) in [(&mut on, &mut on_ms), (&mut off, &mut off_ms)] {
            std::thread::sleep(gap);
            let t = Instant::now();
            let r = server.exec("echo hi", json!({}));
            samples.push(ms(t.elapsed()));
            assert_eq!(r["stdout"], "hi\n", "{r}");
        }
    }
    let (on, off) = (Stats::new(on_ms), Stats::new(off_ms));
    report.add(
        Figure::new(
            "exec `echo hi`, 100 ms after the last call",
            "ms",
            on.median(),
        )
        .min(on.min())
        .baseline(off.median(), "YIELDSHELL_CGROUP=off, same spacing")
        .target(Target::RatioAtMost(1.3)),
    );
}

/// `ping` while 50 processes flood output and 200 sleep, against `ping` on an idle server.
fn responsiveness(report: &mut Report) {
    let floods = size(50, 2);
    let sleepers = size(200, 5);
    let pings = size(1000, 10);
    let mut s = Server::start(&[("YIELDSHELL_MAX_PROCESSES", "300".to_string())]);

    let idle = Stats::new(ping_samples(&mut s, pings));

    for _ in 0..sleepers {
        let r = s.exec("exec sleep 600", json!({"yield_ms": 0}));
        assert_eq!(r["status"], "backgrounded", "{r}");
    }
    for _ in 0..floods {
        let r = s.exec("exec yes 'flood flood flood flood'", json!({"yield_ms": 0}));
        assert_eq!(r["status"], "backgrounded", "{r}");
    }
    // Let the floods fill their rings so that the pumps are in their steady state.
    std::thread::sleep(Duration::from_millis(size(300, 20)));
    // Interleave pings with echo round trips through `cat`: the scheduling floor that any
    // process on this machine sees under the same load.
    let mut cat = Echo::start();
    let mut loaded = Vec::with_capacity(pings);
    let mut floor = Vec::with_capacity(pings);
    for _ in 0..pings {
        loaded.extend(ping_samples(&mut s, 1));
        let t = Instant::now();
        cat.round_trip();
        floor.push(ms(t.elapsed()));
    }
    drop(cat);
    let (loaded, floor) = (Stats::new(loaded), Stats::new(floor));
    let threads = common::threads(s.pid());
    let done = s.shutdown();

    report.add(
        Figure::new(
            &format!("ping p99, {floods} floods + {sleepers} sleeps"),
            "ms",
            loaded.pct(99.0),
        )
        .min(loaded.min())
        .baseline(idle.pct(99.0), "idle server p99")
        .target(Target::AtMost(5.0))
        .note(format!(
            "p50 {} ms (idle p50 {} ms), max {} ms, {} pings, server threads {threads}",
            common::num(loaded.median()),
            common::num(idle.median()),
            common::num(loaded.max()),
            loaded.len()
        )),
    );
    report.add(
        Figure::new("ping p50 under the same load", "ms", loaded.median())
            .min(loaded.min())
            .baseline(idle.median(), "idle server p50"),
    );
    report.add(
        Figure::new(
            "  reference: `cat` echo p99, same load",
            "ms",
            floor.pct(99.0),
        )
        .min(floor.min())
        .note(format!(
            "p50 {} ms, max {} ms: the scheduling floor of a 2-thread pipe round trip",
            common::num(floor.median()),
            common::num(floor.max())
        )),
    );
    done.report(report, &format!("{} live records", floods + sleepers));
}

/// A `cat` that echoes lines: a round trip through it is the cheapest possible server.
struct Echo {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl Echo {
    fn start() -> Echo {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn cat");
        let input = child.stdin.take().expect("stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        Echo {
            child,
            input,
            output,
        }
    }

    fn round_trip(&mut self) {
        use std::io::{BufRead, Write};
        let msg = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        self.input.write_all(msg).expect("write to cat");
        self.input.flush().expect("flush to cat");
        let mut line = Vec::new();
        self.output
            .read_until(b'\n', &mut line)
            .expect("read from cat");
        assert_eq!(line, msg);
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Round trips of `ping`, spaced by about half a millisecond so that they sample the load
/// at different moments rather than queueing back to back.
fn ping_samples(s: &mut Server, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        s.ping();
        out.push(ms(t.elapsed()));
        std::thread::sleep(Duration::from_micros(500));
    }
    out
}
