//! What the agent features (terminals, input waits, limits) cost: nothing when unused, and
//! how much each feature adds when used.
//!
//! Unused (the promise): the `exec` round trip of `echo hi` and the idle VmRSS (median of
//! fresh servers), measured in the same run and interleaved, against another build given as `YS_COMPARE_BIN` (for
//! example the main branch's release binary). Without `YS_COMPARE_BIN` the baseline is the
//! same binary (the figure then only shows the noise of the method).
//!
//! Used: `exec` on a terminal (`tty: true`) against pipes; `exec` with `YIELDSHELL_LIMITS`
//! (rlimits set by the spawned child before its exec) against none; `read` of a record whose process is
//! blocked reading its stdin pipe (the `/proc` look of the input-wait detection) against
//! `read` of one whose stdin is closed (no look).
#![allow(clippy::print_stdout)]

mod common;

use std::time::Instant;

use common::{ms, size, Figure, Report, Server, Stats, Target, BIN};
use serde_json::json;

fn main() {
    let mut report = Report::new("agents");
    let compare = std::env::var("YS_COMPARE_BIN").unwrap_or_else(|_| BIN.to_string());
    unused(&mut report, &compare);
    used(&mut report);
}

fn start(bin: &str, env: &[(&str, String)]) -> Server {
    let mut s = Server::spawn_bin(bin, env);
    s.initialize();
    s
}

/// Features unused: this build against `compare`, interleaved.
fn unused(report: &mut Report, compare: &str) {
    let n = size(300, 1);
    let warmup = size(20, 0);
    // Idle VmRSS: the median over fresh servers of each build, started alternately (one
    // sample is within the noise of page faults).
    let starts = size(15, 1);
    let (mut rss_ours, mut rss_theirs) = (Vec::new(), Vec::new());
    for _ in 0..starts {
        rss_theirs.push(start(compare, &[]).rss() as f64);
        rss_ours.push(start(BIN, &[]).rss() as f64);
    }
    let (idle_ours, idle_theirs) = (
        Stats::new(rss_ours).median(),
        Stats::new(rss_theirs).median(),
    );
    let mut ours = start(BIN, &[]);
    let mut theirs = start(compare, &[]);
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let t = Instant::now();
        let r = theirs.exec("echo hi", json!({}));
        let tb = ms(t.elapsed());
        assert_eq!(r["stdout"], "hi\n", "{r}");
        let t = Instant::now();
        let r = ours.exec("echo hi", json!({}));
        let ta = ms(t.elapsed());
        assert_eq!(r["stdout"], "hi\n", "{r}");
        if i >= warmup {
            a.push(ta);
            b.push(tb);
        }
    }
    let (a, b) = (Stats::new(a), Stats::new(b));
    let which = if compare == BIN {
        "the same build".to_string()
    } else {
        format!("YS_COMPARE_BIN ({compare})")
    };
    report.add(
        Figure::new("exec `echo hi`, features unused", "ms", a.median())
            .min(a.min())
            .baseline(b.median(), &which)
            .target(Target::RatioAtMost(1.05))
            .note(format!(
                "p99 {} ms vs {} ms",
                common::num(a.pct(99.0)),
                common::num(b.pct(99.0))
            )),
    );
    const MIB: f64 = 1024.0 * 1024.0;
    report.add(
        Figure::new("idle VmRSS after initialize", "MiB", idle_ours / MIB)
            .baseline(idle_theirs / MIB, &which)
            .target(Target::RatioAtMost(1.05)),
    );
    report.add(
        Figure::new(
            "VmRSS after the round trips",
            "MiB",
            ours.rss() as f64 / MIB,
        )
        .baseline(theirs.rss() as f64 / MIB, &which)
        .target(Target::None),
    );
}

/// Interleaved round trips of two kinds of call: `f(false)` the baseline, `f(true)` the
/// feature used; returns (used, baseline).
fn pair(n: usize, mut f: impl FnMut(bool) -> f64) -> (Stats, Stats) {
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        b.push(f(false));
        a.push(f(true));
    }
    (Stats::new(a), Stats::new(b))
}

fn timed(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    ms(t.elapsed())
}

/// Features used: what each adds.
fn used(report: &mut Report) {
    let n = size(200, 1);
    let mut s = start(BIN, &[]);
    let (tty, pipes) = pair(n, |tty| {
        timed(|| {
            let r = s.exec("echo hi", json!({"tty": tty}));
            assert_eq!(r["stdout"], "hi\n", "{r}");
        })
    });
    report.add(
        Figure::new("exec `echo hi` on a tty", "ms", tty.median())
            .min(tty.min())
            .baseline(pipes.median(), "the same on pipes")
            .target(Target::None),
    );
    drop(s);

    let mut limited = start(
        BIN,
        &[("YIELDSHELL_LIMITS", "cpu=600,nofile=1024,fsize=1G".into())],
    );
    let mut plain = start(BIN, &[]);
    let (lim, free) = pair(n, |with| {
        let server = if with { &mut limited } else { &mut plain };
        timed(|| {
            let r = server.exec("echo hi", json!({}));
            assert_eq!(r["stdout"], "hi\n", "{r}");
        })
    });
    report.add(
        Figure::new("exec `echo hi` with rlimits", "ms", lim.median())
            .min(lim.min())
            .baseline(free.median(), "without YIELDSHELL_LIMITS")
            .target(Target::None)
            .note("the child sets the rlimits before its exec: no extra process"),
    );
    drop((limited, plain));

    let mut s = start(BIN, &[]);
    let blocked = s.exec("read x", json!({"close_stdin": false, "yield_ms": 0}));
    let closed = s.exec("sleep 600", json!({"yield_ms": 0}));
    let (b_id, c_id) = (
        blocked["process_id"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        closed["process_id"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    );
    // Past the 300 ms of quiet, so every read of the blocked one looks in /proc.
    let settle = Instant::now();
    loop {
        let r = s.call("read", json!({"process_id": b_id}));
        if r["awaiting_input"] == true {
            break;
        }
        assert!(settle.elapsed().as_secs() < 20, "never reported: {r}");
    }
    let (look, none) = pair(n, |look| {
        let id = if look { &b_id } else { &c_id };
        timed(|| {
            let r = s.call("read", json!({"process_id": id}));
            // `awaiting_input` is left out at its default, false.
            assert_eq!(r["awaiting_input"] == true, look, "{r}");
        })
    });
    report.add(
        Figure::new("read of a command waiting for input", "ms", look.median())
            .min(look.min())
            .baseline(none.median(), "read of one with stdin closed")
            .target(Target::None)
            .note(format!(
                "the /proc look: {} ms (median difference)",
                common::num(look.median() - none.median())
            )),
    );
    for id in [b_id, c_id] {
        s.call("stop", json!({"process_id": id, "force_after_ms": 500}));
    }
}
