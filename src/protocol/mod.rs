//! The protocol layer: lines in and out, JSON-RPC, MCP, the server loop and the built-in
//! client.
//!
//! `transport` reads stdin lines and is the only writer of stdout; `jsonrpc` reads and
//! builds JSON-RPC 2.0 messages; `mcp` is the MCP layer (versions, `initialize`, the tool
//! registry and schemas, rendering typed answers to results); `server` is the main loop,
//! in-flight calls, cancellation and shutdown; `budget` bounds the work queued for the pool;
//! `options` parses the command line and environment into `base::config::Config`, and
//! `startup` warns about a configuration that would refuse every call; `cli` is the built-in
//! client (`call`, `tools`, `check`).
//!
//! May import every layer below: `tools`, `process`, `policy`, `base`.

pub mod budget;
pub mod cli;
pub mod jsonrpc;
pub mod mcp;
pub mod options;
pub mod server;
pub mod startup;
pub mod transport;
