//! Shared helpers of the benches: a client that drives the real `yieldshell` binary over
//! pipes, statistics (median, min, percentiles), `/proc` probes (resident memory, stray
//! processes) and the report format (median, min, baseline, ratio, target, PASS/MISS).
//!
//! Every bench binary includes this file with `mod common;`. A bench runs its full
//! measurement when cargo passes `--bench` (`cargo bench`), and otherwise (`cargo test
//! --benches`) runs every measurement once with tiny sizes, as a smoke test.
//!
//! Cleanup: a `Server` is a drop guard. Dropping it closes the server's stdin (the server
//! then stops every process group it started and exits), waits a little, kills the server
//! if it is still there, and finally kills any process that still carries this server's
//! tag in its environment (every child inherits the server's environment, so the tag
//! reaches all of them). This runs on panic too. A watchdog thread kills a server that
//! does not answer a request in time, so a hung server turns into a panic, not a hang.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The binary under test, built by cargo for the benches.
pub const BIN: &str = env!("CARGO_BIN_EXE_yieldshell");

/// Name of the environment variable that tags a server and everything it starts.
pub const TAG_VAR: &str = "YS_BENCH_TAG";

/// How long a single request may take before the watchdog kills the server.
const REQUEST_DEADLINE: Duration = Duration::from_secs(120);

/// True under `cargo bench` (full measurement), false under `cargo test --benches`.
pub fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// `full` when measuring, `smoke` when smoke-testing.
pub fn size<T>(full_value: T, smoke_value: T) -> T {
    if full() {
        full_value
    } else {
        smoke_value
    }
}

