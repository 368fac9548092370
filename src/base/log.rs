//! Logging to stderr, one line per message.
//!
//! The level is read once at startup (`YIELDSHELL_LOG`). A line looks like
//! `yieldshell: WARN [reaper] message`. Stdout is never touched: it carries only protocol
//! messages. Write errors are ignored, since there is nowhere left to report them.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

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
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
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
