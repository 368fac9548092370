//! Whether an answer fits in the memory the server can still get: under `ulimit -v` (or a
//! full address space) a failed allocation would abort the whole server, so a read that
//! would not fit is refused, and an answer that would not fit shows less.

/// How many times its output bytes an answer may take at once: the copy out of the ring,
/// its text in the result, and the response line that holds it as JSON twice (structured
/// and as text).
pub(crate) const ANSWER_COPIES: u64 = 4;

/// Whether an answer showing `bytes` of output can be allocated now (under `ulimit -v` or
/// a full address space it cannot, and an allocation failure would abort the server):
/// reserves that much once, without touching it, and lets it go. `Err` holds the bytes
/// needed.
pub(crate) fn answer_room(bytes: u64) -> Result<(), u64> {
    let need = bytes.saturating_mul(ANSWER_COPIES);
    if need < 1 << 20 {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    match usize::try_from(need)
        .ok()
        .map(|n| probe.try_reserve_exact(n))
    {
        Some(Ok(())) => Ok(()),
        _ => Err(need),
    }
}

/// The most output bytes (at most `bytes`) an answer can show now, halving from `bytes`.
pub(crate) fn affordable(mut bytes: u64) -> u64 {
    while bytes > 64 * 1024 && answer_room(bytes).is_err() {
        bytes /= 2;
    }
    bytes
}
