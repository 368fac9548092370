//! The transport: lines in, lines out, and an ordered end.
//!
//! [`Lines`] reads input lines (the dispatcher reads stdin with it, on its own thread);
//! [`stdio`] starts the writer thread (the only writer of stdout, one whole line per
//! message) and returns the sending end and an [`IoThreads`] handle. [`memory`] gives the
//! same over plain channels, so the protocol can be driven in-process.
//!
//! Invariants:
//! - Only the writer thread writes stdout.
//! - The writer ends only when every [`Outbox`] handle let go of its sender (or stdout
//!   failed), after writing every line queued before that: closing an outbox cannot lose
//!   an answer that was already sent to it.

use crate::base::sys::fd::AsFd;
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Condvar, Mutex};

use crate::protocol::jsonrpc::{IdScan, RequestId};

/// Longest accepted input line.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One unit read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A line without its newline (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE`], dropped; `id` is the message's top-level `id` when
    /// a streaming scan could read it (`jsonrpc::IdScan`), so that the refusal names it.
    TooLong {
        /// The request's id, when readable.
        id: Option<RequestId>,
    },
}

/// The sending side of the output, shared by everything that answers: a queue of lines
/// for the writer. It counts the bytes queued, so that the dispatcher can stop reading
/// requests while they pass a bound ([`Outbox::wait_for_room`]); senders never block.
/// [`Outbox::close`] (or dropping the last handle) ends the writer once the queue is
/// written.
#[derive(Clone)]
pub struct Outbox {
    handle: Arc<Handle>,
}

