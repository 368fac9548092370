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
mod describe;
mod git_red_team;
mod git_routes;
mod hardening;
mod hosts;
mod lifecycle;
#[cfg(target_os = "linux")] // reads /proc/<pid>/status
mod memory;
mod modern;
#[cfg(target_os = "linux")] // prctl(PR_SET_DUMPABLE), /proc
mod nondumpable;
mod ownership;
mod policy;
mod protocol;
mod reliability;
#[cfg(target_os = "linux")] // the sandbox tests' fixture
mod renamed;
mod results;
#[cfg(target_os = "linux")] // Landlock and seccomp
mod sandbox;
#[cfg(target_os = "linux")] // Landlock and seccomp
mod sandbox_escape;
mod stderr;
mod support;
mod tools;
mod trusted;
