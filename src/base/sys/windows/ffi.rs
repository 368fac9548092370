//! The Win32 and native calls the Windows side makes, declared by hand (no bindings crate),
//! with the few structures and constants they take.
#![allow(non_snake_case, clippy::upper_case_acronyms)]

use std::ffi::c_void;

pub type HANDLE = *mut c_void;
pub type BOOL = i32;

pub const INFINITE: u32 = 0xFFFF_FFFF;
pub const WAIT_OBJECT_0: u32 = 0;
pub const ERROR_NOT_FOUND: i32 = 1168;
pub const CREATE_SUSPENDED: u32 = 0x0000_0004;
pub const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
pub const CREATE_NO_WINDOW: u32 = 0x0800_0000;
pub const PROCESS_TERMINATE: u32 = 0x0001;
pub const PROCESS_QUERY_LIMITED_INFORMATION: u32 = 0x1000;
pub const CTRL_C_EVENT: u32 = 0;
pub const CTRL_BREAK_EVENT: u32 = 1;
pub const JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION: i32 = 1;
pub const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION: i32 = 9;
pub const JOB_OBJECT_LIMIT_ACTIVE_PROCESS: u32 = 0x0000_0008;
pub const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: u32 = 0x0000_2000;
pub const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x0400;
pub const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// `JOBOBJECT_BASIC_LIMIT_INFORMATION`.
#[repr(C)]
#[derive(Default)]
pub struct JobBasicLimits {
    pub per_process_user_time_limit: i64,
    pub per_job_user_time_limit: i64,
    pub limit_flags: u32,
    pub minimum_working_set_size: usize,
    pub maximum_working_set_size: usize,
    pub active_process_limit: u32,
    pub affinity: usize,
    pub priority_class: u32,
    pub scheduling_class: u32,
}

/// `IO_COUNTERS`.
#[repr(C)]
#[derive(Default)]
pub struct IoCounters {
    pub counts: [u64; 6],
}

/// `JOBOBJECT_EXTENDED_LIMIT_INFORMATION`.
#[repr(C)]
#[derive(Default)]
pub struct JobExtendedLimits {
    pub basic: JobBasicLimits,
    pub io: IoCounters,
    pub process_memory_limit: usize,
    pub job_memory_limit: usize,
    pub peak_process_memory_used: usize,
    pub peak_job_memory_used: usize,
}

/// `JOBOBJECT_BASIC_ACCOUNTING_INFORMATION`.
#[repr(C)]
#[derive(Default)]
pub struct JobAccounting {
    pub total_user_time: i64,
    pub total_kernel_time: i64,
    pub this_period_total_user_time: i64,
    pub this_period_total_kernel_time: i64,
    pub total_page_fault_count: u32,
    pub total_processes: u32,
    pub active_processes: u32,
    pub total_terminated_processes: u32,
}

/// `BY_HANDLE_FILE_INFORMATION`.
#[repr(C)]
#[derive(Default)]
pub struct FileInfo {
    pub file_attributes: u32,
    pub creation_time: [u32; 2],
    pub last_access_time: [u32; 2],
    pub last_write_time: [u32; 2],
    pub volume_serial_number: u32,
    pub file_size_high: u32,
    pub file_size_low: u32,
    pub number_of_links: u32,
    pub file_index_high: u32,
    pub file_index_low: u32,
}

#[link(name = "kernel32")]
extern "system" {
    pub fn CreateJobObjectW(attributes: *mut c_void, name: *const u16) -> HANDLE;
    pub fn AssignProcessToJobObject(job: HANDLE, process: HANDLE) -> BOOL;
    pub fn IsProcessInJob(process: HANDLE, job: HANDLE, result: *mut BOOL) -> BOOL;
    pub fn TerminateJobObject(job: HANDLE, exit_code: u32) -> BOOL;
    pub fn SetInformationJobObject(job: HANDLE, class: i32, info: *mut c_void, len: u32) -> BOOL;
    pub fn QueryInformationJobObject(
        job: HANDLE,
        class: i32,
        info: *mut c_void,
        len: u32,
        returned: *mut u32,
    ) -> BOOL;
    pub fn GetCurrentProcess() -> HANDLE;
    pub fn WaitForSingleObject(handle: HANDLE, millis: u32) -> u32;
    pub fn GetExitCodeProcess(process: HANDLE, code: *mut u32) -> BOOL;
    pub fn OpenProcess(access: u32, inherit: BOOL, pid: u32) -> HANDLE;
    pub fn TerminateProcess(process: HANDLE, exit_code: u32) -> BOOL;
    pub fn GenerateConsoleCtrlEvent(event: u32, group: u32) -> BOOL;
    pub fn GetConsoleWindow() -> HANDLE;
    pub fn SetConsoleCtrlHandler(
        handler: Option<unsafe extern "system" fn(u32) -> BOOL>,
        add: BOOL,
    ) -> BOOL;
    pub fn GetFileInformationByHandle(file: HANDLE, info: *mut FileInfo) -> BOOL;
}

#[link(name = "ntdll")]
extern "system" {
    pub fn NtResumeProcess(process: HANDLE) -> i32;
}

#[link(name = "advapi32")]
extern "system" {
    /// `RtlGenRandom`.
    pub fn SystemFunction036(buffer: *mut c_void, len: u32) -> u8;
}
