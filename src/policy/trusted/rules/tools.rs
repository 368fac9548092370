//! Rules for crypto and archive programs that load code or run programs named in their
//! arguments: openssl (engines, providers, configuration files that load them), ssh-keygen
//! (PKCS#11 and FIDO provider libraries) and cpio (rsh commands and remote archives); gpg's
//! rule is in `gpg`. Every
//! argument is examined as a possible option, values included: these rules can only refuse
//! more than the program would do, never less.

use crate::policy::trusted::getopt::{Arg, Grammar, Item};

/// openssl's subcommands that are accepted: the standard commands but `engine` (loads an
/// engine, which may be a library named by path) and `fipsinstall` (loads a provider module
/// named by path), and the digest and cipher names that stand for `dgst` and `enc`. Without a
/// subcommand openssl reads commands from stdin (`engine -pre SO_PATH:…` among them), and an
/// unknown one may be a newer command: both are refused.
const OPENSSL_COMMANDS: &[&str] = &[
    "asn1parse",
    "ca",
    "ciphers",
    "cmp",
    "cms",
    "crl",
    "crl2pkcs7",
    "dgst",
    "dhparam",
    "dsa",
    "dsaparam",
    "ec",
    "ecparam",
    "enc",
    "errstr",
    "gendsa",
    "genpkey",
    "genrsa",
    "help",
    "info",
    "kdf",
    "list",
    "mac",
    "nseq",
    "ocsp",
    "passwd",
    "pkcs12",
    "pkcs7",
    "pkcs8",
    "pkey",
    "pkeyparam",
    "pkeyutl",
    "prime",
    "rand",
    "rehash",
    "req",
    "rsa",
    "rsautl",
    "s_client",
    "s_server",
    "s_time",
    "sess_id",
    "smime",
    "speed",
    "spkac",
    "srp",
    "storeutl",
    "ts",
    "verify",
    "version",
    "x509",
    "base64",
    "zlib",
    "md4",
    "md5",
    "rmd160",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha512-224",
    "sha512-256",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "shake128",
    "shake256",
    "sm3",
    "blake2b512",
    "blake2s256",
];

/// Cipher families whose names (`aes-256-cbc`, `des-ede3`) stand for `enc`.
const OPENSSL_CIPHERS: &[&str] = &[
    "aes-",
    "aria-",
    "bf",
    "camellia-",
    "cast",
    "des",
    "rc2",
    "rc4",
    "seed",
    "sm4",
    "chacha20",
    "idea",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const OPENSSL_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["version"],
        &["x509", "-in", "c.pem", "-noout", "-text"],
        &[
            "s_client",
            "-connect",
            "example.com:443",
            "-servername",
            "example.com",
        ],
        &["dgst", "-sha256", "f"],
        &["aes-256-cbc", "-d", "-in", "x", "-pass", "file:k"],
        &["req", "-new", "-key", "k.pem", "-subj", "/CN=x"],
    ],
    refuse: &[
        &[],
        &["engine", "/abs/x.so"],
        &["engine", "-t", "dynamic", "-pre", "SO_PATH:/abs/x.so"],
        &["s_client", "-ssl_client_engine", "x", "-connect", "h:443"],
        &["s_client", "--engine=/abs/x.so"],
        &["req", "-config", "x.cnf"],
        &[
            "x509",
            "-in",
            "c.pem",
            "-provider-path",
            "/abs",
            "-provider",
            "x",
        ],
        &["pkey", "-in", "org.openssl.engine:x:y"],
        &["pkey", "-keyform", "ENGINE", "-in", "k"],
        &["fipsinstall", "-module", "/abs/x.so"],
        &["future-command"],
    ],
};

/// openssl: a known subcommand first (`OPENSSL_COMMANDS`), and no argument that names an
/// engine or a provider (`-engine`, `-ssl_client_engine`, `-provider-path`,
/// `org.openssl.engine:` key addresses, `-keyform ENGINE`) or a configuration file (`-config`,
/// `-conf`), which can load both. openssl checks the rest of its options itself, and none of
/// them loads code.
pub fn check_openssl(args: &[String]) -> Result<(), String> {
    let reject = || Err("openssl engine, provider or configuration option".to_string());
    let known = args.first().is_some_and(|sub| {
        OPENSSL_COMMANDS.contains(&sub.as_str())
            || OPENSSL_CIPHERS.iter().any(|c| sub.starts_with(c))
    });
    if !known {
        return Err(format!(
            "openssl without a known subcommand (it reads commands from stdin without one; \
             accepted: {}, and cipher names)",
            OPENSSL_COMMANDS.join(", ")
        ));
    }
    for arg in args {
        let lower = arg.to_ascii_lowercase();
        if lower.contains("engine") || lower.contains("provider") {
            return reject();
        }
        let name = arg.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        if arg.starts_with('-') && ["config", "conf"].contains(&name) {
            return reject();
        }
    }
    Ok(())
}

