//! The server without stdio: over the in-memory transport, for in-process protocol tests
//! (`serve_in_memory`) and for the built-in client's one call (`call_once`).

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{start_engine, Server};
use crate::base::config::Config;
use crate::protocol::jsonrpc;
use crate::protocol::mcp;
use crate::protocol::transport::{self, Input, MemoryClient};

/// Runs a server over the in-memory transport on its own thread, for in-process protocol
/// tests. At end of input it waits up to `drain` for calls in flight, then closes its
/// outbox (the client's receiver then disconnects). Processes are not stopped.
pub fn serve_in_memory(config: Config, drain: Duration) -> io::Result<MemoryClient> {
    let marker_prefix = crate::base::stamp::new_marker_prefix();
    let engine = start_engine(Arc::new(config), marker_prefix)
        .map_err(|_| io::Error::other("the engine did not start (see stderr)"))?;
    let (outbox, input, client) = transport::memory()?;
    std::thread::Builder::new()
        .name("memory-server".into())
        .spawn(move || {
            let server = Server::new(engine, outbox);
            server.serve(|| input.recv().ok());
            server.wait_idle(Instant::now() + drain);
            server.out.close();
        })?;
    Ok(client)
}

/// Runs one tool call in-process, for the built-in client (`yieldshell call`): the same
/// engine and configuration as the server, driven over the in-memory transport as a client
/// would (`initialize`, then `tools/call`). Returns the call's `CallToolResult`, after
/// stopping whatever the call left running; a JSON-RPC error comes back as `Err`.
pub(crate) fn call_once(config: Config, tool: &str, arguments: Value) -> Result<Value, String> {
    crate::base::log::set_level(config.log_level);
    if let Err(e) = crate::base::sys::set_dumpable(false) {
        crate::base::log::warn!("cannot mark the process non-dumpable: {e}");
    }
    crate::base::sys::cloexec_from(3);
    let marker_prefix = crate::base::stamp::new_marker_prefix();
    // Like the binary's server: every child of this process is the
    // call's, so whatever the command left, wherever it moved, ends with the call.
    crate::process::tree::claim_children();
    let _ = crate::base::sys::set_child_subreaper();
    let engine = start_engine(Arc::new(config), marker_prefix)
        .map_err(|_| "the engine did not start (see above)".to_string())?;
    let (outbox, input, client) =
        transport::memory().map_err(|e| format!("cannot start the output thread: {e}"))?;
    let server = Server::new(engine.clone(), outbox);
    let serving = std::thread::Builder::new()
        .name("memory-server".into())
        .spawn(move || server.serve(|| input.recv().ok()))
        .map_err(|e| format!("cannot start the server thread: {e}"))?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": mcp::LATEST.as_str(), "capabilities": {},
            "clientInfo": {"name": "yieldshell-cli", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}}),
    ];
    for request in &requests {
        let line = jsonrpc::to_line(request);
        if client.to_server.send(Input::Line(line)).is_err() {
            return Err("the in-process server stopped".into());
        }
    }
    let mut answer = Err("the in-process server gave no answer".to_string());
    for line in client.from_server.iter() {
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if message.get("id") != Some(&json!(2)) {
            continue;
        }
        answer = match (message.get("result"), message.get("error")) {
            (Some(result), _) => Ok(result.clone()),
            (None, Some(error)) => Err(error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string()),
            (None, None) => Err(format!("a malformed answer: {message}")),
        };
        break;
    }
    drop(client);
    let _ = serving.join();
    engine.shutdown(Duration::from_millis(1000), Duration::from_millis(1600));
    answer
}
