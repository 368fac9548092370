//! yieldshell: a shell server for AI agents, speaking MCP over stdio.
//!
//! # Architecture
//!
//! ```text
//!  stdin ─► rpc-in ─► main (server::serve) ─► worker-N (pool) ─► mcp ─► engine ─► spawn/table
//!                        │ ping, tools/list inline          │  parked waits (wait) ◄─┐
//!                        ▼                                   ▼                        │
//!  stdout ◄── rpc-out ◄── outbox ◄── responses ◄── completions ◄── record changes ───┤
//!                                                 ingest (epoll) fills the rings ────┤
//!  signals ─► reaper (waitpid, group checks, deadlines) ─────────────────────────────┘
//! ```
//!
//! `ARCHITECTURE.md` lists every module with its job, its callers and its invariants, and
//! follows one `exec` and one output byte through them.
//!
//! # Invariants
//!
//! - Nothing but protocol messages goes to stdout, and only `rpc-out` writes it.
//! - Every request gets exactly one answer; a call leaves the in-flight set only after its
//!   answer is queued, and the writer ends only after the last queued line.
//! - Waiting holds no thread: waits are parked and completed by events.
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
pub(crate) mod log;
pub(crate) mod audit;
pub(crate) mod budget;
pub(crate) mod call;
pub(crate) mod cli;
pub(crate) mod clients;
pub(crate) mod config;
pub(crate) mod engine;
pub(crate) mod groups;
pub(crate) mod guardian;
#[cfg(target_os = "linux")]
pub(crate) mod ingest;
pub(crate) mod jsonrpc;
pub(crate) mod launch;
pub(crate) mod mcp;
pub(crate) mod options;
pub(crate) mod policy;
pub(crate) mod pool;
pub(crate) mod process;
pub(crate) mod reaper;
pub(crate) mod redact;
pub(crate) mod results;
pub(crate) mod ring;
pub(crate) mod sandbox;
pub(crate) mod server;
pub(crate) mod spawn;
pub(crate) mod stamp;
pub(crate) mod startup;
pub(crate) mod sys;
pub(crate) mod table;
pub(crate) mod transport;
pub(crate) mod tree;
pub(crate) mod trusted;
pub(crate) mod wait;
// Agents (SPEC section 13): terminals, input waits, limits.
pub(crate) mod agents;
pub(crate) mod ansi;
pub(crate) mod cgroup;
pub(crate) mod inputwait;
pub(crate) mod limits;
pub(crate) mod pty;

use std::io::Write;
use std::process::ExitCode;

/// Entry point of the binary: parses options, then runs the server.
pub fn main() -> ExitCode {
    // The sandbox launcher runs before anything else (see `sandbox::launcher`).
    if let Some(code) = sandbox::launcher::main_if_launcher() {
        return code;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == guardian::ARG) {
        return guardian::main(&args[1..]);
    }
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    if let (options, Some((name, rest))) = options::split_subcommand(&args) {
        let outcome = cli::main(&name, &rest, &options, env);
        // The built-in client's output: no server runs, so stdout is ours.
        let _ = std::io::stdout()
            .lock()
            .write_all(outcome.stdout.as_bytes());
        return ExitCode::from(outcome.code);
    }
    match options::parse(&args, env) {
        Ok(options::Parsed::Print(text)) => {
            // Help and version are not the protocol: the server is not running.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Ok(options::Parsed::Run(config)) => server::run(*config),
        Err(message) => {
            let _ = writeln!(std::io::stderr().lock(), "yieldshell: {message}");
            ExitCode::from(2)
        }
    }
}

/// Internals for benches, fuzz targets and tests; not a stable interface. Every module is
/// private to the crate: what outside code may use is listed here, item by item, so that
/// the compiler still reports dead code.
#[doc(hidden)]
pub mod internals {
    pub use crate::server::serve_in_memory;

    /// Options.
    pub mod config {
        pub use crate::{config::Config, options::parse, options::Parsed};
    }
    /// Wire types.
    pub mod jsonrpc {
        pub use crate::jsonrpc::{
            classify, error, response, to_line, Incoming, RequestId, INVALID_REQUEST, PARSE_ERROR,
        };
    }
    /// The MCP layer.
    pub mod mcp {
        pub use crate::mcp::{
            call_response_line, call_result, has_annotations, has_structured, initialize_result,
            negotiate, tools_list, Reply, LATEST, VERSIONS,
        };
    }
    /// Secret redaction.
    pub mod redact {
        pub use crate::redact::{Filter, Secrets, MIN_SECRET_LEN};
    }
    /// Output buffers.
    pub mod ring {
        pub use crate::ring::{Output, ReadOut, ReadReq, Streams, STDERR, STDOUT};
    }
    /// System calls.
    pub mod sys {
        pub use crate::sys::{kill, killpg, landlock_abi};
    }
    /// Lines in, lines out.
    pub mod transport {
        pub use crate::transport::{Input, MemoryClient};
    }
    /// Trusted mode.
    pub mod trusted {
        /// The allowlist.
        pub mod allow {
            pub use crate::trusted::allow::{Allowlist, NOTHING_ALLOWED};
        }
        /// Argument hardening.
        pub mod harden {
            pub use crate::trusted::harden::check;
        }
        /// The tokenizer.
        pub mod tokenize {
            pub use crate::trusted::tokenize::{from_argv, parse, tokenize, Pipeline};
        }
    }
}
