//! The Windows side of the seam: the same items as `unix`, over Win32 calls declared by
//! hand (`ffi`, `extern "system"`; no crate beyond `libc`).
//!
//! A command's process group is a Job Object: [`spawn`] creates the leader suspended,
//! assigns it to a new job (kill-on-close, no breakaway) or to the job of the group it
//! joins, checks the assignment, and only then resumes it, so nothing the command starts
//! runs outside the job. The job is known by the leader's pid, which the layers above use
//! as the group id: [`killpg`] with `SIGKILL` is `TerminateJobObject`, [`group_exists`]
//! asks the job for its active processes. The server holds the only handle on every job,
//! so when the server dies, even killed, Windows ends every job and every process in it.
//!
//! There is no `waitpid(-1)`: every spawned process is kept in a table with its handle, a
//! small thread per process waits on the handle and wakes the reaper ([`ExitWake`]), and
//! [`reap_any`] collects the processes whose handle is signalled.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::*;

pub mod ext;
pub mod fd;
mod ffi;
mod fs;
mod job;
pub mod posix;
mod spawn;
pub use fs::*;
pub use spawn::spawn;

use job::{kill_code, table, Job};

/// The shell of shell mode when none is configured.
pub const DEFAULT_SHELL: &str = "cmd.exe";

/// The separator of `PATH`-like lists.
pub const PATH_LIST_SEPARATOR: char = ';';

/// The default safe `PATH` of trusted mode: the system's own directories.
pub const DEFAULT_SAFE_PATH: &str = r"C:\Windows\System32;C:\Windows";

/// Variables of the server's environment that every trusted-mode child gets, because
/// Windows programs need them to start (the shell, the executable extensions, the system
/// directory).
pub const LAUNCH_ENV: &[&str] = &["COMSPEC", "PATHEXT", "SYSTEMROOT", "WINDIR"];

/// What `sandbox` says of the kernel sandbox on Windows.
pub const NO_KERNEL_SANDBOX: &str = "there is no kernel sandbox on Windows (Landlock and \
     seccomp are Linux kernel features; a command's Job Object contains its processes, not \
     what they may read or write)";

/// What trusted mode's tool descriptions add on Windows.
pub const TRUSTED_NOTE: &str = " No kernel sandbox on Windows: the allowlist and the \
     argument rules alone decide what runs, and an allowed program may read and write \
     wherever the server's user may.";

/// What `check` says of the kernel sandbox on Windows.
pub const NO_SANDBOX_STATUS: &str = "no kernel sandbox on Windows";

/// The files a program `name` found in `dir` may be: `name` as written when it has an
/// extension, else `name.exe` and `name.com` (never `.bat` or `.cmd`, see
/// [`refuse_program`]).
pub fn program_candidates(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    if Path::new(name).extension().is_some() {
        vec![dir.join(name)]
    } else {
        vec![
            dir.join(format!("{name}.exe")),
            dir.join(format!("{name}.com")),
        ]
    }
}

/// Why a trusted-mode program may not run on Windows whatever its arguments: a `.bat` or
/// `.cmd` file runs through `cmd.exe`, which parses its arguments again by its own rules,
/// so no quoting keeps them arguments.
pub fn refuse_program(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    (ext == "bat" || ext == "cmd").then(|| {
        format!(
            "{} is a .{ext} file: batch files run through cmd.exe, which parses their \
             arguments again as a command line, so trusted mode does not run them; allow the \
             program the batch file runs instead",
            path.display()
        )
    })
}

/// The resource number under which `pids` of `YIELDSHELL_LIMITS` reaches [`spawn`] in
/// `ChildSetup::rlimits`: the active-process limit of the command's job (a number no Unix
/// `RLIMIT_*` has).
pub const JOB_PROCESS_LIMIT: Option<u32> = Some(JOB_PROCESSES);
const JOB_PROCESSES: u32 = 0x4a4f_4250;

/// `std::fs::canonicalize` without the verbatim prefix where the path does not need it:
/// `\\?\C:\dir` becomes `C:\dir` when it is shorter than `MAX_PATH` (260), the form programs
/// and `cmd.exe` take as a working directory and the one people read.
pub fn canonicalize(path: &Path) -> io::Result<std::path::PathBuf> {
    let real = std::fs::canonicalize(path)?;
    let text = real.to_string_lossy();
    if let Some(rest) = text.strip_prefix(r"\\?\") {
        let b = rest.as_bytes();
        if rest.len() < 260 && b.len() >= 3 && b[0].is_ascii_alphabetic() && &b[1..3] == br":\" {
            return Ok(std::path::PathBuf::from(rest));
        }
    }
    Ok(real)
}

