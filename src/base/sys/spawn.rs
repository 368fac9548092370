//! Spawning: a `vfork`-style clone with a new session (Linux, see `child`), `Command`
//! with `setsid` elsewhere.

use super::*;

/// What to spawn. The environment is complete: nothing is inherited beyond it.
// On Windows `arg0` and `setup` are not read: a program's name is its path there, and
// the set-up is Unix's.
#[cfg_attr(windows, allow(dead_code))]
pub struct SpawnSpec<'a> {
    /// The program (looked up in the `PATH` of `env` when it has no `/`).
    pub program: &'a str,
    /// `argv[0]` as the child sees it, when it differs from `program`.
    pub arg0: Option<&'a str>,
    /// Arguments after the program name.
    pub args: &'a [String],
    /// The whole environment of the child.
    pub env: &'a [(OsString, OsString)],
    /// The working directory.
    pub cwd: &'a Path,
    /// Whether stdin is a pipe (`true`) or `/dev/null`.
    pub stdin_pipe: bool,
    /// Stdout and stderr targets; `None` makes a pipe.
    pub stdout: Option<File>,
    /// Stdin source; overrides `stdin_pipe` when given.
    pub stdin_file: Option<File>,
    /// Stderr target; `None` makes a pipe.
    pub stderr: Option<File>,
    /// The process group to join (`Some(0)`: a new group in the server's session); `None`
    /// makes the child lead a new session.
    pub join_group: Option<u32>,
    /// A terminal (`/dev/pts/N`) to open in the child after it became a session leader,
    /// which makes it the session's controlling terminal (Linux; needs `join_group: None`).
    /// Its stdio should be that terminal too (see [`open_pty`]).
    pub terminal: Option<&'a Path>,
    /// What the child applies to itself before it executes: limits, cgroup, sandbox.
    pub setup: Option<&'a ChildSetup<'a>>,
}

impl SpawnSpec<'_> {
    /// Gives std's `cmd` the child's environment, working directory and stdio (the stdio
    /// files taken out of the spec), where the server spawns through std's `Command`.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn give_std_command(&mut self, cmd: &mut std::process::Command) {
        use std::process::Stdio;
        cmd.env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.cwd);
        match self.stdin_file.take() {
            Some(f) => cmd.stdin(Stdio::from(f)),
            None if self.stdin_pipe => cmd.stdin(Stdio::piped()),
            None => cmd.stdin(Stdio::null()),
        };
        cmd.stdout(self.stdout.take().map_or_else(Stdio::piped, Stdio::from));
        cmd.stderr(self.stderr.take().map_or_else(Stdio::piped, Stdio::from));
    }
}

/// What a child applies to itself before it executes (Linux; elsewhere only `rlimits`).
#[derive(Default)]
// Elsewhere than Linux the child applies only `rlimits`: the rest is set and never read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct ChildSetup<'a> {
    /// Resource limits, `(RLIMIT_* number, value)`; the soft and the hard limit alike.
    pub rlimits: &'a [(u32, u64)],
    /// The command's cgroup, which the child joins before anything else.
    pub cgroup: Option<CgroupJoin<'a>>,
    /// Protected paths: a private mount namespace with each bound read-only onto itself
    /// (Linux), before the confinement (which forbids mounting).
    pub protect: Option<&'a Protect>,
    /// Drop every capability (bounding and ambient sets too) and set `no_new_privs`.
    pub confine: bool,
    /// The spawning thread's bounding set is empty already ([`drop_bounding_set`]), and
    /// the child's with it: `confine` need not empty it again.
    pub bounding_dropped: bool,
    /// A seccomp filter to install (needs `confine`).
    pub seccomp: Option<&'a SeccompProgram>,
    /// A Landlock ruleset to restrict the child to (needs `confine`).
    pub landlock: Option<BorrowedFd<'a>>,
}

/// How a child joins its command's cgroup.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct CgroupJoin<'a> {
    /// The cgroup's `cgroup.procs`, open for writing: the child writes `0` to it, which
    /// moves the writer (a single-threaded process, so v1 and v2 alike move the whole
    /// child).
    pub procs: BorrowedFd<'a>,
    /// A v2 cgroup's directory: the clone itself places the child in it
    /// (`CLONE_INTO_CGROUP`) and nothing is written, unless the kernel lacks it.
    pub dir: Option<BorrowedFd<'a>>,
}

/// A seccomp filter in the kernel's format, built once and installed by many children.
#[cfg(target_os = "linux")]
pub struct SeccompProgram(pub(super) Vec<libc::sock_filter>);
/// A seccomp filter (Linux only: elsewhere there is none).
#[cfg(not(target_os = "linux"))]
pub struct SeccompProgram(());

impl SeccompProgram {
    /// The program made of `insns`; `None` when it is too long for the kernel, or outside
    /// Linux.
    #[cfg(not(target_os = "linux"))]
    pub fn new(_insns: &[Insn]) -> Option<SeccompProgram> {
        None
    }

