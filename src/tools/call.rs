//! One tool call in flight: its cancellation, its progress callback, and the responder
//! that sends its answer exactly once (now, or later from a parked wait).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::process::record::Proc;
use crate::tools::results::Answer;

/// Cancellation of one in-flight request.
#[derive(Default)]
pub struct Cancel {
    flag: AtomicBool,
    proc: Mutex<Option<Arc<Proc>>>,
}

impl Cancel {
    /// Cancels: the record the call waits on is woken, and its waiter gives up.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(p) = self.proc.lock().as_ref() {
            p.notify();
        }
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Names the record a cancellation must wake.
    pub(crate) fn attach(&self, proc: &Arc<Proc>) {
        *self.proc.lock() = Some(proc.clone());
    }
}

/// Sends a progress notification: (elapsed ms, bytes of output so far).
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How a call ended, as handed to its responder.
pub enum Done {
    /// The tool's answer (boxed: an answer is large, the other cases are empty).
    Answer(Box<Answer>),
    /// The call was cancelled: nothing is sent.
    Cancelled,
    /// The call ended without an answer (a panic while it ran): an internal error.
    Lost,
}

/// Sends a call's answer, exactly once: dropping an unused responder answers `Lost`.
pub struct Responder(Option<Box<dyn FnOnce(Done) + Send>>);

impl Responder {
    /// A responder that hands the end of the call to `f`.
    pub fn new(f: impl FnOnce(Done) + Send + 'static) -> Responder {
        Responder(Some(Box::new(f)))
    }

    /// Answers with `answer`, or sends nothing for a cancelled call (`None`).
    pub fn send(mut self, answer: Option<Answer>) {
        if let Some(f) = self.0.take() {
            f(answer.map_or(Done::Cancelled, |a| Done::Answer(Box::new(a))));
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(Done::Lost);
        }
    }
}

/// One call: its cancellation, its progress callback and where its answer goes. A tool
/// that waits parks these (see `wait`) and answers later.
pub struct Call {
    /// Set when the client cancels the request.
    pub cancel: Arc<Cancel>,
    /// Progress callback when the client asked for progress.
    pub progress: Option<Progress>,
    /// Where the answer goes.
    pub respond: Responder,
    /// The client's name (`clientInfo.name` at `initialize`, or in the request's `_meta`):
    /// the default `yield_ms` stays below that client's request timeout (`clients`).
    pub client: Option<Arc<str>>,
}

impl Call {
    /// Answers now.
    pub fn answer(self, answer: Answer) {
        self.respond.send(Some(answer));
    }
}
