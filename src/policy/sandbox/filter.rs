//! The seccomp filter that completes the Landlock domain: a
//! classic BPF program, built here by hand once per filter choice ([`prepared`]) and
//! installed by each child of a call after `no_new_privs` (`sys::ChildSetup`), so every
//! process of the call and all of its descendants inherit it. A refused call fails with `EPERM`.
//!
//! Landlock does not cover the system calls that change *another* process of the same user:
//! resource limits, priority, CPU affinity and scheduling, I/O priority. The filter refuses
//! them whenever they name a process other than the caller by its id, since a BPF program
//! cannot know the caller's pid: `prlimit64` with a non-zero pid and a new limit (reading
//! another's limits stays allowed), `setpriority` with a non-zero `who` or `PRIO_USER` (whose
//! `who == 0` means every process of the caller's uid, the server included), the four
//! `sched_set*` calls with a non-zero pid, and `ioprio_set` likewise (`IOPRIO_WHO_USER`
//! always). `who == 0` means the caller itself, or for `PRIO_PGRP`/`IOPRIO_WHO_PGRP` the
//! caller's process group, which is the call's own (every call leads its own session).
//! A program that names *itself* by pid (`prlimit(getpid(), …)`, `pthread_setaffinity_np`
//! on another of its threads) is refused too; programs normally pass 0. `io_uring_setup`
//! is refused: io_uring performs its operations without passing through seccomp.
//!
//! With the same part, a call may not make a set-user-id or set-group-id file: `chmod`,
//! `fchmod`, `fchmodat`, `fchmodat2`, and `open`, `openat`, `creat`, `mknod`, `mknodat` are
//! refused when their mode holds `S_ISUID` or `S_ISGID`. Landlock does not cover mode
//! changes, and a root server's call could otherwise leave a set-user-id copy of any
//! program for the host's other users (`cp /usr/bin/id x; chmod 4755 x`). `mkdir` is not
//! filtered (`S_ISGID` on a directory only sets the group of new files), but `chmod g+s` on
//! a directory is refused with the rest.
//! `openat2`'s mode is in a structure a filter cannot read: a program that calls it
//! directly with such a mode is not stopped here (no allowlisted program does).
//!
//! Under `YIELDSHELL_NETWORK=deny` the filter also refuses `socket()` in `AF_INET` and
//! `AF_INET6` for every type but `SOCK_DGRAM`: no TCP, MPTCP, SCTP or raw socket exists, so
//! neither MPTCP (which Landlock's TCP rules do not see) nor `listen()`'s automatic bind
//! can reach the network. UDP and ICMP datagram sockets stay, as documented. Of the other
//! families only the local ones stay (`AF_UNIX`, `AF_NETLINK`): vsock (a channel to a VM's
//! host), packet and every other family are refused.
//!
//! Where execution is confined (trusted mode), the filter also refuses `memfd_create`
//! without `MFD_NOEXEC_SEAL`: Landlock judges execution by path, and a memfd has none, so a
//! copy of any program in an executable memfd would run (`execveat` with `AT_EMPTY_PATH`, or
//! `execve` of `/proc/self/fd/N`, which a filter cannot read). A memfd sealed against
//! execution is still made; on a kernel before 6.3, which does not know the flag, no memfd
//! is made at all.
//!
//! The program checks the audit architecture first. On x86_64 the native table applies to
//! x86_64 system calls, x32 numbers are refused, and the i386 table applies to `int 0x80`
//! calls (which a 64-bit process can make); on aarch64 the native and the 32-bit ARM (EABI)
//! tables apply. Any other architecture value is refused. On other architectures there is
//! no filter, and the sandbox's status says so.
use crate::base::sys::{Insn, SeccompProgram};

/// What the filter refuses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Changing other processes' limits, priorities, affinity; io_uring; set-id files.
    pub processes: bool,
    /// TCP, MPTCP, SCTP and raw sockets in `AF_INET`/`AF_INET6`.
    pub network: bool,
    /// Executable memfds: `memfd_create` without `MFD_NOEXEC_SEAL`.
    pub memfd: bool,
}

impl Filter {
    /// The choice as two bits (a cache index and part of a ruleset's key).
    pub fn bits(self) -> u32 {
        u32::from(self.processes) | u32::from(self.network) << 1 | u32::from(self.memfd) << 2
    }

