//! The child's side of a spawn on Linux: a `vfork`-style clone (`CLONE_VM | CLONE_VFORK`,
//! as glibc's and musl's `posix_spawn` do, so the cost does not grow with the server's
//! memory) whose child runs a fixed list of system calls and then executes the program.
//!
//! Between the clone and the exec the child can apply what belongs to a process and cannot
//! be inherited from a thread without one per call: resource limits, joining a cgroup, and
//! the kernel sandbox (every capability dropped, `no_new_privs`, a seccomp filter built once
//! by the caller, and `landlock_restrict_self` on a ruleset the caller keeps). So a
//! sandboxed spawn costs a handful of system calls in the child and nothing else.
//!
//! The child shares the parent's memory until it executes (the parent is suspended that
//! long), so it must not allocate, take a lock or panic: it only reads what the parent
//! prepared and makes raw system calls. Every signal is blocked in the parent around the
//! clone, and the child sets every disposition to default before it unblocks them, so no
//! handler of the server ever runs in the child. A failure is written to memory the parent
//! reads after the clone returns, as the step that failed and its `errno`.

use super::*;
use std::ffi::{c_char, c_int, c_void, CStr};

/// Everything the child reads, prepared by the parent; and where it writes its failure.
pub(super) struct Job<'a> {
    pub path: &'a CStr,
    pub argv: *const *const c_char,
    pub envp: *const *const c_char,
    pub cwd: &'a CStr,
    /// Descriptors that become 0, 1 and 2.
    pub stdio: [RawFd; 3],
    pub terminal: Option<&'a CStr>,
    /// `None`: a new session; `Some(0)`: a new group; `Some(g)`: join group `g`.
    pub join_group: Option<u32>,
    pub setup: Option<&'a ChildSetup<'a>>,
    /// Set by the parent when the clone itself placed the child in its cgroup
    /// (`CLONE_INTO_CGROUP`): the child then writes nothing to `cgroup.procs`.
    joined: bool,
    /// Written by the child: the step that failed and its errno.
    failed: (i32, i32),
}

impl<'a> Job<'a> {
    pub fn new(
        path: &'a CStr,
        argv: *const *const c_char,
        envp: *const *const c_char,
        cwd: &'a CStr,
        stdio: [RawFd; 3],
    ) -> Job<'a> {
        Job {
            path,
            argv,
            envp,
            cwd,
            stdio,
            terminal: None,
            join_group: None,
            setup: None,
            joined: false,
            failed: (0, 0),
        }
    }
}

/// The kernel's `struct sigaction` with `SIG_DFL` (same layout on x86_64 and aarch64).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// Blocks every signal of the calling thread (glibc's reserved ones too, which
/// `pthread_sigmask` refuses) and returns the mask to restore.
fn block_all() -> u64 {
    let all: u64 = !0;
    let mut old: u64 = 0;
    // SAFETY: both pointers are valid 8-byte masks, the size the kernel expects.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &all as *const u64,
            &mut old as *mut u64,
            8usize,
        );
    }
    old
}

fn set_mask(mask: u64) {
    // SAFETY: a valid 8-byte mask; no old mask asked for.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &mask as *const u64,
            std::ptr::null_mut::<u64>(),
            8usize,
        );
    }
}

/// The kernel's `struct open_how` for `openat2` (libc's cannot be built outside the crate).
#[repr(C)]
pub(super) struct OpenHow {
    pub(super) flags: u64,
    pub(super) mode: u64,
    pub(super) resolve: u64,
}

/// Stack of the child (it makes system calls only); a guard page below it.
const STACK: usize = 64 * 1024;
const GUARD: usize = 4096;

