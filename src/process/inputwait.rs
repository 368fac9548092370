//! Is a command waiting for input? (`awaiting_input`, `prompt`.)
//!
//! A process of the record is "blocked reading its input" when it sleeps in a system call
//! that waits for the record's stdin: `read`/`readv`/`pread64` on a descriptor that is the
//! record's stdin pipe or terminal, or `poll`/`ppoll`/`select`/`pselect6`/`epoll_wait`
//! while its descriptor 0 is that pipe or terminal (the descriptors a poll waits on are in
//! the process's memory; descriptor 0 being ours is taken as the sign, which is what a
//! line editor such as readline does).
//!
//! How, per process: `/proc/<pid>/task/<tid>/syscall` gives the system call a sleeping
//! thread is in and its arguments (`running` when it is not sleeping in one), and
//! `/proc/<pid>/fd/<n>` names what the descriptor is (`pipe:[inode]`, `/dev/pts/N`). When
//! `syscall` cannot be read (a kernel without it), `wchan` (`pipe_read`, `n_tty_read`...) is
//! the fallback. The processes looked at are the record's leader first (the usual reader),
//! then the others of its process group and of its session (found by one pass over
//! `/proc/*/stat`, shared by every record a `ps` asks about).
//!
//! Cost: nothing until a call is answered; then, only for a running record whose stdin is
//! still open and whose output has been quiet for 300 ms: two or three small reads when
//! the leader is the reader, else one pass over `/proc/*/stat` (a few hundred small reads,
//! about a millisecond on a busy machine) plus two or three reads per process of the
//! record. Never polled.
//!
//! Missed: a descendant that left the session and the group (`setsid`) and reads the
//! terminal or pipe; a program that waits on its input through a poll that does not
//! include descriptor 0 or reads another descriptor duplicated from the pipe while
//! descriptor 0 points elsewhere (the fd check of `read` catches that one); io_uring reads;
//! a process that is not ours to inspect (another user's, or a non-dumpable one). A program
//! polling its stdin among other descriptors (an event loop) is reported as waiting.

use std::fs;
use std::path::{Path, PathBuf};

/// What the record's stdin is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A pipe, by inode (`fstat` of either end).
    Pipe(u64),
    /// A terminal, by its path (`/dev/pts/N`).
    Tty(PathBuf),
}

impl Input {
    /// True when the `/proc/<pid>/fd/<n>` link target names this input.
    fn is(&self, link: &Path) -> bool {
        match self {
            Input::Pipe(ino) => link.to_str() == Some(&format!("pipe:[{ino}]")),
            Input::Tty(path) => link == path,
        }
    }
}

/// Whether input waits can be seen here: they are read from `/proc` (Linux). Elsewhere
/// (macOS) a record is never reported as awaiting input.
pub const SUPPORTED: bool = cfg!(target_os = "linux");

/// The quiet time after which a blocked reader counts as waiting for input.
pub const QUIET_MS: u64 = 300;

/// A process of the record blocked reading `input`, if any. `group` is the record's
/// process group (and session: each command leads its own).
pub fn blocked_reader(group: u32, input: &Input) -> Option<u32> {
    blocked_readers(&[(group, input)])[0]
}

/// [`blocked_reader`] for several records at once: each group's leader is looked at
/// first (the usual reader: a shell's `read`, a REPL the shell executed), then the other
/// members of the groups still undecided, found by one pass over `/proc`.
pub fn blocked_readers(groups: &[(u32, &Input)]) -> Vec<Option<u32>> {
    let mut found: Vec<Option<u32>> = groups
        .iter()
        .map(|&(g, input)| process_reads(g, input).then_some(g))
        .collect();
    let open: Vec<u32> = groups
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(&(g, _), _)| g)
        .collect();
    if open.is_empty() {
        return found;
    }
    for (pid, group) in members(&open) {
        if pid == group {
            continue;
        }
        for (i, &(g, input)) in groups.iter().enumerate() {
            if g == group && found[i].is_none() && process_reads(pid, input) {
                found[i] = Some(pid);
            }
        }
    }
    found
}

