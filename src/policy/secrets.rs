//! The secrets in force: the server's own (the values of its variables whose names match
//! `YIELDSHELL_REDACT_ENV_REGEX`) and those of every kept record's call (the values of its
//! `env` whose names match). A command can read another command's environment
//! (`/proc/<pid>/environ`, `ps eww`), so every output filter, `ps` and the audit log redact
//! with the whole set, not with their call's part of it. A record's part joins before its
//! processes start ([`LiveSecrets::lease`]) and leaves when the record is forgotten (its
//! [`Lease`] dropped with it).
//!
//! The set is rebuilt on each change and handed out as a snapshot (`Arc<Secrets>`); a
//! stream's filter takes the new snapshot at its next read (`redact::Source`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use regex_lite::Regex;

use crate::policy::redact::{Secrets, Source};

/// The server's own secrets: the values of its variables (`config.env`) whose names match
/// `YIELDSHELL_REDACT_ENV_REGEX`.
pub fn server_pairs(config: &crate::base::config::Config) -> Vec<(String, Vec<u8>)> {
    use crate::base::sys::ext::OsStrExt;
    let Some(re) = &config.redact_regex else {
        return Vec::new();
    };
    config
        .env
        .iter()
        .filter_map(|(k, v)| Some((k.to_str()?, v.as_bytes())))
        .filter(|(k, _)| re.is_match(k))
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect()
}

/// The server's secrets and every kept record's.
pub struct LiveSecrets {
    server: Vec<(String, Vec<u8>)>,
    names: Option<Regex>,
    inner: Mutex<Inner>,
    version: AtomicU64,
}

struct Inner {
    next: u64,
    leased: BTreeMap<u64, Vec<(String, Vec<u8>)>>,
    current: Arc<Secrets>,
}

impl std::fmt::Debug for LiveSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LiveSecrets({} leased)", self.inner.lock().leased.len())
    }
}

impl LiveSecrets {
    /// The set of `server` pairs; `names` selects a call's overlay secrets by name (none
    /// without `YIELDSHELL_REDACT_ENV_REGEX`).
    pub fn new(server: Vec<(String, Vec<u8>)>, names: Option<Regex>) -> Arc<LiveSecrets> {
        let current = Arc::new(Secrets::new(server.iter().map(|(k, v)| (k, v))));
        Arc::new(LiveSecrets {
            server,
            names,
            inner: Mutex::new(Inner {
                next: 0,
                leased: BTreeMap::new(),
                current,
            }),
            version: AtomicU64::new(0),
        })
    }

    /// The secrets of a call's `env` overlay: the values whose names match.
    pub fn overlay_pairs(&self, overlay: &[(String, String)]) -> Vec<(String, Vec<u8>)> {
        let Some(re) = &self.names else {
            return Vec::new();
        };
        overlay
            .iter()
            .filter(|(k, _)| re.is_match(k))
            .map(|(k, v)| (k.clone(), v.as_bytes().to_vec()))
            .collect()
    }

    /// The set now.
    pub fn current(&self) -> Arc<Secrets> {
        self.inner.lock().current.clone()
    }

    /// The set now with a call's own overlay secrets added (for a call that starts
    /// nothing, such as a refused one, whose overlay never joins the set).
    pub fn with_overlay(&self, overlay: &[(String, String)]) -> Arc<Secrets> {
        let own = self.overlay_pairs(overlay);
        let current = self.current();
        if own.is_empty() {
            return current;
        }
        Arc::new(current.with(own))
    }

    /// Adds a record's overlay secrets until the returned lease is dropped. Call it before
    /// the record's processes start, so that no filter misses them.
    pub fn lease(self: &Arc<Self>, overlay: &[(String, String)]) -> Lease {
        let own = self.overlay_pairs(overlay);
        if own.is_empty() {
            return Lease::default();
        }
        let mut inner = self.inner.lock();
        let key = inner.next;
        inner.next += 1;
        inner.leased.insert(key, own);
        self.rebuild(&mut inner);
        Lease {
            held: Some((self.clone(), key)),
        }
    }

    fn rebuild(&self, inner: &mut Inner) {
        let pairs = self
            .server
            .iter()
            .chain(inner.leased.values().flatten())
            .map(|(k, v)| (k, v));
        inner.current = Arc::new(Secrets::new(pairs));
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Whether a call's variable of this name is a secret.
    pub fn selects(&self, name: &str) -> bool {
        self.names.as_ref().is_some_and(|re| re.is_match(name))
    }
}

impl Source for LiveSecrets {
    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn current(&self) -> Arc<Secrets> {
        LiveSecrets::current(self)
    }
}

/// A record's overlay secrets in the set, removed when dropped (with the record).
#[derive(Default)]
pub struct Lease {
    held: Option<(Arc<LiveSecrets>, u64)>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lease({})", self.held.is_some())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some((set, key)) = self.held.take() {
            let mut inner = set.inner.lock();
            inner.leased.remove(&key);
            set.rebuild(&mut inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::redact::Filter;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_record_secret_joins_every_filter_while_it_is_kept() {
        let set = LiveSecrets::new(
            vec![("SERVER_TOKEN".into(), b"server-secret-1".to_vec())],
            Some(Regex::new("TOKEN").unwrap()),
        );
        // A filter made before the record started learns its secret at its next read.
        let mut filter = Filter::live(set.clone());
        let lease = set.lease(&env(&[
            ("MY_TOKEN", "call-secret-22"),
            ("OTHER", "plain-value"),
        ]));
        let mut out = Vec::new();
        filter.feed(
            b"x call-secret-22 plain-value server-secret-1\n",
            &mut |b| out.extend_from_slice(b),
        );
        assert_eq!(
            String::from_utf8_lossy(&out),
            "x [REDACTED:MY_TOKEN] plain-value [REDACTED:SERVER_TOKEN]\n"
        );
        assert!(set
            .current()
            .redact_str("call-secret-22")
            .contains("REDACTED"));
        drop(lease);
        assert_eq!(set.current().redact_str("call-secret-22"), "call-secret-22");
        assert!(set
            .with_overlay(&env(&[("A_TOKEN", "refused-call-secret")]))
            .redact_str("refused-call-secret")
            .contains("[REDACTED:A_TOKEN]"));
    }

    #[test]
    fn a_value_with_a_line_break_is_found_as_a_terminal_writes_it() {
        let set = LiveSecrets::new(
            vec![("KEY_TOKEN".into(), b"first-line\nsecond-line".to_vec())],
            None,
        );
        let s = set.current();
        for text in [
            "a first-line\nsecond-line b",
            "a first-line\r\nsecond-line b",
        ] {
            assert_eq!(s.redact_str(text), "a [REDACTED:KEY_TOKEN] b", "{text:?}");
        }
    }
}
