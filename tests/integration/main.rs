//! Black-box integration tests for the `yieldshell` binary.
//!
//! Every test starts its own server through `support::Server`, talks newline-delimited
//! JSON-RPC to it over stdio and checks the contract of `/work/shared/SPEC.md`: the protocol
//! (section 2), the shell-mode tools (3), the policy (6), processes (7) and configuration (8).
//! Tests synchronise on output (`ready`) and on polled conditions, never on fixed sleeps.

mod agents;
mod backpressure;
mod cli;
mod config;
mod cursors;
mod hardening;
mod hosts;
mod lifecycle;
mod memory;
mod modern;
mod nondumpable;
mod policy;
mod protocol;
mod reliability;
mod renamed;
mod sandbox;
mod sandbox_escape;
mod support;
mod tools;
mod trusted;
