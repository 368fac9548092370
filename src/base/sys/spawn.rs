//! Spawning: `posix_spawn` with a new session (Linux), `Command` with `setsid` elsewhere.

use super::*;

/// What to spawn. The environment is complete: nothing is inherited beyond it.
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
/// On Linux this is `posix_spawn` (a `vfork`-style clone in glibc and musl, so the cost does
/// not grow with the server's memory) with `POSIX_SPAWN_SETSID`, the working directory set
/// by a file action, an empty signal mask and default dispositions for the signals the
/// server handles or ignores (SIGPIPE above all). `exec` failures come back as the error.
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

    let mut actions = SpawnActions::new()?;
    actions.dup2(child_in.as_raw_fd(), 0)?;
    actions.dup2(child_out.as_raw_fd(), 1)?;
    actions.dup2(child_err.as_raw_fd(), 2)?;
    let terminal = match spec.terminal {
        Some(t) => Some(CString::new(t.as_os_str().as_bytes()).map_err(|_| nul("the terminal"))?),
        None => None,
    };
    if let Some(t) = &terminal {
        // glibc and musl run setsid (POSIX_SPAWN_SETSID) before the file actions, and a
        // session leader without a controlling terminal that opens a terminal without
        // O_NOCTTY acquires it: this open makes the terminal the session's.
        actions.open(0, t, libc::O_RDWR)?;
    }
    actions.chdir(&cwd)?;
    let mut attr = SpawnAttr::new()?;
    attr.configure(spec.join_group)?;

    let mut pid: libc::pid_t = 0;
    // SAFETY: `path`, `argv_ptrs` and `envp_ptrs` are NUL-terminated C strings and
    // null-terminated pointer arrays that outlive the call; `actions` and `attr` were
    // initialised by their constructors; `pid` is writable.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            &actions.0,
            &attr.0,
            argv_ptrs.as_ptr(),
            envp_ptrs.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // The child holds its own copies now; closing ours keeps only the parent's ends open.
    drop((child_in, child_out, child_err));
    Ok(Spawned {
        pid: pid as u32,
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
    // Not found: let posix_spawn report ENOENT for the bare name.
    program.into()
}

#[cfg(target_os = "linux")]
struct SpawnActions(libc::posix_spawn_file_actions_t);

#[cfg(target_os = "linux")]
impl SpawnActions {
    fn new() -> io::Result<SpawnActions> {
        // SAFETY: an all-zero value is a valid place for init to write into.
        let mut fa: libc::posix_spawn_file_actions_t = unsafe { std::mem::zeroed() };
        // SAFETY: `fa` is a valid, writable file-actions object.
        let rc = unsafe { libc::posix_spawn_file_actions_init(&mut fa) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(SpawnActions(fa))
    }

    fn dup2(&mut self, from: RawFd, to: RawFd) -> io::Result<()> {
        // SAFETY: the object was initialised; both descriptors are plain integers.
        let rc = unsafe { libc::posix_spawn_file_actions_adddup2(&mut self.0, from, to) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    fn open(&mut self, fd: RawFd, path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<()> {
        // SAFETY: the object was initialised and `path` is a valid C string (copied by libc).
        let rc = unsafe {
            libc::posix_spawn_file_actions_addopen(&mut self.0, fd, path.as_ptr(), flags, 0)
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    fn chdir(&mut self, dir: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: the object was initialised and `dir` is a valid C string (copied by libc).
        let rc = unsafe { libc::posix_spawn_file_actions_addchdir_np(&mut self.0, dir.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Drop for SpawnActions {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new` and is destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.0);
        }
    }
}

#[cfg(target_os = "linux")]
struct SpawnAttr(libc::posix_spawnattr_t);

#[cfg(target_os = "linux")]
impl SpawnAttr {
    fn new() -> io::Result<SpawnAttr> {
        // SAFETY: an all-zero value is a valid place for init to write into.
        let mut attr: libc::posix_spawnattr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is a valid, writable attribute object.
        let rc = unsafe { libc::posix_spawnattr_init(&mut attr) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(SpawnAttr(attr))
    }

    /// New session (or the given group), empty signal mask, default dispositions.
    fn configure(&mut self, join_group: Option<u32>) -> io::Result<()> {
        let check = |rc: libc::c_int| {
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(rc))
            }
        };
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        match join_group {
            None => flags |= libc::POSIX_SPAWN_SETSID as libc::c_int,
            Some(pgid) => {
                flags |= libc::POSIX_SPAWN_SETPGROUP;
                // SAFETY: the object was initialised; the group id is a plain integer.
                check(unsafe {
                    libc::posix_spawnattr_setpgroup(&mut self.0, pgid as libc::pid_t)
                })?;
            }
        }
        // SAFETY: `set` is a valid sigset_t that sigemptyset/sigaddset initialise and fill
        // (glibc's sigset_t is an array of at least 1024 bits, so the words written for
        // signals 32 and 33 are inside it); the attribute object was initialised and copies
        // the sets.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            check(libc::posix_spawnattr_setsigmask(&mut self.0, &set))?;
            for sig in [
                libc::SIGPIPE,
                libc::SIGCHLD,
                libc::SIGTERM,
                libc::SIGINT,
                libc::SIGHUP,
                libc::SIGQUIT,
                libc::SIGUSR1,
                libc::SIGUSR2,
                libc::SIGTSTP,
                libc::SIGTTIN,
                libc::SIGTTOU,
                libc::SIGXFSZ,
            ] {
                libc::sigaddset(&mut set, sig);
            }
            // glibc reserves signals 32 and 33 for itself; its posix_spawn sets them to
            // SIG_IGN in the child (which exec keeps) unless they are in the default set,
            // and its sigaddset refuses them, so set their bits directly.
            #[cfg(target_env = "gnu")]
            {
                let words = &mut set as *mut libc::sigset_t as *mut libc::c_ulong;
                let bits = libc::c_ulong::BITS as usize;
                for sig in [32usize, 33] {
                    *words.add((sig - 1) / bits) |= 1 << ((sig - 1) % bits);
                }
            }
            check(libc::posix_spawnattr_setsigdefault(&mut self.0, &set))?;
            check(libc::posix_spawnattr_setflags(
                &mut self.0,
                flags as libc::c_short,
            ))?;
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Drop for SpawnAttr {
    fn drop(&mut self) {
        // SAFETY: the object was initialised by `new` and is destroyed once.
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.0);
        }
    }
}

/// Starts a child in a new session (or in `join_group`), with exactly the given stdio,
/// environment and working directory. Every other descriptor of the server is close-on-exec.
#[cfg(not(target_os = "linux"))]
pub fn spawn(spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    let mut cmd = Command::new(spec.program);
    if let Some(arg0) = spec.arg0 {
        cmd.arg0(arg0);
    }
    cmd.args(spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(spec.cwd);
    match spec.stdin_file {
        Some(f) => cmd.stdin(Stdio::from(f)),
        None if spec.stdin_pipe => cmd.stdin(Stdio::piped()),
        None => cmd.stdin(Stdio::null()),
    };
    match spec.stdout {
        Some(f) => cmd.stdout(Stdio::from(f)),
        None => cmd.stdout(Stdio::piped()),
    };
    match spec.stderr {
        Some(f) => cmd.stderr(Stdio::from(f)),
        None => cmd.stderr(Stdio::piped()),
    };
    match spec.join_group {
        Some(pgid) => {
            cmd.process_group(pgid as i32);
        }
        None => {
            // Stdio is in place when the closure runs: with a terminal, fd 0 is it.
            let terminal = spec.terminal.is_some();
            // SAFETY: the closure runs in the forked child before exec and calls only
            // `setsid` and `ioctl`, which are async-signal-safe; it allocates nothing and
            // touches no lock.
            unsafe {
                cmd.pre_exec(move || {
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
