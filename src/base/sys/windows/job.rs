//! Job Objects and the table of spawned processes: a command's job (kill-on-close, with an
//! optional active-process limit), the process handles the reaper waits on, and the groups
//! (jobs known by their leader's pid).

use std::collections::HashMap;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::ffi;

/// A command's Job Object.
pub(super) struct Job {
    pub(super) handle: OwnedHandle,
    /// The signal that ended the job (`TerminateJobObject`), 0 while none did.
    pub(super) killed_by: AtomicI32,
}

// SAFETY: a job handle may be used from any thread; the kernel object synchronises itself.
unsafe impl Send for Job {}
// SAFETY: as above: every call on the handle is thread-safe.
unsafe impl Sync for Job {}

impl Job {
    pub(super) fn new(process_limit: Option<u32>) -> io::Result<Job> {
        // SAFETY: no security attributes and no name: a new anonymous job, or null.
        let raw = unsafe { ffi::CreateJobObjectW(std::ptr::null_mut(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle that nobody else owns.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let mut info = ffi::JobExtendedLimits::default();
        info.basic.limit_flags = ffi::JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        if let Some(n) = process_limit {
            info.basic.limit_flags |= ffi::JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
            info.basic.active_process_limit = n;
        }
        // SAFETY: `info` is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION and its size is
        // passed; the handle is open.
        let ok = unsafe {
            ffi::SetInformationJobObject(
                handle.as_raw_handle(),
                ffi::JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
                (&mut info as *mut ffi::JobExtendedLimits).cast(),
                std::mem::size_of::<ffi::JobExtendedLimits>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Job {
            handle,
            killed_by: AtomicI32::new(0),
        })
    }

    /// The number of live processes in the job.
    pub(super) fn active(&self) -> io::Result<u32> {
        let mut info = ffi::JobAccounting::default();
        // SAFETY: `info` is a valid JOBOBJECT_BASIC_ACCOUNTING_INFORMATION and its size is
        // passed; the handle is open; the returned length may be null.
        let ok = unsafe {
            ffi::QueryInformationJobObject(
                self.handle.as_raw_handle(),
                ffi::JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION,
                (&mut info as *mut ffi::JobAccounting).cast(),
                std::mem::size_of::<ffi::JobAccounting>() as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(info.active_processes)
    }

    pub(super) fn terminate(&self, signal: i32) -> io::Result<()> {
        let _ = self
            .killed_by
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        // SAFETY: the job handle is open; the exit code is a plain integer.
        if unsafe { ffi::TerminateJobObject(self.handle.as_raw_handle(), kill_code(signal)) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The exit code of a process ended by [`killpg`] or [`kill`] with `signal`: 128 + the
/// signal, as a Unix shell reports it.
pub(super) fn kill_code(signal: i32) -> u32 {
    128 + signal as u32
}

/// A spawned process the reaper has not collected yet.
pub(super) struct Child {
    pub(super) process: Arc<ProcessHandle>,
    pub(super) job: Arc<Job>,
}

/// A process handle shared with the thread that waits on it.
pub(super) struct ProcessHandle(pub(super) OwnedHandle);

// SAFETY: a process handle may be waited on and queried from any thread.
unsafe impl Send for ProcessHandle {}
// SAFETY: as above.
unsafe impl Sync for ProcessHandle {}

impl ProcessHandle {
    /// The exit code once the process ended, `None` while it runs.
    pub(super) fn exit_code(&self) -> Option<u32> {
        // SAFETY: the handle is open; a zero timeout only polls.
        if unsafe { ffi::WaitForSingleObject(self.0.as_raw_handle(), 0) } != ffi::WAIT_OBJECT_0 {
            return None;
        }
        let mut code = 0u32;
        // SAFETY: the handle is open and `code` a writable u32.
        if unsafe { ffi::GetExitCodeProcess(self.0.as_raw_handle(), &mut code) } == 0 {
            return Some(1);
        }
        Some(code)
    }
}

/// A process group: the job, known by its leader's pid.
pub(super) struct Group {
    pub(super) job: Arc<Job>,
    /// The leader's handle, held while the group is known: Windows reuses no pid while a
    /// handle on its process is open, so the group id names this job alone.
    pub(super) _leader: Arc<ProcessHandle>,
}

#[derive(Default)]
pub(super) struct Table {
    pub(super) children: HashMap<u32, Child>,
    pub(super) jobs: HashMap<u32, Group>,
}

pub(super) fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}
