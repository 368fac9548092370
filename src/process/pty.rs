//! Commands on a pseudo-terminal (`exec` with `tty: true`).
//!
//! The command gets a fresh terminal: its stdin, stdout and stderr are the terminal's
//! child side, which is also its session's controlling terminal (so `/dev/tty` works, job
//! control works, and the terminal sends SIGINT to the foreground group on `\x03`). The
//! server keeps the master: reads from it are the command's output (stdout and stderr
//! joined, as on any terminal), writes to it are typed input. The unsafe parts are in
//! `sys` ([`crate::sys::open_pty`], [`crate::sys::SpawnSpec::terminal`]).
//!
//! Defaults: 40 rows by 200 columns (wide, so that tools that fit their output to the
//! terminal do not wrap or truncate lines an agent wants whole); `TERM` is the server's,
//! or `xterm-256color` (programs need some value to run full-screen or colour at all).

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::base::sys::{self, SpawnSpec};

/// Default terminal height.
pub const DEFAULT_ROWS: u16 = 40;
/// Default terminal width.
pub const DEFAULT_COLS: u16 = 200;

/// A command's terminal, as its record keeps it.
#[derive(Debug)]
pub struct Terminal {
    /// The child side's path (`/dev/pts/N`), which identifies the terminal in `/proc`.
    pub path: PathBuf,
}

/// A command started on a new terminal.
pub struct OnTerminal {
    /// The leader's pid (its own session and group).
    pub pid: u32,
    /// The master, to write input to.
    pub input: File,
    /// The master, to read output from.
    pub output: File,
    /// The terminal, kept by the record.
    pub terminal: Terminal,
}

/// Validates `rows` and `cols` of an `exec` call.
pub fn check_size(rows: Option<u64>, cols: Option<u64>) -> Result<(u16, u16), String> {
    let one = |name: &str, v: Option<u64>, default: u16| match v {
        None => Ok(default),
        Some(n) if (1..=1000).contains(&n) => Ok(n as u16),
        Some(n) => Err(format!(
            "invalid {name}: {n}; expected an integer from 1 to 1000"
        )),
    };
    Ok((
        one("rows", rows, DEFAULT_ROWS)?,
        one("cols", cols, DEFAULT_COLS)?,
    ))
}

/// Starts `program` with `args` on a new terminal of `rows` x `cols`, leading its own
/// session with the terminal as its controlling terminal.
pub fn spawn(
    program: &str,
    arg0: &str,
    args: &[String],
    env: &[(OsString, OsString)],
    cwd: &Path,
    (rows, cols): (u16, u16),
    setup: Option<&sys::ChildSetup<'_>>,
) -> std::io::Result<OnTerminal> {
    let (master, slave, path) = sys::open_pty(rows, cols)?;
    let mut env = env.to_vec();
    if !env.iter().any(|(k, _)| k == "TERM") {
        env.push(("TERM".into(), "xterm-256color".into()));
    }
    let spawned = sys::spawn(SpawnSpec {
        program,
        arg0: Some(arg0),
        args,
        env: &env,
        cwd,
        stdin_pipe: false,
        stdin_file: Some(slave.try_clone()?),
        stdout: Some(slave.try_clone()?),
        stderr: Some(slave),
        join_group: None,
        terminal: Some(&path),
        setup,
    })?;
    Ok(OnTerminal {
        pid: spawned.pid,
        input: master.try_clone()?,
        output: master,
        terminal: Terminal { path },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_os = "linux")]
    use std::io::{Read, Write};

    #[test]
    fn sizes_are_checked() {
        assert_eq!(check_size(None, None), Ok((40, 200)));
        assert_eq!(check_size(Some(24), Some(80)), Ok((24, 80)));
        assert!(check_size(Some(0), None).unwrap_err().contains("rows"));
        assert!(check_size(None, Some(5000))
            .unwrap_err()
            .contains("1 to 1000"));
    }

    /// Input typed into the master reaches the command; Ctrl-C interrupts it.
    #[cfg(target_os = "linux")] // Waits for `sleep` through /proc.
    #[test]
    fn typed_input_and_ctrl_c() {
        let env = vec![(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let args = vec![
            "-c".to_string(),
            "read x; echo got:$x; echo ready; exec sleep 100".to_string(),
        ];
        let mut t = spawn("/bin/sh", "sh", &args, &env, Path::new("/"), (24, 80), None).unwrap();
        let size =
            |f: &File| sys::get_winsize(crate::base::sys::fd::AsRawFd::as_raw_fd(f)).unwrap();
        assert_eq!(size(&t.output), (24, 80));
        t.input.write_all(b"hello\n").unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 512];
        while !String::from_utf8_lossy(&seen).contains("ready") {
            let n = t.output.read(&mut buf).unwrap();
            assert!(n > 0);
            seen.extend_from_slice(&buf[..n]);
        }
        assert!(String::from_utf8_lossy(&seen).contains("got:hello"));
        sys::set_winsize(crate::base::sys::fd::AsRawFd::as_raw_fd(&t.output), 30, 100).unwrap();
        assert_eq!(size(&t.output), (30, 100));
        // Ctrl-C once `sleep` runs (a ^C that reaches the shell before is deferred by it):
        // the terminal signals the foreground group; sleep ends and the master reads end
        // of output (EIO).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read_to_string(format!("/proc/{}/comm", t.pid))
            .is_ok_and(|c| c.trim() != "sleep")
        {
            assert!(std::time::Instant::now() < deadline, "sleep did not start");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        t.input.write_all(b"\x03").unwrap();
        let start = std::time::Instant::now();
        loop {
            match t.output.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => assert!(start.elapsed().as_secs() < 10, "Ctrl-C did not end it"),
            }
        }
        assert!(start.elapsed().as_secs() < 10);
    }
}
