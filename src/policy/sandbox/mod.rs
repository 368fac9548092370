//! The kernel sandbox (docs/sandbox.md): every process a call starts runs in a Landlock
//! domain made for that call, so the kernel, not a table of names, refuses what the policy
//! forbids.
//!
//! Policy (`Sandbox::plan`):
//!
//! - Trusted mode (`auto`, `on`): execute only the files the allowlist resolves to in the
//!   safe `PATH` (symlinks followed, patterns matched against the directories when the call
//!   is made) and the ELF interpreters they name; write (every write-like right: write,
//!   truncate, remove, rename and link, make directories, files, fifos, sockets and
//!   symlinks) only beneath the call's working directory, plus `/dev/null`. Device nodes can
//!   be made nowhere. Reading is not restricted.
//! - Shell mode `workspace` (`on` is the same in shell mode): writes only beneath the
//!   allowed roots (or the call's cwd), `/tmp` and the terminal devices; execution free.
//! - Both: signals and abstract unix sockets scoped to the domain (ABI 6), and Landlock's
//!   own ptrace rule: nothing outside the domain can be signalled, traced, or read through
//!   `/proc/<pid>/environ` and `mem`. `YIELDSHELL_NETWORK=deny` handles TCP bind and
//!   connect with no port granted (ABI 4).
//! - Beside the domain: no capability at all, and a seccomp filter (`filter`) against
//!   changing other processes' limits, priorities and affinity, io_uring, and under network
//!   deny every IPv4/IPv6 socket but a datagram one. Trusted mode also refuses a working
//!   directory inside or above the safe `PATH` (`cwd`).
//!
//! Enforcement (`Sandbox::prepare`, a `Plan` the caller spawns with): each process a call starts applies the sandbox to itself
//! between its clone and its exec (`sys::ChildSetup`, run by the child of the server's own
//! `vfork`-style spawn): it drops every capability, sets `no_new_privs`, installs the
//! seccomp filter (built once per filter choice) unless the server runs under it already
//! (the usual case, see below), and restricts itself to the call's Landlock
//! ruleset (built once per distinct domain and kept, `domains`). Each restriction makes a
//! new domain, so every process the call starts directly is in a domain of its own, which
//! everything it starts inherits. An exec the domain forbids fails in the child, and the
//! error comes back from the spawn. The server's threads are never confined by Landlock;
//! the ones that spawn empty their capability bounding set (once each, for their children
//! to inherit) and, with the sandbox active, the whole server runs under the seccomp filter
//! (`Sandbox::filter_server`), which every child inherits. Rlimits and
//! the cgroup are applied by the same child code, so no call needs more than one exec.
//! See `benches/sandbox.rs` for what it costs.

pub mod answers;
pub mod caches;
pub mod cwd;
pub mod domains;
pub mod filter;
pub mod git_controls;
#[cfg(all(test, unix))]
mod kept_tests;
mod loader;
pub mod lookup;
pub mod plan;
pub mod protected;
mod redirect;
pub mod resolve;

use std::path::{Path, PathBuf};

use crate::base::config::{Config, Mode};
use crate::base::config::{Network, SandboxMode};
use crate::base::sys::fd::AsFd;
use crate::base::sys::landlock as ll;
use crate::base::sys::{CgroupJoin, ChildSetup};
use crate::policy::trusted::Stage;
use plan::{held_now, hold_roots, HeldDir, Rules};
use resolve::Resolver;
use std::sync::atomic::{AtomicBool, Ordering};

/// Test-only: pretend the kernel's Landlock ABI is at most this (`0`: no Landlock).
pub const TEST_ABI_VAR: &str = "YIELDSHELL_TEST_LANDLOCK_ABI";
/// Test-only (benchmarks): no seccomp filter, as on a kernel that cannot install one.
pub const TEST_NO_SECCOMP_VAR: &str = "YIELDSHELL_TEST_NO_SECCOMP";

/// Write rights granted beneath a writable directory: everything but making device nodes
/// (a device node made inside the workspace would open the device) and device ioctls.
const WRITE_DIR: u64 = ll::FS_WRITE_FILE
    | ll::FS_REMOVE_DIR
    | ll::FS_REMOVE_FILE
    | ll::FS_MAKE_DIR
    | ll::FS_MAKE_REG
    | ll::FS_MAKE_SOCK
    | ll::FS_MAKE_FIFO
    | ll::FS_MAKE_SYM
    | ll::FS_REFER
    | ll::FS_TRUNCATE;
