//! Stop bench of the real binary: the time of one `stop` must
//! not grow with the number of live records. With 200, 1,000 and 2,000 live `sleep 600`
//! records, every record is stopped one by one; the figure is the median time of one
//! `stop` (request to answer), against the same median with 200 live records, measured in
//! the same run (target: at most 2x). The total for all of them and the shutdown that
//! follows are reported too.
//!
//! `YS_STOP_CGROUP=off` runs the server without a cgroup per command (the fallback that
//! finds a record's strays by process group, marker and the server's subreaper).
#![allow(clippy::print_stdout)]

mod common;

use std::time::Instant;

use common::{ms, size, Figure, Report, Server, Stats, Target};
use serde_json::json;

fn main() {
    let mut report = Report::new("stop");
    let sizes: Vec<usize> = size(vec![200, 1000, 2000], vec![3, 6]);
    let mut env = Vec::new();
    if let Ok(v) = std::env::var("YS_STOP_CGROUP") {
        env.push(("YIELDSHELL_CGROUP", v));
    }
    let mut baseline: Option<f64> = None;
    for &n in &sizes {
        let mut vars = env.clone();
        vars.push(("YIELDSHELL_MAX_PROCESSES", n.to_string()));
        let mut s = Server::start(&vars);
        let ids: Vec<String> = (0..n)
            .map(|_| {
                let r = s.exec("sleep 600", json!({"yield_ms": 0}));
                assert_eq!(r["status"], "backgrounded", "{r}");
                r["process_id"].as_str().expect("process_id").to_string()
            })
            .collect();
        let all = Instant::now();
        let mut times = Vec::with_capacity(n);
        for id in &ids {
            let t = Instant::now();
            let r = s.call("stop", json!({"process_id": id}));
            times.push(ms(t.elapsed()));
            // `stopped` is left out at its default, true.
            assert_ne!(r["stopped"], false, "{r}");
        }
        let total = ms(all.elapsed());
        let stats = Stats::new(times);
        let median = stats.median();
        let base = *baseline.get_or_insert(median);
        let first = sizes[0];
        report.add(
            Figure::new(
                &format!("stop, one by one, with {n} live records"),
                "ms",
                median,
            )
            .min(stats.min())
            .baseline(base, &format!("the same with {first} live records"))
            .target(Target::RatioAtMost(2.0))
            .note(format!(
                "all {n} stopped in {:.0} ms; p99 {:.2} ms",
                total,
                stats.pct(99.0)
            )),
        );
        if n == *sizes.last().unwrap_or(&n) {
            report.add(
                Figure::new(&format!("stopping {n} records one by one"), "ms", total)
                    .target(Target::AtMost(size(5000.0, 60_000.0))),
            );
        }
        let done = s.shutdown();
        assert!(done.survivors.is_empty(), "left: {:?}", done.survivors);
    }
}
