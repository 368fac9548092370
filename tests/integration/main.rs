//! Black-box integration tests for the `yieldshell` binary.
//!
//! Every test starts its own server through `support::Server`, talks newline-delimited
//! JSON-RPC to it over stdio and checks the contract that README.md and docs/ describe: the
//! protocol, the shell-mode tools, the policy, processes and configuration.
//! Tests synchronise on output (`ready`) and on polled conditions, never on fixed sleeps.

mod agents;
mod approvals;
mod backpressure;
mod cli;
#[cfg(target_os = "linux")] // the sandbox tests' fixture
mod closed_apps;
#[cfg(target_os = "linux")] // the sandbox tests' fixture
mod closed_world;
mod config;
mod cursors;
mod describe;
mod git_red_team;
mod git_routes;
#[cfg(target_os = "linux")] // /proc, cgroups
mod guardian;
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
#[cfg(target_os = "linux")] // Landlock, setpriv
mod promises;
#[cfg(target_os = "linux")] // mount namespaces, Landlock
mod protected;
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
mod usability;
mod views;
#[cfg(target_os = "linux")] // mount, prlimit
mod writers;
