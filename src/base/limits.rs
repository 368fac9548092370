//! Per-command limits from `YIELDSHELL_LIMITS`.
//!
//! The value is a comma-separated list of `name=value`: `cpu=SECONDS` (RLIMIT_CPU),
//! `mem=BYTES` (RLIMIT_AS, address space), `fsize=BYTES` (RLIMIT_FSIZE, largest file
//! written), `nofile=N` (RLIMIT_NOFILE, open descriptors) and `pids=N` (processes and
//! threads of the command together, through a pids cgroup: see `cgroup`). Sizes take an
//! optional `K`, `M` or `G` suffix (powers of 1024). Each name at most once; an empty value
//! means no limits.
//!
//! The rlimits are applied to each process the server starts, which its descendants
//! inherit: the child of the spawn sets them just before it executes the program
//! (`sys::ChildSetup`); `pids` is the command's cgroup, which that child joins first.

use crate::base::sys::libc;

/// Parsed limits; `None` means not limited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds (RLIMIT_CPU; SIGXCPU, then SIGKILL at the hard limit).
    pub cpu: Option<u64>,
    /// Address space in bytes (RLIMIT_AS).
    pub mem: Option<u64>,
    /// Largest file size in bytes (RLIMIT_FSIZE).
    pub fsize: Option<u64>,
    /// Open descriptors (RLIMIT_NOFILE).
    pub nofile: Option<u64>,
    /// Processes and threads of one command (pids cgroup).
    pub pids: Option<u64>,
}

/// An rlimit to set: which resource (a `libc::RLIMIT_*` value) and the soft and hard limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimit {
    /// The resource, as `libc::RLIMIT_*`.
    pub resource: i32,
    /// Soft limit.
    pub soft: u64,
    /// Hard limit.
    pub hard: u64,
}

const ACCEPTED: &str = "a comma-separated list of cpu=SECONDS, mem=BYTES, fsize=BYTES, \
nofile=N, pids=N (sizes may end in K, M or G), for example cpu=600,mem=2G,pids=200";

impl Limits {
    /// Parses the value of `name` (the variable or flag, for the error message).
    pub fn parse(name: &str, value: &str) -> Result<Limits, String> {
        let mut out = Limits::default();
        let bad = |why: String| format!("invalid {name}={value:?}: {why}; expected {ACCEPTED}");
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, val)) = item.split_once('=') else {
                return Err(bad(format!("{item:?} has no '='")));
            };
            let key = key.trim();
            let val = val.trim();
            let (slot, sized, min) = match key {
                "cpu" => (&mut out.cpu, false, 1),
                "mem" => (&mut out.mem, true, 1 << 20),
                "fsize" => (&mut out.fsize, true, 1),
                "nofile" => (&mut out.nofile, false, 3),
                "pids" => (&mut out.pids, false, 1),
                other => return Err(bad(format!("unknown limit {other:?}"))),
            };
            if slot.is_some() {
                return Err(bad(format!("{key} is given twice")));
            }
            let n = parse_number(val, sized).ok_or_else(|| {
                bad(format!(
                    "{key}={val:?} is not {}",
                    if sized {
                        "a size such as 512M"
                    } else {
                        "a whole number"
                    }
                ))
            })?;
            if n < min {
                return Err(bad(format!(
                    "{key}={val} is below the smallest value, {min}"
                )));
            }
            *slot = Some(n);
        }
        Ok(out)
    }

    /// True when no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }

    /// The rlimits to set in a command's first process (soft = hard; for `cpu` the hard
    /// limit is one second later, so the process first gets SIGXCPU).
    #[allow(clippy::unnecessary_cast)] // RLIMIT_* are u32 on glibc, c_int elsewhere.
    pub fn rlimits(&self) -> Vec<Rlimit> {
        let mut out = Vec::new();
        let mut add = |resource: i32, soft: u64, hard: u64| {
            out.push(Rlimit {
                resource,
                soft,
                hard,
            })
        };
        if let Some(s) = self.cpu {
            add(libc::RLIMIT_CPU as i32, s, s.saturating_add(1));
        }
        if let Some(b) = self.mem {
            add(libc::RLIMIT_AS as i32, b, b);
        }
        if let Some(b) = self.fsize {
            add(libc::RLIMIT_FSIZE as i32, b, b);
        }
        if let Some(n) = self.nofile {
            add(libc::RLIMIT_NOFILE as i32, n, n);
        }
        out
    }
}

/// A decimal integer; when `sized`, with an optional `K`, `M` or `G` suffix (powers of
/// 1024). `None` when malformed or beyond a `u64`.
pub(crate) fn parse_number(text: &str, sized: bool) -> Option<u64> {
    let (digits, mult) = match text.as_bytes().last()? {
        b'k' | b'K' if sized => (&text[..text.len() - 1], 1u64 << 10),
        b'm' | b'M' if sized => (&text[..text.len() - 1], 1 << 20),
        b'g' | b'G' if sized => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unnecessary_cast)] // RLIMIT_* are u32 on glibc, c_int elsewhere.
    fn parses_every_limit() {
        let l = Limits::parse(
            "YIELDSHELL_LIMITS",
            "cpu=60, mem=2G,fsize=10m,nofile=256,pids=200",
        )
        .unwrap();
        assert_eq!(
            l,
            Limits {
                cpu: Some(60),
                mem: Some(2 << 30),
                fsize: Some(10 << 20),
                nofile: Some(256),
                pids: Some(200),
            }
        );
        assert_eq!(l.rlimits().len(), 4);
        assert_eq!(
            l.rlimits()[0],
            Rlimit {
                resource: libc::RLIMIT_CPU as i32,
                soft: 60,
                hard: 61
            }
        );
        assert!(Limits::parse("X", "").unwrap().is_empty());
        assert_eq!(Limits::parse("X", "pids=5").unwrap().rlimits(), vec![]);
    }

    #[test]
    fn bad_values_name_the_variable_value_and_what_is_accepted() {
        for (value, why) in [
            ("pids", "has no '='"),
            ("procs=3", "unknown limit \"procs\""),
            ("cpu=1,cpu=2", "cpu is given twice"),
            ("cpu=1m", "is not a whole number"),
            ("mem=lots", "is not a size"),
            ("mem=1K", "below the smallest value"),
            ("pids=0", "below the smallest value"),
            ("fsize=99999999999999999999G", "is not a size"),
            ("nofile=-1", "is not a whole number"),
        ] {
            let err = Limits::parse("YIELDSHELL_LIMITS", value).unwrap_err();
            assert!(err.contains("YIELDSHELL_LIMITS"), "{err}");
            assert!(err.contains(&format!("{value:?}")), "{err}");
            assert!(err.contains(why), "{value}: {err}");
            assert!(err.contains("cpu=SECONDS"), "{err}");
        }
    }
}
