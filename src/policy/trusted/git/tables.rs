//! git's subcommands and the option grammars of the subcommands the rules read closely.
//!
//! A grammar lists the options that take a value (so that a value is never read as an
//! option, and an option after a value is never missed) and the options a rule looks at.
//! An option missing from a table is read as taking no value, so the argument after it is
//! still examined: an incomplete table can only refuse more, never less. Every option of each
//! subcommand, for refusing those git does not have, is in `options`.

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

use crate::policy::trusted::words::Words;
use Arg::{Optional as Opt, Required as Req};

/// git's own commands, other than those refused outright; anything else is an alias or a
/// `git-<name>` program found in the exec path or `PATH`.
pub const KNOWN: Words = Words(
    "send-email add am annotate apply archive bisect blame branch bugreport bundle cat-file
     check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
     cherry-pick clean clone column commit commit-graph commit-tree count-objects describe
     diagnose diff diff-files diff-index diff-tree fast-export fast-import fetch fetch-pack
     fmt-merge-msg for-each-ref format-patch fsck fsck-objects gc get-tar-commit-id grep
     hash-object help index-pack init init-db interpret-trailers log ls-files ls-remote ls-tree
     mailinfo mailsplit merge merge-base merge-file merge-tree mktag mktree multi-pack-index mv
     name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push
     range-diff read-tree rebase reflog refs remote repack replace replay request-pull rerere
     reset restore rev-list rev-parse revert rm send-pack shortlog show show-branch show-index
     show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag
     unpack-file unpack-objects update-index update-ref update-server-info var verify-commit
     verify-pack verify-tag version whatchanged worktree write-tree",
);

/// Subcommands that exist to run programs or commands, git's internal helpers that do, and
/// servers: difftool and mergetool (diff/merge tools), filter-branch and filter-repo (filter
/// code), send-email (`--sendmail-cmd`), instaweb and web--browse (servers and browsers),
/// daemon (`--access-hook`), submodule--helper (`foreach` runs a command), for-each-repo
/// (runs git with any global options in each repository), hook (runs hooks), merge-index
/// (runs the merge program it is given), credential and its helpers (print and store
/// credentials), shell, upload-pack, receive-pack, upload-archive and http-backend (server
/// sides that run hooks), remote-ext and remote-fd (transports; ext runs its address),
/// fsmonitor--daemon, maintenance (installs cron or systemd timers), imap-send (its tunnel runs
/// a command), and the scripts' internals.
pub const DENIED: Words = Words(
    "difftool difftool--helper mergetool mergetool--lib merge-one-file merge-octopus
     merge-resolve filter-branch filter-repo instaweb web--browse daemon submodule--helper
     for-each-repo hook merge-index credential credential-store credential-cache
     credential-cache--daemon credential-netrc credential-libsecret credential-osxkeychain shell
     upload-pack receive-pack upload-archive upload-archive--writer http-backend http-fetch
     http-push remote-ext remote-fd fsmonitor--daemon maintenance imap-send sh-setup sh-i18n
     sh-i18n--envsubst cvsserver archimport cvsimport cvsexportcommit quiltimport p4 svn",
);

/// Subcommands that write no file where they are told (at most git's own index and
/// object files): every other git stage is a writer for the tree lock (`lock::Kind`).
pub const ONLY_READ: Words = Words(
    "log show diff status rev-parse ls-files ls-tree cat-file grep blame annotate shortlog
     rev-list for-each-ref show-ref describe name-rev whatchanged count-objects var version help
     check-ignore check-attr diff-tree diff-index diff-files merge-base show-branch cherry
     range-diff verify-pack",
);

/// Subcommands that write refs or objects but never the index: with [`ONLY_READ`], those
/// for which git enters no repository but the submodules the index records, so the work
/// tree is not walked for nested ones (a name missing here only costs the walk).
pub const INDEX_KEPT: &[&str] = &["branch", "tag", "log-tree", "hash-object"];

/// Merge strategies built into git; any other `-s NAME` runs a `git-merge-NAME` program.
pub const STRATEGIES: &[&str] = &["ort", "recursive", "resolve", "octopus", "ours", "subtree"];

const fn grammar(short: &'static [(char, Arg)], long: Longs) -> Grammar {
    Grammar {
        short,
        long,
        stop_at_operand: false,
        w_long: false,
        negation: true,
        ambiguous_takes_value: true,
    }
}

pub(crate) const FETCH_LONG: Longs = Longs::words(
    "upload-pack= depth= deepen= shallow-since= shallow-exclude= refmap= server-option=
     negotiation-tip= filter= jobs= submodule-prefix= recurse-submodules-default=
     recurse-submodules? update-head-ok update-shallow unshallow",
);

pub(crate) const PULL_LONG: Longs = Longs::words(
    "upload-pack= depth= deepen= shallow-since= shallow-exclude= refmap= server-option=
     negotiation-tip= jobs= strategy= strategy-option= cleanup= rebase? gpg-sign? log?
     recurse-submodules? update-shallow unshallow",
);

pub(crate) const CLONE_LONG: Longs = Longs::words(
    "template= reference= reference-if-able= origin= branch= upload-pack= depth= shallow-since=
     shallow-exclude= separate-git-dir= config= server-option= jobs= filter= bundle-uri=
     ref-format= recurse-submodules?",
);

pub(crate) const PUSH_LONG: Longs = Longs::words(
    "receive-pack= exec= repo= push-option= recurse-submodules= signed? force-with-lease?
     force-if-includes",
);

pub(crate) const LS_REMOTE_LONG: Longs =
    Longs::words("upload-pack= exec= server-option= sort= exit-code");

