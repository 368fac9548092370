//! Time stamps and identifiers: RFC 3339 times, record ids, the server's marker prefix.
//!
//! A leaf: it uses nothing of the crate, so `audit`, `engine` and `mcp` can all use it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Record ids (`proc_` and 12 hex digits), unique for the life of the server and not
/// guessable from one another.
pub struct IdGen {
    base: u64,
    counter: AtomicU64,
}

impl Default for IdGen {
    fn default() -> IdGen {
        IdGen {
            base: random_u64() >> 16,
            counter: AtomicU64::new(0),
        }
    }
}

impl IdGen {
    /// The next id.
    pub fn next(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        // An odd multiplier is a bijection modulo 2^48: ids never repeat in a server's life.
        let id = self.base.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4B)) & 0xFFFF_FFFF_FFFF;
        format!("proc_{id:012x}")
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
    fn rfc3339_known_dates() {
        let check = |secs: u64, expected: &str| {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), expected);
        };
        check(0, "1970-01-01T00:00:00.000Z");
        check(951_782_400, "2000-02-29T00:00:00.000Z");
        check(1_796_083_199, "2026-11-30T23:59:59.000Z");
    }
}
