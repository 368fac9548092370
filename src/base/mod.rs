//! The base layer: what every other layer stands on, importing nothing of ours.
//!
//! System calls behind safe wrappers (`sys`, the only place with `unsafe`), output byte
//! rings with sequence numbers (`ring`), configuration as plain data (`config`: the `Config`
//! that the option parser in `protocol::options` builds and every layer reads), limits as
//! data (`limits`), time stamps and ids (`stamp`), logging to stderr (`log`), a file of
//! whole lines written by a thread of its own (`sink`), clients'
//! request timeouts (`clients`), the fixed worker pool (`pool`), the JSON text writer
//! (`json`), escape-sequence removal (`ansi`), regexes with a capped size (`pattern`), SHA-256 and HMAC (`mac`),
//! invisible characters made visible (`visible`) and the tools by name (`tool`).
//!
//! May import: the standard library and the crates in `Cargo.toml`; within the crate, only
//! other modules of `base`. Everything above may import it.

pub mod ansi;
pub mod clients;
pub mod config;
pub mod json;
pub mod limits;
pub mod log;
pub mod mac;
pub mod pattern;
pub mod pool;
pub mod queue;
pub mod ring;
pub mod sink;
pub mod stamp;
pub mod sys;
pub mod tool;
pub mod visible;
