//! yieldshell: a shell server for AI agents, speaking MCP over stdio.
//!
//! # Architecture
//!
//! ```text
//!  stdin ─► main thread (server::read_loop) ─► worker-N (pool) ─► engine ─► process/table
//!                 │ ping, tools/list inline        │                  │
//!                 ▼                                ▼                  ▼
//!             rpc-out ◄──────── responses ─────────┘     ingest (epoll) fills the rings
//!  signals ─► reaper (waitpid, group checks, deadlines: timeout, SIGKILL after grace)
//! ```
//!
//! Modules in reading order: `config` (options), `log`, `sys` (all `unsafe`), `ring` (output
//! buffers and cursors), `redact` (UTF-8 and secret filter), `ingest` (the epoll reader of every pipe), `tree` (descendants that left
//! their group), `process` (one record), `table` (the registry), `reaper`, `pool`,
//! `jsonrpc` (wire types), `engine` (the shell-mode tools), `mcp` (handshake, schemas,
//! arguments), `server` (main loop and shutdown).
//!
//! # Invariants
//!
//! - Nothing but protocol messages goes to stdout, and only `rpc-out` writes it.
//! - Only the reaper reaps; a leader is registered with it before its fork can be reaped.
//! - A process group is signalled only while a record's `group_gone` is false, under the
//!   record's lock.
//! - A record is finished only when its leader was reaped, its group is empty and both
//!   pipes reached end of file; "exited" and "output drained" are separate facts.
//! - Every child (every stage of a pipeline) leads its own session; its only descriptors
//!   are 0, 1 and 2.
#![deny(unsafe_code)]
#![deny(missing_docs)]

#[macro_use]
pub mod log;
pub mod audit;
pub mod config;
pub mod engine;
pub mod guardian;
#[cfg(target_os = "linux")]
pub mod ingest;
pub mod jsonrpc;
pub mod mcp;
pub mod policy;
pub mod pool;
pub mod process;
pub mod reaper;
pub mod redact;
pub mod ring;
mod server;
pub mod spawn;
pub mod stamp;
pub mod sys;
pub mod table;
pub mod transport;
pub mod tree;
pub mod trusted;
pub mod wait;
// Agents (SPEC section 13): terminals, input waits, limits.
pub mod agents;
pub mod ansi;
pub mod cgroup;
pub mod inputwait;
pub mod limits;
pub mod pty;

use std::io::Write;
use std::process::ExitCode;

/// Entry point of the binary: parses options, then runs the server.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == agents::LAUNCH_ARG) {
        return agents::launch_main(&args[1..]);
    }
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    match config::parse(&args, env) {
        Ok(config::Parsed::Print(text)) => {
            // Help and version are not the protocol: the server is not running.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Ok(config::Parsed::Run(config)) => server::run(*config),
        Err(message) => {
            let _ = writeln!(std::io::stderr().lock(), "yieldshell: {message}");
            ExitCode::from(2)
        }
    }
}

/// Internals for benches, fuzz targets and in-process tests; not a stable interface.
#[doc(hidden)]
pub mod internals {
    pub use crate::server::serve_in_memory;
}