/// ssh-keygen's options (OpenSSH 9.2's optstring), read with getopt. OpenSSH's own getopt stops
/// at the first operand; reading on past it only finds more options to judge. `-g` is a flag
/// (the optstring lists it twice, and getopt takes the first). There are no long options.
#[rustfmt::skip]
const SSH_KEYGEN: Grammar = Grammar {
    short: &[
        ('A', Arg::No), ('B', Arg::No), ('H', Arg::No), ('K', Arg::No), ('L', Arg::No),
        ('Q', Arg::No), ('U', Arg::No), ('X', Arg::No), ('c', Arg::No), ('e', Arg::No),
        ('g', Arg::No), ('h', Arg::No), ('i', Arg::No), ('k', Arg::No), ('l', Arg::No),
        ('o', Arg::No), ('p', Arg::No), ('q', Arg::No), ('u', Arg::No), ('v', Arg::No),
        ('y', Arg::No), ('C', Arg::Required), ('D', Arg::Required), ('E', Arg::Required),
        ('F', Arg::Required), ('I', Arg::Required), ('M', Arg::Required), ('N', Arg::Required),
        ('O', Arg::Required), ('P', Arg::Required), ('R', Arg::Required), ('V', Arg::Required),
        ('Y', Arg::Required), ('Z', Arg::Required), ('a', Arg::Required), ('b', Arg::Required),
        ('f', Arg::Required), ('m', Arg::Required), ('n', Arg::Required), ('r', Arg::Required),
        ('s', Arg::Required), ('t', Arg::Required), ('w', Arg::Required), ('z', Arg::Required),
    ],
    long: &[],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: false,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SSH_KEYGEN_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-t", "ed25519", "-f", "key", "-N", ""],
        &["-l", "-f", "key.pub"],
        &["-lvf", "key.pub"],
        &["-y", "-f", "-D"],
        &["-Y", "sign", "-f", "key", "-n", "file", "data.txt"],
        &[
            "-I", "id", "-s", "ca", "-n", "user", "-V", "+52w", "key.pub",
        ],
        &["-R", "host", "-f", "known_hosts"],
    ],
    refuse: &[
        &["-D", "/x.so"],
        &["-w", "/x.so", "-t", "ed25519-sk"],
        &["-lD", "/x.so"],
        &["-qD/x.so"],
        &["-K", "-w/x.so"],
        &["-f", "key", "-D", "/x.so"],
        &["key.pub", "-D", "/x.so"],
        &["-x"],
        &["-lJ", "key"],
        &["--help"],
    ],
};

/// ssh-keygen: `-D` (PKCS#11) and `-w` (FIDO provider) load a library; an option the grammar
/// does not have is refused (a newer ssh-keygen may load something with it).
pub fn check_ssh_keygen(args: &[String]) -> Result<(), String> {
    for item in SSH_KEYGEN.parse(args) {
        if matches!(item, Item::Short('D' | 'w', _)) {
            return Err("ssh-keygen provider library option".to_string());
        }
        // It has no long options: every `--name` is unknown.
        if let Some(option) = SSH_KEYGEN.unknown(&item) {
            return Err(format!(
                "ssh-keygen option {option} is not known to the rule"
            ));
        }
    }
    Ok(())
}

