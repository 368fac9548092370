//! Rules for crypto and archive programs that load code or run programs named in their
//! arguments: ssh-keygen (PKCS#11 and FIDO provider libraries) and cpio (rsh commands and
//! remote archives), each a closed grammar read with `getopt`; gpg's rule is in `gpg`,
//! openssl's in `openssl`.

use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

/// ssh-keygen's options (OpenSSH 9.2's optstring), read with getopt. OpenSSH's own getopt stops
/// at the first operand; reading on past it only finds more options to judge. `-g` is a flag
/// (the optstring lists it twice, and getopt takes the first). There are no long options.
#[rustfmt::skip]
pub(crate) const SSH_KEYGEN: Grammar = Grammar {
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
    long: Longs::words(""),
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
            return Err(crate::policy::trusted::rules::not_known(&format!(
                "ssh-keygen option {option}"
            )));
        }
    }
    Ok(())
}

/// GNU cpio 2.13's options (argp: getopt_long with permutation and abbreviations), with argp's
/// own `--help`, `--usage`, `--version`, `--program-name` and `-?`.
#[rustfmt::skip]
pub(crate) const CPIO: Grammar = Grammar {
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
    long: Longs::words(
        "create extract pass-through list directory= null file= force-local format= block-size=
         io-size= message= quiet rsh-command= verbose dot warning= nonmatching numeric-uid-gid
         pattern-file= only-verify-crc rename rename-batch-file= swap swap-bytes swap-halfwords
         to-stdout absolute-filenames no-absolute-filenames append device-independent
         reproducible ignore-devno renumber-inodes link dereference owner= reset-access-time
         make-directories preserve-modification-time no-preserve-owner sparse unconditional
         ignore-dirnlink help usage version program-name=",
    ),
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
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "cpio option {option}"
                )));
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
