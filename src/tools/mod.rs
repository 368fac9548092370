//! The tools layer: what each tool does, as typed calls and typed answers.
//!
//! The shell-mode tools (`engine`: exec, read, write, wait, stop, ps, cleanup) and how an
//! `exec` becomes a launch (`launch`, with shell mode's checks in `policy`), trusted mode's
//! `shell_execute` (`shell_execute`), the typed answers (`results`, no JSON here), one call
//! in flight (`call`: cancellation, progress, the responder), parked waits (`wait`: a call
//! that waits holds no thread), `wait`'s `until` scans (`until`, on a thread of their own)
//! and whether an answer fits in memory (`room`).
//!
//! May import: `process`, `policy` and `base`. No JSON and no protocol: the protocol layer
//! turns answers into results.

pub mod call;
pub mod engine;
pub mod launch;
pub mod policy;
pub mod ps;
pub mod read;
pub mod results;
pub mod room;
pub mod shell_execute;
pub mod until;
pub mod wait;
