//! curl: its options are read as curl 7.88 reads them (short options clustered, a value
//! attached or the next argument, long options by any unambiguous prefix, `--no-` for a
//! switch), and every option it does not know is refused: a newer curl may load or run
//! something through it.
//!
//! Refused: `--engine` (loads an OpenSSL engine, which may be a library named by path),
//! `-K`/`--config` (a configuration file, or stdin, holds any option, `engine` too),
//! `--cert-type`/`--key-type` and their proxy forms with `ENG` (a key through an engine), and
//! `--unix-socket`/`--abstract-unix-socket` (a local socket such as a container engine's,
//! whose HTTP API starts programs). Reading files (`-d @file`, `-T`) and writing them (`-o`)
//! are left to the kernel layer, as for every program.
//!
//! Refused too, as file names the writers' check cannot read: an output name holding `#`
//! and a digit (`-o`, `--output`, `--output-dir`: with URL globbing curl puts the glob's
//! text there, `'file:///w/{git}' -o '.#1/config'` writes `.git/config`), and
//! `-O`/`--remote-name`/`--remote-name-all` with a URL holding `{` or `[` without `-g`/
//! `--globoff` (the name is the last segment of the expanded URL: `http://h/.gi{t}` writes
//! `.git`). `-O` names the file after the URL's last path segment as written (curl does not
//! decode it), which the writers' check reads, `--create-dirs` only making the directories
//! of a name that check has read.

use crate::policy::trusted::getopt::{Arg, Grammar, Item};