    /// The program made of `insns`; `None` when it is too long for the kernel.
    #[cfg(target_os = "linux")]
    pub fn new(insns: &[Insn]) -> Option<SeccompProgram> {
        u16::try_from(insns.len()).ok()?;
        Some(SeccompProgram(
            insns
                .iter()
                .map(|i| libc::sock_filter {
                    code: i.code,
                    jt: i.jt,
                    jf: i.jf,
                    k: i.k,
                })
                .collect(),
        ))
    }
}

impl std::fmt::Debug for SeccompProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        #[cfg(target_os = "linux")]
        return write!(f, "SeccompProgram({} instructions)", self.0.len());
        #[cfg(not(target_os = "linux"))]
        write!(f, "SeccompProgram")
    }
}

/// What a spawn's error says when a step before the program's exec failed (then the
/// error is `<step>: <reason>`); an error with none of these is the exec's own.
pub const SETUP_STEPS: [&str; 11] = [
    "cannot set the command's resource limits",
    "cannot join the command's cgroup",
    "cannot make the protected paths read-only (YIELDSHELL_PROTECTED_PATHS; a path that \
     changed since the call was planned fails with 'Stale file handle': try again)",
    "cannot drop capabilities",
    "cannot set no_new_privs",
    "cannot install the seccomp filter",
    "cannot enter the kernel sandbox",
    "cannot start a new session",
    "cannot set up the standard descriptors",
    "cannot open the terminal",
    "cannot enter the working directory",
];

/// A step of a child's start, in the order the child takes them: every one but the last
/// is set-up (described by `SETUP_STEPS`), the last is the program's exec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum SpawnStep {
    Rlimit = 1,
    Cgroup,
    Protect,
    Capabilities,
    NoNewPrivs,
    Seccomp,
    Landlock,
    Session,
    Stdio,
    Terminal,
    Chdir,
    Exec,
}

impl SpawnStep {
    /// Every step, in the order of their numbers.
    // The numbers come back from a forked child only on Linux.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    const ALL: [SpawnStep; 12] = [
        SpawnStep::Rlimit,
        SpawnStep::Cgroup,
        SpawnStep::Protect,
        SpawnStep::Capabilities,
        SpawnStep::NoNewPrivs,
        SpawnStep::Seccomp,
        SpawnStep::Landlock,
        SpawnStep::Session,
        SpawnStep::Stdio,
        SpawnStep::Terminal,
        SpawnStep::Chdir,
        SpawnStep::Exec,
    ];

    /// The step numbered `n` (as the child writes it).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(super) fn from_number(n: i32) -> Option<SpawnStep> {
        SpawnStep::ALL.into_iter().find(|s| *s as i32 == n)
    }

    /// What the step does, as an error names it; `None` for the exec.
    pub fn describe(self) -> Option<&'static str> {
        SETUP_STEPS.get((self as i32 - 1) as usize).copied()
    }
}

/// A child that did not start: the step that failed and its errno. The text is made by
/// `Display` (`<step>: <reason>`, or the exec's error alone); carried inside the
/// `io::Error` that `spawn` returns, where `SpawnError::of` finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpawnError {
    pub step: SpawnStep,
    pub errno: i32,
}

