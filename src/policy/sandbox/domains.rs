//! Confined threads kept between calls, so that a call does not pay for confining a thread.
//!
//! A domain thread is made per distinct domain: keyed by everything the call's ruleset is
//! made of (the rights handled, the scopes, the seccomp filter, and each grant's rights with
//! the device and inode its path resolves to when the call is made, which is what Landlock
//! keys its rules on). It drops every capability, sets `no_new_privs`, installs the filter
//! and restricts itself to the domain once, and then keeps one standby thread ready: a
//! thread it started, which inherited all of that. A call hands its spawns to the standby,
//! which first adds a layer of its own (a nested Landlock domain that handles only rights no
//! rule grants, plus the call's scopes), so that every call's processes are still in a
//! domain made for that call alone: no signal, ptrace or `/proc` access between calls, as
//! with a domain built per call. The standby spawns the stages and ends; the domain thread
//! starts the next standby.
//!
//! Invariants: a cached domain is exactly the one the call would have built (the key covers
//! every input of its ruleset, the lookup compares the identities found now, and a new entry
//! is keyed by what its ruleset was actually made from); a thread's domain only ever gets
//! narrower; only `sandbox-domain` and `sandbox-call` threads are confined, never the
//! server's own. At most [`MAX_DOMAINS`] domains are kept (least recently used dropped
//! first), each with two threads, and a domain left unused for [`IDLE`] ends its threads.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

use super::plan::{self, Identity, Rules};
use crate::base::sys::{self, landlock as ll, ErasedJob};

/// Most domains kept at once (two idle threads each).
pub const MAX_DOMAINS: usize = 4;
/// A domain unused this long ends its threads.
pub const IDLE: Duration = Duration::from_secs(30);
/// Stack of the confined threads (they only spawn).
const STACK: usize = 256 * 1024;

/// Everything a ruleset is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    handled_fs: u64,
    handled_net: u64,
    scoped: u64,
    filter: u32,
    /// Each grant's rights (as handled) and what its path resolved to.
    grants: Vec<(u64, Option<(u64, u64)>)>,
}

impl Key {
    /// The key of `rules` whose grants resolve to `ids`.
    pub fn new(rules: &Rules, ids: &Identity) -> Key {
        Key {
            handled_fs: rules.handled_fs,
            handled_net: rules.handled_net,
            scoped: rules.scoped,
            filter: rules.filter.bits(),
            grants: rules
                .grants
                .iter()
                .zip(ids)
                .map(|((access, _), id)| (access & rules.handled_fs, *id))
                .collect(),
        }
    }
}

/// The layer each call adds over a shared domain: the call's scopes, and rights that the
/// domain handles and no rule of it grants (making block devices, binding TCP ports), so
/// the layer denies nothing the domain allows. `None` when there is no such right and no
/// scope (the layer would be refused as empty): the call then gets a domain of its own.
pub fn layer(rules: &Rules) -> Option<ll::RulesetAttr> {
    let granted = rules.grants.iter().fold(0, |m, (access, _)| m | access);
    let attr = ll::RulesetAttr {
        handled_access_fs: rules.handled_fs & ll::FS_MAKE_BLOCK & !granted,
        handled_access_net: rules.handled_net & ll::NET_BIND_TCP,
        scoped: rules.scoped,
    };
    (attr.handled_access_fs | attr.handled_access_net | attr.scoped != 0).then_some(attr)
}

struct Entry {
    key: Key,
    generation: u64,
    used: u64,
    requests: Sender<ErasedJob>,
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    clock: u64,
}

/// The kept domains.
#[derive(Default)]
pub struct Domains {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Domains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Domains({})", self.inner.lock().entries.len())
    }
}

impl Domains {
    /// Runs `f` on a thread confined to `rules`' domain plus a layer of the call's own, and
    /// waits for it. `f` gets whether the thread got there: it must start nothing on `Err`.
    /// `known`: the identities of the first grants, when the caller has them already.
    pub fn run<T: Send>(
        &self,
        rules: &Rules,
        known: &[(u64, u64)],
        layer: ll::RulesetAttr,
        f: impl FnOnce(Result<(), String>) -> Result<T, String> + Send,
    ) -> Result<T, String> {
        let key = rules
            .identity(known)
            .map(|ids| Key::new(rules, &ids))
            .map_err(|e| build_error(&e));
        let out = sys::run_elsewhere(f, |job| {
            match key {
                Ok(key) => self.submit(key, rules, layer, job),
                Err(e) => job.run(Err(e)),
            }
            Ok(())
        });
        out.unwrap_or_else(|| {
            Err("the sandbox thread ended without starting the command (it panicked)".into())
        })
    }

