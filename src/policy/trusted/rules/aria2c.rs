//! aria2c: a closed rule. Its options are read with getopt_long as aria2c reads them: the
//! option table is aria2 1.37's (`src/OptionHandlerFactory.cc`: every option handler's name,
//! short name and argument type; a boolean's value is optional, so only ever attached,
//! `--check-certificate=false`), long options by any unambiguous prefix, short options
//! clustered.
//!
//! Refused: the hooks (`--on-download-start`, `-pause`, `-stop`, `-complete`, `-error` and
//! `--on-bt-download-complete` run the program they name), `--conf-path` (a configuration
//! file can set the hooks), `-i`/`--input-file` (an input file, or stdin with `-i -`, holds
//! options for each download, the hooks among them), `--enable-rpc` and the other `--rpc-*`
//! options (a JSON-RPC server whose clients change options and add downloads) and
//! `-D`/`--daemon` (aria2c would outlive the call). Any option aria2 1.37 does not have is
//! refused, since a newer aria2c may run something with it. aria2c's own configuration file
//! (`$HOME/.aria2/aria2.conf` or `$XDG_CONFIG_HOME/aria2/aria2.conf`) is not in the working
//! directory.

use crate::policy::trusted::getopt::{Arg, Grammar};

#[rustfmt::skip]
const GRAMMAR: Grammar = Grammar {
    short: &[
        ('D', Arg::Optional), ('M', Arg::Required), ('O', Arg::Required), ('P', Arg::Optional),
        ('R', Arg::Optional), ('S', Arg::Optional), ('T', Arg::Required), ('U', Arg::Required),
        ('V', Arg::Optional), ('Z', Arg::Optional), ('a', Arg::Required), ('c', Arg::Optional),
        ('d', Arg::Required), ('h', Arg::Optional), ('i', Arg::Required), ('j', Arg::Required),
        ('k', Arg::Required), ('l', Arg::Required), ('m', Arg::Required), ('n', Arg::Optional),
        ('o', Arg::Required), ('p', Arg::Optional), ('q', Arg::Optional), ('s', Arg::Required),
        ('t', Arg::Required), ('u', Arg::Required), ('v', Arg::No), ('x', Arg::Required),
    ],
    long: &[
        ("all-proxy", Arg::Required), ("all-proxy-passwd", Arg::Required),
        ("all-proxy-user", Arg::Required), ("allow-overwrite", Arg::Optional),
        ("allow-piece-length-change", Arg::Optional), ("always-resume", Arg::Optional),
        ("async-dns", Arg::Optional), ("async-dns-server", Arg::Required),
        ("auto-file-renaming", Arg::Optional), ("auto-save-interval", Arg::Required),
        ("bt-detach-seed-only", Arg::Optional), ("bt-enable-hook-after-hash-check", Arg::Optional),
        ("bt-enable-lpd", Arg::Optional), ("bt-exclude-tracker", Arg::Required),
        ("bt-external-ip", Arg::Required), ("bt-force-encryption", Arg::Optional),
        ("bt-hash-check-seed", Arg::Optional), ("bt-keep-alive-interval", Arg::Required),
        ("bt-load-saved-metadata", Arg::Optional), ("bt-lpd-interface", Arg::Required),
        ("bt-max-open-files", Arg::Required), ("bt-max-peers", Arg::Required),
        ("bt-metadata-only", Arg::Optional), ("bt-min-crypto-level", Arg::Required),
        ("bt-prioritize-piece", Arg::Required), ("bt-remove-unselected-file", Arg::Optional),
        ("bt-request-peer-speed-limit", Arg::Required), ("bt-request-timeout", Arg::Required),
        ("bt-require-crypto", Arg::Optional), ("bt-save-metadata", Arg::Optional),
        ("bt-seed-unverified", Arg::Optional), ("bt-stop-timeout", Arg::Required),
        ("bt-timeout", Arg::Required), ("bt-tracker", Arg::Required),
        ("bt-tracker-connect-timeout", Arg::Required), ("bt-tracker-interval", Arg::Required),
        ("bt-tracker-timeout", Arg::Required), ("ca-certificate", Arg::Required),
        ("certificate", Arg::Required), ("check-certificate", Arg::Optional),
        ("check-integrity", Arg::Optional), ("checksum", Arg::Required),
        ("conditional-get", Arg::Optional), ("conf-path", Arg::Required),
        ("connect-timeout", Arg::Required), ("console-log-level", Arg::Required),
        ("content-disposition-default-utf8", Arg::Optional), ("continue", Arg::Optional),
        ("daemon", Arg::Optional), ("deferred-input", Arg::Optional),
        ("dht-entry-point", Arg::Required), ("dht-entry-point6", Arg::Required),
        ("dht-file-path", Arg::Required), ("dht-file-path6", Arg::Required),
        ("dht-listen-addr", Arg::Required), ("dht-listen-addr6", Arg::Required),
        ("dht-listen-port", Arg::Required), ("dht-message-timeout", Arg::Required),
        ("dir", Arg::Required), ("disable-ipv6", Arg::Optional), ("disk-cache", Arg::Required),
        ("dns-timeout", Arg::Required), ("download-result", Arg::Required),
        ("dry-run", Arg::Optional), ("dscp", Arg::Required), ("enable-async-dns6", Arg::Optional),
        ("enable-color", Arg::Optional), ("enable-dht", Arg::Optional),
        ("enable-dht6", Arg::Optional), ("enable-http-keep-alive", Arg::Optional),
        ("enable-http-pipelining", Arg::Optional), ("enable-mmap", Arg::Optional),
        ("enable-peer-exchange", Arg::Optional), ("enable-rpc", Arg::Optional),
        ("event-poll", Arg::Required), ("file-allocation", Arg::Required),
        ("follow-metalink", Arg::Required), ("follow-torrent", Arg::Required),
        ("force-save", Arg::Optional), ("force-sequential", Arg::Optional),
        ("ftp-passwd", Arg::Required), ("ftp-pasv", Arg::Optional), ("ftp-proxy", Arg::Required),
        ("ftp-proxy-passwd", Arg::Required), ("ftp-proxy-user", Arg::Required),
        ("ftp-reuse-connection", Arg::Optional), ("ftp-type", Arg::Required),
        ("ftp-user", Arg::Required), ("gid", Arg::Required), ("hash-check-only", Arg::Optional),
        ("header", Arg::Required), ("help", Arg::Optional), ("http-accept-gzip", Arg::Optional),
        ("http-auth-challenge", Arg::Optional), ("http-no-cache", Arg::Optional),
        ("http-passwd", Arg::Required), ("http-proxy", Arg::Required),
        ("http-proxy-passwd", Arg::Required), ("http-proxy-user", Arg::Required),
        ("http-user", Arg::Required), ("https-proxy", Arg::Required),
        ("https-proxy-passwd", Arg::Required), ("https-proxy-user", Arg::Required),
        ("human-readable", Arg::Optional), ("index-out", Arg::Required),
        ("input-file", Arg::Required), ("interface", Arg::Required),
        ("keep-unfinished-download-result", Arg::Optional), ("listen-port", Arg::Required),
        ("load-cookies", Arg::Required), ("log", Arg::Required), ("log-level", Arg::Required),
        ("lowest-speed-limit", Arg::Required), ("max-concurrent-downloads", Arg::Required),
        ("max-connection-per-server", Arg::Required), ("max-download-limit", Arg::Required),
        ("max-download-result", Arg::Required), ("max-file-not-found", Arg::Required),
        ("max-http-pipelining", Arg::Required), ("max-mmap-limit", Arg::Required),
        ("max-overall-download-limit", Arg::Required), ("max-overall-upload-limit", Arg::Required),
        ("max-resume-failure-tries", Arg::Required), ("max-tries", Arg::Required),
        ("max-upload-limit", Arg::Required), ("metalink-base-uri", Arg::Required),
        ("metalink-enable-unique-protocol", Arg::Optional), ("metalink-file", Arg::Required),
        ("metalink-language", Arg::Required), ("metalink-location", Arg::Required),
        ("metalink-os", Arg::Required), ("metalink-preferred-protocol", Arg::Required),
        ("metalink-version", Arg::Required), ("min-split-size", Arg::Required),
        ("min-tls-version", Arg::Required), ("multiple-interface", Arg::Required),
        ("netrc-path", Arg::Required), ("no-conf", Arg::Optional),
        ("no-file-allocation-limit", Arg::Required), ("no-netrc", Arg::Optional),
        ("no-proxy", Arg::Required), ("no-want-digest-header", Arg::Optional),
        ("on-bt-download-complete", Arg::Required), ("on-download-complete", Arg::Required),
        ("on-download-error", Arg::Required), ("on-download-pause", Arg::Required),
        ("on-download-start", Arg::Required), ("on-download-stop", Arg::Required),
        ("optimize-concurrent-downloads", Arg::Optional), ("out", Arg::Required),
        ("parameterized-uri", Arg::Optional), ("pause", Arg::Optional),
        ("pause-metadata", Arg::Optional), ("peer-agent", Arg::Required),
        ("peer-connection-timeout", Arg::Required), ("peer-id-prefix", Arg::Required),
        ("piece-length", Arg::Required), ("private-key", Arg::Required),
        ("proxy-method", Arg::Required), ("quiet", Arg::Optional),
        ("realtime-chunk-checksum", Arg::Optional), ("referer", Arg::Required),
        ("remote-time", Arg::Optional), ("remove-control-file", Arg::Optional),
        ("retry-wait", Arg::Required), ("reuse-uri", Arg::Optional),
        ("rlimit-nofile", Arg::Required), ("rpc-allow-origin-all", Arg::Optional),
        ("rpc-certificate", Arg::Required), ("rpc-listen-all", Arg::Optional),
        ("rpc-listen-port", Arg::Required), ("rpc-max-request-size", Arg::Required),
        ("rpc-passwd", Arg::Required), ("rpc-private-key", Arg::Required),
        ("rpc-save-upload-metadata", Arg::Optional), ("rpc-secret", Arg::Required),
        ("rpc-secure", Arg::Optional), ("rpc-user", Arg::Required), ("save-cookies", Arg::Required),
        ("save-not-found", Arg::Optional), ("save-session", Arg::Required),
        ("save-session-interval", Arg::Required), ("seed-ratio", Arg::Required),
        ("seed-time", Arg::Required), ("select-file", Arg::Required),
        ("select-least-used-host", Arg::Required), ("server-stat-if", Arg::Required),
        ("server-stat-of", Arg::Required), ("server-stat-timeout", Arg::Required),
        ("show-console-readout", Arg::Required), ("show-files", Arg::Optional),
        ("socket-recv-buffer-size", Arg::Required), ("split", Arg::Required),
        ("ssh-host-key-md", Arg::Required), ("startup-idle-time", Arg::Required),
        ("stderr", Arg::Optional), ("stop", Arg::Required), ("stop-with-process", Arg::Required),
        ("stream-piece-selector", Arg::Required), ("summary-interval", Arg::Required),
        ("timeout", Arg::Required), ("torrent-file", Arg::Required),
        ("truncate-console-readout", Arg::Optional), ("uri-selector", Arg::Required),
        ("use-head", Arg::Optional), ("user-agent", Arg::Required), ("version", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Options that run a program, name a file of options, or serve options to others.
const RUNS: &[&str] = &[
    "on-download-start",
    "on-download-pause",
    "on-download-stop",
    "on-download-complete",
    "on-download-error",
    "on-bt-download-complete",
    "conf-path",
    "input-file",
    "deferred-input",
    "enable-rpc",
    "daemon",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const ARIA2C_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["https://example.com/f"],
        &["-x", "4", "https://example.com/f"],
        &[
            "-x4",
            "-s4",
            "-k1M",
            "-d",
            "out",
            "-o",
            "f.iso",
            "https://example.com/f",
        ],
        &["-c", "--check-certificate=false", "https://example.com/f"],
        &[
            "--max-download-limit",
            "1M",
            "--dir=dl",
            "https://example.com/f",
        ],
        &["--header", "Authorization: x", "https://example.com/f"],
        &["-T", "x.torrent", "--seed-time=0"],
        &[
            "--checksum=sha-256=00",
            "--allow-overwrite=true",
            "https://example.com/f",
        ],
        &["--no-conf", "-q", "https://example.com/f"],
        &["--max-conn", "2", "https://example.com/f"],
        &["-h"],
        &["--version"],
    ],
    refuse: &[
        &["--on-download-complete=sh", "https://example.com/f"],
        &["--on-download-complete", "sh", "https://example.com/f"],
        &["--on-download-s", "sh", "https://example.com/f"],
        &["--on-d=sh", "https://example.com/f"],
        &["--on", "sh", "https://example.com/f"],
        &["--on-bt-download-complete=sh", "x.torrent"],
        &["-i", "list"],
        &["-ilist"],
        &["-vi", "list"],
        &["-i", "-"],
        &["--input-file=list"],
        &["--input", "list"],
        &["--conf-path=c"],
        &["--conf", "c", "https://example.com/f"],
        &["--enable-rpc"],
        &["--enable-rpc=true", "--rpc-listen-all"],
        &["--rpc-secret", "s", "https://example.com/f"],
        &["-D", "https://example.com/f"],
        &["--daemon=true", "https://example.com/f"],
        &["--future-option", "https://example.com/f"],
        &["-Y", "https://example.com/f"],
    ],
};

/// Checks aria2c's arguments, under both readings of an ambiguous abbreviation.
pub fn check_aria2c(args: &[String]) -> Result<(), String> {
    for items in GRAMMAR.readings(args) {
        for item in &items {
            if let Some(option) = GRAMMAR.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "aria2c option {option}"
                )));
            }
            let rpc = match item {
                crate::policy::trusted::getopt::Item::Long { candidates, .. } => {
                    candidates.iter().any(|c| c.starts_with("rpc-"))
                }
                _ => false,
            };
            if rpc || item.long_is(RUNS) || item.short_is(&['i', 'D']) {
                return Err(
                    "aria2c hook, input file, configuration file, RPC or daemon option".into(),
                );
            }
        }
    }
    Ok(())
}
