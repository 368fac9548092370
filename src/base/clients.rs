//! What we know of clients: the request timeout of those that cut a call off early, and
//! which of a result's two forms each shows its model.
//!
//! A call that outlives the client's request timeout is lost: the client gives up, and the
//! agent never learns the process id of a command that went on running. So the default
//! `yield_ms` stays a margin below the timeout of the client named in `clientInfo.name`
//! (at `initialize`, or in a modern request's `_meta`). An explicit `yield_ms` in the call,
//! or `YIELDSHELL_DEFAULT_YIELD_MS` set by the operator, always wins. The README shows this
//! table; keep the two in step.

/// Known request timeouts, by `clientInfo.name` (compared without regard to case).
/// Clients whose timeout is above the default yield (most wait 60 s) need no entry.
pub(crate) const TIMEOUTS: &[(&str, u64)] = &[("goose", 30_000)];

/// How far below a client's timeout the default yield stays: enough for the answer to be
/// built, sent and read.
pub(crate) const MARGIN_MS: u64 = 5_000;

/// The request timeout of the client named `name`, when known.
pub(crate) fn timeout_ms(name: &str) -> Option<u64> {
    TIMEOUTS
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name.trim()))
        .map(|&(_, ms)| ms)
}

/// Clients, by `clientInfo.name` (compared without regard to case), that show the model
/// `JSON.stringify(structuredContent)` whenever a result carries it, and drop the text:
/// under `YIELDSHELL_STRUCTURED=auto` their results carry no `structuredContent`, so their
/// models read the text written for them. Clients not listed show the text.
pub(crate) const SHOW_STRUCTURED: &[&str] = &["claude-code", "codex-mcp-client"];

/// Whether `client` shows its model `structuredContent` in place of the text.
pub(crate) fn shows_structured(client: Option<&str>) -> bool {
    client.is_some_and(|name| {
        SHOW_STRUCTURED
            .iter()
            .any(|known| known.eq_ignore_ascii_case(name.trim()))
    })
}

/// The default `yield_ms` for a call from `client`. `configured` is the server's default;
/// `explicit` says whether the operator set it (then it is used as it is).
pub(crate) fn default_yield_ms(configured: u64, explicit: bool, client: Option<&str>) -> u64 {
    if explicit {
        return configured;
    }
    match client.and_then(timeout_ms) {
        Some(timeout) => configured.min(timeout.saturating_sub(MARGIN_MS)),
        None => configured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_stays_below_a_known_timeout() {
        let check = |configured, explicit, client, expected| {
            assert_eq!(
                default_yield_ms(configured, explicit, client),
                expected,
                "{configured} {explicit} {client:?}"
            );
        };
        check(30_000, false, Some("goose"), 25_000);
        check(30_000, false, Some("Goose "), 25_000);
        check(10_000, false, Some("goose"), 10_000);
        check(30_000, false, Some("claude-code"), 30_000);
        check(30_000, false, None, 30_000);
        check(40_000, true, Some("goose"), 40_000);
    }

    #[test]
    fn the_clients_that_show_structured_content_are_known_by_name() {
        assert!(shows_structured(Some("claude-code")));
        assert!(shows_structured(Some("Codex-MCP-Client ")));
        assert!(!shows_structured(Some("gemini-cli-mcp-client")));
        assert!(!shows_structured(None));
    }

    #[test]
    fn every_timeout_leaves_room_for_the_margin() {
        for (name, timeout) in TIMEOUTS {
            assert!(*timeout > MARGIN_MS, "{name}");
            assert_eq!(name.trim(), *name);
        }
    }
}