#[rustfmt::skip]
const GRAMMAR: Grammar = Grammar {
    short: &[
        ('a', Arg::No), ('E', Arg::Required), ('K', Arg::Required), ('C', Arg::Required),
        ('b', Arg::Required), ('c', Arg::Required), ('d', Arg::Required), ('q', Arg::No),
        ('D', Arg::Required), ('f', Arg::No), ('F', Arg::Required), ('P', Arg::Required),
        ('G', Arg::No), ('g', Arg::No), ('I', Arg::No), ('H', Arg::Required), ('h', Arg::No),
        ('0', Arg::No), ('i', Arg::No), ('k', Arg::No), ('4', Arg::No), ('6', Arg::No),
        ('j', Arg::No), ('l', Arg::No), ('L', Arg::No), ('M', Arg::No), ('m', Arg::Required),
        ('n', Arg::No), (':', Arg::No), ('N', Arg::No), ('o', Arg::Required), ('Z', Arg::No),
        ('#', Arg::No), ('x', Arg::Required), ('U', Arg::Required), ('p', Arg::No),
        ('Q', Arg::Required), ('r', Arg::Required), ('e', Arg::Required), ('J', Arg::No),
        ('O', Arg::No), ('R', Arg::No), ('X', Arg::Required), ('S', Arg::No), ('s', Arg::No),
        ('Y', Arg::Required), ('y', Arg::Required), ('2', Arg::No), ('3', Arg::No),
        ('t', Arg::Required), ('z', Arg::Required), ('1', Arg::No), ('T', Arg::Required),
        ('B', Arg::No), ('u', Arg::Required), ('A', Arg::Required), ('v', Arg::No), ('V', Arg::No),
        ('w', Arg::Required),
    ],
    long: &[
        ("abstract-unix-socket", Arg::Required), ("alt-svc", Arg::Required), ("anyauth", Arg::No),
        ("append", Arg::No), ("aws-sigv4", Arg::Required), ("basic", Arg::No),
        ("cacert", Arg::Required), ("capath", Arg::Required), ("cert", Arg::Required),
        ("cert-status", Arg::No), ("cert-type", Arg::Required), ("ciphers", Arg::Required),
        ("compressed", Arg::No), ("compressed-ssh", Arg::No), ("config", Arg::Required),
        ("connect-timeout", Arg::Required), ("connect-to", Arg::Required),
        ("continue-at", Arg::Required), ("cookie", Arg::Required), ("cookie-jar", Arg::Required),
        ("create-dirs", Arg::No), ("create-file-mode", Arg::Required), ("crlf", Arg::No),
        ("crlfile", Arg::Required), ("curves", Arg::Required), ("data", Arg::Required),
        ("data-ascii", Arg::Required), ("data-binary", Arg::Required), ("data-raw", Arg::Required),
        ("data-urlencode", Arg::Required), ("delegation", Arg::Required), ("digest", Arg::No),
        ("disable", Arg::No), ("disable-eprt", Arg::No), ("disable-epsv", Arg::No),
        ("disallow-username-in-url", Arg::No), ("dns-interface", Arg::Required),
        ("dns-ipv4-addr", Arg::Required), ("dns-ipv6-addr", Arg::Required),
        ("dns-servers", Arg::Required), ("doh-cert-status", Arg::No), ("doh-insecure", Arg::No),
        ("doh-url", Arg::Required), ("dump-header", Arg::Required), ("egd-file", Arg::Required),
        ("engine", Arg::Required), ("etag-compare", Arg::Required), ("etag-save", Arg::Required),
        ("expect100-timeout", Arg::Required), ("fail", Arg::No), ("fail-early", Arg::No),
        ("fail-with-body", Arg::No), ("false-start", Arg::No), ("form", Arg::Required),
        ("form-escape", Arg::No), ("form-string", Arg::Required), ("ftp-account", Arg::Required),
        ("ftp-alternative-to-user", Arg::Required), ("ftp-create-dirs", Arg::No),
        ("ftp-method", Arg::Required), ("ftp-pasv", Arg::No), ("ftp-port", Arg::Required),
        ("ftp-pret", Arg::No), ("ftp-skip-pasv-ip", Arg::No), ("ftp-ssl-ccc", Arg::No),
        ("ftp-ssl-ccc-mode", Arg::Required), ("ftp-ssl-control", Arg::No), ("get", Arg::No),
        ("globoff", Arg::No), ("happy-eyeballs-timeout-ms", Arg::Required),
        ("haproxy-protocol", Arg::No), ("head", Arg::No), ("header", Arg::Required),
        ("help", Arg::No), ("hostpubmd5", Arg::Required), ("hostpubsha256", Arg::Required),
        ("hsts", Arg::Required), ("http0.9", Arg::No), ("http1.0", Arg::No), ("http1.1", Arg::No),
        ("http2", Arg::No), ("http2-prior-knowledge", Arg::No), ("http3", Arg::No),
        ("http3-only", Arg::No), ("ignore-content-length", Arg::No), ("include", Arg::No),
        ("insecure", Arg::No), ("interface", Arg::Required), ("ipv4", Arg::No), ("ipv6", Arg::No),
        ("json", Arg::Required), ("junk-session-cookies", Arg::No),
        ("keepalive-time", Arg::Required), ("key", Arg::Required), ("key-type", Arg::Required),
        ("krb", Arg::Required), ("libcurl", Arg::Required), ("limit-rate", Arg::Required),
        ("list-only", Arg::No), ("local-port", Arg::Required), ("location", Arg::No),
        ("location-trusted", Arg::No), ("login-options", Arg::Required),
        ("mail-auth", Arg::Required), ("mail-from", Arg::Required), ("mail-rcpt", Arg::Required),
        ("mail-rcpt-allowfails", Arg::No), ("manual", Arg::No), ("max-filesize", Arg::Required),
        ("max-redirs", Arg::Required), ("max-time", Arg::Required), ("metalink", Arg::No),
        ("negotiate", Arg::No), ("netrc", Arg::No), ("netrc-file", Arg::Required),
        ("netrc-optional", Arg::No), ("next", Arg::No), ("no-alpn", Arg::No),
        ("no-buffer", Arg::No), ("no-clobber", Arg::No), ("no-keepalive", Arg::No),
        ("no-npn", Arg::No), ("no-progress-meter", Arg::No), ("no-sessionid", Arg::No),
        ("noproxy", Arg::Required), ("ntlm", Arg::No), ("ntlm-wb", Arg::No),
        ("oauth2-bearer", Arg::Required), ("output", Arg::Required), ("output-dir", Arg::Required),
        ("parallel", Arg::No), ("parallel-immediate", Arg::No), ("parallel-max", Arg::Required),
        ("pass", Arg::Required), ("path-as-is", Arg::No), ("pinnedpubkey", Arg::Required),
        ("post301", Arg::No), ("post302", Arg::No), ("post303", Arg::No), ("preproxy", Arg::No),
        ("progress-bar", Arg::No), ("proto", Arg::Required), ("proto-default", Arg::Required),
        ("proto-redir", Arg::Required), ("proxy", Arg::No), ("proxy-anyauth", Arg::No),
        ("proxy-basic", Arg::No), ("proxy-cacert", Arg::Required), ("proxy-capath", Arg::Required),
        ("proxy-cert", Arg::Required), ("proxy-cert-type", Arg::Required),
        ("proxy-ciphers", Arg::Required), ("proxy-crlfile", Arg::Required),
        ("proxy-digest", Arg::No), ("proxy-header", Arg::Required), ("proxy-insecure", Arg::No),
        ("proxy-key", Arg::Required), ("proxy-key-type", Arg::Required),
        ("proxy-negotiate", Arg::No), ("proxy-ntlm", Arg::No), ("proxy-pass", Arg::Required),
        ("proxy-pinnedpubkey", Arg::Required), ("proxy-service-name", Arg::Required),
        ("proxy-ssl-allow-beast", Arg::No), ("proxy-ssl-auto-client-cert", Arg::No),
        ("proxy-tls13-ciphers", Arg::Required), ("proxy-tlsauthtype", Arg::Required),
        ("proxy-tlspassword", Arg::Required), ("proxy-tlsuser", Arg::Required),
        ("proxy-tlsv1", Arg::No), ("proxy-user", Arg::Required), ("proxy1.0", Arg::Required),
        ("proxytunnel", Arg::No), ("pubkey", Arg::Required), ("quote", Arg::Required),
        ("random-file", Arg::Required), ("range", Arg::Required), ("rate", Arg::Required),
        ("raw", Arg::No), ("referer", Arg::Required), ("remote-header-name", Arg::No),
        ("remote-name", Arg::No), ("remote-name-all", Arg::No), ("remote-time", Arg::No),
        ("remove-on-error", Arg::No), ("request", Arg::Required),
        ("request-target", Arg::Required), ("resolve", Arg::Required), ("retry", Arg::Required),
        ("retry-all-errors", Arg::No), ("retry-connrefused", Arg::No),
        ("retry-delay", Arg::Required), ("retry-max-time", Arg::Required),
        ("sasl-authzid", Arg::Required), ("sasl-ir", Arg::No), ("service-name", Arg::Required),
        ("show-error", Arg::No), ("silent", Arg::No), ("socks4", Arg::Required),
        ("socks4a", Arg::Required), ("socks5", Arg::Required), ("socks5-basic", Arg::No),
        ("socks5-gssapi", Arg::No), ("socks5-gssapi-nec", Arg::No),
        ("socks5-gssapi-service", Arg::Required), ("socks5-hostname", Arg::Required),
        ("speed-limit", Arg::Required), ("speed-time", Arg::Required), ("ssl", Arg::No),
        ("ssl-allow-beast", Arg::No), ("ssl-auto-client-cert", Arg::No),
        ("ssl-no-revoke", Arg::No), ("ssl-reqd", Arg::No), ("ssl-revoke-best-effort", Arg::No),
        ("sslv2", Arg::No), ("sslv3", Arg::No), ("stderr", Arg::Required),
        ("styled-output", Arg::No), ("suppress-connect-headers", Arg::No),
        ("tcp-fastopen", Arg::No), ("tcp-nodelay", Arg::No), ("telnet-option", Arg::Required),
        ("tftp-blksize", Arg::Required), ("tftp-no-options", Arg::No),
        ("time-cond", Arg::Required), ("tls-max", Arg::Required), ("tls13-ciphers", Arg::Required),
        ("tlsauthtype", Arg::Required), ("tlspassword", Arg::Required), ("tlsuser", Arg::Required),
        ("tlsv1", Arg::No), ("tlsv1.0", Arg::No), ("tlsv1.1", Arg::No), ("tlsv1.2", Arg::No),
        ("tlsv1.3", Arg::No), ("tr-encoding", Arg::No), ("trace", Arg::Required),
        ("trace-ascii", Arg::Required), ("trace-time", Arg::No), ("unix-socket", Arg::Required),
        ("upload-file", Arg::Required), ("url", Arg::Required), ("url-query", Arg::Required),
        ("use-ascii", Arg::No), ("user", Arg::Required), ("user-agent", Arg::Required),
        ("verbose", Arg::No), ("version", Arg::No), ("write-out", Arg::Required),
        ("xattr", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: true,
    ambiguous_takes_value: true,
};

/// Options that load code or reach a local service that runs programs.
const PROHIBITED_LONG: &[&str] = &["engine", "config", "unix-socket", "abstract-unix-socket"];

/// Options whose value `ENG` loads a key through an engine.
const KEY_TYPES: &[&str] = &["cert-type", "key-type", "proxy-cert-type", "proxy-key-type"];

const GLOB_NAME: &str = "curl output name made from a URL glob (#N in an output name, or \
     --remote-name with a globbing URL: the glob's text, .git among it, would name the file)";

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-fsSL", "https://example.com/x", "-o", "x"],
        &["--insec", "https://example.com"],
        &[
            "--no-progress-meter",
            "-H",
            "--engine: x",
            "https://example.com",
        ],
        &["-d", "@body.json", "--json", "{}", "https://example.com"],
        &[
            "--cert-type",
            "PEM",
            "--cert",
            "c.pem",
            "https://example.com",
        ],
    ],
    refuse: &[
        &["--engine", "/abs/x.so", "https://example.com"],
        &["--eng=/abs/x.so", "https://example.com"],
        &["-K", "cfg"],
        &["-sK-"],
        &["--confi", "cfg"],
        &["--key-type", "eng", "--key", "k", "https://example.com"],
        &[
            "--unix-socket",
            "/var/run/docker.sock",
            "http://x/containers/json",
        ],
        &["--abstract-unix", "x", "http://x/"],
        &["--some-future-option", "https://example.com"],
        &["-%", "https://example.com"],
        &["file:///w/{git}", "-o", ".#1/config"],
        &["-O", "http://h/.gi{t}"],
    ],
};

