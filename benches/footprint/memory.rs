//! The server's memory under hostile lines and big reads (part of the `footprint` bench).
//!
//! Hostile lines: one `ping` request whose `params` hold a large value in one of five
//! shapes, and two `tools/call` lines (a large argument `ps` does not declare, and a large
//! `stdin` for `exec`), each sent to a fresh server (VmHWM only grows, so every figure needs its own
//! process). The figures are the peak (VmHWM) minus the idle RSS measured just before the
//! line, and VmRSS one second after the answer, minus the same idle RSS.
//!
//! Reads: `exec` of a producer of 20 MB or 100 MB of text with the default ring
//! (`YIELDSHELL_MAX_BUFFER_BYTES` unset), read back with `read` in pages of 1 MiB
//! (`YIELDSHELL_MAX_OUTPUT_BYTES=1048576`) until the producer is done. The ring evicts what
//! the reader does not keep up with, so the bytes delivered are printed beside the peak.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{self, Figure, Report, Server, Target};

const MIB: f64 = 1024.0 * 1024.0;

/// One shape of hostile `params`.
struct Shape {
    name: &'static str,
    /// The method of the line.
    method: &'static str,
    /// Text before the repeated unit, the unit, and the text after.
    head: &'static str,
    unit: &'static str,
    /// Separator between units.
    sep: &'static str,
    tail: &'static str,
}

const SHAPES: [Shape; 7] = [
    Shape {
        method: "ping",
        name: "array of zeros",
        head: "{\"x\":[",
        unit: "0",
        sep: ",",
        tail: "]}",
    },
    Shape {
        method: "ping",
        name: "array of empty objects",
        head: "{\"x\":[",
        unit: "{}",
        sep: ",",
        tail: "]}",
    },
    Shape {
        method: "ping",
        // Keys are numbered below, the unit is only a placeholder.
        name: "object of many keys",
        head: "{",
        unit: "",
        sep: ",",
        tail: "}",
    },
    Shape {
        method: "ping",
        // serde_json refuses nesting deeper than 128, so the hostile form is many nests
        // of depth 100 side by side.
        name: "deep nesting (depth 100, repeated)",
        head: "{\"x\":[",
        unit: "",
        sep: ",",
        tail: "]}",
    },
    Shape {
        method: "ping",
        name: "long string",
        head: "{\"x\":\"",
        unit: "a",
        sep: "",
        tail: "\"}",
    },
    Shape {
        // An argument ps does not declare: skipped unparsed.
        method: "tools/call",
        name: "tools/call ps, undeclared argument: array of zeros",
        head: "{\"name\":\"ps\",\"arguments\":{\"limit\":1,\"x\":[",
        unit: "0",
        sep: ",",
        tail: "]}}",
    },
    Shape {
        // A declared argument, legitimately large: exec's stdin, written to `cat`.
        method: "tools/call",
        name: "tools/call exec, stdin: long string",
        head: "{\"name\":\"exec\",\"arguments\":{\"command\":\"cat >/dev/null\",\"side_effects\":[\"NONE\"],\"stdin\":\"",
        unit: "a",
        sep: "",
        tail: "\"}}",
    },
];

/// The full line of a `ping` with id `id` whose params have `shape` and about `size` bytes.
fn hostile_line(shape: &Shape, size: usize, id: u64) -> Vec<u8> {
    let mut line = Vec::with_capacity(size + 256);
    line.extend_from_slice(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{}\",\"params\":",
            shape.method
        )
        .as_bytes(),
    );
    line.extend_from_slice(shape.head.as_bytes());
    let nest = format!("{}0{}", "[".repeat(100), "]".repeat(100));
    let mut i = 0u64;
    while line.len() < size {
        if i > 0 {
            line.extend_from_slice(shape.sep.as_bytes());
        }
        match shape.name {
            "object of many keys" => line.extend_from_slice(format!("\"k{i}\":0").as_bytes()),
            "deep nesting (depth 100, repeated)" => line.extend_from_slice(nest.as_bytes()),
            _ => line.extend_from_slice(shape.unit.as_bytes()),
        }
        i += 1;
    }
    line.extend_from_slice(shape.tail.as_bytes());
    line.extend_from_slice(b"}");
    line
}

/// The builds to measure: (label, path).
fn builds(report: &Report) -> Vec<(String, String)> {
    let mut out = vec![("glibc (bench build)".to_string(), common::BIN.to_string())];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let musl = target.join("x86_64-unknown-linux-musl/release/yieldshell");
    if musl.exists() {
        out.push(("musl (release)".to_string(), musl.display().to_string()));
    } else {
        report.info("memory: no musl build to measure (cargo build --release --target x86_64-unknown-linux-musl)");
    }
    if let Ok(list) = std::env::var("YS_FOOTPRINT_BINS") {
        for item in list.split(',').filter(|s| !s.is_empty()) {
            match item.split_once('=') {
                Some((label, path)) => out.push((label.to_string(), path.to_string())),
                None => report.info(&format!("YS_FOOTPRINT_BINS: {item:?} is not label=path")),
            }
        }
    }
    out
}

