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

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

/// gpg 2.2.40's options.
#[rustfmt::skip]
pub(crate) const GPG: Grammar = Grammar {
    short: &[
        ('?', Arg::No), ('F', Arg::Required), ('K', Arg::No), ('N', Arg::Required),
        ('R', Arg::Required), ('a', Arg::No), ('b', Arg::No), ('c', Arg::No), ('d', Arg::No),
        ('e', Arg::No), ('f', Arg::Required), ('h', Arg::No), ('i', Arg::No), ('k', Arg::No),
        ('n', Arg::No), ('o', Arg::Required), ('q', Arg::No), ('r', Arg::Required), ('s', Arg::No),
        ('t', Arg::No), ('u', Arg::Required), ('v', Arg::No), ('z', Arg::Required),
    ],
    long: Longs::words(
        "sign clear-sign clearsign detach-sign encrypt encrypt-files symmetric store decrypt
         decrypt-files verify verify-files list-keys list-public-keys list-signatures list-sigs
         check-signatures check-sigs fingerprint list-secret-keys generate-key gen-key
         quick-generate-key quick-gen-key quick-add-uid quick-adduid quick-add-key quick-addkey
         quick-revoke-uid quick-revuid quick-set-expire quick-set-primary-uid full-generate-key
         full-gen-key generate-revocation gen-revoke delete-keys delete-secret-keys
         quick-sign-key quick-lsign-key quick-revoke-sig sign-key lsign-key edit-key key-edit
         change-passphrase passwd generate-designated-revocation desig-revoke export send-keys
         receive-keys recv-keys search-keys refresh-keys locate-keys locate-external-keys
         fetch-keys show-keys export-secret-keys export-secret-subkeys export-ssh-key import
         fast-import card-status edit-card card-edit change-pin list-config list-gcrypt-config
         gpgconf-list gpgconf-test list-packets export-ownertrust import-ownertrust
         update-trustdb check-trustdb fix-trustdb list-trustdb dearmor dearmour enarmor enarmour
         print-md print-mds gen-prime gen-random server tofu-policy delete-secret-and-public-keys
         rebuild-keydb-caches list-key list-sig check-sig show-key verbose no-verbose quiet
         no-tty no-greeting debug= debug-level= debug-all debug-iolbf display-charset= charset=
         options= no-options logger-fd= log-file= logger-file= debug-quick-random homedir=
         faked-system-time= default-key= encrypt-to= no-encrypt-to hidden-encrypt-to=
         encrypt-to-default-key default-recipient= default-recipient-self no-default-recipient
         group= ungroup= no-groups compliance= gnupg no-pgp2 no-pgp6 no-pgp7 no-pgp8 rfc2440
         rfc4880 rfc4880bis openpgp pgp6 pgp7 pgp8 default-new-key-algo= min-rsa-length=
         always-trust trust-model= photo-viewer= known-notation= agent-program= dirmngr-program=
         exit-on-status-write-error limit-card-insert-tries= enable-progress-filter
         temp-directory= exec-path= expert no-expert no-secmem-warning require-secmem
         no-require-secmem no-permission-warning dry-run interactive default-sig-expire=
         ask-sig-expire no-ask-sig-expire default-cert-expire= ask-cert-expire no-ask-cert-expire
         default-cert-level= min-cert-level= ask-cert-level no-ask-cert-level only-sign-text-ids
         enable-large-rsa disable-large-rsa enable-dsa2 disable-dsa2 personal-cipher-preferences=
         personal-digest-preferences= personal-compress-preferences= default-preference-list=
         default-keyserver-url= no-expensive-trust-checks allow-non-selfsigned-uid
         no-allow-non-selfsigned-uid allow-freeform-uid no-allow-freeform-uid
         preserve-permissions default-cert-check-level= tofu-default-policy= lock-once
         lock-multiple lock-never compress-algo= compression-algo= bzip2-decompress-lowmem
         completes-needed= marginals-needed= max-cert-depth= trustdb-name= auto-check-trustdb
         no-auto-check-trustdb force-ownertrust= multifile input-size-hint= utf8-strings
         no-utf8-strings set-filesize= no-literal set-notation= sig-notation= cert-notation=
         set-policy-url= sig-policy-url= cert-policy-url= sig-keyserver-url= armor armour
         no-armor no-armour output= max-output= comment= default-comment no-comments emit-version
         no-emit-version no-version not-dash-escaped escape-from-lines no-escape-from-lines
         mimemode textmode no-textmode set-filename= for-your-eyes-only no-for-your-eyes-only
         show-notation no-show-notation show-session-key use-embedded-filename
         no-use-embedded-filename unwrap mangle-dos-filenames no-mangle-dos-filenames
         no-symkey-cache skip-verify list-only compress-level= bzip2-compress-level=
         disable-signer-uid auto-key-locate= no-auto-key-locate auto-key-import
         no-auto-key-import auto-key-retrieve no-auto-key-retrieve include-key-block
         no-include-key-block disable-dirmngr keyserver= keyserver-options= key-origin=
         import-options= import-filter= export-options= export-filter= merge-only
         allow-secret-key-import list-options= show-photos no-show-photos show-policy-url
         no-show-policy-url with-colons with-tofu-info with-key-data with-sig-list with-sig-check
         with-fingerprint with-subkey-fingerprint with-subkey-fingerprints with-icao-spelling
         with-keygrip with-secret with-wkd-hash with-key-origin fast-list-mode fixed-list-mode
         legacy-list-mode print-pka-records print-dane-records keyid-format= show-keyring
         recipient= hidden-recipient= recipient-file= hidden-recipient-file= remote-user=
         throw-keyids no-throw-keyids local-user= trusted-key= sender= try-secret-key=
         try-all-secrets no-default-keyring no-keyring keyring= primary-keyring= secret-keyring=
         skip-hidden-recipients no-skip-hidden-recipients override-session-key=
         override-session-key-fd= s2k-mode= s2k-digest-algo= s2k-cipher-algo= s2k-count=
         require-backsigs require-cross-certification no-require-backsigs
         no-require-cross-certification verify-options= enable-special-filenames
         no-random-seed-file no-sig-cache ignore-time-conflict ignore-valid-from ignore-crc-error
         ignore-mdc-error disable-cipher-algo= disable-pubkey-algo= cipher-algo= digest-algo=
         cert-digest-algo= override-compliance-check allow-weak-key-signatures
         allow-weak-digest-algos weak-digest= allow-multisig-verification allow-multiple-messages
         no-allow-multiple-messages batch no-batch yes no status-fd= status-file= attribute-fd=
         attribute-file= command-fd= command-file= passphrase? passphrase-fd= passphrase-file=
         passphrase-repeat= pinentry-mode= force-sign-key request-origin= display= ttyname=
         ttytype= lc-ctype= lc-messages= xauthority= no-autostart forbid-gen-key
         require-compliance use-only-openpgp-card rfc2440-text no-rfc2440-text
         personal-cipher-prefs= personal-digest-prefs= personal-compress-prefs= sign-with= user=
         use-agent no-use-agent gpg-agent-info= reader-port= ctapi-driver= pcsc-driver=
         disable-ccid honor-http-proxy tofu-db-format= strict no-strict load-extension
         sk-comments no-sk-comments compress-keys compress-sigs force-v3-sigs no-force-v3-sigs
         force-v4-certs no-force-v4-certs no-mdc-warning force-mdc no-force-mdc disable-mdc
         no-disable-mdc help version warranty dump-option-table dump-options",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// gpgv 2.2.40's options.
#[rustfmt::skip]
pub(crate) const GPGV: Grammar = Grammar {
    short: &[
        ('?', Arg::No), ('h', Arg::No), ('o', Arg::Required), ('q', Arg::No), ('v', Arg::No),
    ],
    long: Longs::words(
        "verbose quiet keyring= output= ignore-time-conflict status-fd= logger-fd= log-file=
         homedir= weak-digest= enable-special-filenames debug= help version warranty
         dump-option-table dump-options",
    ),
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
