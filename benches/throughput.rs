//! Throughput benches of the real binary: ingestion (a child writing 1 GiB to stdout as
//! fast as it can, from `exec` until the record has finished) and delivery (reading 200 MB
//! of retained text back through `read` calls with a large `max_output_bytes`).
//!
//! Baselines, measured in the same run: the same producer piped into this process, which
//! reads it in 64 KiB chunks (the least any reader that looks at the bytes must do), for
//! both figures. `head -c N /dev/zero | cat > /dev/null` is printed too, for reference:
//! recent coreutils `cat` may splice pipes to `/dev/null` without copying, which no reader
//! that keeps the bytes can match.
#![allow(clippy::print_stdout)]

mod common;

use std::fs;
use std::time::Instant;

use common::{ms, size, Figure, Report, Server, Stats, Target};
use serde_json::{json, Value};

const MIB: f64 = 1024.0 * 1024.0;
const MB: f64 = 1e6;

fn main() {
    let mut report = Report::new("throughput");
    ingestion(&mut report);
    delivery(&mut report);
}

/// User and system CPU seconds used so far by `pid` (all threads).
fn cpu_seconds(pid: u32) -> (f64, f64) {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return (0.0, 0.0);
    };
    // Fields after the command name (which may contain spaces) start at state (field 3).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = 100.0; // USER_HZ on Linux.
    let get = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0) / tick;
    (get(11), get(12))
}

fn ingestion(report: &mut Report) {
    let bytes: u64 = size(1 << 30, 4 << 20);
    let runs = size(3, 1);
    let producer = format!("head -c {bytes} /dev/zero");
    let mut server = Vec::new();
    let mut base = Vec::new();
    let mut cat = Vec::new();
    let mut peak = 0u64;
    let mut cpu = (0.0, 0.0);
    for _ in 0..runs {
        // Baseline: the same producer, read by this process.
        let t = Instant::now();
        let got = common::sh_output_len(&format!("exec {producer}"));
        base.push(ms(t.elapsed()));
        assert_eq!(got, bytes);
        cat.push(common::time_ms(|| {
            common::sh_output_len(&format!("{producer} | cat > /dev/null"));
        }));

        // A fresh server per run, so that VmHWM belongs to this run alone.
        let mut s = Server::start(&[]);
        let before = cpu_seconds(s.pid());
        let t = Instant::now();
        let r = s.exec(&format!("exec {producer}"), json!({"yield_ms": 0}));
        let id = r["process_id"].as_str().expect("process_id").to_string();
        let r = s.wait_exit(&id);
        server.push(ms(t.elapsed()));
        assert_eq!(r["status"], "completed", "{r}");
        assert_eq!(common::latest_seq(&r), Some(bytes), "{r}");
        let after = cpu_seconds(s.pid());
        cpu = (after.0 - before.0, after.1 - before.1);
        peak = peak.max(s.peak_rss());
        drop(s);
    }
    let (server, base, cat) = (Stats::new(server), Stats::new(base), Stats::new(cat));
    let rate = |t_ms: f64| bytes as f64 / MIB / (t_ms / 1e3);
    report.add(
        Figure::new(
            &format!("ingestion {} MiB (head -c)", bytes >> 20),
            "MiB/s",
            rate(server.median()),
        )
        .best(rate(server.min()))
        .baseline(rate(base.median()), "same producer read by the bench")
        .target(Target::RatioAtLeast(0.7))
        .note(format!(
            "median {} ms; `| cat > /dev/null` {} MiB/s; server CPU in the last run: user {} s, sys {} s",
            common::num(server.median()),
            common::num(rate(cat.median())),
            common::num(cpu.0),
            common::num(cpu.1)
        )),
    );
    report.add(
        Figure::new("ingestion peak RSS (VmHWM)", "MiB", peak as f64 / MIB)
            .target(Target::AtMost(16.0))
            .note("rings hold 2 x 262144 bytes per process by default: memory must not grow with output"),
    );
}