/// (pid, group) for every process whose process group or session is one of `groups`.
fn members(groups: &[u32]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    if !crate::base::sys::PROC_FS {
        return out;
    }
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(st) = crate::process::tree::parse_stat(&stat) {
            if let Some(&g) = groups.iter().find(|&&g| st.pgid == g || st.session == g) {
                out.push((pid, g));
            }
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    /// In a read of this descriptor.
    Read(u64),
    /// In a poll, select or epoll wait.
    Poll,
}

/// Decodes `/proc/.../syscall` (`NR arg0 arg1 ...` in hex, or `running`, or `-1 ...`).
fn parse_syscall(text: &str) -> Option<Waiting> {
    let mut f = text.split_whitespace();
    let nr: i64 = f.next()?.parse().ok()?;
    let arg0 = u64::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
    classify(nr, arg0)
}

#[cfg(target_arch = "x86_64")]
fn classify(nr: i64, arg0: u64) -> Option<Waiting> {
    match nr {
        0 | 17 | 19 | 295 => Some(Waiting::Read(arg0)), // read, pread64, readv, preadv
        7 | 23 | 232 | 270 | 271 | 281 | 441 => Some(Waiting::Poll), // poll, select, epoll_wait, pselect6, ppoll, epoll_pwait, epoll_pwait2
        _ => None,
    }
}

#[cfg(target_arch = "aarch64")]
fn classify(nr: i64, arg0: u64) -> Option<Waiting> {
    match nr {
        63 | 65 | 67 | 69 => Some(Waiting::Read(arg0)), // read, readv, pread64, preadv
        22 | 72 | 73 | 441 => Some(Waiting::Poll), // epoll_pwait, pselect6, ppoll, epoll_pwait2
        _ => None,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn classify(_nr: i64, _arg0: u64) -> Option<Waiting> {
    None
}

fn fd_is(pid: u32, fd: u64, input: &Input) -> bool {
    fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|l| input.is(&l))
}

/// True when a thread of `pid` sleeps waiting for `input`.
fn process_reads(pid: u32, input: &Input) -> bool {
    let tids: Vec<String> = match fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(d) => d
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect(),
        Err(_) => return false,
    };
    for tid in tids {
        let waiting = match fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")) {
            Ok(text) => parse_syscall(&text),
            Err(_) => {
                // No syscall file: the kernel function the thread sleeps in.
                let wchan =
                    fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan")).unwrap_or_default();
                match wchan.trim() {
                    "pipe_read" | "pipe_wait" | "n_tty_read" | "wait_woken" => {
                        Some(Waiting::Read(0))
                    }
                    "do_select" | "do_sys_poll" | "ep_poll" => Some(Waiting::Poll),
                    _ => None,
                }
            }
        };
        let hit = match waiting {
            Some(Waiting::Read(fd)) => fd_is(pid, fd, input),
            Some(Waiting::Poll) => fd_is(pid, 0, input),
            None => false,
        };
        if hit {
            return true;
        }
    }
    false
}

/// The prompt: the last line of `text` when it does not end with a newline (at most
/// `max` bytes of it, cut at a character boundary), or empty.
pub fn prompt_of(text: &str, max: usize) -> &str {
    let last = match text.rfind('\n') {
        Some(i) => &text[i + 1..],
        None => text,
    };
    if last.len() <= max {
        return last;
    }
    let mut start = last.len() - max;
    while !last.is_char_boundary(start) {
        start += 1;
    }
    &last[start..]
}

