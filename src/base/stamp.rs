//! Time stamps and identifiers: RFC 3339 times, record ids, the server's marker prefix.
//!
//! Uses only `sys` (the kernel's random bits), so `audit`, `engine` and `mcp` can all use it.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Record ids (`proc_` and 12 hex digits), unique for the life of the server and not
/// guessable from one another: the n-th id is n passed through a keyed permutation of the
/// 48-bit numbers (a Feistel network whose round function is SipHash under the standard
/// library's random keys and a key from the kernel), so ids never repeat, and one id, or
/// many, tells nothing of the next without the keys.
pub struct IdGen {
    counter: AtomicU64,
    prf: RandomState,
    key: u64,
}

impl Default for IdGen {
    fn default() -> IdGen {
        IdGen {
            counter: AtomicU64::new(0),
            prf: RandomState::new(),
            key: crate::base::sys::os_random_u64().unwrap_or_else(random_u64),
        }
    }
}

impl IdGen {
    /// The next id.
    pub fn next(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("proc_{:012x}", self.permute(n))
    }

    /// A bijection of the 48-bit numbers: four Feistel rounds over two 24-bit halves.
    fn permute(&self, n: u64) -> u64 {
        const HALF: u64 = (1 << 24) - 1;
        let (mut left, mut right) = ((n >> 24) & HALF, n & HALF);
        for round in 0..4u64 {
            let f = self.prf.hash_one((self.key, round, right)) & HALF;
            (left, right) = (right, left ^ f);
        }
        (left << 24) | right
    }
}

/// Formats a wall-clock time as RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Seconds since the epoch of a time that `rfc3339` wrote (`None` for other text): the
/// form mcp-yieldshell 1.1.2 sends times in.
pub fn epoch_seconds(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> { text.get(r)?.parse().ok() };
    if b.len() != 24 || b[4] != b'-' || b[10] != b'T' || b[23] != b'Z' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, m, s, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    // Days since 1970-01-01 from a civil date (the inverse of `rfc3339`'s algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    Some(secs as f64 + ms as f64 / 1000.0)
}

/// The marker prefix of this server: `<pid>.<random>/`.
pub fn new_marker_prefix() -> String {
    format!("{}.{:08x}/", std::process::id(), random_u64() as u32)
}

/// 64 random bits from the standard library's hash seed (no extra dependency, no unsafe).
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ids_are_unique_and_show_no_step() {
        let ids = IdGen::default();
        let n: Vec<u64> = (0..20_000).map(|i| ids.permute(i)).collect();
        let unique: std::collections::HashSet<&u64> = n.iter().collect();
        assert_eq!(unique.len(), n.len());
        assert!(n.iter().all(|&x| x < 1 << 48));
        // Consecutive ids differ by no constant step (they did when ids were a base plus a
        // multiple of the counter).
        let steps: std::collections::HashSet<u64> =
            n.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
        assert!(steps.len() > 19_000, "{}", steps.len());
        let other = IdGen::default();
        assert_ne!(other.permute(0), ids.permute(0));
        assert!(ids.next().starts_with("proc_") && ids.next().len() == 17);
    }

    #[test]
    fn rfc3339_known_dates() {
        let check = |secs: u64, expected: &str| {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), expected);
        };
        check(0, "1970-01-01T00:00:00.000Z");
        check(951_782_400, "2000-02-29T00:00:00.000Z");
        check(1_796_083_199, "2026-11-30T23:59:59.000Z");
    }

    #[test]
    fn epoch_seconds_reads_what_rfc3339_writes() {
        for ms in [0u64, 951_782_400_250, 1_796_083_199_999, 4_107_542_400_001] {
            let t = UNIX_EPOCH + Duration::from_millis(ms);
            let got = epoch_seconds(&rfc3339(t)).unwrap();
            assert!((got - ms as f64 / 1000.0).abs() < 1e-6, "{ms}: {got}");
        }
        assert_eq!(epoch_seconds("yesterday"), None);
    }
}
