//! A file of whole lines written by a thread of its own: the audit log
//! (`YIELDSHELL_AUDIT_LOG`).
//!
//! No thread of the server ever waits on the file: lines are queued (at most
//! [`QUEUE_BYTES`]) and one writer thread writes them in order. A FIFO without a reader
//! (whose open would block), a reader that stops reading, or a full disk costs lines, which
//! are counted and reported on stderr (when the file takes lines again, and at shutdown),
//! never an unanswered request.
//!
//! While the writer keeps up, a caller waits (at most [`WAIT_WRITTEN`]) for its line to be
//! written, so an audit line is in the file before the answer it records leaves; a writer
//! that is behind (its queue not empty) makes nobody wait.
//!
//! Every line in the file is whole: a short write is completed; a write that fails after
//! part of a line went out is taken back (the file truncated to where the line started) or,
//! where that is impossible (a FIFO), the next line written starts with a newline, so a
//! record is never continued by the next one.

use crate::base::sys::fd::AsFd;
use crate::base::sys::libc;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::base::sys;

/// Most bytes waiting for the file at once; a longer line is dropped with a notice.
pub const QUEUE_BYTES: usize = 1 << 20;
/// The longest a caller waits for its line while the writer keeps up.
pub const WAIT_WRITTEN: Duration = Duration::from_millis(100);

/// The sending side of a line file.
#[derive(Debug)]
pub struct LineFile {
    lines: Sender<Vec<u8>>,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    /// Bytes queued and not yet written (or given up).
    queued: AtomicUsize,
    /// Lines dropped because the queue was full, since the last notice.
    overflowed: AtomicU64,
    /// Lines whose write failed, since the last notice.
    failed: AtomicU64,
    /// Lines queued, and lines the writer is done with (written or given up), in order.
    sent: AtomicU64,
    done: parking_lot::Mutex<u64>,
    done_cond: parking_lot::Condvar,
}

impl LineFile {
    /// Opens `path` for appending (created with mode 0600) and starts its writer thread.
    /// A FIFO without a reader is opened by the writer thread (its open blocks until a
    /// reader comes; lines queue meanwhile); any other failure is returned.
    pub fn open(path: &Path) -> io::Result<LineFile> {
        use crate::base::sys::ext::OpenOptionsExt;
        let file = match std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // Never through a link in the last component: a command that may write the
            // log's directory could otherwise send the server's appends to a file of its
            // choosing (a shell's rc file) at the next start.
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path)
        {
            Ok(f) => {
                check_owned(&f)?;
                // Blocking again: the writer thread may wait, nothing else does.
                sys::set_blocking(f.as_fd())?;
                Some(f)
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => None,
            Err(e) => return Err(e),
        };
        let shared = Arc::new(Shared {
            path: path.to_path_buf(),
            queued: AtomicUsize::new(0),
            overflowed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            done: parking_lot::Mutex::new(0),
            done_cond: parking_lot::Condvar::new(),
        });
        let (lines, rx) = crossbeam_channel::unbounded::<Vec<u8>>();
        let writer = shared.clone();
        std::thread::Builder::new()
            .name("audit".into())
            .stack_size(64 * 1024)
            .spawn(move || run(file, &rx, &writer))?;
        Ok(LineFile { lines, shared })
    }

    /// Queues `line` (with its newline). When the writer had nothing else to do, waits for
    /// the line to be written, at most [`WAIT_WRITTEN`]; otherwise returns at once.
    pub fn write_line(&self, line: Vec<u8>) {
        let len = line.len();
        if len > QUEUE_BYTES {
            crate::base::log::warn!(
                "an audit line of {len} bytes was dropped: longer than the {QUEUE_BYTES} bytes a \
                 line may take"
            );
            return;
        }
        let q = &self.shared;
        let before = q.queued.fetch_add(len, Ordering::SeqCst);
        if before + len > QUEUE_BYTES {
            q.queued.fetch_sub(len, Ordering::SeqCst);
            q.overflowed.fetch_add(1, Ordering::SeqCst);
            return;
        }
        // Numbered in the order of the channel: the lock makes numbering and sending one step.
        let mut done = q.done.lock();
        let seq = q.sent.fetch_add(1, Ordering::SeqCst) + 1;
        if self.lines.send(line).is_err() {
            q.queued.fetch_sub(len, Ordering::SeqCst);
            q.failed.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if before == 0 {
            let deadline = Instant::now() + WAIT_WRITTEN;
            while *done < seq && !q.done_cond.wait_until(&mut done, deadline).timed_out() {}
        }
    }

    /// Waits up to `limit` for the queue to be written, then reports on stderr what was
    /// lost and not reported yet (before the process exits).
    pub fn flush(&self, limit: Duration) {
        let q = &self.shared;
        let deadline = Instant::now() + limit;
        while q.queued.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        let waiting = q.queued.load(Ordering::SeqCst);
        let overflowed = q.overflowed.swap(0, Ordering::SeqCst);
        let failed = q.failed.swap(0, Ordering::SeqCst);
        if waiting + overflowed as usize + failed as usize > 0 {
            crate::base::log::warn!(
                "the audit log {} lost lines: {overflowed} dropped while it took none, {failed} \
                 whose write failed, {waiting} bytes still queued at exit",
                q.path.display()
            );
        }
    }
}

/// A regular file the server appends its lines to must be its own and have one name: a file
/// of another user lets that user read or forge the lines, and a second hard link (made where
/// a command could write) sends them to a file of the link maker's choosing.
fn check_owned(file: &File) -> io::Result<()> {
    use crate::base::sys::ext::MetadataExt;
    let m = file.metadata()?;
    if !m.file_type().is_file() {
        return Ok(());
    }
    if m.uid() != sys::effective_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the file belongs to user {}, not to the server's user {}: that user could \
                 read or forge its lines; use a file of the server's own",
                m.uid(),
                sys::effective_uid()
            ),
        ));
    }
    if m.nlink() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the file has {} hard links: the server appends only to a file with one name",
                m.nlink()
            ),
        ));
    }
    Ok(())
}

