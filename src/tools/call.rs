//! One tool call in flight: its cancellation, its progress callback, the responder that
//! sends its answer exactly once (now, or later from a parked wait), and the approval a
//! person gave it. A refusal the person may waive goes to the responder with what to ask
//! (`Responder::ask`); the protocol layer asks, or sends the refusal as it is.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::base::mac;
use crate::policy::approval::Rule;
use crate::policy::audit::secret_like;
use crate::policy::secrets::LiveSecrets;
use crate::process::record::{Proc, Watcher};
use crate::tools::results::Answer;

/// Cancellation of one in-flight request.
#[derive(Default)]
pub struct Cancel {
    flag: AtomicBool,
    proc: Mutex<Option<Arc<Proc>>>,
    /// The waiter of a watch over no record, woken by `cancel`.
    waiter: Mutex<Option<Weak<dyn Watcher>>>,
}

impl Cancel {
    /// Cancels: the record the call waits on is woken, and its waiter gives up.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(p) = self.proc.lock().as_ref() {
            p.notify();
        }
        if let Some(w) = self.waiter.lock().as_ref().and_then(Weak::upgrade) {
            w.wake();
        }
    }

    /// Names the waiter (of a watch over no record) that `cancel` wakes.
    pub(crate) fn wake(&self, waiter: Weak<dyn Watcher>) {
        *self.waiter.lock() = Some(waiter);
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
    /// A refusal the person may waive: the refusal as it is, and what to ask them.
    Ask(Box<Answer>, Box<Approvable>),
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

impl Responder {
    /// Answers with a refusal by a rule the person may waive (`what`): the protocol layer
    /// asks them when it can, and sends `refusal` otherwise.
    pub fn ask(mut self, refusal: Answer, what: Approvable) {
        if let Some(f) = self.0.take() {
            f(Done::Ask(Box::new(refusal), Box::new(what)));
        }
    }
}

/// What a person is asked about: the rule that refused a call, its exact command, the
/// working directory it would run in, and every other argument that changes what runs.
#[derive(Clone, Debug)]
pub struct Approvable {
    /// Every rule the person may waive that refuses the call (one, or a blocked side effect
    /// and an argument rule).
    pub rules: Vec<Rule>,
    /// The command as the call gave it: the text of `exec`'s command, `shell_execute`'s argv
    /// as a JSON array.
    pub command: String,
    /// The resolved working directory.
    pub cwd: PathBuf,
    /// The other arguments that change what runs, as the person reads them (`shell
    /// /bin/bash`, `env NAME=value` with secrets hidden, `stdin of 12 bytes …`); empty when
    /// the call gives none.
    pub runs_with: Vec<String>,
    /// SHA-256 (hex) of everything that decides what runs (the command, the directory, the
    /// shell, the whole environment overlay and stdin): a remembered approval covers a later
    /// call only when its key is the same.
    pub key: String,
}

/// The arguments of a call besides its command and directory that change what runs.
#[derive(Default)]
pub struct RunsWith<'a> {
    /// `exec`'s `shell`.
    pub shell: Option<&'a str>,
    /// `exec`'s `env` overlay.
    pub env: &'a [(String, String)],
    /// The initial stdin.
    pub stdin: Option<&'a str>,
}

/// How much of stdin a question quotes, in characters.
const STDIN_EXCERPT: usize = 60;