/// Clones and runs `job` in the child; returns the child's pid once it executed the
/// program, or the error of the step that failed (the failed child is reaped here).
pub(super) fn run(job: &mut Job<'_>) -> io::Result<u32> {
    // SAFETY: an anonymous private mapping, checked below; unmapped before returning.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            STACK + GUARD,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    struct Unmap(*mut c_void);
    impl Drop for Unmap {
        fn drop(&mut self) {
            // SAFETY: the mapping made above, unmapped once, after the child left it.
            unsafe {
                libc::munmap(self.0, STACK + GUARD);
            }
        }
    }
    let _unmap = Unmap(base);
    // SAFETY: the lowest page of the mapping above becomes the guard.
    unsafe {
        libc::mprotect(base, GUARD, libc::PROT_NONE);
    }
    // SAFETY: the top of the mapping, 16-byte aligned (page-aligned base plus a multiple of
    // the page size).
    let top = unsafe { (base as *mut u8).add(STACK + GUARD) } as *mut c_void;
    let old = block_all();
    // Where the cgroup is a v2 one, the clone itself places the child in it: a write to
    // `cgroup.procs` waits for the kernel to switch the cgroup lock to its slow mode (an
    // RCU grace period, several milliseconds once writes are more than a few
    // milliseconds apart), which `CLONE_INTO_CGROUP` does not take.
    let pid = match job
        .setup
        .and_then(|s| s.cgroup)
        .and_then(|c| c.dir)
        .map(|dir| clone3_into(job, base, dir))
    {
        Some(Ok(pid)) => Ok(pid),
        Some(Err(e)) if !unsupported(&e) => Err(e),
        // No clone3 or no CLONE_INTO_CGROUP (kernels before 5.7, other architectures):
        // the child joins by writing to `cgroup.procs`.
        _ => {
            job.joined = false;
            clone_vfork(job, top)
        }
    };
    set_mask(old);
    let pid = pid?;
    // SAFETY: the child is done with `job` (see above); a volatile read because the write
    // came from the child.
    let (step, errno) = unsafe { std::ptr::read_volatile(&job.failed) };
    if step == 0 {
        return Ok(pid as u32);
    }
    let mut status = 0;
    // SAFETY: `status` is writable; the child exited (or is about to) with 127. ECHILD
    // (the reaper got it first) is fine.
    unsafe {
        libc::waitpid(pid, &mut status, 0);
    }
    match SpawnStep::from_number(step) {
        Some(step) => Err(SpawnError { step, errno }.into()),
        None => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Whether `e` says the kernel lacks clone3 or one of the flags asked for.
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSYS | libc::E2BIG | libc::EINVAL | libc::EOPNOTSUPP)
    )
}

/// `clone(CLONE_VM | CLONE_VFORK)` of [`child`] on the stack whose top is `top`.
fn clone_vfork(job: &mut Job<'_>, top: *mut c_void) -> io::Result<c_int> {
    // SAFETY: `child` only reads `job` and writes its `failed` field, and the parent does
    // not touch `job` until the clone returns, which with CLONE_VFORK is after the child
    // executed or exited. The stack is ours for that time. The caller blocked every
    // signal, so no handler runs on the child's side before it reset the dispositions.
    let pid = unsafe {
        libc::clone(
            child,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            job as *mut Job<'_> as *mut c_void,
        )
    };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        pid => Ok(pid),
    }
}

/// `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)` of [`child`] on the mapping at
/// `base` (guard page first), into the v2 cgroup whose directory `dir` is open.
fn clone3_into(job: &mut Job<'_>, base: *mut c_void, dir: BorrowedFd<'_>) -> io::Result<c_int> {
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    let mut args = super::clone3::CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | CLONE_INTO_CGROUP,
        pidfd: 0,
        child_tid: 0,
        parent_tid: 0,
        exit_signal: libc::SIGCHLD as u64,
        stack: base as u64 + GUARD as u64,
        stack_size: STACK as u64,
        tls: 0,
        set_tid: 0,
        set_tid_size: 0,
        cgroup: dir.as_raw_fd() as u64,
    };
    job.joined = true;
    // SAFETY: as for `clone_vfork`: the child runs `child` on its own stack (the mapping
    // above the guard page, which the kernel makes its stack pointer) and the parent,
    // suspended until the child executed or exited, reads `job` only after that.
    let rc = unsafe {
        super::clone3::raw_clone3(
            &mut args,
            std::mem::size_of::<super::clone3::CloneArgs>(),
            child,
            job as *mut Job<'_> as *mut c_void,
        )
    };
    if rc < 0 {
        return Err(io::Error::from_raw_os_error(-rc as i32));
    }
    Ok(rc as c_int)
}