/// GNU cpio 2.13's options (argp: getopt_long with permutation and abbreviations), with argp's
/// own `--help`, `--usage`, `--version`, `--program-name` and `-?`.
#[rustfmt::skip]
const CPIO: Grammar = Grammar {
    short: &[
        ('o', Arg::No), ('i', Arg::No), ('p', Arg::No), ('t', Arg::No), ('D', Arg::Required),
        ('0', Arg::No), ('a', Arg::No), ('F', Arg::Required), ('H', Arg::Required),
        ('B', Arg::No), ('c', Arg::No), ('C', Arg::Required), ('M', Arg::Required),
        ('v', Arg::No), ('V', Arg::No), ('W', Arg::Required), ('f', Arg::No), ('n', Arg::No),
        ('E', Arg::Required), ('r', Arg::No), ('b', Arg::No), ('s', Arg::No), ('S', Arg::No),
        ('I', Arg::Required), ('O', Arg::Required), ('A', Arg::No), ('l', Arg::No),
        ('L', Arg::No), ('R', Arg::Required), ('d', Arg::No), ('m', Arg::No), ('u', Arg::No),
        ('?', Arg::No),
    ],
    long: &[
        ("create", Arg::No), ("extract", Arg::No), ("pass-through", Arg::No), ("list", Arg::No),
        ("directory", Arg::Required), ("null", Arg::No), ("file", Arg::Required),
        ("force-local", Arg::No), ("format", Arg::Required), ("block-size", Arg::Required),
        ("io-size", Arg::Required), ("message", Arg::Required), ("quiet", Arg::No),
        ("rsh-command", Arg::Required), ("verbose", Arg::No), ("dot", Arg::No),
        ("warning", Arg::Required), ("nonmatching", Arg::No), ("numeric-uid-gid", Arg::No),
        ("pattern-file", Arg::Required), ("only-verify-crc", Arg::No), ("rename", Arg::No),
        ("rename-batch-file", Arg::Required), ("swap", Arg::No), ("swap-bytes", Arg::No),
        ("swap-halfwords", Arg::No), ("to-stdout", Arg::No), ("absolute-filenames", Arg::No),
        ("no-absolute-filenames", Arg::No), ("append", Arg::No),
        ("device-independent", Arg::No), ("reproducible", Arg::No), ("ignore-devno", Arg::No),
        ("renumber-inodes", Arg::No), ("link", Arg::No), ("dereference", Arg::No),
        ("owner", Arg::Required), ("reset-access-time", Arg::No), ("make-directories", Arg::No),
        ("preserve-modification-time", Arg::No), ("no-preserve-owner", Arg::No),
        ("sparse", Arg::No), ("unconditional", Arg::No), ("ignore-dirnlink", Arg::No),
        ("help", Arg::No), ("usage", Arg::No), ("version", Arg::No),
        ("program-name", Arg::Required),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const CPIO_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-o", "-F", "archive.cpio"],
        &["-i", "--force-local", "-F", "host:x"],
        &["-idv"],
        &["-i", "-F", "./h:a"],
        &["-o", "-H", "newc", "-F", "a.cpio"],
        &["--create", "--format=newc", "--file", "a.cpio"],
        &["-pdm", "dest"],
        &[
            "-i",
            "--no-absolute-filenames",
            "-E",
            "patterns",
            "--to-stdout",
        ],
        &["-t", "-I", "a.cpio"],
    ],
    refuse: &[
        &["--rsh-command=sh", "-o", "-F", "h:x"],
        &["--rsh=sh", "-i"],
        &["--r=sh", "-i"],
        &["-o", "-F", "host:archive"],
        &["-oFhost:x"],
        &["--file=h:a", "-i"],
        &["--fi", "h:a", "-i"],
        &["-i", "-I", "host:a"],
        &["-o", "-O", "user@host:a"],
        &["--future-option", "-i"],
        &["-ij"],
    ],
};

/// cpio: `--rsh-command` in any spelling, and remote archives (`-F host:file`, `-I`, `-O`,
/// `--file`: cpio runs rsh for them) unless `--force-local` says they are local, as for tar;
/// an option the grammar does not have is refused (a newer cpio may run something with it).
pub fn check_cpio(args: &[String]) -> Result<(), String> {
    let reject = || Err("cpio remote archive or rsh command".to_string());
    for items in CPIO.readings(args) {
        let force_local = items.iter().any(
            |item| matches!(item, Item::Long { candidates, .. } if candidates == &["force-local"]),
        );
        for item in &items {
            if let Some(option) = CPIO.unknown(item) {
                return Err(format!("cpio option {option} is not known to the rule"));
            }
            if item.long_is(&["rsh-command"]) {
                return reject();
            }
            let archive = item.short_is(&['F', 'I', 'O']) || item.long_is(&["file"]);
            let remote = |v: &str| v.find(':').is_some_and(|c| !v[..c].contains('/'));
            if archive && !force_local && item.value().is_some_and(remote) {
                return reject();
            }
        }
    }
    Ok(())
}