impl SpawnError {
    /// The spawn failure inside `e`, when `e` is one.
    pub fn of(e: &io::Error) -> Option<SpawnError> {
        e.get_ref()?.downcast_ref::<SpawnError>().copied()
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = io::Error::from_raw_os_error(self.errno);
        match self.step.describe() {
            Some(what) => write!(f, "{what}: {e}"),
            None => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SpawnError {}

impl From<SpawnError> for io::Error {
    fn from(e: SpawnError) -> io::Error {
        io::Error::new(io::Error::from_raw_os_error(e.errno).kind(), e)
    }
}

/// A started child: its pid (also its process group id) and the parent's pipe ends.
pub struct Spawned {
    /// Process id, which is also the process group and session id.
    pub pid: u32,
    /// Write end of the child's stdin, when it is a pipe.
    pub stdin: Option<File>,
    /// Read end of the child's stdout, when it is a pipe.
    pub stdout: Option<File>,
    /// Read end of the child's stderr, when it is a pipe.
    pub stderr: Option<File>,
}

/// Starts a child in a new session (or in `join_group`), with exactly the given stdio,
/// environment and working directory. Every other descriptor of the server is close-on-exec.
///
/// On Linux this is a `vfork`-style clone (see `child`: the cost does not grow with the
/// server's memory) whose child applies `setup`, starts a new session, sets its stdio and
/// working directory, every signal disposition to default (SIGPIPE above all) and an empty
/// signal mask, and executes. Failures, of the `exec` too, come back as the error.
#[cfg(target_os = "linux")]
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    use std::ffi::CString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};

    let nul = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} contains a NUL byte"),
        )
    };
    let path = CString::new(
        resolve_program(spec.program, spec.env)
            .into_os_string()
            .into_vec(),
    )
    .map_err(|_| nul("the program path"))?;
    let mut argv: Vec<CString> = Vec::with_capacity(spec.args.len() + 1);
    argv.push(
        CString::new(spec.arg0.unwrap_or(spec.program)).map_err(|_| nul("the program name"))?,
    );
    for a in spec.args {
        argv.push(CString::new(a.as_str()).map_err(|_| nul("an argument"))?);
    }
    let mut envp: Vec<CString> = Vec::with_capacity(spec.env.len());
    for (k, v) in spec.env {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        envp.push(CString::new(kv).map_err(|_| nul("an environment variable"))?);
    }
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|c| c.as_ptr() as *mut _).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|c| c.as_ptr() as *mut _).collect();
    envp_ptrs.push(std::ptr::null_mut());
    let cwd =
        CString::new(spec.cwd.as_os_str().as_bytes()).map_err(|_| nul("the working directory"))?;

    // The child's ends; the parent's ends are returned.
    let (child_in, parent_in): (File, Option<File>) = match (spec.stdin_file, spec.stdin_pipe) {
        (Some(f), _) => (f, None),
        (None, true) => {
            let (r, w) = std::io::pipe()?;
            (
                File::from(OwnedFd::from(r)),
                Some(File::from(OwnedFd::from(w))),
            )
        }
        (None, false) => (File::open("/dev/null")?, None),
    };
    let out_pair = |given: Option<File>| -> io::Result<(File, Option<File>)> {
        match given {
            Some(f) => Ok((f, None)),
            None => {
                let (r, w) = std::io::pipe()?;
                Ok((
                    File::from(OwnedFd::from(w)),
                    Some(File::from(OwnedFd::from(r))),
                ))
            }
        }
    };
    let (child_out, parent_out) = out_pair(spec.stdout)?;
    let (child_err, parent_err) = out_pair(spec.stderr)?;

    let terminal = match spec.terminal {
        Some(t) => Some(CString::new(t.as_os_str().as_bytes()).map_err(|_| nul("the terminal"))?),
        None => None,
    };
    let mut job = child::Job::new(
        &path,
        argv_ptrs.as_ptr() as *const *const libc::c_char,
        envp_ptrs.as_ptr() as *const *const libc::c_char,
        &cwd,
        [
            child_in.as_raw_fd(),
            child_out.as_raw_fd(),
            child_err.as_raw_fd(),
        ],
    );
    job.terminal = terminal.as_deref();
    job.join_group = spec.join_group;
    job.setup = spec.setup;
    let pid = child::run(&mut job)?;
    // The child holds its own copies now; closing ours keeps only the parent's ends open.
    drop((child_in, child_out, child_err));
    Ok(Spawned {
        pid,
        stdin: parent_in,
        stdout: parent_out,
        stderr: parent_err,
    })
}

/// The program to execute: a name with `/` as given, otherwise the first executable match
/// in the child's `PATH` (or the usual directories when it has none).
#[cfg(target_os = "linux")]
fn resolve_program(program: &str, env: &[(OsString, OsString)]) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return program.into();
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return candidate;
        }
    }
    // Not found: let the exec report ENOENT for the bare name.
    program.into()
}

/// Starts a child in a new session (or in `join_group`), with exactly the given stdio,
/// environment and working directory. Every other descriptor of the server is close-on-exec.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn spawn(mut spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    let mut cmd = Command::new(spec.program);
    if let Some(arg0) = spec.arg0 {
        cmd.arg0(arg0);
    }
    cmd.args(spec.args);
    spec.give_std_command(&mut cmd);
    // Only the limits apply here: the cgroup and the kernel sandbox are Linux's.
    let rlimits: Vec<(u32, u64)> = spec.setup.map_or_else(Vec::new, |s| s.rlimits.to_vec());
    match spec.join_group {
        Some(pgid) => {
            cmd.process_group(pgid as i32);
        }
        None => {
            // Stdio is in place when the closure runs: with a terminal, fd 0 is it.
            let terminal = spec.terminal.is_some();
            // SAFETY: the closure runs in the forked child before exec and calls only
            // `setrlimit`, `setsid` and `ioctl`, which are async-signal-safe; it allocates
            // nothing (the limits were copied before) and touches no lock.
            unsafe {
                cmd.pre_exec(move || {
                    for &(resource, value) in &rlimits {
                        let lim = libc::rlimit {
                            rlim_cur: value as libc::rlim_t,
                            rlim_max: value as libc::rlim_t,
                        };
                        if libc::setrlimit(resource as _, &lim) == -1 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    if libc::setsid() == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    // A session leader without a controlling terminal takes its stdin's.
                    if terminal && libc::ioctl(0, libc::TIOCSCTTY as libc::c_ulong, 0) == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    let mut child = cmd.spawn()?;
    Ok(Spawned {
        pid: child.id(),
        stdin: child.stdin.take().map(|p| File::from(OwnedFd::from(p))),
        stdout: child.stdout.take().map(|p| File::from(OwnedFd::from(p))),
        stderr: child.stderr.take().map(|p| File::from(OwnedFd::from(p))),
    })
    // Dropping `child` neither waits nor kills: the reaper owns the pid from here on.
}
