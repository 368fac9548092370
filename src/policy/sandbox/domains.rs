//! Landlock rulesets kept between calls, so that a call does not pay for building one.
//!
//! A ruleset is kept per distinct domain: keyed by everything it is made of (the rights
//! handled, the scopes, the seccomp filter, and each grant's rights with the device and
//! inode its path resolves to when the call is made, which is what Landlock keys its rules
//! on). Each process a call starts restricts itself to the kept ruleset before it executes
//! (`landlock_restrict_self` in the child, see `sys::ChildSetup`), which makes a new domain
//! for that process alone: no signal, ptrace or `/proc` access between calls, nor between
//! the stages of one pipeline, as with a domain built per call.
//!
//! Invariants: a kept ruleset is exactly the one the call would have built (the key covers
//! every input of its ruleset, the lookup compares the identities found now, and a new entry
//! is keyed by what its ruleset was actually made from). At most [`MAX_DOMAINS`] rulesets
//! are kept (least recently used dropped first); each holds its granted files open.

use crate::base::sys::fd::OwnedFd;
use std::sync::Arc;

use parking_lot::Mutex;

use super::plan::{Identity, Rules};

/// Most rulesets kept at once.
pub const MAX_DOMAINS: usize = 8;

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
                .map(|(access, _)| access)
                .chain(rules.held.iter().map(|(access, _)| access))
                .zip(ids)
                .map(|(access, id)| (access & rules.handled_fs, *id))
                .collect(),
        }
    }
}

struct Entry {
    key: Key,
    used: u64,
    ruleset: Arc<OwnedFd>,
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    clock: u64,
}

/// The kept rulesets.
#[derive(Default)]
pub struct Domains {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Domains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Domains({})", self.inner.lock().entries.len())
    }
}

impl Domains {
    /// The ruleset of `rules` as its paths resolve now: a kept one, or one built now and
    /// kept. `known`: the identities of the first grants, when the caller has them already.
    pub fn ruleset(&self, rules: &Rules, known: &[(u64, u64)]) -> Result<Arc<OwnedFd>, String> {
        let ids = rules.identity(known).map_err(|e| build_error(&e))?;
        let key = Key::new(rules, &ids);
        {
            let mut inner = self.inner.lock();
            inner.clock += 1;
            let now = inner.clock;
            if let Some(e) = inner.entries.iter_mut().find(|e| e.key == key) {
                e.used = now;
                return Ok(e.ruleset.clone());
            }
        }
        let (ruleset, ids) = rules.build().map_err(|e| build_error(&e))?;
        let ruleset = Arc::new(ruleset);
        let key = Key::new(rules, &ids);
        let mut inner = self.inner.lock();
        inner.clock += 1;
        let now = inner.clock;
        if !inner.entries.iter().any(|e| e.key == key) {
            if inner.entries.len() >= MAX_DOMAINS {
                if let Some(oldest) =
                    (0..inner.entries.len()).min_by_key(|&i| inner.entries[i].used)
                {
                    inner.entries.swap_remove(oldest);
                }
            }
            inner.entries.push(Entry {
                key,
                used: now,
                ruleset: ruleset.clone(),
            });
        }
        Ok(ruleset)
    }

    /// The number of rulesets kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().entries.len()
    }
}