/// Whether `/proc` describes this system's processes by the pids the server knows: never
/// on Windows. (Under Wine a Windows program sees Linux's `/proc` as `Z:\proc` on the Unix
/// drive, but its pids are Linux's, not the Windows pids the server knows.)
pub const PROC_FS: bool = false;

/// Whether the system itself ends every command when the server dies, however it dies:
/// yes, the server holds the only handle on each command's kill-on-close job.
pub const OWNER_DEATH_ENDS_COMMANDS: bool = true;

/// The arguments that make `shell` run `command`: `cmd.exe /d /s /c <command>` (no AutoRun,
/// the command line kept as written), `-NoProfile -Command` for PowerShell, `-c` for any
/// other (a Unix-style shell such as Git's `bash.exe`).
pub fn shell_args(shell: &str, command: &str) -> Vec<String> {
    let name = program_stem(shell);
    if name == "cmd" {
        vec!["/d".into(), "/s".into(), "/c".into(), command.into()]
    } else if name == "powershell" || name == "pwsh" {
        vec!["-NoProfile".into(), "-Command".into(), command.into()]
    } else {
        vec!["-c".into(), command.into()]
    }
}

/// A program's file name in lower case without its directory and `.exe`.
fn program_stem(program: &str) -> String {
    let base = program.rsplit(['\\', '/']).next().unwrap_or(program);
    let lower = base.to_ascii_lowercase();
    lower.strip_suffix(".exe").unwrap_or(&lower).to_string()
}

// ---------------------------------------------------------------------------------------
// Reaping and signals (the jobs themselves are in `job`).
// ---------------------------------------------------------------------------------------

/// Reaps one exited child without blocking. `Ok(None)` when no child has exited yet or
/// there is no child at all.
pub fn reap_any() -> io::Result<Option<(u32, WaitStatus)>> {
    let mut t = table().lock();
    let done = t
        .children
        .iter()
        .find_map(|(pid, c)| c.process.exit_code().map(|code| (*pid, code)));
    let Some((pid, code)) = done else {
        return Ok(None);
    };
    let child = t.children.remove(&pid).expect("found above");
    Ok(Some((pid, status_of(&child.job, code))))
}

fn status_of(job: &Job, code: u32) -> WaitStatus {
    let sig = job.killed_by.load(Ordering::SeqCst);
    if sig != 0 && code == kill_code(sig) {
        WaitStatus::Signaled(sig)
    } else {
        WaitStatus::Exited(code as i32)
    }
}

/// Looks at child `pid` without blocking; an exit reaps it. (Windows has no stopped state.)
pub fn watch_child(pid: u32) -> io::Result<ChildEvent> {
    let mut t = table().lock();
    let Some(child) = t.children.get(&pid) else {
        return Ok(ChildEvent::Gone);
    };
    match child.process.exit_code() {
        None => Ok(ChildEvent::Running),
        Some(code) => {
            let child = t.children.remove(&pid).expect("found above");
            Ok(ChildEvent::Ended(status_of(&child.job, code)))
        }
    }
}

fn job_of(pgid: u32) -> io::Result<Arc<Job>> {
    table()
        .lock()
        .jobs
        .get(&pgid)
        .map(|g| g.job.clone())
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such process group"))
}

/// Sends `signal` to every process of group `pgid` (the job of the command whose leader
/// has that pid). `SIGKILL` ends the job. Any other signal is `CTRL_BREAK_EVENT` to the
/// group when the server has a console the command shares, else it ends the job too
/// (Windows has no other way to ask a process without a console to stop). Signal 0
/// only checks that the group has a live process.
pub fn killpg(pgid: u32, signal: i32) -> io::Result<()> {
    let job = job_of(pgid)?;
    if signal == 0 {
        return match job.active()? {
            0 => Err(io::Error::from_raw_os_error(ffi::ERROR_NOT_FOUND)),
            _ => Ok(()),
        };
    }
    if signal != posix::SIGKILL && has_console() {
        // SAFETY: plain call with integer arguments; the group id is a process group we
        // created (CREATE_NEW_PROCESS_GROUP), so the event reaches no other process.
        if unsafe { ffi::GenerateConsoleCtrlEvent(ffi::CTRL_BREAK_EVENT, pgid) } != 0 {
            return Ok(());
        }
    }
    job.terminate(signal)
}