/// Closes the queue when the last [`Outbox`] handle goes, as dropping a channel's last
/// sender would.
struct Handle(Arc<Queue>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The lines waiting for the writer.
struct Queue {
    state: Mutex<QueueState>,
    /// Wakes the writer: a line was queued, or the queue closed.
    more: Condvar,
    /// Wakes the dispatcher: the queue went down to its bound, or closed.
    room: Condvar,
    /// Bytes queued above which the dispatcher waits.
    limit: usize,
}

#[derive(Default)]
struct QueueState {
    lines: VecDeque<Queued>,
    /// Bytes of `lines` plus the line being written.
    bytes: usize,
    /// Most bytes queued since the queue was last empty.
    peak: usize,
    closed: bool,
}

/// One line and the request it answers (the JSON text of its id), if any.
struct Queued {
    line: Vec<u8>,
    key: Option<Box<str>>,
}

/// Once a queue that held at least this much is written out, its memory is given back to
/// the kernel (`sys::release_free_memory`).
const TRIM_AFTER: usize = 8 * 1024 * 1024;

impl Queue {
    fn close(&self) {
        self.state.lock().closed = true;
        self.more.notify_all();
        self.room.notify_all();
    }

    fn push(&self, line: Vec<u8>, key: Option<&str>) -> bool {
        let mut state = self.state.lock();
        if state.closed {
            return false;
        }
        state.bytes += line.len();
        state.peak = state.peak.max(state.bytes);
        let key = key.map(Box::from);
        state.lines.push_back(Queued { line, key });
        drop(state);
        self.more.notify_one();
        true
    }

    /// The next line to write (its bytes stay counted until [`Queue::written`]); `None`
    /// once the queue is closed and empty.
    fn next(&self) -> Option<Vec<u8>> {
        let mut state = self.state.lock();
        loop {
            if let Some(q) = state.lines.pop_front() {
                return Some(q.line);
            }
            if state.closed {
                return None;
            }
            self.more.wait(&mut state);
        }
    }

    /// `bytes` left the queue (written, or dropped).
    fn written(&self, bytes: usize) {
        let mut state = self.state.lock();
        state.bytes = state.bytes.saturating_sub(bytes);
        let drained = state.bytes == 0 && state.lines.is_empty();
        let trim = drained && state.peak >= TRIM_AFTER;
        if drained {
            state.peak = 0;
        }
        let room = state.bytes <= self.limit;
        drop(state);
        if room {
            self.room.notify_all();
        }
        if trim {
            // A burst of answers was written: give its pages back (a no-op on musl).
            crate::base::sys::release_free_memory();
        }
    }
}

impl Outbox {
    /// An outbox whose dispatcher waits while more than `limit` bytes are queued, and the
    /// queue's reading end for a writer.
    fn new(limit: usize) -> (Outbox, Arc<Queue>) {
        let queue = Arc::new(Queue {
            state: Mutex::new(QueueState::default()),
            more: Condvar::new(),
            room: Condvar::new(),
            limit,
        });
        let outbox = Outbox {
            handle: Arc::new(Handle(queue.clone())),
        };
        (outbox, queue)
    }

    fn queue(&self) -> &Queue {
        &self.handle.0
    }

    /// Queues one line (without its newline). False once closed.
    pub fn send(&self, line: Vec<u8>) -> bool {
        self.queue().push(line, None)
    }

    /// Queues one line that belongs to the request whose id has the JSON text `key`
    /// (its answer, its progress): [`Outbox::discard`] can take it back while queued.
    pub fn send_for(&self, key: &str, line: Vec<u8>) -> bool {
        self.queue().push(line, Some(key))
    }

    /// Drops the lines of request `key` that are still queued (the client cancelled it
    /// after it answered, before it read the answer). Returns how many bytes were dropped.
    pub fn discard(&self, key: &str) -> usize {
        let queue = self.queue();
        let mut state = queue.state.lock();
        let mut dropped = 0;
        state.lines.retain(|q| {
            let mine = q.key.as_deref() == Some(key);
            if mine {
                dropped += q.line.len();
            }
            !mine
        });
        drop(state);
        if dropped > 0 {
            queue.written(dropped);
        }
        dropped
    }

    /// Waits while more than the bound is queued (the client is not reading stdout), so
    /// that the caller stops taking new requests. Returns at once when closed.
    pub fn wait_for_room(&self) {
        let queue = self.queue();
        let mut state = queue.state.lock();
        if state.bytes <= queue.limit || state.closed {
            return;
        }
        crate::base::log::info!(
            "{} bytes of answers wait for the client to read stdout: not reading requests until they drain to {}",
            state.bytes,
            queue.limit
        );
        while state.bytes > queue.limit && !state.closed {
            queue.room.wait(&mut state);
        }
    }

    /// Bytes queued now (the line being written included).
    #[cfg(test)]
    fn queued_bytes(&self) -> usize {
        self.queue().state.lock().bytes
    }

    /// Closes: lines queued so far are still written, later sends are refused.
    pub fn close(&self) {
        self.queue().close();
    }
}

/// The writer thread of [`stdio`].
pub struct IoThreads {
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
}

/// Starts the stdout writer thread. `on_stdout_gone` runs (on the writer thread) when a
/// write to stdout fails. `max_queued` bounds the answers waiting for stdout
/// (`Outbox::wait_for_room`).
///
/// Stdin has no thread of its own: the dispatcher reads it ([`Lines`] over the locked
/// stdin), a line at a time, so that a request reaches a worker with one hand-over (a
/// reader thread and a channel added one wake-up of a thread to every call), and at most
/// one line (`MAX_LINE`) is held between stdin and the workers.
pub fn stdio(
    max_queued: usize,
    on_stdout_gone: impl FnOnce() + Send + 'static,
) -> io::Result<(Outbox, IoThreads)> {
    // Senders never block (a slow client must not block workers); the dispatcher stops
    // reading requests instead while too much waits here.
    let (outbox, queue) = Outbox::new(max_queued);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    std::thread::Builder::new()
        .name("rpc-out".into())
        .spawn(move || {
            let _done = done_tx;
            write_stdout(&queue, on_stdout_gone);
        })?;
    Ok((
        outbox,
        IoThreads {
            writer_done: done_rx,
        },
    ))
}

/// The client's side of an in-memory transport.
pub struct MemoryClient {
    /// Lines to the server (drop it for end of input).
    pub to_server: Sender<Input>,
    /// Lines from the server (disconnects when the server closed its outbox).
    pub from_server: Receiver<Vec<u8>>,
}

/// An in-memory transport: the server's outbox and input, and the client's ends. A thread
/// moves each line from the outbox to the client's (unbounded) channel as it comes.
pub fn memory() -> io::Result<(Outbox, Receiver<Input>, MemoryClient)> {
    let (in_tx, in_rx) = crossbeam_channel::unbounded();
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    let (outbox, queue) = Outbox::new(usize::MAX);
    std::thread::Builder::new()
        .name("memory-out".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            while let Some(line) = queue.next() {
                let bytes = line.len();
                if out_tx.send(line).is_err() {
                    // The client is gone: refuse later lines, drop the queued ones.
                    queue.close();
                }
                queue.written(bytes);
            }
        })?;
    let client = MemoryClient {
        to_server: in_tx,
        from_server: out_rx,
    };
    Ok((outbox, in_rx, client))
}