/// Every write-like right; all are handled, so anything not granted is denied.
const WRITE_ALL: u64 = WRITE_DIR | ll::FS_MAKE_CHAR | ll::FS_MAKE_BLOCK | ll::FS_IOCTL_DEV;
/// Rights on the device files that stay writable (`/dev/null`, terminals).
const DEVICE: u64 = ll::FS_WRITE_FILE | ll::FS_TRUNCATE | ll::FS_IOCTL_DEV;

/// The filesystem rights ABI `abi` knows.
fn fs_supported(abi: u32) -> u64 {
    let mut m = (1u64 << 13) - 1;
    if abi >= 2 {
        m |= ll::FS_REFER;
    }
    if abi >= 3 {
        m |= ll::FS_TRUNCATE;
    }
    if abi >= 5 {
        m |= ll::FS_IOCTL_DEV;
    }
    if abi == 0 {
        m = 0;
    }
    m
}

/// What each part of the policy needs from the kernel.
const FS_FEATURES: &[(u32, &str)] = &[
    (
        1,
        "Landlock filesystem rules (execute and write confinement, ptrace scoping)",
    ),
    (3, "truncate confinement (Landlock ABI 3)"),
    (5, "device ioctl confinement (Landlock ABI 5)"),
    (
        6,
        "signal and abstract unix socket scoping (Landlock ABI 6)",
    ),
];
const NET_FEATURE: (u32, &str) = (4, "TCP connect and bind rules (Landlock ABI 4)");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Off,
    Trusted,
    Workspace,
}

/// The sandbox as decided at startup.
#[derive(Debug)]
pub struct Sandbox {
    abi: u32,
    kind: Kind,
    net_deny: bool,
    resolver: Option<Resolver>,
    /// The `workspace` roots, opened once at startup (`plan::HeldDir`).
    roots: Vec<HeldDir>,
    /// `YIELDSHELL_WRITABLE_PATHS`.
    writable: Vec<PathBuf>,
    /// `workspace`: where the package caches live (`caches`), and their variables once made.
    caches: Option<PathBuf>,
    cache_env: std::sync::OnceLock<Option<caches::Prepared>>,
    /// What `caches` reads of the server's environment (`HOME`, `CARGO_HOME`).
    env_for_caches: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    missing: Vec<&'static str>,
    /// The seccomp filter can be installed (architecture and kernel).
    seccomp: bool,
    /// The filter was switched off for a test ([`TEST_NO_SECCOMP_VAR`]).
    seccomp_off_for_test: bool,
    /// Rulesets kept per distinct domain (`domains`).
    domains: domains::Domains,
    /// The server process runs under the seccomp filter itself ([`Sandbox::filter_server`]),
    /// so its children inherit it and need not install it.
    server_filtered: AtomicBool,
    /// `YIELDSHELL_PROTECTED_PATHS`, when calls get them (`protected`): the sandbox is on,
    /// a name is given and mount namespaces can be made here.
    protected: Option<(
        protected::Protected,
        Option<crate::base::sys::UserNamespace>,
    )>,
    /// Why the names given are not protected (for `check`), when they are not.
    unprotected: Option<String>,
}

