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

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

#[rustfmt::skip]
pub(crate) const GRAMMAR: Grammar = Grammar {
    short: &[
        ('D', Arg::Optional), ('M', Arg::Required), ('O', Arg::Required), ('P', Arg::Optional),
        ('R', Arg::Optional), ('S', Arg::Optional), ('T', Arg::Required), ('U', Arg::Required),
        ('V', Arg::Optional), ('Z', Arg::Optional), ('a', Arg::Required), ('c', Arg::Optional),
        ('d', Arg::Required), ('h', Arg::Optional), ('i', Arg::Required), ('j', Arg::Required),
        ('k', Arg::Required), ('l', Arg::Required), ('m', Arg::Required), ('n', Arg::Optional),
        ('o', Arg::Required), ('p', Arg::Optional), ('q', Arg::Optional), ('s', Arg::Required),
        ('t', Arg::Required), ('u', Arg::Required), ('v', Arg::No), ('x', Arg::Required),
    ],
    long: Longs::words(
        "all-proxy= all-proxy-passwd= all-proxy-user= allow-overwrite? allow-piece-length-change?
         always-resume? async-dns? async-dns-server= auto-file-renaming? auto-save-interval=
         bt-detach-seed-only? bt-enable-hook-after-hash-check? bt-enable-lpd? bt-exclude-tracker=
         bt-external-ip= bt-force-encryption? bt-hash-check-seed? bt-keep-alive-interval=
         bt-load-saved-metadata? bt-lpd-interface= bt-max-open-files= bt-max-peers=
         bt-metadata-only? bt-min-crypto-level= bt-prioritize-piece= bt-remove-unselected-file?
         bt-request-peer-speed-limit= bt-request-timeout= bt-require-crypto? bt-save-metadata?
         bt-seed-unverified? bt-stop-timeout= bt-timeout= bt-tracker= bt-tracker-connect-timeout=
         bt-tracker-interval= bt-tracker-timeout= ca-certificate= certificate= check-certificate?
         check-integrity? checksum= conditional-get? conf-path= connect-timeout=
         console-log-level= content-disposition-default-utf8? continue? daemon? deferred-input?
         dht-entry-point= dht-entry-point6= dht-file-path= dht-file-path6= dht-listen-addr=
         dht-listen-addr6= dht-listen-port= dht-message-timeout= dir= disable-ipv6? disk-cache=
         dns-timeout= download-result= dry-run? dscp= enable-async-dns6? enable-color?
         enable-dht? enable-dht6? enable-http-keep-alive? enable-http-pipelining? enable-mmap?
         enable-peer-exchange? enable-rpc? event-poll= file-allocation= follow-metalink=
         follow-torrent= force-save? force-sequential? ftp-passwd= ftp-pasv? ftp-proxy=
         ftp-proxy-passwd= ftp-proxy-user= ftp-reuse-connection? ftp-type= ftp-user= gid=
         hash-check-only? header= help? http-accept-gzip? http-auth-challenge? http-no-cache?
         http-passwd= http-proxy= http-proxy-passwd= http-proxy-user= http-user= https-proxy=
         https-proxy-passwd= https-proxy-user= human-readable? index-out= input-file= interface=
         keep-unfinished-download-result? listen-port= load-cookies= log= log-level=
         lowest-speed-limit= max-concurrent-downloads= max-connection-per-server=
         max-download-limit= max-download-result= max-file-not-found= max-http-pipelining=
         max-mmap-limit= max-overall-download-limit= max-overall-upload-limit=
         max-resume-failure-tries= max-tries= max-upload-limit= metalink-base-uri=
         metalink-enable-unique-protocol? metalink-file= metalink-language= metalink-location=
         metalink-os= metalink-preferred-protocol= metalink-version= min-split-size=
         min-tls-version= multiple-interface= netrc-path= no-conf? no-file-allocation-limit=
         no-netrc? no-proxy= no-want-digest-header? on-bt-download-complete=
         on-download-complete= on-download-error= on-download-pause= on-download-start=
         on-download-stop= optimize-concurrent-downloads? out= parameterized-uri? pause?
         pause-metadata? peer-agent= peer-connection-timeout= peer-id-prefix= piece-length=
         private-key= proxy-method= quiet? realtime-chunk-checksum? referer= remote-time?
         remove-control-file? retry-wait= reuse-uri? rlimit-nofile= rpc-allow-origin-all?
         rpc-certificate= rpc-listen-all? rpc-listen-port= rpc-max-request-size= rpc-passwd=
         rpc-private-key= rpc-save-upload-metadata? rpc-secret= rpc-secure? rpc-user=
         save-cookies= save-not-found? save-session= save-session-interval= seed-ratio=
         seed-time= select-file= select-least-used-host= server-stat-if= server-stat-of=
         server-stat-timeout= show-console-readout= show-files? socket-recv-buffer-size= split=
         ssh-host-key-md= startup-idle-time= stderr? stop= stop-with-process=
         stream-piece-selector= summary-interval= timeout= torrent-file=
         truncate-console-readout? uri-selector= use-head? user-agent= version",
    ),
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