/// A unique tag for one server: bench pid, a counter and the clock.
fn new_tag() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "ysb{}x{}x{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A running `yieldshell` with pipes to its stdin and stdout; a drop guard.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    stash: HashMap<u64, Value>,
    /// The value of `TAG_VAR` in the server's environment (and its children's).
    pub tag: String,
    /// Start of the request in flight (ms since `epoch`), 0 when none: read by the watchdog.
    busy_since: Arc<AtomicU64>,
    epoch: Instant,
    done: Arc<AtomicBool>,
    /// Taken just before the fork of the server.
    pub spawned_at: Instant,
    shut: Option<Shutdown>,
    /// The server's debug lines that time the steps of a call (`... steps (µs): name N,
    /// ...`), when it runs with `YIELDSHELL_LOG=debug`.
    pub steps: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Spawns the binary with `env` added to the bench's environment. Does not initialize.
    pub fn spawn(env: &[(&str, String)]) -> Server {
        Server::spawn_bin(BIN, env)
    }

    /// Spawns the binary at `bin` (another build of yieldshell) with `env` added.
    pub fn spawn_bin(bin: &str, env: &[(&str, String)]) -> Server {
        let tag = new_tag();
        let mut cmd = Command::new(bin);
        cmd.env(TAG_VAR, &tag)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let spawned_at = Instant::now();
        let mut child = cmd.spawn().expect("spawn yieldshell");
        let stdin = child.stdin.take();
        let steps = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            forward_stderr(err, steps.clone());
        }
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        let busy_since = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let epoch = Instant::now();
        start_watchdog(child.id(), epoch, busy_since.clone(), done.clone());
        Server {
            child,
            stdin,
            stdout,
            next_id: 1,
            stash: HashMap::new(),
            tag,
            busy_since,
            epoch,
            done,
            spawned_at,
            shut: None,
            steps,
        }
    }

    /// Spawns and runs the `initialize` handshake (latest protocol version).
    pub fn start(env: &[(&str, String)]) -> Server {
        let mut s = Server::spawn(env);
        s.initialize();
        s
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `initialize` (latest protocol version) plus `notifications/initialized`; returns
    /// the `initialize` response.
    pub fn initialize(&mut self) -> Value {
        self.initialize_version("2025-11-25")
    }

    /// `initialize` asking for protocol `version`, plus `notifications/initialized`.
    pub fn initialize_version(&mut self, version: &str) -> Value {
        let r = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "yieldshell-bench", "version": "0"}
            }),
        );
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        self.notify("notifications/initialized", json!({}));
        r
    }

    /// `initialize` with `version` as the client named `client` (`clientInfo.name`).
    pub fn initialize_as(&mut self, version: &str, client: &str) -> Value {
        let r = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}
            }),
        );
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        self.notify("notifications/initialized", json!({}));
        r
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.write_line(&msg);
    }

    /// Sends a request and returns its id without waiting for the answer.
    pub fn send(&mut self, method: &str, params: Option<Value>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.write_line(&msg);
        id
    }

    fn write_line(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("serialize");
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(&line).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    /// Sends `line` as it is (a newline is added), for hostile or malformed input.
    pub fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(line).expect("write to server");
        stdin.write_all(b"\n").expect("write to server");
        stdin.flush().expect("flush to server");
    }

    /// Reads one raw line from the server (without the newline). Panics on end of file.
    pub fn read_line(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        self.busy_since.store(
            self.epoch.elapsed().as_millis() as u64 + 1,
            Ordering::SeqCst,
        );
        let n = self.stdout.read_until(b'\n', &mut line).expect("read");
        self.busy_since.store(0, Ordering::SeqCst);
        assert!(n > 0, "the server closed its stdout (died or timed out)");
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        line
    }

    /// Waits for the response with `id`, keeping other responses for later.
    pub fn recv(&mut self, id: u64) -> Value {
        if let Some(v) = self.stash.remove(&id) {
            return v;
        }
        loop {
            let line = self.read_line();
            let v: Value = serde_json::from_slice(&line).expect("server sent invalid JSON");
            match v.get("id").and_then(Value::as_u64) {
                Some(got) if got == id => return v,
                Some(got) => {
                    self.stash.insert(got, v);
                }
                None => (), // A notification (progress, log): not ours to time.
            }
        }
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, Some(params));
        self.recv(id)
    }

    /// `ping`; panics unless the answer is a result.
    pub fn ping(&mut self) {
        let id = self.send("ping", None);
        let r = self.recv(id);
        assert!(r.get("result").is_some(), "ping failed: {r}");
    }

    /// `tools/call`; returns the result object (structuredContent) and panics on isError.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        tool_result(&r).unwrap_or_else(|e| panic!("{tool} failed: {e}"))
    }

    /// `exec` of `command` with `extra` arguments merged in (side_effects defaults to NONE).
    pub fn exec(&mut self, command: &str, extra: Value) -> Value {
        let mut args = json!({"command": command, "side_effects": ["NONE"]});
        if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                a.insert(k.clone(), v.clone());
            }
        }
        self.call("exec", args)
    }

    /// `wait` for `id` until it exits (in steps of the maximum wait); returns the last result.
    pub fn wait_exit(&mut self, process_id: &str) -> Value {
        loop {
            let r = self.call(
                "wait",
                json!({"process_id": process_id, "timeout_ms": 55000, "max_output_bytes": 1}),
            );
            if r["wait_result"] == "exited" || r["status"] != "running" {
                return r;
            }
        }
    }

    /// Resident memory of the server (VmRSS) in bytes.
    pub fn rss(&self) -> u64 {
        proc_status_kib(self.pid(), "VmRSS:").map_or(0, |k| k * 1024)
    }

    /// Peak resident memory of the server (VmHWM) in bytes.
    pub fn peak_rss(&self) -> u64 {
        proc_status_kib(self.pid(), "VmHWM:").map_or(0, |k| k * 1024)
    }

    /// Closes stdin (the server stops everything and exits) and waits up to 5 s for the
    /// exit; kills the server if it is still there, then kills whatever still carries the
    /// tag. Idempotent.
    pub fn shutdown(&mut self) -> Shutdown {
        if let Some(done) = &self.shut {
            return done.clone();
        }
        let t = Instant::now();
        self.stdin = None;
        let exited = wait_child(&mut self.child, Duration::from_secs(5));
        let took = t.elapsed();
        if !exited {
            eprintln!("bench: yieldshell did not exit within 5 s of stdin EOF; killing it");
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.done.store(true, Ordering::SeqCst);
        // Give the kernel a moment to finish killed groups before looking for strays.
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut left = tagged_pids(&self.tag);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            left = tagged_pids(&self.tag);
        }
        if !left.is_empty() {
            eprintln!(
                "bench: {} process(es) outlived the server; killing them",
                left.len()
            );
            kill9(&left);
        }
        let done = Shutdown {
            took,
            exited,
            survivors: left,
        };
        self.shut = Some(done.clone());
        done
    }
}

