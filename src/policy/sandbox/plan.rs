//! What one call's processes get before they run: a Landlock domain (as rules on paths),
//! resource limits and a cgroup. Built by the server per call; enforced either on a
//! spawning thread (`super::spawn`) or by the launcher, which receives it as arguments.
//!
//! The argument encoding is one item per argument, each tagged by its first byte, so that
//! no path needs quoting: `h<fs>.<net>.<scoped>.<filter>` (hexadecimal rights handled, seccomp filter bits), then
//! `r<access>:<path>` per rule, `l<resource>:<value>` per rlimit, `c<dir>` for the cgroup,
//! and `--` before the target program, its `argv[0]` and its arguments.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::filter::{self, Filter};
use crate::base::sys;

/// Landlock rules: the rights handled (denied unless granted) and the grants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// Filesystem rights handled (`sys::landlock::FS_*`).
    pub handled_fs: u64,
    /// Network rights handled (`sys::landlock::NET_*`); no port is ever granted.
    pub handled_net: u64,
    /// IPC scopes (`sys::landlock::SCOPE_*`).
    pub scoped: u64,
    /// Rights granted beneath each path (a file or a directory).
    pub grants: Vec<(u64, PathBuf)>,
    /// What the seccomp filter refuses (`super::filter`).
    pub filter: Filter,
}

/// What each grant of a ruleset landed on, in order: device and inode, `None` for a grant
/// skipped (no such file, or no right this ABI handles).
pub type Identity = Vec<Option<(u64, u64)>>;

/// Everything applied to a process between its start and the `exec` of its program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The Landlock domain, when the sandbox applies.
    pub rules: Option<Rules>,
    /// Resource limits: (`RLIMIT_*` number, value for both soft and hard limit).
    pub rlimits: Vec<(u32, u64)>,
    /// A cgroup directory to join (the process writes its pid to `cgroup.procs`).
    pub cgroup: Option<PathBuf>,
}

impl Rules {
    /// Creates the ruleset: each grant's path is opened (symlinks followed, so the rule
    /// lands on the file the path resolves to now); a path that does not exist is skipped.
    pub fn ruleset(&self) -> io::Result<OwnedFd> {
        self.build().map(|(ruleset, _)| ruleset)
    }

    /// [`Rules::ruleset`], with what each grant landed on: the device and inode of the file
    /// its path resolved to (`fstat` of the descriptor the rule was made from), `None` for
    /// a grant skipped. Landlock keys its rules on inodes, so two rulesets with the same
    /// rights and the same identities are the same domain's rules.
    pub fn build(&self) -> io::Result<(OwnedFd, Identity)> {
        let mut ids = Vec::with_capacity(self.grants.len());
        let attr = sys::landlock::RulesetAttr {
            handled_access_fs: self.handled_fs,
            handled_access_net: self.handled_net,
            scoped: self.scoped,
        };
        let ruleset = sys::landlock_create_ruleset(&attr)?;
        for (access, path) in &self.grants {
            let access = access & self.handled_fs;
            if access == 0 {
                ids.push(None);
                continue;
            }
            let fd = match sys::open_path(path) {
                Ok(fd) => fd,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    ids.push(None);
                    continue;
                }
                Err(e) => return Err(annotate(e, "open", path)),
            };
            let file = std::fs::File::from(fd);
            let m = file.metadata().map_err(|e| annotate(e, "look at", path))?;
            ids.push(Some((m.dev(), m.ino())));
            let fd = OwnedFd::from(file);
            sys::landlock_add_path_rule(&ruleset, &fd, access)
                .map_err(|e| annotate(e, "add a Landlock rule for", path))?;
        }
        Ok((ruleset, ids))
    }

    /// What [`Rules::build`] would find now, without building: each grant's path looked up
    /// (symlinks followed), but for the first ones, whose identities are `known` (found by
    /// the same lookup when the plan was made). An error where `build` would fail.
    pub fn identity(&self, known: &[(u64, u64)]) -> io::Result<Identity> {
        let mut ids = Vec::with_capacity(self.grants.len());
        for (i, (access, path)) in self.grants.iter().enumerate() {
            if access & self.handled_fs == 0 {
                ids.push(None);
                continue;
            }
            if let Some(id) = known.get(i) {
                ids.push(Some(*id));
                continue;
            }
            match std::fs::metadata(path) {
                Ok(m) => ids.push(Some((m.dev(), m.ino()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => ids.push(None),
                Err(e) => return Err(annotate(e, "look at", path)),
            }
        }
        Ok(ids)
    }

    /// Confines the calling thread (and everything it starts from now on) for good:
    /// capabilities dropped, `no_new_privs`, the seccomp filter, then the domain.
    pub fn enforce(&self) -> io::Result<()> {
        let ruleset = self.ruleset()?;
        enforce_ruleset(&ruleset, self.filter)
    }
}

/// Confines the calling thread, in this order: every capability dropped (bounding,
/// ambient, effective, permitted and inheritable sets: a root server's commands run with
/// none, and can neither read another process's memory past Landlock's ptrace rule nor use
/// any other privilege), `no_new_privs`, the seccomp filter for `filter` (where this
/// architecture has one), then the Landlock domain `ruleset`. Only this thread changes.
pub fn enforce_ruleset(ruleset: &OwnedFd, filter: Filter) -> io::Result<()> {
    sys::drop_all_capabilities()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot drop capabilities: {e}")))?;
    sys::set_no_new_privs()?;
    if let Some(program) = filter::native_program(filter)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?
    {
        sys::install_seccomp_filter(program).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot install the seccomp filter: {e}"))
        })?;
    }
    sys::landlock_restrict_self(ruleset)
}