impl Sandbox {
    /// Decides what the sandbox enforces on this kernel. `Ok((sandbox, warnings))`: the
    /// warnings (one line each) name what the kernel cannot enforce (under `auto`) and
    /// the protected paths left unprotected; `Err` (under `on`, `workspace` or `deny`)
    /// names the missing kernel feature.
    pub fn new(config: &Config) -> Result<(Sandbox, Vec<String>), String> {
        #[cfg(not(target_os = "linux"))]
        if let Some(refusal) = refuse_here(config) {
            return Err(refusal);
        }
        let real = crate::base::sys::landlock_abi().unwrap_or(0);
        let pretend = config
            .env
            .iter()
            .find(|(k, _)| k == TEST_ABI_VAR)
            .and_then(|(_, v)| v.to_str()?.trim().parse::<u32>().ok());
        let abi = pretend.map_or(real, |p| p.min(real));
        let (kind, explicit, var) = match (config.mode, config.sandbox) {
            (_, SandboxMode::Off) | (Mode::Shell, SandboxMode::Auto) => (Kind::Off, false, ""),
            (Mode::Trusted, SandboxMode::Auto) => (Kind::Trusted, false, ""),
            (Mode::Trusted, SandboxMode::On) => (Kind::Trusted, true, "YIELDSHELL_SANDBOX=on"),
            (Mode::Trusted, SandboxMode::Workspace) => {
                return Err("YIELDSHELL_SANDBOX=workspace is a shell-mode setting".into())
            }
            (Mode::Shell, SandboxMode::On) => (Kind::Workspace, true, "YIELDSHELL_SANDBOX=on"),
            (Mode::Shell, SandboxMode::Workspace) => {
                (Kind::Workspace, true, "YIELDSHELL_SANDBOX=workspace")
            }
        };
        let has = |need: u32| abi >= need;
        let kernel = if abi == 0 {
            NO_LANDLOCK.to_string()
        } else {
            format!("this kernel has Landlock ABI {abi}")
        };
        let net_deny = config.network == Network::Deny;
        if net_deny && !has(NET_FEATURE.0) {
            return Err(format!(
                "YIELDSHELL_NETWORK=deny needs {} and {kernel}; set YIELDSHELL_NETWORK=allow \
                 or use a newer kernel",
                NET_FEATURE.1
            ));
        }
        let mut missing = Vec::new();
        if kind != Kind::Off {
            missing = FS_FEATURES
                .iter()
                .filter(|(need, _)| !has(*need))
                .map(|(_, what)| *what)
                .collect();
        }
        let mut warning = None;
        if let Some(first) = missing.first() {
            if explicit {
                return Err(format!(
                    "{var} needs {first} and {kernel}; use YIELDSHELL_SANDBOX=auto to run \
                     without it, or a newer kernel"
                ));
            }
            warning = Some(if abi == 0 {
                format!(
                    "{kernel}: the kernel sandbox is off, so trusted mode relies on argument \
                     hardening alone (YIELDSHELL_SANDBOX=on would refuse to start)"
                )
            } else {
                format!(
                    "{kernel}: the kernel sandbox runs without {} (YIELDSHELL_SANDBOX=on \
                     would refuse to start)",
                    missing.join(", ")
                )
            });
        }
        let kind = if abi == 0 { Kind::Off } else { kind };
        let no_seccomp = config
            .env
            .iter()
            .any(|(k, v)| k == TEST_NO_SECCOMP_VAR && v == "1");
        let seccomp =
            filter::SUPPORTED && !no_seccomp && crate::base::sys::seccomp_filter_available();
        if !seccomp && (kind != Kind::Off || net_deny) {
            let what = seccomp_missing(no_seccomp);
            warning = Some(match warning {
                Some(w) => format!("{w}; also without {what}"),
                None => format!("the kernel sandbox runs without {what}"),
            });
        }
        let resolver = (kind == Kind::Trusted)
            .then(|| {
                let allow = crate::policy::trusted::allow::Allowlist::new(
                    config.allow_commands.as_deref(),
                    config.allowed_commands.as_deref(),
                    config.allow_patterns.as_deref(),
                )?;
                let dirs = config
                    .safe_path
                    .split(':')
                    .filter(|d| d.starts_with('/'))
                    .map(PathBuf::from)
                    .collect();
                Ok::<_, String>(Resolver::new(allow, dirs))
            })
            .transpose()?;
        if config.mode == Mode::Trusted {
            // A writable place is a working directory's equal for what it lets a call do.
            for path in &config.writable_paths {
                cwd::check(config, path, "YIELDSHELL_WRITABLE_PATHS")?;
            }
        }
        let caches = (kind == Kind::Workspace)
            .then(|| caches::root(&config.env))
            .flatten();
        let roots = if kind == Kind::Workspace {
            hold_roots(&config.allowed_cwds)?
        } else {
            Vec::new()
        };
        let mut warnings: Vec<String> = warning.into_iter().collect();
        let (protected, unprotected) = protected::startup(config, kind != Kind::Off, &mut warnings);
        if protected.is_some() && kind == Kind::Workspace {
            warnings.extend(protected::linked_roots(&config.linked_roots));
        }
        let sandbox = Sandbox {
            abi,
            kind,
            net_deny,
            resolver,
            roots,
            writable: config.writable_paths.clone(),
            caches,
            cache_env: std::sync::OnceLock::new(),
            env_for_caches: config
                .env
                .iter()
                .filter(|(k, _)| k == "HOME" || k == "CARGO_HOME")
                .cloned()
                .collect(),
            missing,
            seccomp,
            seccomp_off_for_test: no_seccomp,
            domains: domains::Domains::default(),
            server_filtered: AtomicBool::new(false),
            protected,
            unprotected,
        };
        Ok((sandbox, warnings))
    }

