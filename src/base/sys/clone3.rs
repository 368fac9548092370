//! The `clone3` system call (Linux) for `child`: the kernel's `struct clone_args`, and the
//! call itself with the child's side in a few lines of assembly, since a child that starts
//! on a stack of its own has no frame to return to. x86_64 and aarch64; elsewhere it
//! answers `ENOSYS` and `child` uses `clone`.

use std::ffi::{c_int, c_void};

/// The kernel's `struct clone_args` (version 2, with `cgroup`).
#[repr(C)]
pub(super) struct CloneArgs {
    pub(super) flags: u64,
    pub(super) pidfd: u64,
    pub(super) child_tid: u64,
    pub(super) parent_tid: u64,
    pub(super) exit_signal: u64,
    pub(super) stack: u64,
    pub(super) stack_size: u64,
    pub(super) tls: u64,
    pub(super) set_tid: u64,
    pub(super) set_tid_size: u64,
    pub(super) cgroup: u64,
}

/// The clone3 system call with the child's side in assembly: the child starts on a stack
/// of its own with no frame to return to, so it calls `entry(arg)` and exits with its
/// value. Returns the child's pid, or `-errno`.
#[cfg(target_arch = "x86_64")]
// SAFETY: an `unsafe fn`: the caller passes a valid `clone_args` of `size` bytes whose
// stack is the child's alone, and an `entry` that executes or exits.
pub(super) unsafe fn raw_clone3(
    args: *mut CloneArgs,
    size: usize,
    entry: extern "C" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
) -> i64 {
    let rc: i64;
    // SAFETY: the caller's contract. r12 and r13 survive the system call in both
    // processes; the child's stack pointer is the new stack's top, 16-byte aligned,
    // as `call` expects.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "mov edi, eax",
            "mov eax, 60",
            "syscall",
            "ud2",
            "2:",
            inlateout("rax") 435i64 => rc,
            in("rdi") args,
            in("rsi") size,
            in("r12") arg,
            in("r13") entry,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    rc
}

/// See the x86_64 version.
#[cfg(target_arch = "aarch64")]
// SAFETY: as for the x86_64 version.
pub(super) unsafe fn raw_clone3(
    args: *mut CloneArgs,
    size: usize,
    entry: extern "C" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
) -> i64 {
    let rc: i64;
    // SAFETY: the caller's contract. x20 and x21 survive the system call in both
    // processes; the child's stack pointer is the new stack's top, 16-byte aligned.
    unsafe {
        std::arch::asm!(
            "svc #0",
            "cbnz x0, 2f",
            "mov x29, xzr",
            "mov x30, xzr",
            "mov x0, x20",
            "blr x21",
            "mov x8, #93",
            "svc #0",
            "brk #1",
            "2:",
            inlateout("x0") args as i64 => rc,
            in("x1") size,
            in("x8") 435i64,
            in("x20") arg,
            in("x21") entry,
            lateout("x30") _,
            options(nostack),
        );
    }
    rc
}

/// Other architectures use `clone` and a write to `cgroup.procs`.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
// SAFETY: touches nothing; `unsafe` only to match the other versions.
pub(super) unsafe fn raw_clone3(
    _args: *mut CloneArgs,
    _size: usize,
    _entry: extern "C" fn(*mut c_void) -> c_int,
    _arg: *mut c_void,
) -> i64 {
    -(libc::ENOSYS as i64)
}