fn annotate(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot {what} {}: {}",
            path.display(),
            crate::base::config::plain_io(&e)
        ),
    )
}

impl Plan {
    /// True when something must be set per process (rlimits, cgroup), which a spawning
    /// thread cannot do for its children: the launcher does it.
    pub fn needs_launcher(&self) -> bool {
        !self.rlimits.is_empty() || self.cgroup.is_some()
    }

    /// True when the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.rules.is_none() && !self.needs_launcher()
    }

    /// Applies the plan to the calling process, in this order: rlimits, cgroup, Landlock.
    pub fn apply(&self) -> io::Result<()> {
        for &(resource, value) in &self.rlimits {
            sys::set_rlimit(resource, value).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot set rlimit {resource} to {value}: {e}"),
                )
            })?;
        }
        if let Some(dir) = &self.cgroup {
            let procs = dir.join("cgroup.procs");
            std::fs::write(&procs, std::process::id().to_string())
                .map_err(|e| annotate(e, "join the cgroup through", &procs))?;
        }
        if let Some(rules) = &self.rules {
            rules.enforce()?;
        }
        Ok(())
    }

    /// The launcher's arguments (after the marker) for running `program` as `argv0` with
    /// `args` under this plan.
    pub fn encode(&self, program: &str, argv0: &str, args: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(args.len() + 8);
        if let Some(r) = &self.rules {
            out.push(format!(
                "h{:x}.{:x}.{:x}.{:x}",
                r.handled_fs,
                r.handled_net,
                r.scoped,
                r.filter.bits()
            ));
            for (access, path) in &r.grants {
                out.push(format!("r{access:x}:{}", path.display()));
            }
        }
        for (res, value) in &self.rlimits {
            out.push(format!("l{res}:{value}"));
        }
        if let Some(dir) = &self.cgroup {
            out.push(format!("c{}", dir.display()));
        }
        out.push("--".into());
        out.push(program.into());
        out.push(argv0.into());
        out.extend(args.iter().cloned());
        out
    }

    /// Reads the launcher's arguments back: the plan, the program and its `argv` (from
    /// `argv[0]` on). Anything malformed is an error naming the argument.
    pub fn decode(args: &[OsString]) -> Result<(Plan, OsString, Vec<OsString>), String> {
        let mut plan = Plan::default();
        let mut it = args.iter();
        let bad = |a: &OsStr| format!("malformed launcher argument {a:?}");
        loop {
            let Some(arg) = it.next() else {
                return Err("launcher arguments end before the program".into());
            };
            let bytes = arg.as_bytes();
            if bytes == b"--" {
                break;
            }
            let (tag, rest) = bytes.split_first().ok_or_else(|| bad(arg))?;
            let text = || std::str::from_utf8(rest).map_err(|_| bad(arg));
            match tag {
                b'h' => {
                    let parts: Vec<u64> = text()?
                        .split('.')
                        .map(|p| u64::from_str_radix(p, 16))
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad(arg))?;
                    let [fs, net, scoped, bits] = parts[..] else {
                        return Err(bad(arg));
                    };
                    plan.rules = Some(Rules {
                        handled_fs: fs,
                        handled_net: net,
                        scoped,
                        grants: Vec::new(),
                        filter: Filter::from_bits(u32::try_from(bits).map_err(|_| bad(arg))?),
                    });
                }
                b'r' => {
                    let colon = rest
                        .iter()
                        .position(|&b| b == b':')
                        .ok_or_else(|| bad(arg))?;
                    let access = std::str::from_utf8(&rest[..colon])
                        .ok()
                        .and_then(|h| u64::from_str_radix(h, 16).ok())
                        .ok_or_else(|| bad(arg))?;
                    let path = PathBuf::from(OsString::from_vec(rest[colon + 1..].to_vec()));
                    let rules = plan.rules.as_mut().ok_or_else(|| bad(arg))?;
                    rules.grants.push((access, path));
                }
                b'l' => {
                    let (res, value) = text()?.split_once(':').ok_or_else(|| bad(arg))?;
                    let res = res.parse().map_err(|_| bad(arg))?;
                    let value = value.parse().map_err(|_| bad(arg))?;
                    plan.rlimits.push((res, value));
                }
                b'c' => plan.cgroup = Some(PathBuf::from(OsString::from_vec(rest.to_vec()))),
                _ => return Err(bad(arg)),
            }
        }
        let program = it
            .next()
            .cloned()
            .ok_or("launcher arguments end before the program")?;
        let argv: Vec<OsString> = it.cloned().collect();
        if argv.is_empty() {
            return Err("launcher arguments have no argv[0]".into());
        }
        Ok((plan, program, argv))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_paths_with_any_bytes() {
        let plan = Plan {
            rules: Some(Rules {
                handled_fs: 0xffff,
                handled_net: 3,
                scoped: 2,
                grants: vec![
                    (1, PathBuf::from("/usr/bin/ls")),
                    (0x2, PathBuf::from("/tmp/a:b/--/r1:x")),
                ],
                filter: Filter {
                    processes: true,
                    network: false,
                },
            }),
            rlimits: vec![(7, 64), (9, u64::MAX)],
            cgroup: Some(PathBuf::from("/sys/fs/cgroup/pids/ys-1")),
        };
        let args = plan.encode("/usr/bin/ls", "ls", &["--".into(), "-l".into()]);
        let os: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (back, program, argv) = Plan::decode(&os).unwrap();
        assert_eq!(back, plan);
        assert_eq!(program, "/usr/bin/ls");
        assert_eq!(argv, ["ls", "--", "-l"]);
    }

    #[test]
    fn malformed_arguments_are_named() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(Plan::decode(&os(&["x1", "--", "p", "p"]))
            .unwrap_err()
            .contains("\"x1\""));
        assert!(Plan::decode(&os(&["r1:/a", "--", "p", "p"])).is_err());
        assert!(Plan::decode(&os(&["h1.2", "--", "p", "p"])).is_err());
        assert!(Plan::decode(&os(&["h1.2.3", "--", "p", "p"])).is_err());
        assert!(Plan::decode(&os(&["--", "p"])).is_err());
        assert!(Plan::decode(&os(&["l4:x", "--", "p", "p"])).is_err());
        let (plan, _, _) = Plan::decode(&os(&["--", "p", "p"])).unwrap();
        assert!(plan.is_empty());
    }

    /// A plan's rlimits and cgroup are applied to the calling process. RLIMIT_CORE is set to
    /// its current soft value, which changes nothing for the other tests of this process; a
    /// plain directory stands in for the cgroup (the write of the pid is what is checked).
    #[test]
    fn apply_sets_rlimits_and_joins_the_cgroup() {
        let core = 4; // RLIMIT_CORE on Linux
        let current = crate::base::sys::get_rlimit(core).unwrap();
        let dir = std::env::temp_dir().join(format!("ys-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let plan = Plan {
            rules: None,
            rlimits: vec![(core, current)],
            cgroup: Some(dir.clone()),
        };
        plan.apply().unwrap();
        assert_eq!(crate::base::sys::get_rlimit(core).unwrap(), current);
        let written = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
        assert_eq!(written, std::process::id().to_string());
        let bad = Plan {
            rlimits: vec![(9999, 1)],
            ..Plan::default()
        };
        assert!(bad.apply().unwrap_err().to_string().contains("rlimit 9999"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
