//! Spawning on Windows: std's `Command` (`CreateProcessW`) with the process created
//! suspended, then assigned to its job, checked and resumed.

use std::fs::File;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle, OwnedHandle, RawHandle};
use std::os::windows::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use super::job::{table, Child, Group, Job, ProcessHandle};
use super::{child_exited, ffi, has_console, program_stem, JOB_PROCESSES};
use crate::base::sys::{SpawnSpec, Spawned};

/// Starts a child in a Job Object of its own (or in the job of `join_group`, when that is
/// an existing group), with exactly the given stdio, environment and working directory.
/// The child is created suspended, assigned, checked to be in the job, and only then
/// resumed. `cmd.exe` receives its arguments as written (it parses its command line by
/// its own rules); every other program receives them quoted by the MSVCRT rules. The
/// cgroup, the resource limits, capabilities and the kernel sandbox of `setup` are
/// Unix's and do not apply, but for `pids`, which becomes the job's active-process limit
/// ([`JOB_PROCESS_LIMIT`]).
pub fn spawn(mut spec: SpawnSpec<'_>) -> io::Result<Spawned> {
    if spec.terminal.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "terminals are not available on Windows",
        ));
    }
    let mut cmd = Command::new(spec.program);
    if program_stem(spec.program) == "cmd" {
        // `/d /s /c <command>`: with /s, cmd takes the text between the first and the last
        // quote of its command line as the command, whatever it contains.
        let mut raw = String::new();
        for (i, a) in spec.args.iter().enumerate() {
            if i > 0 {
                raw.push(' ');
            }
            if i + 1 == spec.args.len() && spec.args.len() > 1 {
                raw.push('"');
                raw.push_str(a);
                raw.push('"');
            } else {
                raw.push_str(a);
            }
        }
        cmd.raw_arg(raw);
    } else {
        cmd.args(spec.args);
    }
    spec.give_std_command(&mut cmd);
    let mut flags = ffi::CREATE_SUSPENDED | ffi::CREATE_NEW_PROCESS_GROUP;
    if !has_console() {
        flags |= ffi::CREATE_NO_WINDOW;
    }
    cmd.creation_flags(flags);
    let limit = spec.setup.and_then(|s| {
        s.rlimits
            .iter()
            .find(|(r, _)| *r == JOB_PROCESSES)
            .map(|&(_, n)| n.min(u64::from(u32::MAX)) as u32)
    });
    let joined = match spec.join_group {
        Some(pgid) if pgid != 0 => table().lock().jobs.get(&pgid).map(|g| g.job.clone()),
        _ => None,
    };
    let joined_existing = joined.is_some();
    let job = match joined {
        Some(job) => job,
        None => Arc::new(Job::new(limit)?),
    };
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take().map(|p| File::from(OwnedHandle::from(p)));
    let stdout = child
        .stdout
        .take()
        .map(|p| File::from(OwnedHandle::from(p)));
    let stderr = child
        .stderr
        .take()
        .map(|p| File::from(OwnedHandle::from(p)));
    // SAFETY: `into_raw_handle` gives up std's ownership of the process handle.
    let process = unsafe { OwnedHandle::from_raw_handle(child.into_raw_handle()) };
    let process = Arc::new(ProcessHandle(process));
    if let Err(e) = assign_and_resume(&job, process.0.as_raw_handle()) {
        // SAFETY: the handle is open; the suspended process never ran.
        unsafe { ffi::TerminateProcess(process.0.as_raw_handle(), 1) };
        return Err(e);
    }
    {
        let mut t = table().lock();
        if !joined_existing {
            let group = Group {
                job: job.clone(),
                _leader: process.clone(),
            };
            t.jobs.insert(pid, group);
        }
        t.children.insert(
            pid,
            Child {
                process: process.clone(),
                job,
            },
        );
    }
    let waited = process.clone();
    let watcher = std::thread::Builder::new()
        .name("exit-wait".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            // SAFETY: the handle stays open while `waited` is held here.
            unsafe { ffi::WaitForSingleObject(waited.0.as_raw_handle(), ffi::INFINITE) };
            child_exited();
        });
    if let Err(e) = watcher {
        // Without a watcher nothing would tell the reaper of its end: end it now, unseen.
        // SAFETY: the handle is open (held by `process`).
        unsafe { ffi::TerminateProcess(process.0.as_raw_handle(), 1) };
        let mut t = table().lock();
        t.children.remove(&pid);
        if !joined_existing {
            t.jobs.remove(&pid);
        }
        return Err(e);
    }
    Ok(Spawned {
        pid,
        stdin,
        stdout,
        stderr,
    })
}

fn assign_and_resume(job: &Job, process: RawHandle) -> io::Result<()> {
    // SAFETY: both handles are open.
    if unsafe { ffi::AssignProcessToJobObject(job.handle.as_raw_handle(), process) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut inside = 0i32;
    // SAFETY: both handles are open and `inside` is a writable BOOL.
    if unsafe { ffi::IsProcessInJob(process, job.handle.as_raw_handle(), &mut inside) } == 0 {
        return Err(io::Error::last_os_error());
    }
    if inside == 0 {
        return Err(io::Error::other("the process is not in its job"));
    }
    // SAFETY: the process handle is open; resuming a suspended process has no other effect.
    let status = unsafe { ffi::NtResumeProcess(process) };
    if status < 0 {
        return Err(io::Error::other(format!(
            "cannot resume the process (NTSTATUS {status:#x})"
        )));
    }
    Ok(())
}