/// How a server's shutdown went.
#[derive(Clone, Debug)]
pub struct Shutdown {
    /// From closing stdin to the exit (or to giving up after 5 s).
    pub took: Duration,
    /// Whether it exited on its own within 5 s.
    pub exited: bool,
    /// Processes carrying the server's tag 0.5 s after it was gone (killed by the bench).
    pub survivors: Vec<u32>,
}

impl Shutdown {
    /// Prints the shutdown figures: the time to exit and the processes left behind.
    pub fn report(&self, report: &mut Report, live: &str) {
        let mut exit = Figure::new(&format!("shutdown with {live}"), "ms", ms(self.took))
            .target(Target::AtMost(2000.0));
        if !self.exited {
            exit = exit.note("did not exit within 5 s of stdin EOF: killed by the bench");
        }
        report.add(exit);
        let note = if self.survivors.is_empty() {
            "nothing the server started survived it".to_string()
        } else {
            format!(
                "{} survivors killed by the bench, e.g. pids {:?}",
                self.survivors.len(),
                &self.survivors[..self.survivors.len().min(5)]
            )
        };
        report.add(
            Figure::new(
                "  processes left after that shutdown",
                "",
                self.survivors.len() as f64,
            )
            .target(Target::AtMost(0.0))
            .note(note),
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Drains the server's stderr on a thread, forwarding everything but the audit lines (one
/// per execution: the server still pays for writing them, the reader is spared).
fn forward_stderr(err: std::process::ChildStderr, steps: Arc<Mutex<Vec<String>>>) {
    let spawned = std::thread::Builder::new()
        .name("bench-stderr".into())
        .spawn(move || {
            let mut lines = BufReader::new(err);
            let mut line = Vec::new();
            while matches!(lines.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                if line.starts_with(b"yieldshell: DEBUG ") {
                    // Debug logging (asked for by a bench): only the step timings are kept.
                    let text = String::from_utf8_lossy(&line);
                    if text.contains(" steps (µs): ") {
                        if let Ok(mut s) = steps.lock() {
                            s.push(text.trim_end().to_string());
                        }
                    }
                } else if !line.starts_with(b"yieldshell: AUDIT ") {
                    let _ = std::io::stderr().write_all(&line);
                }
                line.clear();
            }
        });
    spawned.expect("spawn stderr reader");
}

fn start_watchdog(pid: u32, epoch: Instant, busy_since: Arc<AtomicU64>, done: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("bench-watchdog".into())
        .spawn(move || {
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                let since = busy_since.load(Ordering::SeqCst);
                if since == 0 {
                    continue;
                }
                let now = epoch.elapsed().as_millis() as u64 + 1;
                if now.saturating_sub(since) > REQUEST_DEADLINE.as_millis() as u64 {
                    eprintln!("bench: no answer within {REQUEST_DEADLINE:?}; killing the server");
                    kill9(&[pid]);
                    return;
                }
            }
        });
    spawned.expect("spawn watchdog");
}

/// Polls `child` for an exit until `limit`; true when it exited (and was reaped).
pub fn wait_child(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return true,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => return false,
        }
    }
}

/// The newest position of a result object: `latest_seq`, which is left out when it is
/// `next_seq - 1` (the answer reached the newest byte).
pub fn latest_seq(r: &Value) -> Option<u64> {
    r["latest_seq"]
        .as_u64()
        .or_else(|| r["next_seq"].as_u64().map(|n| n.saturating_sub(1)))
}

/// The result object of a `tools/call` response, or the error text.
pub fn tool_result(response: &Value) -> Result<Value, String> {
    let Some(result) = response.get("result") else {
        return Err(format!("protocol error: {response}"));
    };
    let object = match result.get("structuredContent") {
        Some(v) => v.clone(),
        None => {
            let text = result["content"][0]["text"].as_str().unwrap_or("{}");
            serde_json::from_str(text).unwrap_or_else(|_| text_object(text))
        }
    };
    if result["isError"] == true {
        return Err(object.to_string());
    }
    Ok(object)
}