/// Runs every memory measurement and adds the figures to `report`.
pub fn run(report: &mut Report) {
    let mib = 1024 * 1024;
    let sizes: Vec<usize> = common::size(vec![16 * mib, 32 * mib, 60 * mib], vec![64 * 1024]);
    let reads: Vec<u64> = common::size(vec![20_000_000, 100_000_000], vec![1_000_000]);
    // One second, as the target says; a tenth of it in the smoke test.
    let after = common::size(Duration::from_secs(1), Duration::from_millis(100));
    for (label, bin) in builds(report) {
        for shape in &SHAPES {
            for &size in &sizes {
                hostile(report, &label, &bin, shape, size, after);
            }
        }
        for &bytes in &reads {
            big_read(report, &label, &bin, bytes, after);
        }
    }
}

fn hostile(
    report: &mut Report,
    label: &str,
    bin: &str,
    shape: &Shape,
    size: usize,
    after: Duration,
) {
    let mut server = Server::spawn_bin(bin, &[]);
    server.initialize();
    server.ping();
    let idle = server.rss() as f64 / MIB;
    let line = hostile_line(shape, size, 1_000_000);
    // The target is twice the whole line (envelope included), not the nominal size.
    let n = line.len() as f64 / MIB;
    let started = Instant::now();
    server.send_raw(&line);
    drop(line);
    let answer = server.recv(1_000_000);
    let took = started.elapsed();
    let answered = answer.get("result").is_some();
    let peak = server.peak_rss() as f64 / MIB;
    std::thread::sleep(after);
    let later = server.rss() as f64 / MIB;
    let mut f = Figure::new(
        &format!(
            "{label}: {} line of {}, peak above idle",
            shape.name,
            size_text(size)
        ),
        "MiB",
        peak - idle,
    )
    .target(Target::AtMost(2.0 * n))
    .note(format!(
        "idle {idle:.1} MiB, peak {peak:.1} MiB ({:.1}x the line), answered in {} ms",
        (peak - idle) / n,
        took.as_millis()
    ));
    if !answered {
        f = f.note(format!(
            "NOT ANSWERED WITH A RESULT: {}",
            truncate(&answer.to_string())
        ));
    }
    report.add(f);
    report.add(
        Figure::new(
            &format!("  RSS {:.1} s later, above idle", after.as_secs_f64()),
            "MiB",
            later - idle,
        )
        .target(Target::AtMost(4.0))
        .note(format!("{later:.1} MiB")),
    );
}

fn big_read(report: &mut Report, label: &str, bin: &str, bytes: u64, after: Duration) {
    let page: u64 = 1024 * 1024;
    let mut server = Server::spawn_bin(bin, &[("YIELDSHELL_MAX_OUTPUT_BYTES", page.to_string())]);
    server.initialize();
    let line = "y".repeat(63);
    let r = server.exec(
        &format!("yes {line} | head -c {bytes}"),
        json!({"yield_ms": 0, "max_output_bytes": 0}),
    );
    let id = r["process_id"].as_str().unwrap_or_default().to_string();
    let mut since = 1u64;
    let mut delivered = 0u64;
    let mut pages = 0u64;
    loop {
        let r = server.call(
            "read",
            json!({"process_id": id, "since_seq": since, "max_output_bytes": page}),
        );
        let got = r["stdout"].as_str().map_or(0, str::len) as u64;
        delivered += got;
        pages += 1;
        since = r["next_seq"].as_u64().unwrap_or(since);
        let latest = r["latest_seq"].as_u64().unwrap_or(0);
        if r["status"] != "running" && since > latest {
            break;
        }
        if got == 0 {
            // Nothing new yet: let the producer run (bounded by wait's own timeout).
            server.call(
                "wait",
                json!({"process_id": id, "since_seq": since, "timeout_ms": 200, "until": ".", "max_output_bytes": 1}),
            );
        }
    }
    let peak = server.peak_rss() as f64 / MIB;
    std::thread::sleep(after);
    let later = server.rss() as f64 / MIB;
    report.add(
        Figure::new(
            &format!("{label}: read of {} MB in 1 MiB pages, peak RSS", bytes / 1_000_000),
            "MiB",
            peak,
        )
        .target(Target::AtMost(8.0))
        .note(format!("{pages} reads, {delivered} bytes delivered (the default ring evicts what a reader misses)")),
    );
    report.add(
        Figure::new(
            &format!("  RSS {:.1} s later", after.as_secs_f64()),
            "MiB",
            later,
        )
        .note(String::new()),
    );
}

/// `16 MiB`, or `64 KiB` below a mebibyte (the smoke test).
fn size_text(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{} KiB", bytes / 1024)
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}