/// Checks curl's arguments, under both readings of an ambiguous abbreviation.
pub fn check(args: &[String]) -> Result<(), String> {
    for items in GRAMMAR.readings(args) {
        for item in &items {
            if let Some(option) = GRAMMAR.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "curl option {option}"
                )));
            }
            if item.long_is(PROHIBITED_LONG) || item.short_is(&['K']) {
                return Err("curl engine, configuration file or local socket option".into());
            }
            if item.long_is(KEY_TYPES)
                && item.value().is_some_and(|v| v.eq_ignore_ascii_case("eng"))
            {
                return Err("curl engine, configuration file or local socket option".into());
            }
        }
        check_glob_names(&items)?;
    }
    Ok(())
}

/// Refuses an output name that URL globbing fills in: `#N` in `-o`/`--output`/
/// `--output-dir` (refused whether or not a URL globs: such a name is rare, and the check
/// need not follow `--next`'s option groups), and `--remote-name` beside a URL with `{` or
/// `[` unless globbing is off for the whole call (`-g` without `--next`).
fn check_glob_names(items: &[Item<'_>]) -> Result<(), String> {
    let holds_glob_number = |v: &str| {
        v.split('#')
            .skip(1)
            .any(|after| after.starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut remote_name = false;
    let mut glob_url = false;
    let mut globoff = false;
    let mut next = false;
    for item in items {
        let output = item.short_is(&['o']) || item.long_is(&["output", "output-dir"]);
        if output && item.value().is_some_and(holds_glob_number) {
            return Err(GLOB_NAME.into());
        }
        remote_name |= item.short_is(&['O']) || item.long_is(&["remote-name", "remote-name-all"]);
        globoff |= item.short_is(&['g']) || item.long_is(&["globoff"]);
        next |= item.short_is(&[':']) || item.long_is(&["next"]);
        let url = match item {
            Item::Operand(u) => Some(*u),
            _ if item.long_is(&["url"]) => item.value(),
            _ => None,
        };
        glob_url |= url.is_some_and(|u| u.contains(['{', '[']));
    }
    let globbing = !globoff || next;
    if remote_name && glob_url && globbing {
        return Err(GLOB_NAME.into());
    }
    Ok(())
}
