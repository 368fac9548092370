//! The policy layer: what may run, and what is recorded of it.
//!
//! Trusted mode (`trusted`: the allowlist, the tokenizer that turns a command line into a
//! pipeline without a shell, the argument hardening with one grammar per program, and
//! `trusted::git`, which keeps git from running anything it was not asked to), the kernel
//! sandbox (`sandbox`: Landlock, seccomp, capabilities), secret redaction of output
//! (`redact`, with the secrets in force across calls in `secrets`), the audit log (`audit`)
//! and which refusals a person may waive (`approval`).
//!
//! May import: `base`. Nothing here knows about records, tools or the protocol: decisions
//! are made on plain data (argv, paths, the configuration) and returned as values.

pub mod approval;
pub mod audit;
pub mod redact;
pub mod sandbox;
pub mod secrets;
pub mod trusted;
