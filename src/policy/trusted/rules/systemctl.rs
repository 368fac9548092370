//! systemctl: a closed rule. Its options are read with getopt_long as systemctl reads them
//! (systemd 252's option table: `systemctl --help` and its source's `parse_argv`; clusters,
//! values attached or the next argument, long options by any unambiguous prefix, options
//! after the verb). The verb is the first operand.
//!
//! Only the verbs that look are accepted: `status`, `show`, `cat`, the `list-*` verbs, the
//! `is-*` verbs, `get-default` and `show-environment`. Every other verb is refused: the
//! others start, stop or change units (whose files a redirection can write and `link` or
//! `enable PATH` can install), change the manager, power the machine off, or run a program
//! (`edit` an editor, `help` `man`). Refused options: `-H`/`--host` (systemctl reaches the
//! host through ssh, which runs what its configuration names) and `--image` (systemd
//! dissects the image, running `fsck` on its file systems); any option not in systemd 252's
//! table is refused too, since a newer systemctl may run something with it.
//!
//! A pager: with a terminal, systemctl pipes its output into `SYSTEMD_PAGER` or `PAGER`,
//! which trusted mode sets to `cat` unless the operator's environment names another.

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

#[rustfmt::skip]
pub(crate) const GRAMMAR: Grammar = Grammar {
    short: &[
        ('h', Arg::No), ('t', Arg::Required), ('p', Arg::Required), ('P', Arg::Required),
        ('a', Arg::No), ('l', Arg::No), ('q', Arg::No), ('f', Arg::No), ('s', Arg::Required),
        ('H', Arg::Required), ('M', Arg::Required), ('n', Arg::Required), ('o', Arg::Required),
        ('i', Arg::No), ('T', Arg::No), ('r', Arg::No),
    ],
    long: Longs::words(
        "help version type= property= all reverse after before show-types failed full job-mode=
         fail irreversible ignore-dependencies ignore-inhibitors check-inhibitors= value user
         system global wait no-block legend= no-legend no-pager no-wall dry-run quiet root=
         image= force no-reload kill-whom= signal= no-ask-password host= machine= runtime lines=
         output= plain state= recursive with-dependencies preset-mode= firmware-setup
         boot-loader-menu= boot-loader-entry= now message= show-transaction mkdir marked
         read-only timestamp= what= reboot-argument=",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// The verbs that only look.
const LOOKS: &[&str] = &[
    "status",
    "show",
    "cat",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "list-units",
    "list-unit-files",
    "list-automounts",
    "list-timers",
    "list-sockets",
    "list-paths",
    "list-dependencies",
    "list-jobs",
    "list-machines",
    "get-default",
    "show-environment",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SYSTEMCTL_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[],
        &["status", "nginx"],
        &["--user", "status"],
        &["status", "nginx", "--no-pager", "-n", "50"],
        &["list-units", "--type=service", "--state", "failed"],
        &["list-units", "-at", "service"],
        &["is-active", "x"],
        &["-q", "is-enabled", "x"],
        &["show", "-p", "MainPID", "--value", "x"],
        &["cat", "x.service"],
        &["--no-leg", "list-timers"],
        &["list-dependencies", "--reverse", "x"],
        &["-M", "box", "status"],
    ],
    refuse: &[
        &["start", "x"],
        &["restart", "x"],
        &["edit", "x"],
        &["help", "x"],
        &["link", "/tmp/x.service"],
        &["enable", "./x.service"],
        &["daemon-reload"],
        &["set-environment", "A=b"],
        &["poweroff"],
        &["-H", "user@host", "status"],
        &["-qH", "user@host", "status"],
        &["-Huser@host", "status"],
        &["--host=user@host", "status"],
        &["--ho", "user@host", "status"],
        &["--h", "user@host", "status"],
        &["status", "--host", "h"],
        &["--image=x.raw", "list-unit-files"],
        &["--future-option", "status"],
        &["-Z", "status"],
        &["future-verb"],
    ],
};

/// Checks systemctl's arguments, under both readings of an ambiguous abbreviation.
pub fn check_systemctl(args: &[String]) -> Result<(), String> {
    for items in GRAMMAR.readings(args) {
        for item in &items {
            if let Some(option) = GRAMMAR.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "systemctl option {option}"
                )));
            }
            if item.long_is(&["host"]) || item.short_is(&['H']) {
                return Err("systemctl --host (it runs ssh)".to_string());
            }
            if item.long_is(&["image"]) {
                return Err("systemctl --image (it runs fsck on the image)".to_string());
            }
        }
        let verb = items.iter().find_map(|item| match item {
            crate::policy::trusted::getopt::Item::Operand(verb) => Some(*verb),
            _ => None,
        });
        if let Some(verb) = verb.filter(|v| !LOOKS.contains(v)) {
            return Err(format!(
                "systemctl {verb} (only the verbs that look: status, show, cat, list-*, is-*, \
                 get-default, show-environment)"
            ));
        }
    }
    Ok(())
}