/// The writer thread: opens the file if it must, then writes each line whole.
fn run(file: Option<File>, rx: &Receiver<Vec<u8>>, q: &Shared) {
    let mut file = match file {
        Some(f) => f,
        None => match crate::base::sys::ext::OpenOptionsExt::custom_flags(
            std::fs::OpenOptions::new().append(true),
            libc::O_NOFOLLOW,
        )
        .open(&q.path)
        {
            Ok(f) => f,
            Err(e) => {
                crate::base::log::warn!(
                    "cannot open the audit log {}: {e}; its lines are dropped",
                    q.path.display()
                );
                while let Ok(line) = rx.recv() {
                    q.queued.fetch_sub(line.len(), Ordering::SeqCst);
                    q.failed.fetch_add(1, Ordering::SeqCst);
                    *q.done.lock() += 1;
                    q.done_cond.notify_all();
                }
                return;
            }
        },
    };
    // The last line went out in part and could not be taken back.
    let mut open_line = false;
    let mut failing: Option<String> = None;
    while let Ok(line) = rx.recv() {
        let overflowed = q.overflowed.swap(0, Ordering::SeqCst);
        if overflowed > 0 {
            crate::base::log::warn!(
                "{overflowed} audit lines were dropped: the audit log {} took none for a while \
                 (a FIFO without a reader, a slow reader or a slow disk)",
                q.path.display()
            );
        }
        match write_whole(&mut file, &line, &mut open_line) {
            Ok(()) => {
                if let Some(why) = failing.take() {
                    let failed = q.failed.swap(0, Ordering::SeqCst);
                    crate::base::log::warn!(
                        "the audit log {} takes lines again; {failed} were dropped ({why})",
                        q.path.display()
                    );
                }
            }
            Err(e) => {
                q.failed.fetch_add(1, Ordering::SeqCst);
                if failing.is_none() {
                    crate::base::log::warn!(
                        "cannot write the audit log {}: {e}; lines are dropped and counted until \
                         it takes them again",
                        q.path.display()
                    );
                    failing = Some(e.to_string());
                }
            }
        }
        q.queued.fetch_sub(line.len(), Ordering::SeqCst);
        *q.done.lock() += 1;
        q.done_cond.notify_all();
    }
}

/// Writes `line` whole, or leaves the file as if it had not been written (see the module
/// documentation); `open_line` says a line was left unfinished and must be ended first.
fn write_whole(file: &mut File, line: &[u8], open_line: &mut bool) -> io::Result<()> {
    if *open_line {
        write_or_undo(file, b"\n", open_line)?;
        *open_line = false;
    }
    write_or_undo(file, line, open_line)
}

fn write_or_undo(file: &mut File, bytes: &[u8], open_line: &mut bool) -> io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        match file.write(&bytes[done..]) {
            Ok(0) => {
                undo(file, done, open_line);
                return Err(io::ErrorKind::WriteZero.into());
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                undo(file, done, open_line);
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Takes back the `written` bytes of a line that could not be finished.
fn undo(file: &File, written: usize, open_line: &mut bool) {
    if written == 0 {
        return;
    }
    let truncated = match file.metadata() {
        Ok(m) if m.is_file() => file.set_len(m.len().saturating_sub(written as u64)).is_ok(),
        _ => false,
    };
    if !truncated {
        *open_line = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO without a reader: opening and queueing return at once; once a reader comes,
    /// the queued lines arrive whole and in order.
    #[test]
    fn a_fifo_without_a_reader_blocks_nothing() {
        let dir = std::env::temp_dir().join(format!("ys-sink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let fifo = dir.join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let t = Instant::now();
        let sink = LineFile::open(&fifo).unwrap();
        for i in 0..100 {
            sink.write_line(format!("{{\"n\":{i}}}\n").into_bytes());
        }
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // The writer thread ends after the queued lines, closing the FIFO: end of file.
        drop(sink);
        let text = std::fs::read_to_string(&fifo).unwrap_or_default();
        let got: Vec<&str> = text.lines().take(100).collect();
        let want: Vec<String> = (0..100).map(|i| format!("{{\"n\":{i}}}")).collect();
        assert_eq!(got, want);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// While the writer keeps up, a line is in the file when `write_line` returns.
    #[test]
    fn an_idle_writer_has_written_the_line_on_return() {
        let path = std::env::temp_dir().join(format!("ys-sink-wait-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let sink = LineFile::open(&path).unwrap();
        for i in 0..20 {
            sink.write_line(format!("line {i}\n").into_bytes());
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.lines().count(), i + 1, "{text}");
        }
        drop(sink);
        let _ = std::fs::remove_file(&path);
    }

    /// A line that could not be finished is taken back from a regular file.
    #[test]
    fn a_failed_line_is_taken_back() {
        let path = std::env::temp_dir().join(format!("ys-sink-undo-{}", std::process::id()));
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":").unwrap();
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut open_line = false;
        undo(&file, 5, &mut open_line);
        assert!(!open_line);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}\n");
        let _ = std::fs::remove_file(&path);
    }
}