/// The child: system calls only, in this order: default dispositions, cgroup, protected
/// paths (namespaces and read-only binds, `protect`), confinement
/// (capabilities, `no_new_privs`, seccomp, Landlock), session or group, stdio, terminal,
/// working directory, rlimits, an empty signal mask, exec.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Job`, alive and untouched by the parent until this
    // child executes or exits (CLONE_VFORK).
    let job = unsafe { &mut *(arg as *mut Job<'_>) };
    let fail = |job: &mut Job<'_>, step: SpawnStep| -> c_int {
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        // SAFETY: the parent reads this field only after the child exited.
        unsafe { std::ptr::write_volatile(&mut job.failed, (step as i32, errno)) };
        // SAFETY: _exit ends the child without running anything of the parent's.
        unsafe { libc::_exit(127) }
    };
    let dfl = KernelSigaction {
        handler: 0, // SIG_DFL
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: a valid struct of the kernel's layout and size 8 for the mask; errors
        // (signals the kernel does not have) are ignored.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                &dfl as *const KernelSigaction,
                std::ptr::null_mut::<KernelSigaction>(),
                8usize,
            );
        }
    }
    if let Some(setup) = job.setup {
        if let Some(join) = setup.cgroup.filter(|_| !job.joined) {
            // SAFETY: one byte from a static buffer to an open descriptor.
            if unsafe { libc::write(join.procs.as_raw_fd(), b"0".as_ptr() as *const c_void, 1) }
                != 1
            {
                return fail(job, SpawnStep::Cgroup);
            }
        }
        if let Some(protect) = setup.protect {
            if !super::protect::apply(protect) {
                return fail(job, SpawnStep::Protect);
            }
        }
        if setup.confine {
            // A new user namespace gives its creator a full bounding set again.
            let new_user = setup.protect.is_some_and(|p| p.new_user());
            if (!setup.bounding_dropped || new_user) && drop_bounding_set().is_err() {
                return fail(job, SpawnStep::Capabilities);
            }
            if clear_capabilities().is_err() {
                return fail(job, SpawnStep::Capabilities);
            }
            if set_no_new_privs().is_err() {
                return fail(job, SpawnStep::NoNewPrivs);
            }
            if let Some(program) = setup.seccomp {
                let rc = set_seccomp_filter(program, 0);
                if rc == -1 {
                    return fail(job, SpawnStep::Seccomp);
                }
            }
            if let Some(fd) = setup.landlock {
                // SAFETY: an open ruleset descriptor; flags 0.
                let rc = unsafe {
                    libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32)
                };
                if rc < 0 {
                    return fail(job, SpawnStep::Landlock);
                }
            }
        }
    }
    // SAFETY: plain system calls on integers, the parent's valid C strings and a local
    // `OpenHow` that outlives the call that reads it.
    unsafe {
        let rc = match job.join_group {
            None => libc::setsid(),
            Some(g) => libc::setpgid(0, g as libc::pid_t),
        };
        if rc == -1 {
            return fail(job, SpawnStep::Session);
        }
        for (to, &from) in job.stdio.iter().enumerate() {
            let to = to as c_int;
            let rc = if from == to {
                // dup2 onto itself would keep close-on-exec.
                libc::fcntl(from, libc::F_SETFD, 0)
            } else {
                libc::dup2(from, to)
            };
            if rc == -1 {
                return fail(job, SpawnStep::Stdio);
            }
        }
        if let Some(t) = job.terminal {
            // A session leader without a controlling terminal that opens a terminal
            // without O_NOCTTY acquires it.
            let fd = libc::open(t.as_ptr(), libc::O_RDWR);
            if fd == -1 {
                return fail(job, SpawnStep::Terminal);
            }
            if fd != 0 {
                if libc::dup2(fd, 0) == -1 {
                    return fail(job, SpawnStep::Terminal);
                }
                libc::close(fd);
            }
        }
        // The server checked the working directory as a canonical path, with no symbolic
        // link in it. Entered the same way, whatever else this child does, a link swapped
        // in since then fails this step instead of leading into a directory that was never
        // checked (outside the allowed roots, or a home dot-directory). Without openat2
        // (before Linux 5.6), chdir.
        let how = OpenHow {
            flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: libc::RESOLVE_NO_SYMLINKS,
        };
        let fd = libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            job.cwd.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        );
        if fd >= 0 {
            let entered = libc::fchdir(fd as c_int);
            libc::close(fd as c_int);
            if entered == -1 {
                return fail(job, SpawnStep::Chdir);
            }
        } else if io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
            || libc::chdir(job.cwd.as_ptr()) == -1
        {
            return fail(job, SpawnStep::Chdir);
        }
        // Last, so that a low `nofile` cannot keep the terminal from opening: the server's
        // descriptors are still here, numbered past it, until the exec closes them.
        if let Some(setup) = job.setup {
            for &(resource, value) in setup.rlimits {
                let lim = libc::rlimit {
                    rlim_cur: value as libc::rlim_t,
                    rlim_max: value as libc::rlim_t,
                };
                // `lim` is valid; pid 0 is this process.
                let rc = libc::syscall(
                    libc::SYS_prlimit64,
                    0,
                    resource as libc::c_long,
                    &lim as *const libc::rlimit,
                    std::ptr::null_mut::<libc::rlimit>(),
                );
                if rc == -1 {
                    return fail(job, SpawnStep::Rlimit);
                }
            }
        }
        set_mask(0);
        libc::execve(job.path.as_ptr(), job.argv, job.envp);
    }
    fail(job, SpawnStep::Exec)
}

