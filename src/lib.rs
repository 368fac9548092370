//! yieldshell: a shell server for AI agents, speaking MCP over stdio.
//!
//! # Architecture
//!
//! ```text
//!  stdin ───────────► main (server::serve) ─► worker-N (pool) ─► mcp ─► engine ─► spawn/table
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

// The layers, top to bottom; each imports only the layers below it (ARCHITECTURE.md).
pub(crate) mod base;
pub(crate) mod policy;
pub(crate) mod process;
pub(crate) mod protocol;
pub(crate) mod tools;

use std::io::Write;
use std::process::ExitCode;

/// Entry point of the binary: parses options, then runs the server.
pub fn main() -> ExitCode {
    let code = run_main();
    // The calls' temporary directories went with their records; their parent goes now.
    process::tmpdir::remove_base();
    // Lines still queued for stderr (log and audit) go out before the process ends.
    base::log::flush(std::time::Duration::from_millis(300));
    code
}

/// The helper that makes the calls' user namespace (`policy/sandbox/protected`), its whole
/// life: makes the namespace, says `ready` on its stdout (a pipe to the server, not the
/// protocol) or why not, and ends when its stdin closes (the server holds the namespace by
/// then).
fn user_namespace_holder() -> ExitCode {
    use std::io::Read;
    let mut out = std::io::stdout().lock();
    match base::sys::hold_user_namespace() {
        Ok(()) => {
            let _ = out.write_all(b"ready\n").and_then(|()| out.flush());
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(out, "{}", base::config::plain_io(&e));
            ExitCode::from(1)
        }
    }
}

fn run_main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == process::guardian::ARG) {
        return process::guardian::main(&args[1..]);
    }
    if args
        .first()
        .is_some_and(|a| a == policy::sandbox::protected::HOLDER_ARG)
    {
        return user_namespace_holder();
    }
    let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    if let (options, Some((name, rest))) = protocol::options::split_subcommand(&args) {
        let outcome = protocol::cli::main(&name, &rest, &options, env);
        // The built-in client's output: no server runs, so stdout is ours.
        let _ = std::io::stdout()
            .lock()
            .write_all(outcome.stdout.as_bytes());
        return ExitCode::from(outcome.code);
    }
    match protocol::options::parse(&args, env) {
        Ok(protocol::options::Parsed::Print(text)) => {
            // Help and version are not the protocol: the server is not running.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Ok(protocol::options::Parsed::Run(config)) => protocol::server::run(*config),
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
    pub use crate::protocol::server::serve_in_memory;

    /// Options.
    pub mod config {
        pub use crate::{
            base::config::Config, protocol::options::parse, protocol::options::Parsed,
        };
    }
    /// Wire types.
    pub mod jsonrpc {
        pub use crate::protocol::jsonrpc::{
            classify, error, response, to_line, Incoming, RequestId, INVALID_REQUEST, PARSE_ERROR,
        };
    }
    /// The MCP layer.
    pub mod mcp {
        pub use crate::protocol::mcp::{
            call_response_line, call_result, has_annotations, has_structured, initialize_result,
            negotiate, tools_list, Reply, LATEST, VERSIONS,
        };
    }
    /// Secret redaction.
    pub mod redact {
        pub use crate::policy::redact::{Filter, Secrets, MIN_SECRET_LEN};
    }
    /// Output buffers.
    pub mod ring {
        pub use crate::base::ring::{Output, ReadOut, ReadReq, Streams, STDERR, STDOUT};
    }
    /// System calls.
    pub mod sys {
        pub use crate::base::sys::{kill, killpg, landlock_abi};
    }
    /// The kernel sandbox's protected paths.
    pub mod protected {
        pub use crate::policy::sandbox::lookup::{wait_unchanged, QUIET};
    }
    /// Lines in, lines out.
    pub mod transport {
        pub use crate::protocol::transport::{Input, MemoryClient};
    }
    /// Trusted mode.
    pub mod trusted {
        /// The allowlist.
        pub mod allow {
            pub use crate::policy::trusted::allow::{Allowlist, NOTHING_ALLOWED};
        }
        /// Argument hardening.
        pub mod harden {
            pub use crate::policy::trusted::harden::check;
        }
        /// Reviewed or refused.
        pub mod reviewed {
            pub use crate::policy::trusted::reviewed::{review, Review, INERT};
        }
        /// The tokenizer.
        pub mod tokenize {
            pub use crate::policy::trusted::tokenize::{from_argv, parse, tokenize, Pipeline};
        }
    }
}
