//! POSIX constants that the layers above name and the `libc` crate lacks on
//! Windows. Signal numbers are Linux's: `killpg` and `kill` give them their Windows
//! meaning. Open flags are accepted and ignored (Windows opens by its own rules).

pub const SIGHUP: i32 = 1;
pub const SIGQUIT: i32 = 3;
pub const SIGTRAP: i32 = 5;
pub const SIGBUS: i32 = 7;
pub const SIGKILL: i32 = 9;
pub const SIGUSR1: i32 = 10;
pub const SIGUSR2: i32 = 12;
pub const SIGPIPE: i32 = 13;
pub const SIGALRM: i32 = 14;
pub const SIGCHLD: i32 = 17;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;
pub const SIGTSTP: i32 = 20;
pub const SIGTTIN: i32 = 21;
pub const SIGTTOU: i32 = 22;
pub const SIGURG: i32 = 23;
pub const SIGXCPU: i32 = 24;
pub const SIGXFSZ: i32 = 25;
pub const SIGVTALRM: i32 = 26;
pub const SIGPROF: i32 = 27;
pub const SIGWINCH: i32 = 28;
pub const SIGIO: i32 = 29;
pub const SIGSYS: i32 = 31;
pub const RLIMIT_CPU: i32 = 0;
pub const RLIMIT_FSIZE: i32 = 1;
pub const RLIMIT_NOFILE: i32 = 7;
pub const RLIMIT_AS: i32 = 9;
pub const O_NONBLOCK: i32 = 0o4000;
pub const O_NOFOLLOW: i32 = 0o400000;
pub const O_NOCTTY: i32 = 0o400;
pub const PATH_MAX: i32 = 32767;