fn write_stdout(queue: &Queue, on_stdout_gone: impl FnOnce()) {
    // Large responses cross a pipe with fewer wake-ups on both sides when the pipe is
    // larger (a no-op when stdout is not a pipe).
    if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
        crate::base::sys::grow_pipe(&std::fs::File::from(fd), 1024 * 1024);
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    while let Some(mut line) = queue.next() {
        let bytes = line.len();
        // Lines are built with room for this byte, so it does not copy them.
        line.push(b'\n');
        let result = out.write_all(&line).and_then(|()| out.flush());
        drop(line);
        queue.written(bytes);
        if let Err(e) = result {
            crate::base::log::info!("stdout is gone ({e})");
            // Nothing more can be written: refuse later lines and let waiters go.
            queue.close();
            on_stdout_gone();
            return;
        }
    }
}

/// The inputs of a reader, one line at a time: [`Lines::next_input`].
pub struct Lines<R> {
    input: R,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Reads `input`.
    pub fn new(input: R) -> Self {
        Lines {
            input,
            buf: Vec::new(),
        }
    }

    /// The next input: a line (blank lines skipped, a trailing `\r` removed) or a line too
    /// long; `None` at end of input or after a read error.
    pub fn next_input(&mut self) -> Option<Input> {
        loop {
            return match read_line(&mut self.input, &mut self.buf) {
                Ok(Line::Eof) => None,
                Ok(Line::TooLong(id)) => Some(Input::TooLong { id }),
                Ok(Line::Data) => {
                    if self.buf.last() == Some(&b'\r') {
                        self.buf.pop();
                    }
                    if self.buf.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    Some(Input::Line(std::mem::take(&mut self.buf)))
                }
                Err(e) => {
                    crate::base::log::warn!("reading stdin failed: {e}");
                    None
                }
            };
        }
    }
}

enum Line {
    Eof,
    Data,
    /// A line over `MAX_LINE`, and its id when the scan read one.
    TooLong(Option<RequestId>),
}