pub(crate) const PACK_LONG: Longs = Longs::words(
    "upload-pack= receive-pack= exec= depth= shallow-since= shallow-exclude= remote= signed?",
);

pub(crate) const ARCHIVE_LONG: Longs =
    Longs::words("format= prefix= output= remote= exec= add-file= add-virtual-file= mtime=");

pub(crate) const REBASE_LONG: Longs = Longs::words(
    "onto= exec= strategy= strategy-option= whitespace= empty= rebase-merges? gpg-sign?
     interactive edit-todo continue skip",
);

pub(crate) const GREP_LONG: Longs = Longs::words(
    "max-depth= after-context= before-context= context= threads= max-count= open-files-in-pager?
     color? or and not",
);

pub(crate) const COMMIT_LONG: Longs = Longs::words(
    "message= file= reuse-message= reedit-message= fixup= squash= template= author= date=
     cleanup= trailer= pathspec-from-file= gpg-sign? untracked-files? edit no-edit interactive
     patch amend dry-run",
);

pub(crate) const TAG_LONG: Longs = Longs::words(
    "message= file= local-user= sort= format= cleanup= trailer= contains? no-contains? merged?
     no-merged? points-at? color? column? annotate sign edit",
);

pub(crate) const MERGE_LONG: Longs = Longs::words(
    "message= file= strategy= strategy-option= into-name= cleanup= mainline= gpg-sign? log? edit
     continue skip",
);

pub(crate) const AM_LONG: Longs = Longs::words(
    "continue skip resolved resolvemsg= allow-empty abort quit interactive gpg-sign? whitespace=
     directory= exclude= include= patch-format= show-current-patch? quoted-cr= empty=",
);

pub(crate) const NOTES_LONG: Longs =
    Longs::words("ref= message= file= reuse-message= reedit-message= separator? edit");

pub(crate) const PATCH_LONG: Longs =
    Longs::words("message= chmod= pathspec-from-file= source= conflict= patch interactive edit");

pub(crate) const LOG_LONG: Longs = Longs::words(
    "output= grep= author= committer= since= after= until= before= max-count= skip= format=
     pretty? output-directory= subject-prefix= in-reply-to= to= cc= from?",
);

/// The grammar for a subcommand (a generic one for those the rules do not read closely).
pub fn grammar_for(subcommand: &str) -> Grammar {
    match subcommand {
        "fetch" => grammar(&[('j', Req), ('o', Req)], FETCH_LONG),
        "pull" => grammar(
            &[('j', Req), ('o', Req), ('s', Req), ('X', Req), ('S', Opt)],
            PULL_LONG,
        ),
        "clone" => grammar(
            &[('o', Req), ('b', Req), ('u', Req), ('c', Req), ('j', Req)],
            CLONE_LONG,
        ),
        "push" => grammar(&[('o', Req)], PUSH_LONG),
        "ls-remote" => grammar(&[('o', Req), ('u', Req)], LS_REMOTE_LONG),
        "send-pack" | "fetch-pack" => grammar(&[], PACK_LONG),
        "archive" => grammar(&[('o', Req)], ARCHIVE_LONG),
        "rebase" => grammar(
            &[
                ('s', Req),
                ('X', Req),
                ('x', Req),
                ('C', Req),
                ('S', Opt),
                ('r', Opt),
            ],
            REBASE_LONG,
        ),
        // `git grep` stops at its first operand (PARSE_OPT_STOP_AT_NON_OPTION).
        "grep" => Grammar {
            stop_at_operand: true,
            ..grammar(
                &[
                    ('A', Req),
                    ('B', Req),
                    ('C', Req),
                    ('e', Req),
                    ('f', Req),
                    ('m', Req),
                    ('O', Opt),
                ],
                GREP_LONG,
            )
        },
        "commit" => grammar(
            &[
                ('m', Req),
                ('F', Req),
                ('C', Req),
                ('c', Req),
                ('t', Req),
                ('S', Opt),
                ('u', Opt),
            ],
            COMMIT_LONG,
        ),
        "tag" => grammar(&[('m', Req), ('F', Req), ('u', Req), ('n', Opt)], TAG_LONG),
        "merge" => grammar(
            &[('m', Req), ('F', Req), ('s', Req), ('X', Req), ('S', Opt)],
            MERGE_LONG,
        ),
        // `-s` is --signoff here, `-m` the mainline.
        "cherry-pick" | "revert" => grammar(&[('m', Req), ('X', Req), ('S', Opt)], MERGE_LONG),
        "am" => grammar(&[('C', Req), ('p', Req), ('S', Opt)], AM_LONG),
        "notes" => grammar(
            &[('m', Req), ('F', Req), ('C', Req), ('c', Req)],
            NOTES_LONG,
        ),
        // Each with its own letters: `-m` is a message for stash and --merge (no value) for
        // checkout and switch.
        "add" | "stage" | "reset" => grammar(&[], PATCH_LONG),
        "checkout" => grammar(&[('b', Req), ('B', Req)], PATCH_LONG),
        "switch" => grammar(&[('c', Req), ('C', Req)], PATCH_LONG),
        "restore" => grammar(&[('s', Req)], PATCH_LONG),
        "stash" => grammar(&[('m', Req)], PATCH_LONG),
        "log" | "show" | "whatchanged" | "rev-list" => {
            grammar(&[('n', Req), ('S', Req), ('G', Req), ('L', Req)], LOG_LONG)
        }
        "diff" | "diff-tree" | "diff-index" | "diff-files" | "range-diff" => {
            grammar(&[('S', Req), ('G', Req)], LOG_LONG)
        }
        // `-n` is --numbered here.
        "format-patch" => grammar(&[('o', Req), ('S', Req), ('G', Req)], LOG_LONG),
        _ => grammar(&[], LOG_LONG),
    }
}