    /// The number of domains kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().entries.len()
    }

    fn submit(&self, key: Key, rules: &Rules, layer: ll::RulesetAttr, mut job: ErasedJob) {
        let mut inner = self.inner.lock();
        inner.clock += 1;
        let now = inner.clock;
        if let Some(i) = inner.entries.iter().position(|e| e.key == key) {
            match inner.entries[i].requests.send(job) {
                Ok(()) => {
                    inner.entries[i].used = now;
                    return;
                }
                Err(back) => {
                    job = back.into_inner();
                    inner.entries.swap_remove(i);
                }
            }
        }
        let entry = match self.start(rules, layer, now) {
            Ok(entry) => entry,
            Err(e) => {
                drop(inner);
                return job.run(Err(e));
            }
        };
        if inner.entries.len() >= MAX_DOMAINS {
            if let Some(oldest) = (0..inner.entries.len()).min_by_key(|&i| inner.entries[i].used) {
                // Dropping its sender ends its threads once its queue is empty.
                inner.entries.swap_remove(oldest);
            }
        }
        // A fresh channel with a live receiver: the send cannot fail but for a thread that
        // already ended, in which case the job is dropped unrun and the caller told so.
        let _ = entry.requests.send(job);
        inner.entries.push(entry);
    }

    /// Builds the ruleset and starts a domain thread for it; the entry is keyed by what the
    /// ruleset was made from.
    fn start(&self, rules: &Rules, layer: ll::RulesetAttr, now: u64) -> Result<Entry, String> {
        let (ruleset, ids) = rules.build().map_err(|e| build_error(&e))?;
        let key = Key::new(rules, &ids);
        let generation = now;
        let (requests, queue) = crossbeam_channel::unbounded();
        let (ready_tx, ready) = crossbeam_channel::bounded(1);
        let cache = Arc::downgrade(&self.inner);
        let filter = rules.filter;
        std::thread::Builder::new()
            .name("sandbox-domain".into())
            .stack_size(STACK)
            .spawn(move || {
                let entered = plan::enforce_ruleset(&ruleset, filter).map_err(|e| {
                    format!(
                        "cannot enter the kernel sandbox: {}",
                        crate::base::config::plain_io(&e)
                    )
                });
                drop(ruleset);
                let ok = entered.is_ok();
                let _ = ready_tx.send(entered);
                if ok {
                    domain_thread(&queue, &cache, generation, layer);
                }
            })
            .map_err(|e| format!("cannot start the sandbox thread: {e}"))?;
        ready
            .recv()
            .unwrap_or_else(|_| Err("the sandbox thread ended before it was ready".into()))?;
        Ok(Entry {
            key,
            generation,
            used: now,
            requests,
        })
    }
}

fn build_error(e: &std::io::Error) -> String {
    format!(
        "cannot build the kernel sandbox: {}",
        crate::base::config::plain_io(e)
    )
}

/// The domain thread, confined: keeps one standby thread waiting for the next call, and
/// starts another each time one takes a call. Ends when a standby ends without a call
/// (the domain was dropped, or was idle).
fn domain_thread(
    queue: &Receiver<ErasedJob>,
    cache: &Weak<Mutex<Inner>>,
    generation: u64,
    layer: ll::RulesetAttr,
) {
    loop {
        let (took_tx, took) = crossbeam_channel::bounded::<()>(1);
        let (q, c) = (queue.clone(), cache.clone());
        let standby = std::thread::Builder::new()
            .name("sandbox-call".into())
            .stack_size(STACK)
            .spawn(move || {
                if let Some(job) = next_job(&q, &c, generation) {
                    job.run(enter_layer(&layer));
                    // The next standby is made once the call's spawns are done, so that
                    // making it does not compete with them.
                    let _ = took_tx.send(());
                }
            });
        match standby {
            Ok(_) => {
                if took.recv().is_err() {
                    return;
                }
            }
            Err(e) => match next_job(queue, cache, generation) {
                Some(job) => job.run(Err(format!("cannot start the sandbox thread: {e}"))),
                None => return,
            },
        }
    }
}

/// The next call for this domain; `None` once the domain was dropped, or after it was idle
/// for [`IDLE`] (then it removes itself from the cache, under its lock, so no call can be
/// queued behind its back).
fn next_job(
    queue: &Receiver<ErasedJob>,
    cache: &Weak<Mutex<Inner>>,
    generation: u64,
) -> Option<ErasedJob> {
    match queue.recv_timeout(IDLE) {
        Ok(job) => Some(job),
        Err(RecvTimeoutError::Disconnected) => None,
        Err(RecvTimeoutError::Timeout) => {
            let cache = cache.upgrade()?;
            let mut inner = cache.lock();
            if let Ok(job) = queue.try_recv() {
                return Some(job);
            }
            inner.entries.retain(|e| e.generation != generation);
            None
        }
    }
}

