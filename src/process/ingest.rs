//! Output ingestion: one thread reads every output pipe of every record (Linux, epoll).
//!
//! A thread per process would cost a stack and a thread creation per `exec`, and fifty
//! flooding processes would mean fifty runnable server threads competing with the thread
//! that answers `ping`. Instead one `ingest` thread waits on an epoll set holding every
//! pipe, reads up to 64 KiB from each ready pipe, runs the bytes through the stream's
//! filter into the record's ring (`Proc::take_output`), and forgets a pipe at its end of
//! file. Registration happens on the spawning thread: the entry goes into the shared map
//! first, then the pipe into the epoll set, so the thread never sees a token it cannot
//! find. On other systems each record gets its own pump thread (`process::pump`).

use crate::base::sys::fd::AsFd;
use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::base::ring::{STDERR, STDOUT};
use crate::base::sys;
use crate::policy::redact::{Filter, Source};
use crate::process::record::{self as process, Proc};

struct Entry {
    proc: Arc<Proc>,
    stream: usize,
    file: File,
    filter: Filter,
}

/// The ingestion thread's handle.
pub struct Ingest {
    epoll: Arc<sys::Epoll>,
    entries: Arc<Mutex<HashMap<u64, Entry>>>,
    next: AtomicU64,
}

/// Bytes read per pipe per wake-up.
const CHUNK: usize = 256 * 1024;
/// Pipe buffer asked for (the unprivileged maximum by default): a flooding child then
/// fills it while the reader copies, with fewer wake-ups on both sides.
const PIPE_BYTES: usize = 1024 * 1024;
/// Events handled per `epoll_wait`.
const BATCH: usize = 64;

impl Ingest {
    /// Starts the thread.
    pub fn start() -> std::io::Result<Ingest> {
        let epoll = Arc::new(sys::Epoll::new()?);
        let entries: Arc<Mutex<HashMap<u64, Entry>>> = Arc::default();
        let (e, m) = (epoll.clone(), entries.clone());
        std::thread::Builder::new()
            .name("ingest".into())
            .stack_size(256 * 1024)
            .spawn(move || run(&e, &m))?;
        Ok(Ingest {
            epoll,
            entries,
            next: AtomicU64::new(1),
        })
    }

    /// Starts reading a record's pipes. A missing stream (redirected to a file) is at its
    /// end already.
    pub fn register(
        &self,
        proc: &Arc<Proc>,
        stdout: Option<File>,
        stderr: Option<File>,
        secrets: &Arc<dyn Source>,
    ) {
        for (stream, file) in [(STDOUT, stdout), (STDERR, stderr)] {
            let mut filter = Filter::live(secrets.clone());
            let Some(file) = file else {
                proc.take_output(stream, &mut filter, None);
                continue;
            };
            let token = self.next.fetch_add(1, Ordering::Relaxed);
            sys::grow_pipe(&file, PIPE_BYTES);
            if let Err(e) = sys::set_nonblocking(file.as_fd()) {
                crate::base::log::warn!("cannot make an output pipe non-blocking: {e}");
            }
            // Watched only once its entry is in the map, so every event finds it.
            let mut entries = self.entries.lock();
            entries.insert(
                token,
                Entry {
                    proc: proc.clone(),
                    stream,
                    file,
                    filter,
                },
            );
            let added = match entries.get(&token) {
                Some(entry) => self.epoll.add(entry.file.as_fd(), token),
                None => Ok(()),
            };
            if let Err(e) = added {
                crate::base::log::error!("cannot watch the output of {}: {e}", proc.info.id);
                if let Some(mut entry) = entries.remove(&token) {
                    drop(entries);
                    entry.proc.take_output(stream, &mut entry.filter, None);
                }
            }
        }
    }
}

fn run(epoll: &sys::Epoll, entries: &Mutex<HashMap<u64, Entry>>) {
    // Made at the first output, not at start: zeroing it touches about half its pages
    // (glibc clears what its thread's arena had mapped already), memory an idle server
    // would hold for nothing.
    let mut buf: Vec<u8> = Vec::new();
    let mut ready = Vec::with_capacity(BATCH);
    loop {
        if let Err(e) = epoll.wait(&mut ready, BATCH, -1) {
            crate::base::log::error!("epoll_wait failed: {e}");
            return;
        }
        for &token in &ready {
            // Take the entry out while reading, so that the map's lock is never held
            // across a read or a record's lock.
            let Some(mut entry) = entries.lock().remove(&token) else {
                continue;
            };
            if buf.is_empty() {
                buf = vec![0u8; CHUNK];
            }
            // The pipe is non-blocking: keep reading while it is full (a flood), up to a
            // bound so that other pipes get their turn, then go back to waiting.
            let mut ended = false;
            for _ in 0..8 {
                match process::read_chunk(&mut entry.file, &mut buf) {
                    Some(0) => {
                        ended = true;
                        break;
                    }
                    Some(n) => {
                        entry
                            .proc
                            .take_output(entry.stream, &mut entry.filter, Some(&buf[..n]));
                        if n < buf.len() {
                            break;
                        }
                    }
                    None => break,
                }
            }
            if ended {
                epoll.delete(entry.file.as_fd());
                entry
                    .proc
                    .take_output(entry.stream, &mut entry.filter, None);
                // Dropping the entry closes the pipe.
            } else {
                entries.lock().insert(token, entry);
            }
        }
    }
}
