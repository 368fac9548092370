//! gpg and gpgv: closed grammars. The option lists are GnuPG 2.2's own tables (`gpg
//! --dump-option-table`, `gpgv --dump-option-table`: each long name, its short letter and
//! whether it takes a value), with gpg's two short options that have no long name (`-t`,
//! `-z`) and argparse's `-h` and `-?`. GnuPG's argparse takes long options by any unambiguous
//! prefix (`--list-k`), `--name=value` or the next argument, short options clustered, and
//! options after operands; an option the grammar does not have is refused, naming it (a newer
//! or older gpg may run or load something with it).
//!
//! Refused, in every spelling, and why:
//! - `--photo-viewer` and `--show-photos`, `--list-options`, `--verify-options` (whose
//!   `show-photos` runs the photo viewer);
//! - `--exec-path` (the `PATH` of the helpers gpg runs), `--agent-program` and
//!   `--dirmngr-program` (the agent and dirmngr it starts: `gpg --agent-program ./x
//!   --card-status` runs `./x`), `--keyserver-options` (older gpgs name keyserver helpers
//!   there);
//! - `--load-extension` (a cipher module; ignored by 2.2, loaded by 1.4), `--ctapi-driver` and
//!   `--pcsc-driver` (a card reader library; ignored by 2.2, loaded by 1.4);
//! - `--options` (a file of options, all of the above among them) and `--homedir` (its
//!   `gpg.conf` and `gpg-agent.conf` name programs: a planted `gpg.conf` with
//!   `agent-program ./x` runs `./x`); `GNUPGHOME` is the environment's, which a call cannot
//!   set;
//! - the interactive editors (`--edit-key`, `--key-edit`, `--edit-card`, `--card-edit`) and
//!   `--command-fd`/`--command-file`, which feed them commands (`showphoto` runs the photo
//!   viewer), and `--server`, which reads commands from stdin.
//!
//! `--trust-model`, `--pinentry-mode`, `--keyserver` and the key-fetching commands only
//! choose among gpg's own behaviours (the network is dirmngr's, which gpg starts from its own
//! installation).

use crate::policy::trusted::getopt::{Arg, Grammar};

