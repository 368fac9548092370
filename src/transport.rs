//! The transport: lines in, lines out, and an ordered end.
//!
//! After lsp-server's `stdio.rs`: [`stdio`] starts a reader thread (stdin lines onto a
//! channel) and a writer thread (the only writer of stdout, one whole line per message) and
//! returns the two channel ends and an [`IoThreads`] handle. [`memory`] gives the same ends
//! over plain channels, so the protocol can be driven in-process.
//!
//! Invariants:
//! - Only the writer thread writes stdout.
//! - The writer ends only when every [`Outbox`] handle let go of its sender (or stdout
//!   failed), after writing every line queued before that: closing an outbox cannot lose
//!   an answer that was already sent to it.

use std::io::{self, BufRead, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::RwLock;

/// Longest accepted input line.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One unit read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A line without its newline (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE`], dropped.
    TooLong,
}

/// The sending side of the output, shared by everything that answers. [`Outbox::close`]
/// drops the one sender, which ends the writer once the queue is written.
#[derive(Clone)]
pub struct Outbox {
    tx: Arc<RwLock<Option<Sender<Vec<u8>>>>>,
}

impl Outbox {
    /// Wraps the sender of an output channel.
    pub fn new(tx: Sender<Vec<u8>>) -> Outbox {
        Outbox {
            tx: Arc::new(RwLock::new(Some(tx))),
        }
    }

    /// Queues one line (without its newline). False once closed.
    pub fn send(&self, line: Vec<u8>) -> bool {
        match self.tx.read().as_ref() {
            Some(tx) => tx.send(line).is_ok(),
            None => false,
        }
    }

    /// Drops the sender: lines queued so far are still written, later sends are refused.
    pub fn close(&self) {
        self.tx.write().take();
    }
}

/// The reader and writer threads of [`stdio`].
pub struct IoThreads {
    reader: Option<JoinHandle<()>>,
    writer_done: Receiver<()>,
}

impl IoThreads {
    /// Waits until the writer has written every queued line and ended (which it does once
    /// the outbox is closed), or until `deadline`. True when it ended in time.
    pub fn join_writer(&self, deadline: Instant) -> bool {
        // The writer drops its end of this channel when it returns, however it returns.
        matches!(
            self.writer_done.recv_deadline(deadline),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        )
    }

    /// Joins the reader once the input ended (its channel is then disconnected, so the
    /// thread is returning).
    pub fn join_reader(&mut self) {
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// Starts the stdio threads. `on_stdout_gone` runs (on the writer thread) when a write to
/// stdout fails.
pub fn stdio(
    on_stdout_gone: impl FnOnce() + Send + 'static,
) -> io::Result<(Outbox, Receiver<Input>, IoThreads)> {
    // One line queued: with the line being read and the one being dispatched, at most
    // three lines (3 x MAX_LINE) are ever held between stdin and the dispatcher.
    let (in_tx, in_rx) = crossbeam_channel::bounded::<Input>(1);
    // Unbounded: a slow client must not block workers; each message is one allocation.
    let (out_tx, out_rx) = crossbeam_channel::unbounded::<Vec<u8>>();
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    std::thread::Builder::new()
        .name("rpc-out".into())
        .spawn(move || {
            let _done = done_tx;
            write_stdout(out_rx, on_stdout_gone);
        })?;
    let reader = std::thread::Builder::new()
        .name("rpc-in".into())
        .stack_size(256 * 1024)
        .spawn(move || {
            let stdin = io::stdin();
            read_lines(&mut stdin.lock(), &in_tx);
        })?;
    let threads = IoThreads {
        reader: Some(reader),
        writer_done: done_rx,
    };
    Ok((Outbox::new(out_tx), in_rx, threads))
}

/// The client's side of an in-memory transport.
pub struct MemoryClient {
    /// Lines to the server (drop it for end of input).
    pub to_server: Sender<Input>,
    /// Lines from the server (disconnects when the server closed its outbox).
    pub from_server: Receiver<Vec<u8>>,
}

/// An in-memory transport: the server's outbox and input, and the client's ends.
pub fn memory() -> (Outbox, Receiver<Input>, MemoryClient) {
    let (in_tx, in_rx) = crossbeam_channel::unbounded();
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    let client = MemoryClient {
        to_server: in_tx,
        from_server: out_rx,
    };
    (Outbox::new(out_tx), in_rx, client)
}

fn write_stdout(rx: Receiver<Vec<u8>>, on_stdout_gone: impl FnOnce()) {
    // Large responses cross a pipe with fewer wake-ups on both sides when the pipe is
    // larger (a no-op when stdout is not a pipe).
    if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
        crate::sys::grow_pipe(&std::fs::File::from(fd), 1024 * 1024);
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for mut line in rx {
        // Lines are built with room for this byte, so it does not copy them.
        line.push(b'\n');
        let result = out.write_all(&line).and_then(|()| out.flush());
        if let Err(e) = result {
            crate::info!("stdout is gone ({e})");
            on_stdout_gone();
            return;
        }
    }
}

/// Reads lines until end of input (or a read error, or the receiver is gone).
pub fn read_lines(input: &mut dyn BufRead, tx: &Sender<Input>) {
    let mut buf = Vec::new();
    loop {
        let item = match read_line(input, &mut buf) {
            Ok(Line::Eof) => return,
            Ok(Line::TooLong) => Input::TooLong,
            Ok(Line::Data) => {
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                Input::Line(std::mem::take(&mut buf))
            }
            Err(e) => {
                crate::warn!("reading stdin failed: {e}");
                return;
            }
        };
        if tx.send(item).is_err() {
            return;
        }
    }
}

enum Line {
    Eof,
    Data,
    TooLong,
}

/// Reads one line into `buf` (without the newline), refusing lines over `MAX_LINE`.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Data
            });
        }
        let (used, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let piece = if done { &chunk[..used - 1] } else { chunk };
        if !too_long {
            if buf.len() + piece.len() > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(piece);
            }
        }
        input.consume(used);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Data });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_reader_limits_and_crlf() {
        let data = b"one\r\ntwo\n\n  \nlast";
        let mut input: &[u8] = data;
        let (tx, rx) = crossbeam_channel::unbounded();
        read_lines(&mut input, &tx);
        drop(tx);
        let lines: Vec<Input> = rx.iter().collect();
        assert_eq!(
            lines,
            vec![
                Input::Line(b"one".to_vec()),
                Input::Line(b"two".to_vec()),
                Input::Line(b"last".to_vec())
            ]
        );
    }

    #[test]
    fn closing_the_outbox_keeps_queued_lines() {
        let (outbox, _input, client) = memory();
        let other = outbox.clone();
        assert!(outbox.send(b"a".to_vec()));
        assert!(other.send(b"b".to_vec()));
        outbox.close();
        assert!(!other.send(b"c".to_vec()));
        let got: Vec<Vec<u8>> = client.from_server.iter().collect();
        assert_eq!(got, vec![b"a".to_vec(), b"b".to_vec()]);
    }
}
