//! openssl: engines, providers and the configuration files that load them. Every argument is
//! examined as a possible option, values included: the rule can only refuse more than the
//! program would do, never less.

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