fn build_error(e: &std::io::Error) -> String {
    format!(
        "cannot build the kernel sandbox: {}",
        crate::base::config::plain_io(e)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sys::fd::AsFd;
    use crate::base::sys::{self, landlock as ll};
    use crate::policy::sandbox::filter::Filter;
    use std::io::Read;
    use std::path::{Path, PathBuf};

    fn rules_for(dir: &Path) -> Rules {
        Rules {
            handled_fs: ll::FS_WRITE_FILE | ll::FS_MAKE_REG | ll::FS_MAKE_BLOCK,
            handled_net: 0,
            scoped: 0,
            grants: vec![(ll::FS_WRITE_FILE | ll::FS_MAKE_REG, dir.to_path_buf())],
            filter: Filter::default(),
            exact: Some(dir.to_path_buf()),
            held: Vec::new(),
        }
    }

    /// The working directory's rule is made without following a link: a link swapped in
    /// after the check fails the call instead of widening the rule.
    #[test]
    fn the_working_directory_rule_does_not_follow_a_link() {
        if !landlock("the_working_directory_rule_does_not_follow_a_link") {
            return;
        }
        let base = base("exact");
        std::fs::create_dir_all(base.join("real")).expect("mkdir");
        let _ = std::fs::remove_file(base.join("link"));
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).expect("symlink");
        assert!(rules_for(&base.join("link")).build().is_err());
        assert!(rules_for(&base.join("real")).build().is_ok());
        let _ = std::fs::remove_dir_all(&base);
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

    /// Runs `script` under `/bin/sh` restricted to `ruleset`, and waits for its output's end.
    fn run_confined(ruleset: &OwnedFd, script: &str) -> String {
        let setup = sys::ChildSetup {
            confine: true,
            landlock: Some(ruleset.as_fd()),
            ..sys::ChildSetup::default()
        };
        let args = ["-c".to_string(), script.to_string()];
        let env = [("PATH".into(), "/usr/bin:/bin".into())];
        let spawned = sys::spawn(sys::SpawnSpec {
            program: "/bin/sh",
            arg0: None,
            args: &args,
            env: &env,
            cwd: Path::new("/"),
            stdin_pipe: false,
            stdout: None,
            stdin_file: None,
            stderr: None,
            join_group: None,
            terminal: None,
            setup: Some(&setup),
        })
        .unwrap();
        let mut out = String::new();
        spawned.stdout.unwrap().read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn each_directory_gets_its_own_ruleset_and_the_kept_ones_are_bounded() {
        if !landlock("each_directory_gets_its_own_ruleset") {
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
        for (i, dir) in dirs.iter().enumerate() {
            let other = &dirs[(i + 1) % dirs.len()];
            let ruleset = domains.ruleset(&rules_for(dir), &[]).unwrap();
            let out = run_confined(
                &ruleset,
                &format!(
                    "echo x > {0}/mine && echo mine; echo x > {1}/theirs && echo theirs",
                    dir.display(),
                    other.display()
                ),
            );
            assert_eq!(out, "mine\n", "dir {i}");
            assert!(!other.join("theirs").exists());
            assert!(domains.len() <= MAX_DOMAINS, "{}", domains.len());
        }
        // The same directory twice in a row is served by one kept ruleset.
        let rules = rules_for(&dirs[dirs.len() - 1]);
        let first = domains.ruleset(&rules, &[]).unwrap();
        let again = domains.ruleset(&rules, &[]).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // The least recently used went: the first directory's ruleset is built anew.
        let rules0 = rules_for(&dirs[0]);
        let ids = rules0.identity(&[]).unwrap();
        assert!(!domains
            .inner
            .lock()
            .entries
            .iter()
            .any(|e| e.key == Key::new(&rules0, &ids)));
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A directory replaced under the same path is another domain: the kept ruleset (whose
    /// rule is on the old directory's inode) is not reused for it.
    #[test]
    fn a_path_that_now_names_another_file_gets_a_new_ruleset() {
        if !landlock("a_path_that_now_names_another_file_gets_a_new_ruleset") {
            return;
        }
        let base = base("domains-moved");
        let (dir, moved) = (base.join("d"), base.join("old"));
        std::fs::create_dir(&dir).unwrap();
        let domains = Domains::default();
        let rules = rules_for(&dir);
        let first = domains.ruleset(&rules, &[]).unwrap();
        std::fs::rename(&dir, &moved).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let second = domains.ruleset(&rules, &[]).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        let out = run_confined(
            &second,
            &format!(
                "echo x > {0}/b && echo new; echo x > {1}/b && echo old",
                dir.display(),
                moved.display()
            ),
        );
        assert_eq!(out, "new\n");
        let _ = std::fs::remove_dir_all(&base);
    }
}