/// True when the namespaces a call's protection needs can be made here: a child that
/// makes them (a user namespace too when the server is not root, `protect::apply`) and
/// exits. Its exit signal is none, so the reaper's `waitpid(-1)` never sees it.
pub fn namespaces_available(user: Option<&UserNamespace>) -> io::Result<()> {
    let protect = Protect::new(&[], user)?;
    let mut failed: i32 = 0;
    struct Arg<'a> {
        protect: &'a Protect,
        failed: *mut i32,
    }
    extern "C" fn probe(arg: *mut c_void) -> c_int {
        // SAFETY: the parent's `Arg`, alive and untouched until this child exits (vfork).
        let arg = unsafe { &*(arg as *const Arg<'_>) };
        if !super::protect::apply(arg.protect) {
            // SAFETY: the parent reads it only after this child exited.
            unsafe { std::ptr::write_volatile(arg.failed, *libc::__errno_location()) };
        }
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(0) }
    }
    let mut arg = Arg {
        protect: &protect,
        failed: &mut failed,
    };
    let mut stack = vec![0u8; 64 * 1024];
    // SAFETY: the top of a live buffer, aligned down to 16 bytes.
    let top = unsafe { stack.as_mut_ptr().add(stack.len()) };
    let top = (top as usize & !15) as *mut c_void;
    let old = block_all();
    // SAFETY: the child runs `probe` on `stack`, reads `arg` and writes `failed`, and the
    // parent resumes only once it exited (CLONE_VFORK); no exit signal, so only the
    // `__WCLONE` wait below reaps it. Every signal is blocked meanwhile, so no handler of
    // the server runs in the child.
    let pid = unsafe {
        libc::clone(
            probe,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK,
            &mut arg as *mut Arg<'_> as *mut c_void,
        )
    };
    let clone_error = io::Error::last_os_error();
    set_mask(old);
    if pid < 0 {
        return Err(clone_error);
    }
    let mut status = 0;
    // SAFETY: `status` is writable; the child is ours and has exited.
    unsafe {
        libc::waitpid(pid, &mut status, libc::__WCLONE);
    }
    // SAFETY: written by the child, which has exited.
    let failed = unsafe { std::ptr::read_volatile(&failed) };
    drop(stack);
    match failed {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{spawn, CgroupJoin, ChildSetup, SpawnError, SpawnSpec, SpawnStep, Spawned};
    use std::io::Read;
    use std::os::fd::AsFd;
    use std::path::Path;

    fn sh(script: &str, setup: Option<&ChildSetup<'_>>) -> std::io::Result<Spawned> {
        let args = ["-c".to_string(), script.to_string()];
        let env = [("PATH".into(), "/usr/bin:/bin".into())];
        start("/bin/sh", &args, &env, Path::new("/"), setup)
    }

    /// Spawns `program` with `args` and `env` in `cwd`, no pipe but stdout's.
    fn start(
        program: &str,
        args: &[String],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: &Path,
        setup: Option<&ChildSetup<'_>>,
    ) -> std::io::Result<Spawned> {
        spawn(SpawnSpec {
            program,
            arg0: None,
            args,
            env,
            cwd,
            stdin_pipe: false,
            stdout: None,
            stdin_file: None,
            stderr: None,
            join_group: None,
            terminal: None,
            setup,
        })
    }

    fn output(spawned: Spawned) -> String {
        let mut out = String::new();
        spawned
            .stdout
            .expect("stdout pipe")
            .read_to_string(&mut out)
            .expect("read stdout");
        out
    }

    /// The child sets its limits and joins the cgroup (a plain file stands in for
    /// `cgroup.procs`) before it executes; its signal dispositions are the defaults.
    #[test]
    fn a_child_applies_its_limits_and_joins_before_it_executes() {
        let dir = std::env::temp_dir().join(format!("ys-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let procs = dir.join("cgroup.procs");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&procs)
            .unwrap();
        // RLIMIT_NOFILE on Linux (its type differs between glibc and musl).
        let rlimits = [(7u32, 37)];
        let setup = ChildSetup {
            rlimits: &rlimits,
            cgroup: Some(CgroupJoin {
                procs: file.as_fd(),
                dir: None,
            }),
            ..ChildSetup::default()
        };
        let spawned = sh(
            "ulimit -n; grep -E '^Sig(Ign|Blk)' /proc/self/status",
            Some(&setup),
        )
        .unwrap();
        let out = output(spawned);
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("37"), "{out}");
        // Nothing ignored (SIGPIPE above all) and nothing blocked.
        assert_eq!(lines.next(), Some("SigBlk:\t0000000000000000"), "{out}");
        assert_eq!(lines.next(), Some("SigIgn:\t0000000000000000"), "{out}");
        assert_eq!(std::fs::read_to_string(&procs).unwrap(), "0");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Where a v2 hierarchy is writable here, the clone places the child in the cgroup
    /// itself: the child is in it before it executes, and `cgroup.procs` (a plain file
    /// standing in for it) is not written.
    #[test]
    fn a_v2_cgroup_is_joined_by_the_clone_without_a_write() {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let Some(mount) = mounts.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            right.starts_with("cgroup2 ").then(|| point.to_string())
        }) else {
            eprintln!("skipped: no cgroup v2 hierarchy");
            return;
        };
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let own = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .unwrap_or("/");
        let name = format!("yieldshell-clone3-test-{}", std::process::id());
        let group = Path::new(&mount)
            .join(own.trim_start_matches('/'))
            .join(&name);
        if std::fs::create_dir(&group).is_err() {
            eprintln!("skipped: cannot make a cgroup under {mount}{own}");
            return;
        }
        let stand_in = std::env::temp_dir().join(format!("{name}.procs"));
        let procs = std::fs::File::create(&stand_in).unwrap();
        let dir = std::fs::File::open(&group).unwrap();
        let setup = ChildSetup {
            cgroup: Some(CgroupJoin {
                procs: procs.as_fd(),
                dir: Some(dir.as_fd()),
            }),
            ..ChildSetup::default()
        };
        let out = output(sh("grep '^0::' /proc/self/cgroup", Some(&setup)).unwrap());
        let _ = std::fs::remove_dir(&group);
        assert!(out.trim_end().ends_with(&format!("/{name}")), "{out}");
        assert_eq!(std::fs::read_to_string(&stand_in).unwrap(), "");
        let _ = std::fs::remove_file(&stand_in);
    }

    /// A step that fails is named in the error, and an exec failure is the plain error.
    #[test]
    fn a_failed_step_is_named() {
        let rlimits = [(9999u32, 1)];
        let setup = ChildSetup {
            rlimits: &rlimits,
            ..ChildSetup::default()
        };
        let e = sh("true", Some(&setup))
            .err()
            .expect("an unknown rlimit fails");
        assert_eq!(
            SpawnError::of(&e).map(|e| e.step),
            Some(SpawnStep::Rlimit),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot set the command's resource limits: "),
            "{e}"
        );
        let e = start("/nonexistent/program", &[], &[], Path::new("/"), None)
            .err()
            .expect("no such program");
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
        let failed = SpawnError::of(&e);
        assert_eq!(
            failed,
            Some(SpawnError {
                step: SpawnStep::Exec,
                errno: libc::ENOENT
            })
        );
        assert_eq!(
            e.to_string(),
            std::io::Error::from_raw_os_error(libc::ENOENT).to_string()
        );
        let e = start("/bin/true", &[], &[], Path::new("/nonexistent-dir"), None)
            .err()
            .expect("no such directory");
        assert!(
            e.to_string().contains("cannot enter the working directory"),
            "{e}"
        );
    }

    /// A child enters its working directory by a path with no symbolic link (the server
    /// checked it canonical), with or without any other set-up step: a link put in its
    /// place fails the step instead of leading somewhere never checked.
    #[test]
    fn a_child_does_not_follow_a_link_to_its_working_directory() {
        let base = std::env::temp_dir().join(format!("ys-child-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("real")).expect("mkdir");
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).expect("symlink");
        std::os::unix::fs::symlink(&base, base.join("up")).expect("symlink");
        let start = |cwd: &Path, setup| start("/bin/true", &[], &[], cwd, setup);
        let setup = ChildSetup::default();
        for setup in [Some(&setup), None] {
            for cwd in [base.join("link"), base.join("up/real")] {
                let e = start(&cwd, setup).err().expect("a link is not followed");
                assert!(
                    e.to_string().contains("cannot enter the working directory"),
                    "{e}"
                );
            }
            let spawned = start(&base.join("real"), setup).expect("the real directory");
            assert!(spawned.pid > 0);
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