/// Reads one line into `buf` (without the newline), refusing lines over `MAX_LINE`. A
/// refused line is not kept: it is scanned for its id as it passes.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let mut too_long: Option<IdScan> = None;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match too_long {
                Some(scan) => Line::TooLong(scan.id().and_then(RequestId::new)),
                None if buf.is_empty() => Line::Eof,
                None => Line::Data,
            });
        }
        let (used, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let piece = if done { &chunk[..used - 1] } else { chunk };
        match &mut too_long {
            Some(scan) => scan.feed(piece),
            None if buf.len() + piece.len() > MAX_LINE => {
                let mut scan = IdScan::new();
                scan.feed(buf);
                scan.feed(piece);
                too_long = Some(scan);
                // Give the line's memory back rather than keep it for the next line.
                *buf = Vec::new();
            }
            None => buf.extend_from_slice(piece),
        }
        input.consume(used);
        if done {
            return Ok(match too_long {
                Some(scan) => Line::TooLong(scan.id().and_then(RequestId::new)),
                None => Line::Data,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn line_reader_limits_and_crlf() {
        let data = b"one\r\ntwo\n\n  \nlast";
        let mut input: &[u8] = data;
        let mut reader = Lines::new(&mut input);
        let lines: Vec<Input> = std::iter::from_fn(|| reader.next_input()).collect();
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
    fn the_dispatcher_waits_while_the_queue_passes_its_bound() {
        let (outbox, queue) = Outbox::new(10);
        assert!(outbox.send(vec![b'a'; 8]));
        outbox.wait_for_room(); // 8 <= 10: at once.
        assert!(outbox.send_for("7", vec![b'b'; 8]));
        assert!(outbox.send(vec![b'c'; 8]));
        assert_eq!(outbox.queued_bytes(), 24);
        let (tx, rx) = crossbeam_channel::bounded(1);
        let waiter = {
            let outbox = outbox.clone();
            std::thread::spawn(move || {
                outbox.wait_for_room();
                let _ = tx.send(());
            })
        };
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // The writer takes one line: 16 bytes still counted, still over.
        let first = queue.next().expect("a line");
        queue.written(first.len());
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // Cancelling request 7 drops its queued line: 8 bytes, room again.
        assert_eq!(outbox.discard("7"), 8);
        assert_eq!(outbox.discard("7"), 0);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the waiter goes on once the queue is under its bound");
        waiter.join().expect("join");
        assert_eq!(queue.next(), Some(vec![b'c'; 8]));
    }

    #[test]
    fn closing_wakes_a_waiting_dispatcher_and_dropping_the_last_handle_closes() {
        let (outbox, queue) = Outbox::new(1);
        assert!(outbox.send(vec![0; 4]));
        let other = outbox.clone();
        let waiter = std::thread::spawn(move || other.wait_for_room());
        outbox.close();
        waiter.join().expect("the waiter returns once closed");
        assert!(!outbox.send(vec![1]));
        assert_eq!(queue.next(), Some(vec![0; 4]));
        assert_eq!(queue.next(), None);
        let (outbox, queue) = Outbox::new(1);
        let other = outbox.clone();
        assert!(other.send(vec![2]));
        drop(outbox);
        drop(other);
        assert_eq!(queue.next(), Some(vec![2]));
        assert_eq!(queue.next(), None);
    }

    #[test]
    fn a_line_too_long_is_refused_with_its_id() {
        let mut data = br#"{"jsonrpc":"2.0","id":"big","params":{"x":""#.to_vec();
        data.resize(data.len() + MAX_LINE, b'a');
        data.extend_from_slice(b"\"}}\n{\"id\":2}\n");
        let mut input = std::io::BufReader::with_capacity(1 << 16, &data[..]);
        let mut reader = Lines::new(&mut input);
        let lines: Vec<Input> = std::iter::from_fn(|| reader.next_input()).collect();
        assert_eq!(
            lines,
            vec![
                Input::TooLong {
                    id: RequestId::new(serde_json::json!("big"))
                },
                Input::Line(br#"{"id":2}"#.to_vec())
            ]
        );
    }

    #[test]
    fn closing_the_outbox_keeps_queued_lines() {
        let (outbox, _input, client) = memory().expect("memory transport");
        let other = outbox.clone();
        assert!(outbox.send(b"a".to_vec()));
        assert!(other.send(b"b".to_vec()));
        outbox.close();
        assert!(!other.send(b"c".to_vec()));
        let got: Vec<Vec<u8>> = client.from_server.iter().collect();
        assert_eq!(got, vec![b"a".to_vec(), b"b".to_vec()]);
    }
}