/// The result object read back from a text block written for a model (a client without
/// structuredContent): the header's `key=value` words, and the rest as `stdout` (the
/// output and any closing sentence: not exact, a model's view).
fn text_object(text: &str) -> Value {
    let (header, body) = text.split_once('\n').unwrap_or((text, ""));
    let mut object = serde_json::Map::new();
    for word in header.split(' ') {
        if let Some((k, v)) = word.split_once('=') {
            let v = serde_json::from_str(v).unwrap_or_else(|_| Value::from(v));
            object.insert(k.to_string(), v);
        }
    }
    object.insert("stdout".into(), Value::from(body));
    Value::Object(object)
}

/// Sends SIGKILL to `pids` through `kill(1)` (the benches use no `unsafe`).
pub fn kill9(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg("-9")
        .args(pids.iter().map(u32::to_string))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Pids whose environment holds `TAG_VAR=tag` (the server and everything it started).
pub fn tagged_pids(tag: &str) -> Vec<u32> {
    let needle = format!("{TAG_VAR}={tag}");
    let mut found = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(env) = fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// A `kB` field of `/proc/<pid>/status`, such as `VmRSS:`.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// Number of threads of `pid`.
pub fn threads(pid: u32) -> u64 {
    proc_status_kib(pid, "Threads:").unwrap_or(0)
}

/// Runs `sh -c script` in the bench process, reading its stdout to the end; returns the
/// bytes read.
pub fn sh_output_len(script: &str) -> u64 {
    let mut child = Command::new("/bin/sh")
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn /bin/sh");
    let mut out = child.stdout.take().expect("stdout");
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        match out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => (),
            Err(e) => panic!("read: {e}"),
        }
    }
    let status = child.wait().expect("wait");
    assert!(status.success(), "{script}: {status}");
    total
}

/// Statistics over samples (in whatever unit the caller chose).
#[derive(Clone, Debug)]
pub struct Stats {
    sorted: Vec<f64>,
}

impl Stats {
    /// Sorts the samples. Panics when there are none.
    pub fn new(mut samples: Vec<f64>) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        samples.sort_by(f64::total_cmp);
        Stats { sorted: samples }
    }

    /// The median (mean of the two middle samples for an even count).
    pub fn median(&self) -> f64 {
        let n = self.sorted.len();
        if n % 2 == 1 {
            self.sorted[n / 2]
        } else {
            (self.sorted[n / 2 - 1] + self.sorted[n / 2]) / 2.0
        }
    }

    /// The smallest sample.
    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    /// The largest sample.
    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }

    /// Percentile `p` in [0, 100], nearest-rank.
    pub fn pct(&self, p: f64) -> f64 {
        let n = self.sorted.len();
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        self.sorted[rank.clamp(1, n) - 1]
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }
}

/// Milliseconds of a duration, as f64.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Times `f` once, in milliseconds.
pub fn time_ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    ms(t.elapsed())
}

/// What a figure is held to.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// The ratio to the baseline must be at most this (times: lower is better).
    RatioAtMost(f64),
    /// The ratio to the baseline must be at least this (throughputs: higher is better).
    RatioAtLeast(f64),
    /// The value itself must be at most this, in the figure's unit.
    AtMost(f64),
    /// The value itself must be at least this, in the figure's unit.
    AtLeast(f64),
    /// Reported only.
    None,
}

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Figure {
    /// What was measured.
    pub name: String,
    /// Unit of `value`, `min` and `baseline`.
    pub unit: &'static str,
    /// The headline value (a median, a percentile, or a single reading).
    pub value: f64,
    /// The best sample, when there were several (the shortest time, or the highest rate).
    pub min: Option<f64>,
    /// Whether a higher value is better (rates): the best sample is then labelled `best`.
    pub higher_is_better: bool,
    /// The baseline measured in the same run, and what it is.
    pub baseline: Option<(f64, String)>,
    /// The target.
    pub target: Target,
    /// Extra facts printed after the line.
    pub note: String,
}

impl Figure {
    /// A figure with a value and nothing else.
    pub fn new(name: &str, unit: &'static str, value: f64) -> Figure {
        Figure {
            name: name.to_string(),
            unit,
            value,
            min: None,
            higher_is_better: false,
            baseline: None,
            target: Target::None,
            note: String::new(),
        }
    }

    /// Sets the minimum.
    pub fn min(mut self, min: f64) -> Figure {
        self.min = Some(min);
        self
    }