/// Puts the calling (already confined) thread into a nested domain of its own.
fn enter_layer(layer: &ll::RulesetAttr) -> Result<(), String> {
    sys::landlock_create_ruleset(layer)
        .and_then(|ruleset| sys::landlock_restrict_self(&ruleset))
        .map_err(|e| {
            format!(
                "cannot enter the call's own kernel sandbox domain: {}",
                crate::base::config::plain_io(&e)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::sandbox::filter::Filter;
    use std::io::ErrorKind;
    use std::path::{Path, PathBuf};

    fn rules_for(dir: &Path) -> Rules {
        Rules {
            handled_fs: ll::FS_WRITE_FILE | ll::FS_MAKE_REG | ll::FS_MAKE_BLOCK,
            handled_net: 0,
            scoped: 0,
            grants: vec![(ll::FS_WRITE_FILE | ll::FS_MAKE_REG, dir.to_path_buf())],
            filter: Filter::default(),
        }
    }

    fn landlock(test: &str) -> bool {
        let abi = sys::landlock_abi().unwrap_or(0);
        if abi == 0 {
            eprintln!("skipped {test}: this kernel has no Landlock");
        }
        abi > 0
    }

    fn base(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ys-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Creates `name` in `dir` from the call's thread: Ok, or the error's kind.
    fn create(dir: &Path, name: &str) -> Result<(), ErrorKind> {
        std::fs::write(dir.join(name), "x").map_err(|e| e.kind())
    }

    #[test]
    fn each_directory_gets_its_own_domain_and_the_kept_ones_are_bounded() {
        if !landlock("each_directory_gets_its_own_domain") {
            return;
        }
        let base = base("domains");
        let dirs: Vec<PathBuf> = (0..MAX_DOMAINS + 2)
            .map(|i| {
                let d = base.join(i.to_string());
                std::fs::create_dir(&d).unwrap();
                d
            })
            .collect();
        let domains = Domains::default();
        for round in 0..2 {
            for (i, dir) in dirs.iter().enumerate() {
                let other = &dirs[(i + 1) % dirs.len()];
                let rules = rules_for(dir);
                let layer = layer(&rules).expect("a layer");
                let (mine, theirs) = domains
                    .run(&rules, &[], layer, |entered| {
                        entered?;
                        let name = format!("f{round}");
                        Ok((create(dir, &name), create(other, &name)))
                    })
                    .unwrap();
                assert_eq!(mine, Ok(()), "round {round}, dir {i}");
                assert_eq!(theirs, Err(ErrorKind::PermissionDenied), "round {round}");
                assert!(domains.len() <= MAX_DOMAINS, "{}", domains.len());
            }
        }
        // The same directory twice in a row is served by one kept domain.
        let rules = rules_for(&dirs[0]);
        let layer = layer(&rules).unwrap();
        for _ in 0..3 {
            domains.run(&rules, &[], layer, |e| e).unwrap();
        }
        assert_eq!(
            domains
                .inner
                .lock()
                .entries
                .iter()
                .filter(|e| e.key == Key::new(&rules, &rules.identity(&[]).unwrap()))
                .count(),
            1
        );
        // The calling thread was never confined.
        assert_eq!(create(&base, "caller"), Ok(()));
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A directory replaced under the same path is another domain: the kept one (whose rule
    /// is on the old directory's inode) is not reused for it.
    #[test]
    fn a_path_that_now_names_another_file_gets_a_new_domain() {
        if !landlock("a_path_that_now_names_another_file_gets_a_new_domain") {
            return;
        }
        let base = base("domains-moved");
        let (dir, moved) = (base.join("d"), base.join("old"));
        std::fs::create_dir(&dir).unwrap();
        let domains = Domains::default();
        let rules = rules_for(&dir);
        let layer = layer(&rules).unwrap();
        let first = Key::new(&rules, &rules.identity(&[]).unwrap());
        domains
            .run(&rules, &[], layer, |e| e.map(|()| create(&dir, "a")))
            .unwrap()
            .unwrap();
        std::fs::rename(&dir, &moved).unwrap();
        std::fs::create_dir(&dir).unwrap();
        assert_ne!(Key::new(&rules, &rules.identity(&[]).unwrap()), first);
        let (new, old) = domains
            .run(&rules, &[], layer, |e| {
                e?;
                Ok((create(&dir, "b"), create(&moved, "b")))
            })
            .unwrap();
        assert_eq!(new, Ok(()));
        assert_eq!(old, Err(ErrorKind::PermissionDenied));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn the_layer_handles_only_rights_no_rule_grants() {
        let mut rules = rules_for(Path::new("/tmp"));
        let l = layer(&rules).unwrap();
        assert_eq!(l.handled_access_fs, ll::FS_MAKE_BLOCK);
        assert_eq!(l.handled_access_net, 0);
        rules.grants.push((ll::FS_MAKE_BLOCK, "/dev".into()));
        assert!(
            layer(&rules).is_none(),
            "a granted right must not be handled again"
        );
        rules.scoped = ll::SCOPE_SIGNAL;
        assert_eq!(layer(&rules).unwrap().handled_access_fs, 0);
        let net = Rules {
            handled_net: ll::NET_BIND_TCP | ll::NET_CONNECT_TCP,
            ..Rules::default()
        };
        assert_eq!(layer(&net).unwrap().handled_access_net, ll::NET_BIND_TCP);
    }
}