/// gpg 2.2.40's options.
#[rustfmt::skip]
const GPG: Grammar = Grammar {
    short: &[
        ('?', Arg::No), ('F', Arg::Required), ('K', Arg::No), ('N', Arg::Required),
        ('R', Arg::Required), ('a', Arg::No), ('b', Arg::No), ('c', Arg::No), ('d', Arg::No),
        ('e', Arg::No), ('f', Arg::Required), ('h', Arg::No), ('i', Arg::No), ('k', Arg::No),
        ('n', Arg::No), ('o', Arg::Required), ('q', Arg::No), ('r', Arg::Required), ('s', Arg::No),
        ('t', Arg::No), ('u', Arg::Required), ('v', Arg::No), ('z', Arg::Required),
    ],
    long: &[
        ("sign", Arg::No), ("clear-sign", Arg::No), ("clearsign", Arg::No),
        ("detach-sign", Arg::No), ("encrypt", Arg::No), ("encrypt-files", Arg::No),
        ("symmetric", Arg::No), ("store", Arg::No), ("decrypt", Arg::No),
        ("decrypt-files", Arg::No), ("verify", Arg::No), ("verify-files", Arg::No),
        ("list-keys", Arg::No), ("list-public-keys", Arg::No), ("list-signatures", Arg::No),
        ("list-sigs", Arg::No), ("check-signatures", Arg::No), ("check-sigs", Arg::No),
        ("fingerprint", Arg::No), ("list-secret-keys", Arg::No), ("generate-key", Arg::No),
        ("gen-key", Arg::No), ("quick-generate-key", Arg::No), ("quick-gen-key", Arg::No),
        ("quick-add-uid", Arg::No), ("quick-adduid", Arg::No), ("quick-add-key", Arg::No),
        ("quick-addkey", Arg::No), ("quick-revoke-uid", Arg::No), ("quick-revuid", Arg::No),
        ("quick-set-expire", Arg::No), ("quick-set-primary-uid", Arg::No),
        ("full-generate-key", Arg::No), ("full-gen-key", Arg::No),
        ("generate-revocation", Arg::No), ("gen-revoke", Arg::No), ("delete-keys", Arg::No),
        ("delete-secret-keys", Arg::No), ("quick-sign-key", Arg::No), ("quick-lsign-key", Arg::No),
        ("quick-revoke-sig", Arg::No), ("sign-key", Arg::No), ("lsign-key", Arg::No),
        ("edit-key", Arg::No), ("key-edit", Arg::No), ("change-passphrase", Arg::No),
        ("passwd", Arg::No), ("generate-designated-revocation", Arg::No),
        ("desig-revoke", Arg::No), ("export", Arg::No), ("send-keys", Arg::No),
        ("receive-keys", Arg::No), ("recv-keys", Arg::No), ("search-keys", Arg::No),
        ("refresh-keys", Arg::No), ("locate-keys", Arg::No), ("locate-external-keys", Arg::No),
        ("fetch-keys", Arg::No), ("show-keys", Arg::No), ("export-secret-keys", Arg::No),
        ("export-secret-subkeys", Arg::No), ("export-ssh-key", Arg::No), ("import", Arg::No),
        ("fast-import", Arg::No), ("card-status", Arg::No), ("edit-card", Arg::No),
        ("card-edit", Arg::No), ("change-pin", Arg::No), ("list-config", Arg::No),
        ("list-gcrypt-config", Arg::No), ("gpgconf-list", Arg::No), ("gpgconf-test", Arg::No),
        ("list-packets", Arg::No), ("export-ownertrust", Arg::No), ("import-ownertrust", Arg::No),
        ("update-trustdb", Arg::No), ("check-trustdb", Arg::No), ("fix-trustdb", Arg::No),
        ("list-trustdb", Arg::No), ("dearmor", Arg::No), ("dearmour", Arg::No),
        ("enarmor", Arg::No), ("enarmour", Arg::No), ("print-md", Arg::No), ("print-mds", Arg::No),
        ("gen-prime", Arg::No), ("gen-random", Arg::No), ("server", Arg::No),
        ("tofu-policy", Arg::No), ("delete-secret-and-public-keys", Arg::No),
        ("rebuild-keydb-caches", Arg::No), ("list-key", Arg::No), ("list-sig", Arg::No),
        ("check-sig", Arg::No), ("show-key", Arg::No), ("verbose", Arg::No),
        ("no-verbose", Arg::No), ("quiet", Arg::No), ("no-tty", Arg::No), ("no-greeting", Arg::No),
        ("debug", Arg::Required), ("debug-level", Arg::Required), ("debug-all", Arg::No),
        ("debug-iolbf", Arg::No), ("display-charset", Arg::Required), ("charset", Arg::Required),
        ("options", Arg::Required), ("no-options", Arg::No), ("logger-fd", Arg::Required),
        ("log-file", Arg::Required), ("logger-file", Arg::Required),
        ("debug-quick-random", Arg::No), ("homedir", Arg::Required),
        ("faked-system-time", Arg::Required), ("default-key", Arg::Required),
        ("encrypt-to", Arg::Required), ("no-encrypt-to", Arg::No),
        ("hidden-encrypt-to", Arg::Required), ("encrypt-to-default-key", Arg::No),
        ("default-recipient", Arg::Required), ("default-recipient-self", Arg::No),
        ("no-default-recipient", Arg::No), ("group", Arg::Required), ("ungroup", Arg::Required),
        ("no-groups", Arg::No), ("compliance", Arg::Required), ("gnupg", Arg::No),
        ("no-pgp2", Arg::No), ("no-pgp6", Arg::No), ("no-pgp7", Arg::No), ("no-pgp8", Arg::No),
        ("rfc2440", Arg::No), ("rfc4880", Arg::No), ("rfc4880bis", Arg::No), ("openpgp", Arg::No),
        ("pgp6", Arg::No), ("pgp7", Arg::No), ("pgp8", Arg::No),
        ("default-new-key-algo", Arg::Required), ("min-rsa-length", Arg::Required),
        ("always-trust", Arg::No), ("trust-model", Arg::Required), ("photo-viewer", Arg::Required),
        ("known-notation", Arg::Required), ("agent-program", Arg::Required),
        ("dirmngr-program", Arg::Required), ("exit-on-status-write-error", Arg::No),
        ("limit-card-insert-tries", Arg::Required), ("enable-progress-filter", Arg::No),
        ("temp-directory", Arg::Required), ("exec-path", Arg::Required), ("expert", Arg::No),
        ("no-expert", Arg::No), ("no-secmem-warning", Arg::No), ("require-secmem", Arg::No),
        ("no-require-secmem", Arg::No), ("no-permission-warning", Arg::No), ("dry-run", Arg::No),
        ("interactive", Arg::No), ("default-sig-expire", Arg::Required),
        ("ask-sig-expire", Arg::No), ("no-ask-sig-expire", Arg::No),
        ("default-cert-expire", Arg::Required), ("ask-cert-expire", Arg::No),
        ("no-ask-cert-expire", Arg::No), ("default-cert-level", Arg::Required),
        ("min-cert-level", Arg::Required), ("ask-cert-level", Arg::No),
        ("no-ask-cert-level", Arg::No), ("only-sign-text-ids", Arg::No),
        ("enable-large-rsa", Arg::No), ("disable-large-rsa", Arg::No), ("enable-dsa2", Arg::No),
        ("disable-dsa2", Arg::No), ("personal-cipher-preferences", Arg::Required),
        ("personal-digest-preferences", Arg::Required),
        ("personal-compress-preferences", Arg::Required),
        ("default-preference-list", Arg::Required), ("default-keyserver-url", Arg::Required),
        ("no-expensive-trust-checks", Arg::No), ("allow-non-selfsigned-uid", Arg::No),
        ("no-allow-non-selfsigned-uid", Arg::No), ("allow-freeform-uid", Arg::No),
        ("no-allow-freeform-uid", Arg::No), ("preserve-permissions", Arg::No),
        ("default-cert-check-level", Arg::Required), ("tofu-default-policy", Arg::Required),
        ("lock-once", Arg::No), ("lock-multiple", Arg::No), ("lock-never", Arg::No),
        ("compress-algo", Arg::Required), ("compression-algo", Arg::Required),
        ("bzip2-decompress-lowmem", Arg::No), ("completes-needed", Arg::Required),
        ("marginals-needed", Arg::Required), ("max-cert-depth", Arg::Required),
        ("trustdb-name", Arg::Required), ("auto-check-trustdb", Arg::No),
        ("no-auto-check-trustdb", Arg::No), ("force-ownertrust", Arg::Required),
        ("multifile", Arg::No), ("input-size-hint", Arg::Required), ("utf8-strings", Arg::No),
        ("no-utf8-strings", Arg::No), ("set-filesize", Arg::Required), ("no-literal", Arg::No),
        ("set-notation", Arg::Required), ("sig-notation", Arg::Required),
        ("cert-notation", Arg::Required), ("set-policy-url", Arg::Required),
        ("sig-policy-url", Arg::Required), ("cert-policy-url", Arg::Required),
        ("sig-keyserver-url", Arg::Required), ("armor", Arg::No), ("armour", Arg::No),
        ("no-armor", Arg::No), ("no-armour", Arg::No), ("output", Arg::Required),
        ("max-output", Arg::Required), ("comment", Arg::Required), ("default-comment", Arg::No),
        ("no-comments", Arg::No), ("emit-version", Arg::No), ("no-emit-version", Arg::No),
        ("no-version", Arg::No), ("not-dash-escaped", Arg::No), ("escape-from-lines", Arg::No),
        ("no-escape-from-lines", Arg::No), ("mimemode", Arg::No), ("textmode", Arg::No),
        ("no-textmode", Arg::No), ("set-filename", Arg::Required), ("for-your-eyes-only", Arg::No),
        ("no-for-your-eyes-only", Arg::No), ("show-notation", Arg::No),
        ("no-show-notation", Arg::No), ("show-session-key", Arg::No),
        ("use-embedded-filename", Arg::No), ("no-use-embedded-filename", Arg::No),
        ("unwrap", Arg::No), ("mangle-dos-filenames", Arg::No),
        ("no-mangle-dos-filenames", Arg::No), ("no-symkey-cache", Arg::No),
        ("skip-verify", Arg::No), ("list-only", Arg::No), ("compress-level", Arg::Required),
        ("bzip2-compress-level", Arg::Required), ("disable-signer-uid", Arg::No),
        ("auto-key-locate", Arg::Required), ("no-auto-key-locate", Arg::No),
        ("auto-key-import", Arg::No), ("no-auto-key-import", Arg::No),
        ("auto-key-retrieve", Arg::No), ("no-auto-key-retrieve", Arg::No),
        ("include-key-block", Arg::No), ("no-include-key-block", Arg::No),
        ("disable-dirmngr", Arg::No), ("keyserver", Arg::Required),
        ("keyserver-options", Arg::Required), ("key-origin", Arg::Required),
        ("import-options", Arg::Required), ("import-filter", Arg::Required),
        ("export-options", Arg::Required), ("export-filter", Arg::Required),
        ("merge-only", Arg::No), ("allow-secret-key-import", Arg::No),
        ("list-options", Arg::Required), ("show-photos", Arg::No), ("no-show-photos", Arg::No),
        ("show-policy-url", Arg::No), ("no-show-policy-url", Arg::No), ("with-colons", Arg::No),
        ("with-tofu-info", Arg::No), ("with-key-data", Arg::No), ("with-sig-list", Arg::No),
        ("with-sig-check", Arg::No), ("with-fingerprint", Arg::No),
        ("with-subkey-fingerprint", Arg::No), ("with-subkey-fingerprints", Arg::No),
        ("with-icao-spelling", Arg::No), ("with-keygrip", Arg::No), ("with-secret", Arg::No),
        ("with-wkd-hash", Arg::No), ("with-key-origin", Arg::No), ("fast-list-mode", Arg::No),
        ("fixed-list-mode", Arg::No), ("legacy-list-mode", Arg::No),
        ("print-pka-records", Arg::No), ("print-dane-records", Arg::No),
        ("keyid-format", Arg::Required), ("show-keyring", Arg::No), ("recipient", Arg::Required),
        ("hidden-recipient", Arg::Required), ("recipient-file", Arg::Required),
        ("hidden-recipient-file", Arg::Required), ("remote-user", Arg::Required),
        ("throw-keyids", Arg::No), ("no-throw-keyids", Arg::No), ("local-user", Arg::Required),
        ("trusted-key", Arg::Required), ("sender", Arg::Required),
        ("try-secret-key", Arg::Required), ("try-all-secrets", Arg::No),
        ("no-default-keyring", Arg::No), ("no-keyring", Arg::No), ("keyring", Arg::Required),
        ("primary-keyring", Arg::Required), ("secret-keyring", Arg::Required),
        ("skip-hidden-recipients", Arg::No), ("no-skip-hidden-recipients", Arg::No),
        ("override-session-key", Arg::Required), ("override-session-key-fd", Arg::Required),
        ("s2k-mode", Arg::Required), ("s2k-digest-algo", Arg::Required),
        ("s2k-cipher-algo", Arg::Required), ("s2k-count", Arg::Required),
        ("require-backsigs", Arg::No), ("require-cross-certification", Arg::No),
        ("no-require-backsigs", Arg::No), ("no-require-cross-certification", Arg::No),
        ("verify-options", Arg::Required), ("enable-special-filenames", Arg::No),
        ("no-random-seed-file", Arg::No), ("no-sig-cache", Arg::No),
        ("ignore-time-conflict", Arg::No), ("ignore-valid-from", Arg::No),
        ("ignore-crc-error", Arg::No), ("ignore-mdc-error", Arg::No),
        ("disable-cipher-algo", Arg::Required), ("disable-pubkey-algo", Arg::Required),
        ("cipher-algo", Arg::Required), ("digest-algo", Arg::Required),
        ("cert-digest-algo", Arg::Required), ("override-compliance-check", Arg::No),
        ("allow-weak-key-signatures", Arg::No), ("allow-weak-digest-algos", Arg::No),
        ("weak-digest", Arg::Required), ("allow-multisig-verification", Arg::No),
        ("allow-multiple-messages", Arg::No), ("no-allow-multiple-messages", Arg::No),
        ("batch", Arg::No), ("no-batch", Arg::No), ("yes", Arg::No), ("no", Arg::No),
        ("status-fd", Arg::Required), ("status-file", Arg::Required),
        ("attribute-fd", Arg::Required), ("attribute-file", Arg::Required),
        ("command-fd", Arg::Required), ("command-file", Arg::Required),
        ("passphrase", Arg::Optional), ("passphrase-fd", Arg::Required),
        ("passphrase-file", Arg::Required), ("passphrase-repeat", Arg::Required),
        ("pinentry-mode", Arg::Required), ("force-sign-key", Arg::No),
        ("request-origin", Arg::Required), ("display", Arg::Required), ("ttyname", Arg::Required),
        ("ttytype", Arg::Required), ("lc-ctype", Arg::Required), ("lc-messages", Arg::Required),
        ("xauthority", Arg::Required), ("no-autostart", Arg::No), ("forbid-gen-key", Arg::No),
        ("require-compliance", Arg::No), ("use-only-openpgp-card", Arg::No),
        ("rfc2440-text", Arg::No), ("no-rfc2440-text", Arg::No),
        ("personal-cipher-prefs", Arg::Required), ("personal-digest-prefs", Arg::Required),
        ("personal-compress-prefs", Arg::Required), ("sign-with", Arg::Required),
        ("user", Arg::Required), ("use-agent", Arg::No), ("no-use-agent", Arg::No),
        ("gpg-agent-info", Arg::Required), ("reader-port", Arg::Required),
        ("ctapi-driver", Arg::Required), ("pcsc-driver", Arg::Required), ("disable-ccid", Arg::No),
        ("honor-http-proxy", Arg::No), ("tofu-db-format", Arg::Required), ("strict", Arg::No),
        ("no-strict", Arg::No), ("load-extension", Arg::No), ("sk-comments", Arg::No),
        ("no-sk-comments", Arg::No), ("compress-keys", Arg::No), ("compress-sigs", Arg::No),
        ("force-v3-sigs", Arg::No), ("no-force-v3-sigs", Arg::No), ("force-v4-certs", Arg::No),
        ("no-force-v4-certs", Arg::No), ("no-mdc-warning", Arg::No), ("force-mdc", Arg::No),
        ("no-force-mdc", Arg::No), ("disable-mdc", Arg::No), ("no-disable-mdc", Arg::No),
        ("help", Arg::No), ("version", Arg::No), ("warranty", Arg::No),
        ("dump-option-table", Arg::No), ("dump-options", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// gpgv 2.2.40's options.
#[rustfmt::skip]
const GPGV: Grammar = Grammar {
    short: &[
        ('?', Arg::No), ('h', Arg::No), ('o', Arg::Required), ('q', Arg::No), ('v', Arg::No),
    ],
    long: &[
        ("verbose", Arg::No), ("quiet", Arg::No), ("keyring", Arg::Required),
        ("output", Arg::Required), ("ignore-time-conflict", Arg::No), ("status-fd", Arg::Required),
        ("logger-fd", Arg::Required), ("log-file", Arg::Required), ("homedir", Arg::Required),
        ("weak-digest", Arg::Required), ("enable-special-filenames", Arg::No),
        ("debug", Arg::Required), ("help", Arg::No), ("version", Arg::No), ("warranty", Arg::No),
        ("dump-option-table", Arg::No), ("dump-options", Arg::No),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// gpg's options that run or load something, or read options or commands that may.
const PROHIBITED: &[&str] = &[
    "photo-viewer",
    "show-photos",
    "list-options",
    "verify-options",
    "exec-path",
    "agent-program",
    "dirmngr-program",
    "keyserver-options",
    "load-extension",
    "ctapi-driver",
    "pcsc-driver",
    "options",
    "homedir",
    "edit-key",
    "key-edit",
    "edit-card",
    "card-edit",
    "command-fd",
    "command-file",
    "server",
];

/// The reason of every refusal but an unknown option's.
const REASON: &str = "gpg external program or option file";

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const GPG_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["--verify", "x.sig", "x"],
        &["--list-keys"],
        &["--list-k"],
        &["--batch", "--decrypt", "x.gpg"],
        &["--armor", "--export", "x"],
        &["-d", "f.gpg"],
        &["-k"],
        &["--", "--homedir"],
        &["-o", "out", "-r", "--homedir", "-e", "f"],
        &[
            "--batch", "--yes", "-z", "0", "-se", "-u", "me", "-r", "you", "f",
        ],
        &["--no-show-photos", "--with-colons", "--fingerprint"],
        &[
            "--pinentry-mode=loopback",
            "--passphrase-file",
            "p",
            "-c",
            "f",
        ],
        &[
            "--keyserver",
            "hkps://keys.openpgp.org",
            "--recv-keys",
            "ABCD",
        ],
        &["--trust-model", "always", "--import", "k.asc"],
        &["--no-options", "--list-packets", "f.gpg"],
    ],
    refuse: &[
        &["--photo-viewer", "x", "--list-keys"],
        &["--photo-v=sh"],
        &["--show-photos", "--list-keys"],
        &["--list-options", "show-photos", "-k"],
        &["--verify-o=show-photos", "--verify", "x.sig"],
        &["--load-extension", "/abs/x.so"],
        &["--pcsc-driver", "./x.so", "--card-status"],
        &["--homedir", "h", "--list-keys"],
        &["--home=h"],
        &["--options", "o.conf", "-k"],
        &["--opt", "o.conf", "-k"],
        &["--edit-key", "k", "--command-fd", "0"],
        &["--key-edit", "k"],
        &["--card-e"],
        &["--batch", "--command-f", "cmds", "--edit", "k"],
        &["--exec-p", "/abs"],
        &["--agent-program", "./x", "--card-status"],
        &["--agent-p=./x"],
        &["--dirmngr-program", "./x", "--recv-keys", "k"],
        &["--keyserver-options", "x", "--recv-keys", "k"],
        &["--server"],
        &["-k", "--homedir", "h"],
        &["--some-future-option", "-k"],
        &["-x", "f"],
    ],
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const GPGV_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["x.sig", "x"],
        &["--keyring", "./trusted.kbx", "x.sig", "x"],
        &["-q", "--status-fd", "1", "x.sig"],
    ],
    refuse: &[
        &["--homedir", "h", "x.sig"],
        &["--home=h", "x.sig"],
        &["--photo-viewer", "x", "x.sig"],
        &["--some-future-option", "x.sig"],
        &["-k", "x.sig"],
    ],
};

/// gpg: the options in `PROHIBITED` in any spelling, and any option gpg 2.2 does not have.
pub fn check_gpg(args: &[String]) -> Result<(), String> {
    super::closed("gpg", &GPG, args, |item| {
        item.long_is(PROHIBITED).then(|| REASON.to_string())
    })
}

/// gpgv: `--homedir` (the directory whose keyring and configuration it reads, as for gpg) and
/// any option gpgv 2.2 does not have.
pub fn check_gpgv(args: &[String]) -> Result<(), String> {
    super::closed("gpgv", &GPGV, args, |item| {
        item.long_is(&["homedir"]).then(|| REASON.to_string())
    })
}