/// Whether the server has a console its commands share.
fn has_console() -> bool {
    static CONSOLE: OnceLock<bool> = OnceLock::new();
    // SAFETY: takes no argument; returns a window handle or null.
    *CONSOLE.get_or_init(|| !unsafe { ffi::GetConsoleWindow() }.is_null())
}

/// Ends process `pid` (any signal but 0, which only checks it exists).
pub fn kill(pid: u32, signal: i32) -> io::Result<()> {
    if pid == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing pid 0",
        ));
    }
    let access = ffi::PROCESS_TERMINATE | ffi::PROCESS_QUERY_LIMITED_INFORMATION;
    // SAFETY: plain call with integer arguments; returns a new handle or null.
    let raw = unsafe { ffi::OpenProcess(access, 0, pid) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle that nobody else owns.
    let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
    if signal == 0 {
        return Ok(());
    }
    // SAFETY: the handle is open with PROCESS_TERMINATE.
    if unsafe { ffi::TerminateProcess(handle.as_raw_handle(), kill_code(signal)) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether process group `pgid` (its job) still has a live process.
pub fn group_exists(pgid: u32) -> bool {
    let Ok(job) = job_of(pgid) else {
        return false;
    };
    match job.active() {
        Ok(0) => {
            // Empty for good: nothing can join a job without a process in it to start it.
            let mut t = table().lock();
            if !t.children.values().any(|c| Arc::ptr_eq(&c.job, &job)) {
                t.jobs.remove(&pgid);
            }
            false
        }
        Ok(_) => true,
        Err(_) => true,
    }
}

/// The number of live processes of group `pgid` (its job); `None` when it is not known.
pub fn group_process_count(pgid: u32) -> Option<usize> {
    job_of(pgid).ok()?.active().ok().map(|n| n as usize)
}

/// Puts the server in a kill-on-close Job Object of its own, whose handle stays open until
/// the process ends: when the server dies, even killed, Windows ends everything still in
/// it. Each command's job is nested in it (and is kill-on-close too, held by the server
/// alone), so this also covers a command between its creation and its own job.
pub fn contain_server() -> io::Result<()> {
    static SERVER_JOB: OnceLock<Job> = OnceLock::new();
    if SERVER_JOB.get().is_some() {
        return Ok(());
    }
    let job = Job::new(None)?;
    // SAFETY: the job handle is open; GetCurrentProcess returns a pseudo-handle that is
    // always valid in this process.
    let ok = unsafe {
        ffi::AssignProcessToJobObject(job.handle.as_raw_handle(), ffi::GetCurrentProcess())
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let _ = SERVER_JOB.set(job);
    Ok(())
}

/// Nothing to do on Windows: orphans are not re-parented, and the job holds them.
pub fn set_child_subreaper() -> io::Result<()> {
    Ok(())
}

/// Nothing to do on Windows: std creates every handle non-inheritable, and a child
/// inherits only the three it is given.
pub fn cloexec_from(_low: i32) {}

/// Nothing to do on Windows: anonymous pipes stay blocking.
pub fn set_blocking(_fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(())
}

/// Anonymous pipes on Windows cannot be made non-blocking for overlapped-free writes; the
/// handle stays blocking (a `write` to a full pipe waits on its worker).
pub fn set_nonblocking(_fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(())
}

/// Not available on Windows (pipes are read by a thread each, see `process::record`).
pub fn poll_read2(_fds: [Option<BorrowedFd<'_>>; 2], _timeout_ms: i32) -> io::Result<Ready> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "poll on pipes is not available on Windows",
    ))
}

/// Whether output pipes are read by one thread per pipe (Windows) rather than polled.
pub const PIPE_THREADS: bool = true;

/// Nothing to do on Windows: the pipe's size is fixed when it is made.
pub fn grow_pipe(_file: &File, _bytes: usize) {}

/// Nothing to do on Windows (the guardian does not run there).
pub fn ignore_terminal_signals() {}

/// A handle on one process (Windows: opened by pid, ended by `TerminateProcess`).
pub struct ProcHandle {
    pid: u32,
}

impl ProcHandle {
    /// Opens a handle on the process that has `pid` now.
    pub fn open(pid: u32) -> io::Result<ProcHandle> {
        kill(pid, 0)?;
        Ok(ProcHandle { pid })
    }

    /// Ends the process (any signal but 0).
    pub fn signal(&self, signal: i32) -> io::Result<()> {
        kill(self.pid, signal)
    }
}

/// Nothing to tune: the Windows heap manages itself.
pub fn tune_allocator() {}

/// Nothing to do: the Windows heap decommits freed blocks itself.
pub fn release_free_memory() {}

/// 64 random bits from the system (`RtlGenRandom`); `None` when it gives none.
pub fn os_random_u64() -> Option<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: `buf` is 8 writable bytes and its length is passed.
    let ok = unsafe { ffi::SystemFunction036(buf.as_mut_ptr().cast(), buf.len() as u32) } != 0;
    ok.then(|| u64::from_ne_bytes(buf))
}

/// Windows has no user ids: 0, the value [`ext::MetadataExt::uid`] gives every file, so
/// that "owned by the server's user" holds for the files the server makes.
pub fn effective_uid() -> u32 {
    0
}

// ---------------------------------------------------------------------------------------
// The reaper's wake-up.
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct Flag {
    set: Mutex<bool>,
    cond: Condvar,
}

fn wakers() -> &'static Mutex<Vec<Arc<Flag>>> {
    static WAKERS: OnceLock<Mutex<Vec<Arc<Flag>>>> = OnceLock::new();
    WAKERS.get_or_init(Default::default)
}

