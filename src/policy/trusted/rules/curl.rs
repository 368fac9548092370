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

use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

#[rustfmt::skip]
pub(crate) const GRAMMAR: Grammar = Grammar {
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
    long: Longs::words(
        "abstract-unix-socket= alt-svc= anyauth append aws-sigv4= basic cacert= capath= cert=
         cert-status cert-type= ciphers= compressed compressed-ssh config= connect-timeout=
         connect-to= continue-at= cookie= cookie-jar= create-dirs create-file-mode= crlf crlfile=
         curves= data= data-ascii= data-binary= data-raw= data-urlencode= delegation= digest
         disable disable-eprt disable-epsv disallow-username-in-url dns-interface= dns-ipv4-addr=
         dns-ipv6-addr= dns-servers= doh-cert-status doh-insecure doh-url= dump-header= egd-file=
         engine= etag-compare= etag-save= expect100-timeout= fail fail-early fail-with-body
         false-start form= form-escape form-string= ftp-account= ftp-alternative-to-user=
         ftp-create-dirs ftp-method= ftp-pasv ftp-port= ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc
         ftp-ssl-ccc-mode= ftp-ssl-control get globoff happy-eyeballs-timeout-ms=
         haproxy-protocol head header= help hostpubmd5= hostpubsha256= hsts= http0.9 http1.0
         http1.1 http2 http2-prior-knowledge http3 http3-only ignore-content-length include
         insecure interface= ipv4 ipv6 json= junk-session-cookies keepalive-time= key= key-type=
         krb= libcurl= limit-rate= list-only local-port= location location-trusted login-options=
         mail-auth= mail-from= mail-rcpt= mail-rcpt-allowfails manual max-filesize= max-redirs=
         max-time= metalink negotiate netrc netrc-file= netrc-optional next no-alpn no-buffer
         no-clobber no-keepalive no-npn no-progress-meter no-sessionid noproxy= ntlm ntlm-wb
         oauth2-bearer= output= output-dir= parallel parallel-immediate parallel-max= pass=
         path-as-is pinnedpubkey= post301 post302 post303 preproxy progress-bar proto=
         proto-default= proto-redir= proxy proxy-anyauth proxy-basic proxy-cacert= proxy-capath=
         proxy-cert= proxy-cert-type= proxy-ciphers= proxy-crlfile= proxy-digest proxy-header=
         proxy-insecure proxy-key= proxy-key-type= proxy-negotiate proxy-ntlm proxy-pass=
         proxy-pinnedpubkey= proxy-service-name= proxy-ssl-allow-beast proxy-ssl-auto-client-cert
         proxy-tls13-ciphers= proxy-tlsauthtype= proxy-tlspassword= proxy-tlsuser= proxy-tlsv1
         proxy-user= proxy1.0= proxytunnel pubkey= quote= random-file= range= rate= raw referer=
         remote-header-name remote-name remote-name-all remote-time remove-on-error request=
         request-target= resolve= retry= retry-all-errors retry-connrefused retry-delay=
         retry-max-time= sasl-authzid= sasl-ir service-name= show-error silent socks4= socks4a=
         socks5= socks5-basic socks5-gssapi socks5-gssapi-nec socks5-gssapi-service=
         socks5-hostname= speed-limit= speed-time= ssl ssl-allow-beast ssl-auto-client-cert
         ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2 sslv3 stderr= styled-output
         suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option= tftp-blksize=
         tftp-no-options time-cond= tls-max= tls13-ciphers= tlsauthtype= tlspassword= tlsuser=
         tlsv1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace= trace-ascii= trace-time
         unix-socket= upload-file= url= url-query= use-ascii user= user-agent= verbose version
         write-out= xattr",
    ),
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