    /// Back from [`Filter::bits`].
    pub fn from_bits(bits: u32) -> Filter {
        Filter {
            processes: bits & 1 != 0,
            network: bits & 2 != 0,
            memfd: bits & 4 != 0,
        }
    }

    /// True when there is nothing to refuse.
    pub fn is_empty(self) -> bool {
        !self.processes && !self.network && !self.memfd
    }
}

/// True when this build has tables for its architecture (little-endian aarch64 only: the
/// audit architecture values below are the little-endian ones).
pub const SUPPORTED: bool = cfg!(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_endian = "little"
));

const LD_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JA: u16 = 0x05; // BPF_JMP | BPF_JA
const AND: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET: u16 = 0x06; // BPF_RET | BPF_K

/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_ERRNO | EPERM`.
pub const RET_EPERM: u32 = 0x0005_0000 | 1;

/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// The low 32 bits of argument `i` (an `int` argument is its low half: the kernel
/// truncates the register).
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i + if cfg!(target_endian = "big") { 4 } else { 0 }
}
const fn arg_hi(i: u32) -> u32 {
    16 + 8 * i + if cfg!(target_endian = "big") { 0 } else { 4 }
}

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// System call numbers of one architecture (`None`: not on that architecture).
#[derive(Clone, Copy, Debug)]
pub struct Table {
    /// `AUDIT_ARCH_*`.
    pub arch: u32,
    prlimit64: u32,
    setpriority: u32,
    sched_setaffinity: u32,
    sched_setscheduler: u32,
    sched_setparam: u32,
    sched_setattr: u32,
    ioprio_set: u32,
    io_uring_setup: u32,
    socket: u32,
    socketcall: Option<u32>,
    memfd_create: u32,
    /// The calls that set a file's mode, each with the index of its mode argument.
    modes: &'static [(u32, u32)],
    /// Refuse numbers with the x32 bit.
    x32: bool,
}

/// x86_64 (`asm/unistd_64.h`).
pub const X86_64: Table = Table {
    arch: AUDIT_ARCH_X86_64,
    prlimit64: 302,
    setpriority: 141,
    sched_setaffinity: 203,
    sched_setscheduler: 144,
    sched_setparam: 142,
    sched_setattr: 314,
    ioprio_set: 251,
    io_uring_setup: 425,
    socket: 41,
    socketcall: None,
    memfd_create: 319,
    // chmod, fchmod, fchmodat, fchmodat2, open, openat, creat, mknod, mknodat.
    modes: &[
        (90, 1),
        (91, 1),
        (268, 2),
        (452, 2),
        (2, 2),
        (257, 3),
        (85, 1),
        (133, 1),
        (259, 2),
    ],
    x32: true,
};
/// i386 (`asm/unistd_32.h`), reachable from x86_64 through `int 0x80`.
pub const I386: Table = Table {
    arch: AUDIT_ARCH_I386,
    prlimit64: 340,
    setpriority: 97,
    sched_setaffinity: 241,
    sched_setscheduler: 156,
    sched_setparam: 154,
    sched_setattr: 351,
    ioprio_set: 289,
    io_uring_setup: 425,
    socket: 359,
    socketcall: Some(102),
    memfd_create: 356,
    modes: &[
        (15, 1),
        (94, 1),
        (306, 2),
        (452, 2),
        (5, 2),
        (295, 3),
        (8, 1),
        (14, 1),
        (297, 2),
    ],
    x32: false,
};
/// aarch64 (the generic table).
pub const AARCH64: Table = Table {
    arch: AUDIT_ARCH_AARCH64,
    prlimit64: 261,
    setpriority: 140,
    sched_setaffinity: 122,
    sched_setscheduler: 119,
    sched_setparam: 118,
    sched_setattr: 274,
    ioprio_set: 30,
    io_uring_setup: 425,
    socket: 198,
    socketcall: None,
    memfd_create: 279,
    // fchmod, fchmodat, fchmodat2, openat, mknodat (no chmod, open, creat or mknod).
    modes: &[(52, 1), (53, 2), (452, 2), (56, 3), (33, 2)],
    x32: false,
};
/// 32-bit ARM, EABI (the compat table of aarch64).
pub const ARM: Table = Table {
    arch: AUDIT_ARCH_ARM,
    prlimit64: 369,
    setpriority: 97,
    sched_setaffinity: 241,
    sched_setscheduler: 156,
    sched_setparam: 154,
    sched_setattr: 380,
    ioprio_set: 314,
    io_uring_setup: 425,
    socket: 281,
    socketcall: None,
    memfd_create: 385,
    modes: &[
        (15, 1),
        (94, 1),
        (333, 2),
        (452, 2),
        (5, 2),
        (322, 3),
        (8, 1),
        (14, 1),
        (324, 2),
    ],
    x32: false,
};

/// The tables of this build's architecture: native first, then compat.
pub fn native_tables() -> &'static [Table] {
    if !SUPPORTED {
        &[]
    } else if cfg!(target_arch = "x86_64") {
        &[X86_64, I386]
    } else if cfg!(target_arch = "aarch64") {
        &[AARCH64, ARM]
    } else {
        &[]
    }
}

const PRIO_USER: u32 = 2;
const IOPRIO_WHO_USER: u32 = 3;
const AF_UNIX: u32 = 1;
const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
const AF_NETLINK: u32 = 16;
const SOCK_DGRAM: u32 = 2;
const SOCK_TYPE_MASK: u32 = 0xf;
const SYS_SOCKET: u32 = 1; // socketcall's call number for socket()
const MFD_NOEXEC_SEAL: u32 = 0x0008;
/// `S_ISUID | S_ISGID`.
const SET_ID: u32 = 0o6000;

/// Where a jump goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum To {
    Next,
    Allow,
    Deny,
    Label(usize),
}

struct Asm {
    code: Vec<(u16, u32, To, To)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn bind(&mut self, label: usize) {
        self.labels[label] = Some(self.code.len());
    }
    fn ld(&mut self, off: u32) {
        self.code.push((LD_ABS, off, To::Next, To::Next));
    }
    fn jeq(&mut self, k: u32, t: To, f: To) {
        self.code.push((JEQ, k, t, f));
    }
    fn ja(&mut self, to: To) {
        self.code.push((JA, 0, to, To::Next));
    }
    /// Refuses when the low half of argument `i` is non-zero.
    fn deny_nonzero(&mut self, i: u32) {
        self.ld(arg_lo(i));
        self.jeq(0, To::Allow, To::Deny);
    }

    /// The per-table checks; `A` holds the arch on entry and the table has matched.
    fn table(&mut self, t: &Table, f: Filter) {
        self.ld(OFF_NR);
        if t.x32 {
            self.code.push((JGE, X32_SYSCALL_BIT, To::Deny, To::Next));
        }
        let mut blocks: Vec<(usize, u32, Block)> = Vec::new();
        let mut add = |asm: &mut Asm, nr: u32, b: Block| {
            let l = asm.label();
            asm.jeq(nr, To::Label(l), To::Next);
            blocks.push((l, nr, b));
        };
        if f.processes {
            add(self, t.prlimit64, Block::Prlimit);
            add(self, t.setpriority, Block::WhichWho(PRIO_USER));
            for nr in [
                t.sched_setaffinity,
                t.sched_setscheduler,
                t.sched_setparam,
                t.sched_setattr,
            ] {
                add(self, nr, Block::Pid);
            }
            add(self, t.ioprio_set, Block::WhichWho(IOPRIO_WHO_USER));
            add(self, t.io_uring_setup, Block::Always);
            for &(nr, arg) in t.modes {
                add(self, nr, Block::Mode(arg));
            }
        }
        if f.memfd {
            add(self, t.memfd_create, Block::Memfd);
        }
        if f.network {
            add(self, t.socket, Block::Socket);
            if let Some(nr) = t.socketcall {
                add(self, nr, Block::SocketCall);
            }
        }
        self.ja(To::Allow);
        for (l, _, b) in blocks {
            self.bind(l);
            match b {
                Block::Always => self.ja(To::Deny),
                Block::Pid => self.deny_nonzero(0),
                Block::Prlimit => {
                    // prlimit64(pid, resource, new, old): refused when pid != 0 and new
                    // is not NULL (a pointer: both halves).
                    self.ld(arg_lo(0));
                    self.jeq(0, To::Allow, To::Next);
                    self.ld(arg_lo(2));
                    self.jeq(0, To::Next, To::Deny);
                    self.ld(arg_hi(2));
                    self.jeq(0, To::Allow, To::Deny);
                }
                Block::WhichWho(user) => {
                    self.ld(arg_lo(0));
                    self.jeq(user, To::Deny, To::Next);
                    self.deny_nonzero(1);
                }
                Block::Socket => {
                    let inet = self.label();
                    self.ld(arg_lo(0));
                    self.jeq(AF_INET, To::Label(inet), To::Next);
                    self.jeq(AF_INET6, To::Label(inet), To::Next);
                    // Local families stay (unix sockets, netlink for interface queries);
                    // every other one (vsock to the host, packet, bluetooth...) is refused.
                    self.jeq(AF_UNIX, To::Allow, To::Next);
                    self.jeq(AF_NETLINK, To::Allow, To::Deny);
                    self.bind(inet);
                    self.ld(arg_lo(1));
                    self.code.push((AND, SOCK_TYPE_MASK, To::Next, To::Next));
                    self.jeq(SOCK_DGRAM, To::Allow, To::Deny);
                }
                Block::SocketCall => {
                    self.ld(arg_lo(0));
                    self.jeq(SYS_SOCKET, To::Deny, To::Allow);
                }
                Block::Mode(arg) => {
                    // A mode with S_ISUID or S_ISGID is refused (the low half: mode_t).
                    self.ld(arg_lo(arg));
                    self.code.push((AND, SET_ID, To::Next, To::Next));
                    self.jeq(0, To::Allow, To::Deny);
                }
                Block::Memfd => {
                    // memfd_create(name, flags): allowed only with MFD_NOEXEC_SEAL.
                    self.ld(arg_lo(1));
                    self.code.push((AND, MFD_NOEXEC_SEAL, To::Next, To::Next));
                    self.jeq(MFD_NOEXEC_SEAL, To::Allow, To::Deny);
                }
            }
        }
    }

    fn finish(mut self) -> Result<Vec<Insn>, String> {
        let allow = self.code.len();
        self.code.push((RET, RET_ALLOW, To::Next, To::Next));
        let deny = self.code.len();
        self.code.push((RET, RET_EPERM, To::Next, To::Next));
        let labels = self.labels;
        let code = self.code;
        let mut out = Vec::with_capacity(code.len());
        for (i, &(op, k, t, f)) in code.iter().enumerate() {
            let off = |to: To| -> Result<u32, String> {
                let target = match to {
                    To::Next => return Ok(0),
                    To::Allow => allow,
                    To::Deny => deny,
                    To::Label(l) => labels[l].ok_or("unbound label in the seccomp filter")?,
                };
                target
                    .checked_sub(i + 1)
                    .and_then(|d| u32::try_from(d).ok())
                    .ok_or_else(|| "backward jump in the seccomp filter".to_string())
            };
            let (jt, jf) = (off(t)?, off(f)?);
            if op == JA {
                out.push(Insn {
                    code: op,
                    jt: 0,
                    jf: 0,
                    k: jt,
                });
            } else {
                let narrow = |d: u32| u8::try_from(d).map_err(|_| "seccomp filter too long");
                out.push(Insn {
                    code: op,
                    jt: narrow(jt)?,
                    jf: narrow(jf)?,
                    k,
                });
            }
        }
        Ok(out)
    }
}

#[derive(Clone, Copy, Debug)]
enum Block {
    Always,
    Pid,
    Prlimit,
    WhichWho(u32),
    Socket,
    SocketCall,
    Memfd,
    Mode(u32),
}

/// The program for `filter` over `tables` (native first); `None` when there is nothing to
/// filter or no table.
pub fn program(filter: Filter, tables: &[Table]) -> Result<Option<Vec<Insn>>, String> {
    if filter.is_empty() || tables.is_empty() {
        return Ok(None);
    }
    let mut asm = Asm {
        code: Vec::new(),
        labels: Vec::new(),
    };
    asm.ld(OFF_ARCH);
    let starts: Vec<usize> = tables.iter().map(|_| asm.label()).collect();
    for (t, &l) in tables.iter().zip(&starts) {
        asm.jeq(t.arch, To::Label(l), To::Next);
    }
    asm.ja(To::Deny);
    for (t, &l) in tables.iter().zip(&starts) {
        asm.bind(l);
        asm.table(t, filter);
    }
    asm.finish().map(Some)
}

/// [`program`] for `filter` over this build's tables, built once per process.
pub fn native_program(filter: Filter) -> Result<Option<&'static [Insn]>, String> {
    static CACHE: std::sync::OnceLock<[Result<Option<Vec<Insn>>, String>; 8]> =
        std::sync::OnceLock::new();
    let all = CACHE.get_or_init(|| {
        [0, 1, 2, 3, 4, 5, 6, 7].map(|bits| program(Filter::from_bits(bits), native_tables()))
    });
    match &all[filter.bits() as usize & 7] {
        Ok(p) => Ok(p.as_deref()),
        Err(e) => Err(e.clone()),
    }
}

/// The native program for `filter`, in the kernel's format, built once: `None` when the
/// filter refuses nothing (or this architecture has none).
pub fn prepared(filter: Filter) -> Result<Option<&'static SeccompProgram>, String> {
    static CACHE: std::sync::OnceLock<[Result<Option<SeccompProgram>, String>; 8]> =
        std::sync::OnceLock::new();
    let all = CACHE.get_or_init(|| {
        [0, 1, 2, 3, 4, 5, 6, 7].map(|bits| {
            native_program(Filter::from_bits(bits))?
                .map(|insns| {
                    SeccompProgram::new(insns)
                        .ok_or_else(|| "the seccomp filter is too long for the kernel".to_string())
                })
                .transpose()
        })
    });
    match &all[filter.bits() as usize & 7] {
        Ok(p) => Ok(p.as_ref()),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A classic BPF interpreter for the opcodes the builder emits, over a
    /// `seccomp_data` made of (nr, arch, args).
    fn run(prog: &[Insn], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let insn = prog[pc];
            pc += 1;
            match insn.code {
                LD_ABS => {
                    let o = insn.k as usize;
                    acc = u32::from_ne_bytes(data[o..o + 4].try_into().unwrap());
                }
                JEQ | JGE => {
                    let hit = if insn.code == JEQ {
                        acc == insn.k
                    } else {
                        acc >= insn.k
                    };
                    pc += usize::from(if hit { insn.jt } else { insn.jf });
                }
                JA => pc += insn.k as usize,
                AND => acc &= insn.k,
                RET => return insn.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    const BOTH: Filter = Filter {
        processes: true,
        network: true,
        memfd: true,
    };

    #[test]
    fn other_processes_are_refused_the_caller_is_not() {
        let p = program(BOTH, &[X86_64, I386]).unwrap().unwrap();
        let x = |nr, args| run(&p, nr, AUDIT_ARCH_X86_64, args);
        // prlimit64: another pid with a new limit is refused; reading or self is allowed.
        assert_eq!(x(302, [1234, 7, 0x7ffd_0000, 0, 0, 0]), RET_EPERM);
        assert_eq!(x(302, [1234, 7, 1 << 40, 0, 0, 0]), RET_EPERM);
        assert_eq!(x(302, [1234, 7, 0, 0x7ffd_0000, 0, 0]), RET_ALLOW);
        assert_eq!(x(302, [0, 7, 0x7ffd_0000, 0, 0, 0]), RET_ALLOW);
        // The high half of an int argument is ignored, as the kernel ignores it.
        assert_eq!(x(302, [1 << 32, 7, 0x7ffd_0000, 0, 0, 0]), RET_ALLOW);
        assert_eq!(x(302, [(1 << 32) | 5, 7, 8, 0, 0, 0]), RET_EPERM);
        // setpriority: PRIO_PROCESS/PGRP 0 is the caller, PRIO_USER is always refused.
        assert_eq!(x(141, [0, 0, 10, 0, 0, 0]), RET_ALLOW);
        assert_eq!(x(141, [1, 0, 10, 0, 0, 0]), RET_ALLOW);
        assert_eq!(x(141, [0, 99, 10, 0, 0, 0]), RET_EPERM);
        assert_eq!(x(141, [2, 0, 10, 0, 0, 0]), RET_EPERM);
        for nr in [203, 144, 142, 314] {
            assert_eq!(x(nr, [0; 6]), RET_ALLOW, "{nr}");
            assert_eq!(x(nr, [42, 0, 0, 0, 0, 0]), RET_EPERM, "{nr}");
        }
        assert_eq!(x(251, [1, 0, 4, 0, 0, 0]), RET_ALLOW);
        assert_eq!(x(251, [1, 42, 4, 0, 0, 0]), RET_EPERM);
        assert_eq!(x(251, [3, 0, 4, 0, 0, 0]), RET_EPERM);
        assert_eq!(x(425, [8, 0, 0, 0, 0, 0]), RET_EPERM);
        // Unrelated calls, and x32 numbers.
        assert_eq!(x(0, [0; 6]), RET_ALLOW);
        assert_eq!(x(59, [0; 6]), RET_ALLOW);
        assert_eq!(x(X32_SYSCALL_BIT | 302, [0; 6]), RET_EPERM);
        // The i386 table through int 0x80, and an unknown architecture.
        let i = |nr, args| run(&p, nr, AUDIT_ARCH_I386, args);
        assert_eq!(i(340, [1234, 7, 8, 0, 0, 0]), RET_EPERM);
        assert_eq!(i(302, [1234, 7, 8, 0, 0, 0]), RET_ALLOW);
        assert_eq!(i(102, [1, 0, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(i(102, [3, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, 0, 0x1234, [0; 6]), RET_EPERM);
    }

    #[test]
    fn only_datagram_sockets_in_inet_under_network_deny() {
        let p = program(BOTH, &[AARCH64, ARM]).unwrap().unwrap();
        let s = |args| run(&p, 198, AUDIT_ARCH_AARCH64, args);
        let (nonblock_cloexec, stream, dgram) = (0o4000 | 0o2000000, 1, 2);
        assert_eq!(s([2, stream, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(s([10, stream | nonblock_cloexec, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(s([2, stream, 262, 0, 0, 0]), RET_EPERM);
        assert_eq!(s([2, 5, 132, 0, 0, 0]), RET_EPERM);
        assert_eq!(s([2, 3, 1, 0, 0, 0]), RET_EPERM);
        assert_eq!(s([2, dgram | nonblock_cloexec, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(s([10, dgram, 17, 0, 0, 0]), RET_ALLOW);
        assert_eq!(s([1, stream, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(s([16, 3, 0, 0, 0, 0]), RET_ALLOW);
        // Other families reach past the network rules: vsock (the host), packet, and any
        // number the filter does not know.
        for family in [40, 17, 31, 44, 999] {
            assert_eq!(s([family, stream, 0, 0, 0, 0]), RET_EPERM, "{family}");
        }
        assert_eq!(run(&p, 281, AUDIT_ARCH_ARM, [2, 1, 0, 0, 0, 0]), RET_EPERM);
        // Without the network part, sockets are not filtered.
        let procs = Filter {
            processes: true,
            network: false,
            memfd: false,
        };
        let p = program(procs, &[AARCH64]).unwrap().unwrap();
        assert_eq!(
            run(&p, 198, AUDIT_ARCH_AARCH64, [2, 1, 0, 0, 0, 0]),
            RET_ALLOW
        );
        assert_eq!(
            run(&p, 261, AUDIT_ARCH_AARCH64, [9, 7, 8, 0, 0, 0]),
            RET_EPERM
        );
        assert_eq!(program(Filter::default(), &[X86_64]).unwrap(), None);
        assert_eq!(program(BOTH, &[]).unwrap(), None);
    }

    #[test]
    fn the_native_table_matches_libc() {
        let Some(t) = native_tables().first() else {
            return;
        };
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            let n = |v: libc::c_long| v as u32;
            assert_eq!(t.prlimit64, n(libc::SYS_prlimit64));
            assert_eq!(t.setpriority, n(libc::SYS_setpriority));
            assert_eq!(t.sched_setaffinity, n(libc::SYS_sched_setaffinity));
            assert_eq!(t.sched_setscheduler, n(libc::SYS_sched_setscheduler));
            assert_eq!(t.sched_setparam, n(libc::SYS_sched_setparam));
            assert_eq!(t.sched_setattr, n(libc::SYS_sched_setattr));
            assert_eq!(t.ioprio_set, n(libc::SYS_ioprio_set));
            assert_eq!(t.io_uring_setup, n(libc::SYS_io_uring_setup));
            assert_eq!(t.socket, n(libc::SYS_socket));
            assert_eq!(t.memfd_create, n(libc::SYS_memfd_create));
            assert!(t.modes.contains(&(n(libc::SYS_fchmod), 1)));
            assert!(t.modes.contains(&(n(libc::SYS_fchmodat), 2)));
            assert!(t.modes.contains(&(n(libc::SYS_openat), 3)));
            assert!(t.modes.contains(&(n(libc::SYS_mknodat), 2)));
        }
        let _ = t;
    }

    #[test]
    fn only_memfds_sealed_against_execution_are_made() {
        let mfd_cloexec = 1;
        for (tables, nr, arch) in [
            (&[X86_64, I386][..], 319, AUDIT_ARCH_X86_64),
            (&[X86_64, I386][..], 356, AUDIT_ARCH_I386),
            (&[AARCH64, ARM][..], 279, AUDIT_ARCH_AARCH64),
            (&[AARCH64, ARM][..], 385, AUDIT_ARCH_ARM),
        ] {
            let p = program(BOTH, tables).unwrap().unwrap();
            let m = |flags| run(&p, nr, arch, [0x1000, flags, 0, 0, 0, 0]);
            assert_eq!(m(0), RET_EPERM, "{nr}");
            assert_eq!(m(mfd_cloexec), RET_EPERM, "{nr}");
            assert_eq!(m(0x10), RET_EPERM, "MFD_EXEC {nr}");
            assert_eq!(m(u64::from(MFD_NOEXEC_SEAL)), RET_ALLOW, "{nr}");
            assert_eq!(
                m(u64::from(MFD_NOEXEC_SEAL) | mfd_cloexec | 2),
                RET_ALLOW,
                "{nr}"
            );
        }
        // Without the memfd part, memfds are not filtered.
        let others = Filter {
            memfd: false,
            ..BOTH
        };
        let p = program(others, &[X86_64]).unwrap().unwrap();
        assert_eq!(run(&p, 319, AUDIT_ARCH_X86_64, [0; 6]), RET_ALLOW);
    }

    #[test]
    fn set_id_modes_are_refused_others_are_not() {
        for (tables, arch, chmod_like) in [
            (
                &[X86_64, I386][..],
                AUDIT_ARCH_X86_64,
                &[(90, 1), (91, 1), (268, 2), (452, 2)][..],
            ),
            (
                &[X86_64, I386][..],
                AUDIT_ARCH_I386,
                &[(15, 1), (94, 1), (306, 2)][..],
            ),
            (
                &[AARCH64, ARM][..],
                AUDIT_ARCH_AARCH64,
                &[(52, 1), (53, 2), (452, 2)][..],
            ),
            (
                &[AARCH64, ARM][..],
                AUDIT_ARCH_ARM,
                &[(15, 1), (94, 1), (333, 2)][..],
            ),
        ] {
            let p = program(BOTH, tables).unwrap().unwrap();
            for &(nr, arg) in chmod_like {
                let with = |mode: u64| {
                    let mut args = [0x1000u64; 6];
                    args[arg as usize] = mode;
                    run(&p, nr, arch, args)
                };
                assert_eq!(with(0o755), RET_ALLOW, "{nr}");
                assert_eq!(with(0o1777), RET_ALLOW, "sticky {nr}");
                assert_eq!(with(0o4755), RET_EPERM, "setuid {nr}");
                assert_eq!(with(0o2755), RET_EPERM, "setgid {nr}");
                assert_eq!(with(0o100_4755), RET_EPERM, "S_IFREG|setuid {nr}");
            }
        }
        // openat(dirfd, path, flags, mode) on x86_64: the mode is the fourth argument.
        let p = program(BOTH, &[X86_64]).unwrap().unwrap();
        let o_creat = 0o100;
        assert_eq!(
            run(&p, 257, AUDIT_ARCH_X86_64, [0, 1, o_creat, 0o644, 0, 0]),
            RET_ALLOW
        );
        assert_eq!(
            run(&p, 257, AUDIT_ARCH_X86_64, [0, 1, o_creat, 0o4755, 0, 0]),
            RET_EPERM
        );
        // mkdir keeps a set-group-id directory.
        assert_eq!(
            run(&p, 83, AUDIT_ARCH_X86_64, [1, 0o2775, 0, 0, 0, 0]),
            RET_ALLOW
        );
        // Without the processes part, modes are not filtered.
        let others = Filter {
            processes: false,
            ..BOTH
        };
        let p = program(others, &[X86_64]).unwrap().unwrap();
        assert_eq!(
            run(&p, 90, AUDIT_ARCH_X86_64, [1, 0o4755, 0, 0, 0, 0]),
            RET_ALLOW
        );
    }

    #[test]
    fn bits_round_trip() {
        for f in [Filter::default(), BOTH] {
            assert_eq!(Filter::from_bits(f.bits()), f);
        }
    }
}