/// The reaper's side of its wake-up: woken by any child's exit and by [`ExitWaker::wake`].
pub struct ExitWake {
    flag: Arc<Flag>,
}

/// The side that wakes the reaper.
pub struct ExitWaker {
    flag: Arc<Flag>,
}

/// A new wake-up pair, woken by every child's exit from now on.
pub fn exit_wake() -> io::Result<(ExitWake, ExitWaker)> {
    let flag = Arc::new(Flag::default());
    wakers().lock().push(flag.clone());
    Ok((ExitWake { flag: flag.clone() }, ExitWaker { flag }))
}

impl Flag {
    fn raise(&self) {
        *self.set.lock() = true;
        self.cond.notify_all();
    }
}

impl ExitWake {
    /// Waits until woken or `timeout_ms` passed, then clears the wake-up.
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<()> {
        let mut set = self.flag.set.lock();
        if !*set {
            let _ = self
                .flag
                .cond
                .wait_for(&mut set, Duration::from_millis(timeout_ms.max(0) as u64));
        }
        *set = false;
        Ok(())
    }
}

impl ExitWaker {
    /// Wakes the reaper.
    pub fn wake(&self) {
        self.flag.raise();
    }
}

fn child_exited() {
    for w in wakers().lock().iter() {
        w.raise();
    }
}

// ---------------------------------------------------------------------------------------
// Shutdown signals.
// ---------------------------------------------------------------------------------------

static ON_SIGNAL: OnceLock<Box<dyn Fn(i32) + Send + Sync>> = OnceLock::new();

unsafe extern "system" fn console_handler(event: u32) -> i32 {
    let signal = match event {
        ffi::CTRL_C_EVENT => ::libc::SIGINT,
        ffi::CTRL_BREAK_EVENT => ::libc::SIGTERM,
        _ => posix::SIGHUP,
    };
    if let Some(f) = ON_SIGNAL.get() {
        f(signal);
    }
    1
}

/// Calls `f` with `SIGINT` (Ctrl+C), `SIGTERM` (Ctrl+Break) or `SIGHUP` (the console
/// closed, logoff, shutdown), from the thread Windows runs console handlers on.
pub fn on_shutdown_signals(f: impl Fn(i32) + Send + Sync + 'static) -> io::Result<()> {
    if ON_SIGNAL.set(Box::new(f)).is_err() {
        return Ok(());
    }
    // SAFETY: the handler is a plain function with the system calling convention that
    // lives as long as the process.
    if unsafe { ffi::SetConsoleCtrlHandler(Some(console_handler), 1) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Terminals: no ConPTY in this build.
// ---------------------------------------------------------------------------------------

/// Terminals (`tty: true`) are not available on Windows in this build.
pub fn open_pty(_rows: u16, _cols: u16) -> io::Result<(File, File, std::path::PathBuf)> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "tty: true is not available on Windows (no ConPTY support in this build): run the \
         command without tty",
    ))
}
