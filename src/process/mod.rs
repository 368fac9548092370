//! The process layer: commands as records, from spawn to reaping.
//!
//! A record (`record::Proc`: its state, output rings, stdin and watchers) and the table of
//! records (`table`); starting the stages of a command (`spawn`), reading their output
//! (`ingest`, one epoll thread), reaping them and enforcing deadlines (`reaper`), finding
//! every process a command started (`tree`), the guardian that cleans up after a SIGKILL of
//! the server (`guardian`), pseudo-terminals (`pty`), whether a command waits for input
//! (`inputwait`), per-command cgroups (`cgroup`), each sandboxed call's temporary
//! directory (`tmpdir`), the registry of live groups (`groups`) and
//! the agent-facing glue of records
//! (`agents`: non-interactive environment, limits, input-wait states, terminal shaping).
//!
//! May import: `policy` (redaction filters, the trusted `Stage`, the sandbox's spawner) and
//! `base`. It knows nothing of tools or the protocol.

pub mod agents;
pub mod cgroup;
pub mod groups;
pub mod guardian;
#[cfg(target_os = "linux")]
pub mod ingest;
pub mod inputwait;
pub mod pty;
pub mod reaper;
pub mod record;
pub mod spawn;
pub mod table;
pub mod tmpdir;
pub mod tree;