#[cfg(all(test, target_os = "linux"))] // Reads /proc, as the module does.
mod tests {
    use super::*;
    use crate::base::sys::ext::MetadataExt;
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    #[test]
    fn parses_proc_lines() {
        let line = "42 (a (b) c) S 1 42 40 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0";
        let st = crate::process::tree::parse_stat(line).expect("a stat line");
        assert_eq!(
            (st.state, st.ppid, st.pgid, st.session, st.start),
            ("S", 1, 42, 40, 777)
        );
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(
                parse_syscall("0 0x0 0x7ffd 0x1 0x0 0x0 0x0 0x7ffc 0x7f"),
                Some(Waiting::Read(0))
            );
            assert_eq!(
                parse_syscall("7 0x55 0x2 0xffffffff 0 0 0 0 0"),
                Some(Waiting::Poll)
            );
            assert_eq!(parse_syscall("230 0x0 0x0 0x7ffd 0x0 0 0 0 0"), None);
        }
        assert_eq!(parse_syscall("running"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f"), None);
        assert_eq!(prompt_of("line\nName? ", 100), "Name? ");
        assert_eq!(prompt_of("done\n", 100), "");
        assert_eq!(prompt_of("ééé", 3), "é");
    }

    /// Starts `script` in its own session with a pipe on stdin; returns the child and the
    /// pipe's identity.
    fn start(script: &str) -> (Child, Input) {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let child = cmd.spawn().unwrap();
        let fd = crate::base::sys::fd::AsRawFd::as_raw_fd(child.stdin.as_ref().unwrap());
        let ino = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino();
        (child, Input::Pipe(ino))
    }

    fn wait_ready(child: &mut Child) {
        let mut buf = [0u8; 6];
        child.stdout.as_mut().unwrap().read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ready\n");
    }

    #[test]
    fn a_shell_read_on_the_stdin_pipe_is_found() {
        let (mut child, input) = start("echo ready; read x; echo got $x");
        wait_ready(&mut child);
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = None;
        while found.is_none() && Instant::now() < deadline {
            found = blocked_reader(pid, &input);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(found, Some(pid));
        // Another pipe is not ours.
        assert_eq!(blocked_reader(pid, &Input::Pipe(1)), None);
        drop(child.stdin.take());
        child.wait().unwrap();
    }

    #[test]
    fn a_reader_below_the_leader_is_found_in_one_pass_for_several() {
        // The subshell reads; the leader waits for it.
        let (mut reader, input_r) = start("echo ready; (read x; echo got $x)");
        let (mut sleeper, input_s) = start("echo ready; sleep 5");
        wait_ready(&mut reader);
        wait_ready(&mut sleeper);
        let (r, s) = (reader.id(), sleeper.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = vec![None, None];
        while found[0].is_none() && Instant::now() < deadline {
            found = blocked_readers(&[(r, &input_r), (s, &input_s)]);
            std::thread::sleep(Duration::from_millis(5));
        }
        let child = found[0].expect("the subshell reading");
        assert_ne!(child, r, "the reader is the subshell, not the leader");
        assert_eq!(found[1], None);
        drop(reader.stdin.take());
        reader.wait().unwrap();
        let _ = sleeper.kill();
        sleeper.wait().unwrap();
    }

    #[test]
    fn a_sleep_is_never_found() {
        let (mut child, input) = start("echo ready; sleep 5");
        wait_ready(&mut child);
        let pid = child.id();
        // Look for a while, as a caller would over several calls.
        let until = Instant::now() + Duration::from_millis(400);
        while Instant::now() < until {
            assert_eq!(blocked_reader(pid, &input), None);
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait().unwrap();
    }

    #[test]
    fn a_reader_on_a_terminal_is_found() {
        use crate::base::sys::fd::AsRawFd;
        let (mut master, slave, path) = crate::base::sys::open_pty(24, 80).unwrap();
        let env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
            vec![("PATH".into(), "/usr/bin:/bin".into())];
        let args = vec!["-c".to_string(), "echo ready; read x".to_string()];
        let spawned = crate::base::sys::spawn(crate::base::sys::SpawnSpec {
            program: "/bin/sh",
            arg0: None,
            args: &args,
            env: &env,
            cwd: Path::new("/"),
            stdin_pipe: false,
            stdin_file: Some(slave.try_clone().unwrap()),
            stdout: Some(slave.try_clone().unwrap()),
            stderr: Some(slave),
            join_group: None,
            terminal: Some(&path),
            setup: None,
        })
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !seen.windows(5).any(|w| w == b"ready") {
            let n = master.read(&mut buf).unwrap();
            seen.extend_from_slice(&buf[..n]);
        }
        let input = Input::Tty(path);
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = None;
        while found.is_none() && Instant::now() < deadline {
            found = blocked_reader(spawned.pid, &input);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(found, Some(spawned.pid));
        let _ = master.as_raw_fd();
        // Killed, left as a zombie until the test binary exits (reaping any child here
        // could take another test's).
        let _ = crate::base::sys::kill(spawned.pid, libc::SIGKILL);
    }
}