fn delivery(report: &mut Report) {
    let bytes: u64 = size(200_000_000, 2_000_000);
    let passes = size(5, 1);
    // Baseline: the same number of bytes through a pipe into this process.
    let base = Stats::new(
        (0..passes)
            .map(|_| {
                common::time_ms(|| {
                    common::sh_output_len(&format!("exec head -c {bytes} /dev/zero"));
                })
            })
            .collect(),
    );
    let base = bytes as f64 / MB / (base.median() / 1e3);
    let latest = delivery_run(bytes, passes, "2025-11-25");
    report.add(
        latest
            .baseline(base, "pipe into the bench")
            .target(Target::AtLeast(300.0)),
    );
    // The same without structuredContent: the output then travels once, not twice.
    let old = delivery_run(bytes, passes, "2024-11-05");
    report.add(old.baseline(base, "pipe into the bench"));
}

/// Reads `bytes` of retained text back through `read` calls, `passes` times, on a server
/// initialized with protocol `version`.
fn delivery_run(bytes: u64, passes: usize, version: &str) -> Figure {
    let chunk: u64 = size(64 << 20, 1 << 20);
    let mut s = Server::spawn(&[
        ("YIELDSHELL_MAX_OUTPUT_BYTES", chunk.to_string()),
        ("YIELDSHELL_MAX_BUFFER_BYTES", (256u64 << 20).to_string()),
    ]);
    s.initialize_version(version);
    // Text lines of 64 bytes; `head -c` cuts the stream at exactly `bytes`.
    let r = s.exec(
        &format!(
            "yes 'The quick brown fox jumps over the lazy dog; 0123456789 ABCDEF' | head -c {bytes}"
        ),
        json!({"yield_ms": 0}),
    );
    let id = r["process_id"].as_str().expect("process_id").to_string();
    let r = s.wait_exit(&id);
    // A text written for a model names no position once the command ended.
    if version >= "2025-06-18" {
        assert_eq!(common::latest_seq(&r), Some(bytes), "{r}");
    }

    let mut wire = Vec::new(); // request sent to response line received
    let mut whole = Vec::new(); // the same plus parsing the response in the bench
    let mut reads = 0;
    let mut line_bytes = 0usize;
    for _ in 0..passes {
        let mut since = 1u64;
        let mut delivered = 0u64;
        let mut t_wire = 0.0;
        let t_whole = Instant::now();
        reads = 0;
        loop {
            let args = json!({"process_id": id, "since_seq": since,
                "max_output_bytes": chunk, "streams": "stdout"});
            let t = Instant::now();
            let rid = s.send(
                "tools/call",
                Some(json!({"name": "read", "arguments": args})),
            );
            let line = s.read_line();
            t_wire += ms(t.elapsed());
            line_bytes = line.len();
            let v: Value = serde_json::from_slice(&line).expect("json");
            assert_eq!(v["id"].as_u64(), Some(rid));
            let r = common::tool_result(&v).expect("read");
            let next = r["next_seq"].as_u64().unwrap_or(bytes + 1);
            // Without structuredContent the text is written for a model (a header, the
            // output, a closing sentence): the bytes delivered are counted by position.
            delivered += match r["stdout"].as_str() {
                Some(out) if version >= "2025-06-18" => out.len() as u64,
                _ => next - since,
            };
            reads += 1;
            since = next;
            if r["capped"] != true || since > bytes {
                break;
            }
        }
        assert_eq!(delivered, bytes, "every retained byte comes back once");
        wire.push(t_wire);
        whole.push(ms(t_whole.elapsed()));
    }
    let peak = s.peak_rss();
    drop(s);

    let (wire, whole) = (Stats::new(wire), Stats::new(whole));
    let rate = |t_ms: f64| bytes as f64 / MB / (t_ms / 1e3);
    Figure::new(
        &format!("delivery {} MB via read ({version})", bytes / 1_000_000),
        "MB/s",
        rate(wire.median()),
    )
    .best(rate(wire.min()))
    .note(format!(
        "{reads} reads of up to {} MiB per pass, last response line {} MB; \
         with the bench's JSON parsing {} MB/s; server VmHWM {} MiB",
        chunk >> 20,
        common::num(line_bytes as f64 / MB),
        common::num(rate(whole.median())),
        common::num(peak as f64 / MIB)
    ))
}