    /// Sets the best sample of a rate (higher is better).
    pub fn best(mut self, best: f64) -> Figure {
        self.min = Some(best);
        self.higher_is_better = true;
        self
    }

    /// Sets the baseline.
    pub fn baseline(mut self, value: f64, what: &str) -> Figure {
        self.baseline = Some((value, what.to_string()));
        self
    }

    /// Sets the target.
    pub fn target(mut self, target: Target) -> Figure {
        self.target = target;
        self
    }

    /// Sets the note.
    pub fn note(mut self, note: impl Into<String>) -> Figure {
        self.note = note.into();
        self
    }

    /// value / baseline.
    pub fn ratio(&self) -> Option<f64> {
        self.baseline
            .as_ref()
            .map(|(b, _)| if *b > 0.0 { self.value / b } else { f64::NAN })
    }

    /// Whether the target was met (None when there is no target).
    pub fn met(&self) -> Option<bool> {
        let ratio = self.ratio();
        match self.target {
            Target::RatioAtMost(x) => ratio.map(|r| r <= x),
            Target::RatioAtLeast(x) => ratio.map(|r| r >= x),
            Target::AtMost(x) => Some(self.value <= x),
            Target::AtLeast(x) => Some(self.value >= x),
            Target::None => None,
        }
    }

    fn target_text(&self) -> String {
        match self.target {
            Target::RatioAtMost(x) => format!("ratio <= {x}x"),
            Target::RatioAtLeast(x) => format!("ratio >= {x}x"),
            Target::AtMost(x) => format!("<= {} {}", num(x), self.unit),
            Target::AtLeast(x) => format!(">= {} {}", num(x), self.unit),
            Target::None => "-".into(),
        }
    }
}

/// A number with three significant digits or so.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Collects figures, prints each at once and a markdown table at the end.
pub struct Report {
    bench: &'static str,
    figures: Vec<Figure>,
}

impl Report {
    /// Prints the header of a bench.
    pub fn new(bench: &'static str) -> Report {
        let mode = if full() {
            "full measurement (--bench)"
        } else {
            "smoke test: tiny sizes, one iteration each; the numbers mean nothing"
        };
        println!("== {bench}: {mode}");
        // The machine is shared: say how busy it was, so that runs can be compared.
        let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
        println!(
            "   load average {} on {cpus} CPUs",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
        Report {
            bench,
            figures: Vec::new(),
        }
    }

    /// Prints and records a figure.
    pub fn add(&mut self, f: Figure) {
        let mut line = format!("{:<34} {:>10} {}", f.name, num(f.value), f.unit);
        if let Some(m) = f.min {
            let label = if f.higher_is_better { "best" } else { "min" };
            let _ = write!(line, "  ({label} {})", num(m));
        }
        if let Some((b, what)) = &f.baseline {
            let _ = write!(line, " | baseline {} {} [{what}]", num(*b), f.unit);
        }
        if let Some(r) = f.ratio() {
            let _ = write!(line, " | ratio {}x", num(r));
        }
        match f.met() {
            Some(true) => {
                let _ = write!(line, " | target {} PASS", f.target_text());
            }
            Some(false) => {
                let _ = write!(line, " | target {} MISS", f.target_text());
            }
            None => (),
        }
        println!("{line}");
        if !f.note.is_empty() {
            println!("{:<34} {}", "", f.note);
        }
        self.figures.push(f);
    }

    /// Prints a free-form line under the figures.
    pub fn info(&self, text: &str) {
        println!("  . {text}");
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        println!("\n{} (markdown):\n", self.bench);
        println!("| figure | median | min (best) | baseline | ratio | target | met |");
        println!("|---|---|---|---|---|---|---|");
        for f in &self.figures {
            let min = f.min.map_or("-".into(), num);
            let base = f.baseline.as_ref().map_or("-".into(), |(b, what)| {
                format!("{} {} ({what})", num(*b), f.unit)
            });
            let ratio = f.ratio().map_or("-".into(), |r| format!("{}x", num(r)));
            let met = match f.met() {
                Some(true) => "PASS",
                Some(false) => "MISS",
                None => "-",
            };
            println!(
                "| {} | {} {} | {min} | {base} | {ratio} | {} | {met} |",
                f.name,
                num(f.value),
                f.unit,
                f.target_text()
            );
        }
        println!();
    }
}