    /// What the seccomp filter refuses in this server's calls (the same for every call).
    fn filter(&self) -> filter::Filter {
        filter::Filter {
            processes: self.seccomp && self.kind != Kind::Off,
            network: self.seccomp && self.net_deny,
            memfd: self.seccomp && self.kind == Kind::Trusted,
        }
    }

    /// Puts the whole server process (every thread, with `no_new_privs`) under the calls'
    /// seccomp filter, once, so that each call's processes inherit it instead of installing
    /// it (installing a filter costs the kernel a compilation, about 0.1 to 0.2 ms). The
    /// server makes none of the system calls the filter refuses (it never changes another
    /// process's limits or priority, uses no io_uring and opens no network socket: only a unix
    /// socket pair, which the filter allows). Nothing to do
    /// when the filter refuses nothing. Call once, when the server starts.
    pub fn filter_server(&self) -> Result<(), String> {
        // What this process runs under already (filters stack for good: a second engine in
        // the same process, as in tests, adds none that the first installed).
        static INSTALLED: parking_lot::Mutex<u32> = parking_lot::Mutex::new(0);
        let mut installed = INSTALLED.lock();
        let wanted = self.filter();
        if wanted.bits() & !*installed == 0 {
            self.server_filtered
                .store(wanted.bits() != 0, Ordering::SeqCst);
            return Ok(());
        }
        let Some(program) = filter::prepared(wanted)? else {
            return Ok(());
        };
        crate::base::sys::install_process_seccomp_filter(program).map_err(|e| {
            format!(
                "cannot put the server under the seccomp filter: {}",
                crate::base::config::plain_io(&e)
            )
        })?;
        *installed |= wanted.bits();
        self.server_filtered.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// True when each call gets a private temporary directory: its writes are confined
    /// beneath its working directory (trusted mode with the sandbox on).
    pub fn private_tmp(&self) -> bool {
        self.kind == Kind::Trusted
    }

    /// The variables that point a `workspace` call's package caches into the server's own
    /// directory (`caches`), made ready on first use; empty in other modes, or when the
    /// directory cannot be made (said once in the log).
    pub fn cache_env(&self) -> &[(std::ffi::OsString, std::ffi::OsString)] {
        self.caches_ready().map_or(&[], |c| &c.vars)
    }

    /// The package caches once made ready (on first use), or None: not `workspace`, or
    /// they cannot be made (said once in the log; then they are neither granted nor named).
    fn caches_ready(&self) -> Option<&caches::Prepared> {
        let root = self.caches.as_ref()?;
        self.cache_env
            .get_or_init(|| {
                caches::prepare(root, &self.env_for_caches)
                    .map_err(|e| {
                        crate::base::log::warn!(
                            "{e}; workspace calls get no package caches of the server's \
                             (their tools' default caches stay unwritable)"
                        )
                    })
                    .ok()
            })
            .as_ref()
    }

    /// True when calls get a Landlock domain (filesystem or network rules).
    pub fn is_active(&self) -> bool {
        self.kind != Kind::Off || self.net_deny
    }

    /// What the sandbox enforces, for `yieldshell check` and the logs.
    pub fn status(&self) -> String {
        let kernel = if self.abi == 0 {
            crate::base::sys::NO_SANDBOX_STATUS.to_string()
        } else {
            format!("Landlock ABI {}", self.abi)
        };
        let mut parts: Vec<String> = Vec::new();
        if self.is_active() {
            parts.push("every capability dropped".into());
        }
        if self.seccomp && self.kind != Kind::Off {
            parts.push(
                "no changing the limits, priority, CPU affinity or scheduling of another \
                 process, and no io_uring (seccomp)"
                    .into(),
            );
        }
        match self.kind {
            Kind::Off => parts.push("no filesystem or process confinement".into()),
            Kind::Trusted => parts.push(
                "execute only the allowlisted programs and their ELF interpreters; write only \
                 beneath the call's working directory, its own temporary directory (TMPDIR, \
                 emptied when the call ends; /tmp is not writable) and /dev/null; no signal, \
                 ptrace or /proc access to processes outside the call"
                    .into(),
            ),
            Kind::Workspace => parts.push(format!(
                "write only beneath {}, /tmp, the terminal devices and the server's own package \
                 caches ({}); no signal, ptrace or /proc access to processes outside the call",
                if self.roots.is_empty() {
                    "the call's working directory (a working directory that is /, a system \
                     directory, the home directory of the server's user or one of its \
                     dot-directories, or an ancestor of one of these, is refused)"
                        .to_string()
                } else {
                    format!(
                        "{} (the directories found there when the server started, whatever \
                         is renamed or linked in their place since)",
                        self.roots
                            .iter()
                            .map(|r| r.path.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
                self.caches.as_ref().map_or_else(
                    || "none: the server has no HOME".to_string(),
                    |c| format!(
                        "{}, named by npm_config_cache, PIP_CACHE_DIR, CARGO_HOME...",
                        c.display()
                    )
                )
            )),
        }
        if self.kind != Kind::Off && !self.writable.is_empty() {
            parts.push(format!(
                "also writable (YIELDSHELL_WRITABLE_PATHS): {}",
                self.writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some((p, _)) = &self.protected {
            parts.push(format!(
                "read-only, and not to be renamed or replaced (YIELDSHELL_PROTECTED_PATHS): {}{}",
                p.describe(),
                if self.kind == Kind::Trusted {
                    " (git stages may write the git directories)"
                } else {
                    ""
                }
            ));
        } else if let Some(why) = &self.unprotected {
            parts.push(format!("protected paths: {why}"));
        }
        parts.push(if self.net_deny && self.seccomp {
            "network: TCP connect and bind denied, and no TCP, MPTCP, SCTP or raw socket can \
             be made (UDP allowed)"
                .into()
        } else if self.net_deny {
            "network: TCP connect and bind denied".into()
        } else {
            "network: not restricted".into()
        });
        let mut missing: Vec<&str> = Vec::new();
        if self.kind != Kind::Off {
            missing.extend(self.missing.iter().copied());
        }
        if !self.seccomp && self.is_active() {
            missing.push(seccomp_missing(self.seccomp_off_for_test));
        }
        if !missing.is_empty() {
            parts.push(format!("not enforced here: {}", missing.join(", ")));
        }
        let state = if self.is_active() { "on" } else { "off" };
        format!("kernel sandbox {state} ({kernel}): {}", parts.join("; "))
    }

    /// The plan for a call's processes started in `cwd`. Fails when a stage is a script
    /// whose interpreter the domain would not let run.
    pub fn plan(&self, cwd: &Path, stages: &[Stage]) -> Result<Option<Rules>, String> {
        self.plan_known(cwd, stages, None).map(|(plan, _, _)| plan)
    }

    /// [`Sandbox::plan`], with the device and inode of the files its first grants (the
    /// executable files) resolved to, from the resolution's own `stat`.
    /// `tmp`: the call's temporary directory (`process/tmpdir`: one of a few kept for
    /// reuse, each by one call at a time, so that its ruleset is kept too).
    fn plan_known(
        &self,
        cwd: &Path,
        stages: &[Stage],
        tmp: Option<&Path>,
    ) -> Result<Planned, String> {
        let mut known = Vec::new();
        let mut loaders = None;
        if !self.is_active() {
            return Ok((None, known, loaders));
        }
        let fs_mask = fs_supported(self.abi);
        let mut rules = Rules {
            handled_net: if self.net_deny {
                ll::NET_BIND_TCP | ll::NET_CONNECT_TCP
            } else {
                0
            },
            filter: self.filter(),
            ..Rules::default()
        };
        if self.kind != Kind::Off {
            rules.scoped = if self.abi >= 6 {
                ll::SCOPE_SIGNAL | ll::SCOPE_ABSTRACT_UNIX_SOCKET
            } else {
                0
            };
        }
        let dir = |p: &Path| (WRITE_DIR & fs_mask, p.to_path_buf());
        let dev = |p: &str| (DEVICE & fs_mask, PathBuf::from(p));
        match self.kind {
            Kind::Off => (),
            Kind::Trusted => {
                rules.handled_fs = (ll::FS_EXECUTE | WRITE_ALL) & fs_mask;
                if let Some(resolver) = &self.resolver {
                    let files = resolver.exec_set(cwd);
                    for stage in stages {
                        resolve::check_script(Path::new(&stage.program), &files)?;
                    }
                    known = files.iter().map(|f| f.id).collect();
                    loaders = loader::Loaders::find(resolver, &files, stages);
                    rules
                        .grants
                        .extend(files.into_iter().map(|f| (ll::FS_EXECUTE, f.path)));
                }
                rules.grants.push(dir(cwd));
                rules.exact = Some(cwd.to_path_buf());
                rules.grants.push(dev("/dev/null"));
                rules.grants.extend(tmp.map(dir));
                rules
                    .held
                    .extend(held_now(&self.writable, WRITE_DIR & fs_mask));
            }
            Kind::Workspace => {
                rules.handled_fs = WRITE_ALL & fs_mask;
                if self.roots.is_empty() {
                    rules.grants.push(dir(cwd));
                    rules.exact = Some(cwd.to_path_buf());
                } else {
                    rules
                        .held
                        .extend(self.roots.iter().map(|r| (WRITE_DIR & fs_mask, r.clone())));
                }
                rules.grants.push(dir(Path::new("/tmp")));
                for d in ["/dev/null", "/dev/tty", "/dev/ptmx"] {
                    rules.grants.push(dev(d));
                }
                rules.grants.push((
                    (ll::FS_WRITE_FILE | ll::FS_IOCTL_DEV) & fs_mask,
                    PathBuf::from("/dev/pts"),
                ));
                rules
                    .held
                    .extend(held_now(&self.writable, WRITE_DIR & fs_mask));
                // The caches' directory as it was made ready, link-free, by the server.
                if let Some(c) = self.caches_ready() {
                    rules.held.push((WRITE_DIR & fs_mask, c.root.clone()));
                }
            }
        }
        Ok((Some(rules), known, loaders))
    }

    /// Plans what each process of a call applies to itself before it executes
    /// (`sys::ChildSetup`): `limits` (rlimits), joining the command's cgroup (`cgroup`), and the call's kernel sandbox (every capability dropped,
    /// `no_new_privs`, the seccomp filter, and the call's Landlock ruleset, kept between
    /// calls by `domains`). The caller starts the stages with [`Plan::setup`] on the thread
    /// that called this (its capability bounding set is emptied here, once, for its
    /// children to inherit), and words a failure with [`Plan::explain`].
    pub fn prepare<'a>(
        &self,
        stages: &[Stage],
        cwd: &Path,
        tmp: Option<&Path>,
        limits: &'a [(u32, u64)],
        cgroup: Option<CgroupJoin<'a>>,
    ) -> Result<Plan<'a>, String> {
        let (rules, known, loaders) = self.plan_known(cwd, stages, tmp)?;
        let confined = match rules {
            None => None,
            Some(rules) => Some(Confined {
                ruleset: self.domains.ruleset(&rules, &known)?,
                static_ruleset: match loaders {
                    Some(l) => {
                        let (rules, known) = l.without(&rules, &known);
                        Some((self.domains.ruleset(&rules, &known)?, l.static_stages))
                    }
                    None => None,
                },
                bounding_dropped: bounding_dropped_here(),
                seccomp: match self.server_filtered.load(Ordering::SeqCst) {
                    true => None,
                    false => filter::prepared(self.filter())?,
                },
            }),
        };
        let protection = match (&confined, &self.protected) {
            (Some(_), Some((names, user))) => {
                let mut roots: Vec<&Path> = self.roots.iter().map(|r| r.path.as_path()).collect();
                let mut writable: Vec<&Path> = roots.clone();
                if self.kind == Kind::Workspace {
                    writable.push(Path::new("/tmp"));
                    writable.extend(self.caches_ready().map(|c| c.root.path.as_path()));
                }
                if roots.is_empty() {
                    writable.push(cwd);
                }
                writable.extend(tmp);
                writable.extend(self.writable.iter().map(PathBuf::as_path));
                roots.retain(|r| *r != cwd);
                let git_writes = self.kind == Kind::Trusted;
                protected::for_call(
                    names,
                    user.as_ref(),
                    git_writes,
                    stages,
                    cwd,
                    &roots,
                    &writable,
                )?
            }
            _ => None,
        };
        Ok(Plan {
            rlimits: limits,
            cgroup,
            confined,
            kind: self.kind,
            protection,
        })
    }
}

/// What every process of one call applies to itself before it executes, as
/// [`Sandbox::prepare`] planned it: a value the process layer applies when it spawns.
pub struct Plan<'a> {
    rlimits: &'a [(u32, u64)],
    cgroup: Option<CgroupJoin<'a>>,
    /// The kernel sandbox, when it applies to this call.
    confined: Option<Confined>,
    kind: Kind,
    /// The protected paths, when the call has some.
    protection: Option<protected::Protection>,
}

/// The kernel sandbox of one call: its kept Landlock ruleset, and the seccomp filter when
/// the server does not run under it already.
struct Confined {
    ruleset: std::sync::Arc<crate::base::sys::fd::OwnedFd>,
    /// The ruleset without the dynamic loader, and per stage whether it takes that one
    /// (its program is static: `loader`).
    static_ruleset: Option<(std::sync::Arc<crate::base::sys::fd::OwnedFd>, Vec<bool>)>,
    bounding_dropped: bool,
    seccomp: Option<&'static crate::base::sys::SeccompProgram>,
}

impl Plan<'_> {
    /// What the child of stage `stage` applies to itself, or `None` when there is nothing
    /// to apply.
    pub fn setup(&self, stage: usize) -> Option<ChildSetup<'_>> {
        let protect = self.protection.as_ref().and_then(|p| p.for_stage(stage));
        let base = ChildSetup {
            rlimits: self.rlimits,
            cgroup: self.cgroup,
            protect,
            ..ChildSetup::default()
        };
        match &self.confined {
            None => (!self.rlimits.is_empty() || self.cgroup.is_some()).then_some(base),
            Some(c) => Some(ChildSetup {
                confine: true,
                bounding_dropped: c.bounding_dropped,
                seccomp: c.seccomp,
                landlock: Some(match &c.static_ruleset {
                    Some((without, stages)) if stages.get(stage) == Some(&true) => without.as_fd(),
                    _ => c.ruleset.as_fd(),
                }),
                ..base
            }),
        }
    }

    /// What the call's record keeps to report its protected names (`protected::Watch`).
    pub fn take_watch(&mut self) -> Option<protected::Watch> {
        self.protection.as_mut().and_then(|p| p.take_watch())
    }

    /// The message of a spawn that failed under this plan: when the program's exec itself
    /// was refused (`exec_errno` is `EACCES`; a setup step's failure carries no errno of
    /// the exec) under the kernel sandbox, it says what the sandbox allows.
    pub fn explain(&self, message: String, exec_errno: Option<i32>) -> String {
        let exec_refused = self.confined.is_some() && exec_errno == Some(libc::EACCES);
        match (exec_refused, self.kind) {
            (true, Kind::Trusted) => format!(
                "{message} (the kernel sandbox lets this call execute only allowlisted programs \
                 and write only beneath its working directory)"
            ),
            // Shell mode's sandbox confines writes, not execution: the refusal is the
            // file's own (not executable, or on a filesystem mounted noexec).
            (true, _) => format!(
                "{message} (the workspace sandbox restricts writes, not which programs run: the \
                 file is not executable for the server's user, or its filesystem is \
                 mounted noexec)"
            ),
            (false, _) => message,
        }
    }
}

/// Empties the calling thread's capability bounding set, once per thread, so that its
/// children inherit an empty one instead of each emptying its own (about forty system
/// calls, each making new credentials). Only the bounding set: the server's threads keep
/// their own capabilities, and they execute nothing themselves. False when it cannot.
fn bounding_dropped_here() -> bool {
    thread_local! {
        static DROPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    DROPPED.with(|d| {
        if !d.get() && crate::base::sys::drop_bounding_set().is_ok() {
            d.set(true);
        }
        d.get()
    })
}

/// A call's rules (none when the sandbox is off) and the device and inode of the files its
/// first grants resolved to.
type Planned = (Option<Rules>, Vec<(u64, u64)>, Option<loader::Loaders>);

/// Why there is no Landlock domain, for the warning and the refusals.
#[cfg(target_os = "linux")]
const NO_LANDLOCK: &str = "this kernel has no Landlock (not built in, or not enabled at boot: \
                           see the lsm= kernel parameter)";
/// Why there is no Landlock domain, for the warning and the refusals.
#[cfg(not(target_os = "linux"))]
const NO_LANDLOCK: &str = crate::base::sys::NO_KERNEL_SANDBOX;

/// Outside Linux there is no kernel sandbox at all: the settings that demand one refuse to
/// start, naming what is missing (trusted mode under `auto` starts, with the warning that
/// it rests on its argument rules alone).
#[cfg(not(target_os = "linux"))]
fn refuse_here(config: &Config) -> Option<String> {
    let var = match config.sandbox {
        SandboxMode::On => "YIELDSHELL_SANDBOX=on",
        SandboxMode::Workspace => "YIELDSHELL_SANDBOX=workspace",
        SandboxMode::Auto | SandboxMode::Off if config.network == Network::Deny => {
            return Some(format!(
                "YIELDSHELL_NETWORK=deny needs Landlock's network rules and {NO_LANDLOCK}; \
                 set YIELDSHELL_NETWORK=allow (the kernel sandbox exists only on Linux)"
            ))
        }
        SandboxMode::Auto | SandboxMode::Off => return None,
    };
    Some(format!(
        "{var} needs the kernel sandbox (Landlock) and {NO_LANDLOCK}; use \
         YIELDSHELL_SANDBOX=auto or off to run without it (trusted mode then rests on its \
         argument rules alone), or run on Linux"
    ))
}

/// What is missing without the seccomp filter, for the status and the warning.
fn seccomp_missing(off_for_test: bool) -> &'static str {
    if off_for_test {
        "the seccomp filter (switched off by the test-only YIELDSHELL_TEST_NO_SECCOMP)"
    } else if filter::SUPPORTED {
        "the seccomp filter (this kernel cannot install one: other processes' limits and \
         priorities, io_uring and, under network deny, MPTCP and unbound listen() stay open)"
    } else {
        "the seccomp filter (this build has none for its architecture, only for x86_64 and \
         aarch64: other processes' limits and priorities, io_uring and, under network deny, \
         MPTCP and unbound listen() stay open)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_explains_only_an_exec_the_sandbox_refused() {
        let plan = |kind: Kind, confined: bool| Plan {
            rlimits: &[],
            cgroup: None,
            confined: confined.then(|| Confined {
                ruleset: std::sync::Arc::new(
                    std::fs::File::open("/dev/null").expect("open").into(),
                ),
                static_ruleset: None,
                bounding_dropped: false,
                seccomp: None,
            }),
            kind,
            protection: None,
        };
        let message = || "cannot start x: Permission denied".to_string();
        let trusted = plan(Kind::Trusted, true).explain(message(), Some(libc::EACCES));
        assert!(trusted.contains("allowlisted programs"), "{trusted}");
        let workspace = plan(Kind::Workspace, true).explain(message(), Some(libc::EACCES));
        assert!(
            workspace.contains("restricts writes, not which programs run"),
            "{workspace}"
        );
        // A step before the exec (its message names it) carries no errno of the exec; an
        // exec refused for another reason, or with no sandbox, is told as it is.
        assert_eq!(
            plan(Kind::Trusted, true).explain(message(), None),
            message()
        );
        assert_eq!(
            plan(Kind::Trusted, true).explain(message(), Some(libc::ENOENT)),
            message()
        );
        assert_eq!(
            plan(Kind::Off, false).explain(message(), Some(libc::EACCES)),
            message()
        );
        assert!(plan(Kind::Off, false).setup(0).is_none());
        let confined = plan(Kind::Trusted, true);
        let setup = confined.setup(0).expect("a setup");
        assert!(setup.confine && setup.landlock.is_some());
    }

    #[test]
    fn modes_parse_with_messages_naming_the_variable() {
        let p = |v: &str, m: Mode| SandboxMode::parse("YIELDSHELL_SANDBOX", v, m);
        assert_eq!(p("auto", Mode::Trusted), Ok(SandboxMode::Auto));
        assert_eq!(p(" on ", Mode::Trusted), Ok(SandboxMode::On));
        assert_eq!(p("off", Mode::Shell), Ok(SandboxMode::Off));
        assert_eq!(p("workspace", Mode::Shell), Ok(SandboxMode::Workspace));
        let e = p("workspace", Mode::Trusted).unwrap_err();
        assert!(
            e.contains("YIELDSHELL_SANDBOX") && e.contains("shell-mode"),
            "{e}"
        );
        let e = p("strict", Mode::Shell).unwrap_err();
        assert!(
            e.contains("\"strict\"") && e.contains("auto, on, off"),
            "{e}"
        );
        assert_eq!(Network::parse("--network", "deny"), Ok(Network::Deny));
        let e = Network::parse("--network", "block").unwrap_err();
        assert!(
            e.contains("--network=\"block\"") && e.contains("allow or deny"),
            "{e}"
        );
    }

    #[test]
    fn rights_follow_the_abi() {
        assert_eq!(fs_supported(0), 0);
        assert_eq!(fs_supported(1) & ll::FS_REFER, 0);
        assert_ne!(fs_supported(2) & ll::FS_REFER, 0);
        assert_eq!(fs_supported(2) & ll::FS_TRUNCATE, 0);
        assert_ne!(fs_supported(3) & ll::FS_TRUNCATE, 0);
        assert_eq!(fs_supported(4) & ll::FS_IOCTL_DEV, 0);
        assert_ne!(fs_supported(7) & ll::FS_IOCTL_DEV, 0);
        // Device nodes are handled but never granted.
        assert_eq!(WRITE_DIR & (ll::FS_MAKE_CHAR | ll::FS_MAKE_BLOCK), 0);
        assert_ne!(WRITE_ALL & ll::FS_MAKE_BLOCK, 0);
    }
}
