//! Logging to stderr, one line per message.
//!
//! The level is read once at startup (`YIELDSHELL_LOG`). A line looks like
//! `yieldshell: WARN [reaper] message`. Stdout is never touched: it carries only protocol
//! messages. Write errors are ignored, since there is nowhere left to report them.
//!
//! Every line for stderr (log and audit, [`stderr_line`]) goes through one writer thread
//! (`stderr`), so a client that does not read the server's stderr (its pipe full) never
//! blocks a thread of the server: what does not fit in the queue ([`QUEUE_BYTES`]) is
//! dropped and counted, and the count is written as soon as stderr takes lines again.
//! [`flush`] waits, with a bound, for the queue to drain before the process exits.

use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::base::queue::Queue as Lines;

/// Most bytes waiting for stderr at once.
pub const QUEUE_BYTES: usize = 1 << 20;

struct Queue {
    lines: std::sync::Arc<Lines<Vec<u8>>>,
    /// Bytes queued and not yet written.
    queued: AtomicUsize,
    /// Lines dropped since the last notice.
    dropped: AtomicU64,
}

/// A static: stderr is the process's, so every thread of every engine writes through one
/// queue.
static QUEUE: OnceLock<Option<Queue>> = OnceLock::new();

fn queue() -> Option<&'static Queue> {
    QUEUE
        .get_or_init(|| {
            let lines: std::sync::Arc<Lines<Vec<u8>>> = Default::default();
            let rx = lines.clone();
            std::thread::Builder::new()
                .name("stderr".into())
                .stack_size(64 * 1024)
                .spawn(move || write_lines(&rx))
                .ok()?;
            Some(Queue {
                lines,
                queued: AtomicUsize::new(0),
                dropped: AtomicU64::new(0),
            })
        })
        .as_ref()
}

/// The `stderr` thread: writes each line in order, after a notice of what was dropped.
fn write_lines(rx: &Lines<Vec<u8>>) {
    while let Some(line) = rx.pop() {
        let Some(q) = queue() else { return };
        let dropped = q.dropped.swap(0, Ordering::SeqCst);
        let mut err = std::io::stderr().lock();
        if dropped > 0 {
            let _ = writeln!(
                err,
                "yieldshell: WARN [log] {dropped} lines of log and audit were dropped: stderr \
                 was not being read"
            );
        }
        let _ = err.write_all(&line);
        drop(err);
        q.queued.fetch_sub(line.len(), Ordering::SeqCst);
    }
}

/// Queues `line` (with its newline) for stderr; never blocks. Written directly when the
/// writer thread cannot be started.
pub fn stderr_line(line: Vec<u8>) {
    let Some(q) = queue() else {
        let _ = std::io::stderr().lock().write_all(&line);
        return;
    };
    let len = line.len();
    if len > QUEUE_BYTES {
        // Never fits, whoever reads stderr: say so, with the size, instead.
        let notice = format!(
            "yieldshell: WARN [log] a line of {len} bytes was dropped: longer than the \
             {QUEUE_BYTES} bytes a stderr line may take\n"
        );
        return stderr_line(notice.into_bytes());
    }
    if q.queued.fetch_add(len, Ordering::SeqCst) + len > QUEUE_BYTES {
        q.queued.fetch_sub(len, Ordering::SeqCst);
        q.dropped.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if !q.lines.push(line) {
        q.queued.fetch_sub(len, Ordering::SeqCst);
    }
}

/// Waits up to `limit` for every queued line to be written (before the process exits).
pub fn flush(limit: Duration) {
    let Some(q) = QUEUE.get().and_then(Option::as_ref) else {
        return;
    };
    let deadline = Instant::now() + limit;
    while q.queued.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// How much is logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Only failures of the server itself.
    Error = 1,
    /// Also suspicious input and recovered faults (the default).
    Warn = 2,
    /// Also one line per process start and end.
    Info = 3,
    /// Everything, including protocol traffic.
    Debug = 4,
}

impl Level {
    /// Parses a level name as written in `YIELDSHELL_LOG`.
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" => Some(Level::Error),
            "warn" | "warning" => Some(Level::Warn),
            "info" => Some(Level::Info),
            "debug" | "trace" => Some(Level::Debug),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
        }
    }
}

/// A static, like the queue: the level of the process's stderr, read by every log call.
static LEVEL: AtomicU8 = AtomicU8::new(Level::Warn as u8);

/// Sets the level for the rest of the process's life.
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Whether a message at `level` would be written.
pub fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Writes one line. Use the macros instead.
pub fn write(level: Level, module: &str, args: std::fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let module = module.rsplit("::").next().unwrap_or(module);
    let line = format!("yieldshell: {} [{}] {}\n", level.label(), module, args);
    stderr_line(line.into_bytes());
}

/// Logs at error level.
macro_rules! error {
    ($($arg:tt)*) => { $crate::base::log::write($crate::base::log::Level::Error, module_path!(), format_args!($($arg)*)) };
}
/// Logs at warn level.
macro_rules! warn_ {
    ($($arg:tt)*) => { $crate::base::log::write($crate::base::log::Level::Warn, module_path!(), format_args!($($arg)*)) };
}
/// Logs at info level.
macro_rules! info {
    ($($arg:tt)*) => { $crate::base::log::write($crate::base::log::Level::Info, module_path!(), format_args!($($arg)*)) };
}
/// Logs at debug level.
macro_rules! debug {
    ($($arg:tt)*) => { $crate::base::log::write($crate::base::log::Level::Debug, module_path!(), format_args!($($arg)*)) };
}

// `warn` is also a built-in attribute: the macro is defined under another name.
pub(crate) use {debug, error, info, warn_ as warn};