impl Approvable {
    /// What to ask about a call refused by `rules`: its command, directory and `with`, the
    /// values of secret variables (`secrets`, with the call's own) hidden from the words
    /// the person reads.
    pub fn new(
        rules: Vec<Rule>,
        command: String,
        cwd: PathBuf,
        with: RunsWith<'_>,
        secrets: &LiveSecrets,
    ) -> Approvable {
        // Each part with its length first, so that no two calls share the text hashed.
        let mut hash = mac::Sha256::default();
        let mut part = |bytes: &[u8]| {
            hash.update(&(bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        };
        part(command.as_bytes());
        part(cwd.as_os_str().as_encoded_bytes());
        // An absent shell or stdin is a part of its own, told from an empty one.
        for given in [with.shell, with.stdin] {
            match given {
                Some(text) => part(format!("+{text}").as_bytes()),
                None => part(b"-"),
            }
        }
        part(&(with.env.len() as u64).to_le_bytes());
        for (name, value) in with.env {
            part(name.as_bytes());
            part(value.as_bytes());
        }
        let key = mac::hex(&hash.finish());
        let hide = secrets.with_overlay(with.env);
        let mut runs_with = Vec::new();
        if let Some(shell) = with.shell {
            runs_with.push(format!("shell {}", hide.redact_str(shell)));
        }
        if !with.env.is_empty() {
            let vars: Vec<String> = with
                .env
                .iter()
                .map(|(name, value)| {
                    if secrets.selects(name) || secret_like(name) {
                        format!("{name}=[REDACTED]")
                    } else {
                        format!("{name}={}", hide.redact_str(value))
                    }
                })
                .collect();
            runs_with.push(format!("env {}", vars.join(" ")));
        }
        if let Some(stdin) = with.stdin {
            let excerpt: String = stdin.chars().take(STDIN_EXCERPT).collect();
            let more = if excerpt.len() < stdin.len() {
                "…"
            } else {
                ""
            };
            runs_with.push(format!(
                "stdin of {} bytes \"{}{more}\"",
                stdin.len(),
                hide.redact_str(&excerpt)
            ));
        }
        Approvable {
            rules,
            command,
            cwd,
            runs_with,
            key,
        }
    }
}

/// A person's approval of one call: the rules they may waive are skipped, every other
/// rule is checked again, and the call must resolve to the directory they were shown.
#[derive(Clone, Debug)]
pub struct Approved {
    /// The working directory the person approved.
    pub cwd: PathBuf,
    /// Approved by an earlier answer with `remember` (not asked this time).
    pub remembered: bool,
}

impl Approved {
    /// How the call was approved, as its audit line says it.
    pub fn audit_name(&self) -> &'static str {
        if self.remembered {
            "remembered"
        } else {
            "approved"
        }
    }

    /// A refusal when the call now resolves to another directory than the approved one.
    pub fn check_dir(&self, cwd: &std::path::Path) -> Result<(), String> {
        if self.cwd == cwd {
            return Ok(());
        }
        Err(format!(
            "the working directory now resolves to {}, not {} as approved; nothing was run \
             (call again to be asked again)",
            cwd.display(),
            self.cwd.display()
        ))
    }
}

impl Approvable {
    /// What refused the call, as a clause ("the declared side effect … is blocked on this
    /// server and trusted mode's argument rules refuse it (…)").
    pub fn describe(&self) -> String {
        let clauses: Vec<String> = self.rules.iter().map(Rule::describe).collect();
        clauses.join(" and ")
    }

    /// The rules' names in audit lines.
    pub fn rule_name(&self) -> &'static str {
        match self.rules.as_slice() {
            [one] => one.name(),
            _ => "blocked_side_effect+argument_rule",
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
    /// The person approved this call (the rules they may waive are skipped).
    pub approved: Option<Approved>,
}

impl Call {
    /// Answers now.
    pub fn answer(self, answer: Answer) {
        self.respond.send(Some(answer));
    }

    /// This call, with its answer passed through `f` before it is sent.
    pub fn map_answer(mut self, f: impl FnOnce(&mut Answer) + Send + 'static) -> Call {
        if let Some(inner) = self.respond.0.take() {
            self.respond = Responder::new(move |done| {
                inner(match done {
                    Done::Answer(mut answer) => {
                        f(&mut answer);
                        Done::Answer(answer)
                    }
                    Done::Ask(mut answer, what) => {
                        f(&mut answer);
                        Done::Ask(answer, what)
                    }
                    other => other,
                })
            });
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_covers_every_argument_that_changes_what_runs() {
        let secrets = LiveSecrets::new(Vec::new(), None);
        let env = [("BASH_ENV".to_string(), "/x".to_string())];
        let key = |shell, env: &[(String, String)], stdin| {
            let with = RunsWith { shell, env, stdin };
            Approvable::new(Vec::new(), "ls".into(), "/w".into(), with, &secrets).key
        };
        let plain = key(None, &[], None);
        assert_eq!(plain, key(None, &[], None));
        let others = [
            key(Some(""), &[], None),
            key(Some("/bin/bash"), &[], None),
            key(None, &env, None),
            key(None, &[], Some("")),
            key(None, &[], Some("y\n")),
        ];
        for (i, other) in others.iter().enumerate() {
            assert_ne!(&plain, other, "{i}");
            assert!(others[i + 1..].iter().all(|o| o != other), "{i}");
        }
        let shown = Approvable::new(
            Vec::new(),
            "ls".into(),
            "/w".into(),
            RunsWith {
                shell: Some("/bin/bash"),
                env: &[
                    ("API_TOKEN".into(), "hunter2".into()),
                    ("LANG".into(), "C".into()),
                ],
                stdin: Some(&"x".repeat(100)),
            },
            &secrets,
        );
        assert_eq!(shown.runs_with[0], "shell /bin/bash");
        assert_eq!(shown.runs_with[1], "env API_TOKEN=[REDACTED] LANG=C");
        assert!(shown.runs_with[2].starts_with("stdin of 100 bytes \"xxx"));
        assert!(
            shown.runs_with[2].ends_with("x…\""),
            "{}",
            shown.runs_with[2]
        );
    }
}
