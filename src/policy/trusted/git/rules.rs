//! git: global options as git.c reads them (exact names, before the subcommand), then each
//! subcommand's options with git's parse-options rules (`getopt` with negation), and a
//! decision on what the command will do.
//!
//! Refused:
//! - `-c` and `--config-env` (command-scoped configuration such as `core.pager=sh` or
//!   `alias.x=!cmd`), `--exec-path` (where git finds its programs), `git config`, and global
//!   options git does not have (it would refuse them anyway).
//! - Every subcommand that is not one of git's own: an alias (`alias.x = !cmd`) or a
//!   `git-<name>` program from the exec path or `PATH`, which the allowlist never approved.
//! - Subcommands that run programs or commands, and git's internal helpers and servers that
//!   do (`tables::DENIED`: `submodule--helper`, `difftool`, `filter-branch`, `hook`, ...);
//!   `submodule foreach`, `bisect run` (`run` as bisect's first argument: `bisect -- run` is
//!   not), `bisect visualize`/`view` (they run their first argument, or gitk),
//!   `rebase --exec`/`-x`, `grep -O`/`--open-files-in-pager`.
//! - Resuming a sequence from its state files: `rebase`, `cherry-pick`, `revert` and `am`
//!   with `--continue` or `--skip` (`am --resolved`, `--allow-empty`): the steps, the merge strategy (a
//!   `git-merge-<name>` program) and the signing program come from files in the git
//!   directory (`rebase-merge/git-rebase-todo` with `exec` lines, `sequencer/opts`), which
//!   another allowed program could have written.
//! - `send-email`'s options that name a program (`--sendmail-cmd`, `--to-cmd`, `--cc-cmd`,
//!   `--header-cmd`, `--smtp-server` with a path), read with its own grammar
//!   (`send_email`); its data options run, `--compose`/`--annotate` are editor forms,
//!   and what it hands to `git format-patch` is checked as format-patch's arguments.
//! - Options that run a program: `--upload-pack`/`-u`, `--receive-pack`, `--exec` (clone,
//!   fetch, pull, ls-remote, push, send-pack, fetch-pack, archive), `clone --config`/`-c` and
//!   `--template` (hooks and configuration for the new repository), `-s`/`--strategy` with a
//!   strategy git does not have (it runs `git-merge-<name>`; a value starting with `-`, as in
//!   `rebase -s -x`, names no program git's lookup can find), and transports that run a
//!   command or a helper program (`ext::cmd`, `<helper>::address`; `http(s)::` and `ftp(s)::`
//!   stay accepted) in the subcommands that take a remote address.
//! - `--output` (diff family, log, format-patch, archive `-o`): it writes to any path.
//! - `git init --bare`, `--separate-git-dir`, or with `--git-dir`/`--bare` before it: git
//!   keeps a configuration file already present there, which a redirection could have
//!   written before the directory was a repository.
//! - Forms that start an editor (git's default is `vi`, reading commands from the caller's
//!   stdin when a terminal type is set): `commit` without a message (`-m`, `-F`, `-C`,
//!   `--no-edit`), `commit -e`/`-c`/`--interactive`/`-p`, annotated `tag` without a message,
//!   `notes add`/`append` without a message and `notes edit`, `rebase -i`/`--continue`/
//!   `--edit-todo`, `merge`/`cherry-pick`/`revert` `-e` or `--continue`, interactive
//!   `add -i`/`-p`/`-e`, `checkout`/`restore`/`reset`/`stash` `-p`, `am -i`,
//!   `branch --edit-description`, `replace --edit`, `pull --edit`; and `help --web` (a
//!   browser).
//! - The same rules apply to `git-<subcommand>` programs run directly (`git-submodule foreach`).
//! - Any option its subcommand's table (`options`: git's own, every option) does not have,
//!   `--no-X` where X cannot be negated, and an abbreviation where git takes only whole
//!   names (log and its family): a newer git may load or run something with it.
//!   This comes after every refusal above, so each keeps its reason.
//!
//! An option's value is never read as an option (`git grep -A -O` shows `-O` lines of
//! context), and an option after a value is never missed (`git grep -e -- -OX` runs `X`).
//! An ambiguous abbreviation is read both ways (`git grep --max -OP` is `--max-depth=-OP` or
//! `--max` then `-O P`), options end at `--end-of-options`, and `git grep` stops at its first
//! operand as git's does (`(` and `)` are its options, not operands).

use crate::policy::trusted::getopt::Item;
use crate::policy::trusted::git::tables::{grammar_for, DENIED, KNOWN, ONLY_READ, STRATEGIES};

const CONFIG_OVERRIDE: &str = "git command-scoped config";
const CONFIG: &str = "git config";
const EXTERNAL: &str = "git external program: the command makes git run a program or script \
                        that git does not control (a helper, tool, server, hook or command it \
                        is given), which the allowlist never approved; use a form without it";
const OUTPUT: &str = "git file output";
const EDITOR: &str = "git editor (the command would start an editor, which reads commands from \
                      stdin; give the message with -m or -F, or use a non-interactive form)";
const RESUME: &str = "git resumption of a sequence (rebase, cherry-pick, revert and am with \
                      --continue or --skip take their next steps, merge strategy and signing \
                      program from state files in the git directory, which the call did not \
                      give and an earlier one could have written; run the command with --abort \
                      and start it again with its steps on the command line)";
const SUBMODULES: &str = "git inside submodules (--submodule=diff and --recurse-submodules \
                          run git in each submodule's own repository, whose configuration \
                          is not checked when the submodule is only in commits; use \
                          --submodule=log, or git -C <submodule> in its own repository)";
const GITLINK: &str = "git update-index writing index entries given by hand (--index-info, or \
                       --cacheinfo with mode 160000: a gitlink, a nested repository the \
                       person's git status enters under that repository's own configuration, \
                       which nothing checked; add a nested repository with git add, which \
                       checks it)";
const BARE_INIT: &str = "git init of a bare or separate repository (--bare, --git-dir or \
                         --separate-git-dir put the repository where the option says, and git \
                         keeps a configuration file already present there, which nothing has \
                         checked; run git init without them, in the directory that is to hold \
                         .git)";

/// What the global options said (`argv::parse`), with the refusals of this rule's texts.
struct Globals {
    subcommand: Option<usize>,
    repository_chosen: bool,
}

fn globals(args: &[String]) -> Result<Globals, String> {
    let read = super::argv::parse(args).map_err(|refused| match refused {
        super::argv::Refused::ConfigOverride => CONFIG_OVERRIDE.to_string(),
        super::argv::Refused::External => EXTERNAL.to_string(),
        super::argv::Refused::Unknown(arg) => {
            format!("git global option {arg} (not one git accepts before the subcommand)")
        }
    })?;
    for (is_git_dir, value) in &read.dirs {
        if !is_git_dir && crate::policy::trusted::git::guard::names_git_dir(value) {
            return Err(format!(
                "write into a git directory (--work-tree {value}: git would write the \
                 work tree's files into a git directory)"
            ));
        }
    }
    Ok(Globals {
        subcommand: read.subcommand,
        repository_chosen: read.repository_chosen,
    })
}

/// True when `item` is a long option (not negated) naming one of `options`, exactly or by
/// abbreviation, whether or not the subcommand's table knows it.
fn long(item: &Item, options: &[&str]) -> bool {
    match item {
        Item::Long {
            candidates,
            written,
            negated: false,
            ..
        } => {
            candidates.iter().any(|c| options.contains(c))
                || (candidates.is_empty()
                    && !written.is_empty()
                    && options.iter().any(|o| o.starts_with(written)))
        }
        _ => false,
    }
}

fn short(item: &Item, letters: &[char]) -> bool {
    item.short_is(letters)
}

/// `ext::cmd` runs cmd; any other `<helper>::address` runs `git-remote-<helper>`.
fn runs_transport(text: &str) -> bool {
    let Some((helper, _)) = text.split_once("::") else {
        return false;
    };
    let mut chars = helper.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    well_formed
        && !["http", "https", "ftp", "ftps"]
            .iter()
            .any(|h| h.eq_ignore_ascii_case(helper))
}

/// Subcommands that take a remote address.
const TAKES_REMOTE: &[&str] = &[
    "clone",
    "fetch",
    "pull",
    "push",
    "ls-remote",
    "remote",
    "submodule",
    "archive",
    "fetch-pack",
    "send-pack",
    "request-pull",
];

/// Whether git run with `args` only reads: its subcommand (`dashed` for a `git-<sub>`
/// program run directly) writes no file where it is told. git without a subcommand only
/// prints its help.
pub fn only_reads(dashed: Option<&str>, args: &[String]) -> bool {
    let name = match dashed {
        Some(sub) => Some(sub),
        None => match globals(args) {
            Ok(g) => g.subcommand.map(|i| args[i].as_str()),
            Err(_) => return false,
        },
    };
    name.is_none_or(|n| ONLY_READ.contains(n))
}

/// Checks a `git-<subcommand>` program run directly: it is `git <subcommand>`. `None` when
/// the name is not one of git's.
pub fn check_dashed(program: &str, args: &[String]) -> Option<Result<(), String>> {
    let sub = program.strip_prefix("git-")?;
    if !KNOWN.contains(sub) && !DENIED.contains(sub) && sub != "config" {
        return None;
    }
    let mut argv = vec![sub.to_string()];
    argv.extend_from_slice(args);
    Some(check(&argv))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const EXAMPLES: crate::policy::trusted::rules::Examples =
    crate::policy::trusted::rules::Examples {
        accept: &[
            &["status"],
            &["log", "--oneline", "-5"],
            &["diff", "HEAD~1"],
            &["grep", "-e", "-O"],
            &["commit", "-m", "x"],
        ],
        refuse: &[
            &["-c", "core.pager=sh", "log"],
            &["--config-env=core.pager=X", "log"],
            &["config", "alias.x", "!sh"],
            &["grep", "-O", "sh", "x"],
            &["rebase", "--exec", "sh", "main"],
            &["difftool"],
            &["submodule--helper", "foreach", "sh"],
            &["send-emai", "--sendmail-cmd=P"],
            &["fetch", "--upload-pack=sh", "origin"],
        ],
    };

/// Checks git's arguments.
pub fn check(args: &[String]) -> Result<(), String> {
    let globals = globals(args)?;
    let Some(index) = globals.subcommand else {
        return Ok(());
    };
    let name = args[index].as_str();
    let rest = &args[index + 1..];
    if name == "config" {
        return Err(CONFIG.to_string());
    }
    if DENIED.contains(name) {
        return Err(EXTERNAL.to_string());
    }
    if !KNOWN.contains(name) {
        return Err(format!(
            "git alias or external subcommand {name} (only git's own subcommands are \
             accepted: an alias or a git-{name} program could run anything)"
        ));
    }
    if TAKES_REMOTE.contains(&name)
        && rest
            .iter()
            .any(|a| runs_transport(a) || a.split_once('=').is_some_and(|(_, v)| runs_transport(v)))
    {
        return Err(EXTERNAL.to_string());
    }
    if name == "send-email" {
        let reasons = crate::policy::trusted::git::send_email::Reasons {
            program: EXTERNAL,
            editor: EDITOR,
        };
        let left = crate::policy::trusted::git::send_email::check(rest, &reasons)?;
        if let Some(reason) = crate::policy::trusted::git::guard::git_write_reason(name, rest) {
            return Err(reason);
        }
        // The rest goes to `git format-patch`.
        let mut format_patch = vec!["format-patch".to_string()];
        format_patch.extend(left);
        return check(&format_patch);
    }
    // An ambiguous abbreviation is read both ways (taking the next argument, and not):
    // `git grep --max -OP` is `--max-depth -OP` or `--max` and `-O P`.
    // git grep reads `(` and `)` (its expression's parentheses) as options without a dash.
    let parsed: Vec<String> = rest
        .iter()
        .filter(|a| name != "grep" || (*a != "(" && *a != ")"))
        .cloned()
        .collect();
    let [items, other_reading] = grammar_for(name).readings(&parsed);
    let any = |f: &dyn Fn(&Item) -> bool| items.iter().chain(&other_reading).any(f);
    let operands: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Operand(o) => Some(*o),
            _ => None,
        })
        .collect();
    // Options that run programs.
    let external = match name {
        "clone" => {
            any(&|i| long(i, &["upload-pack", "config", "template"]) || short(i, &['u', 'c']))
        }
        "fetch" | "pull" => any(&|i| long(i, &["upload-pack"])),
        "ls-remote" => any(&|i| long(i, &["upload-pack", "exec"]) || short(i, &['u'])),
        "fetch-pack" => any(&|i| long(i, &["upload-pack", "exec"])),
        "push" | "send-pack" => any(&|i| long(i, &["receive-pack", "exec"])),
        "archive" => any(&|i| long(i, &["exec"])),
        "rebase" => any(&|i| long(i, &["exec"]) || short(i, &['x'])),
        "grep" => any(&|i| long(i, &["open-files-in-pager"]) || short(i, &['O'])),
        "init" | "init-db" => any(&|i| long(i, &["template"])),
        "submodule" => rest.iter().any(|a| a == "foreach"),
        // `visualize`/`view` with arguments runs its first one as a program when it starts
        // with `git` (a path such as `git-x/prog` included), and gitk without any.
        "bisect" => rest
            .first()
            .is_some_and(|a| matches!(a.as_str(), "run" | "visualize" | "view")),
        "help" => any(&|i| long(i, &["web"]) || short(i, &['w'])),
        _ => false,
    };
    if external {
        return Err(EXTERNAL.to_string());
    }
    // Git run inside submodules: `--submodule=diff` runs `git diff` in every
    // submodule a diff shows, and `--recurse-submodules` makes a checkout, a reset, a grep
    // or a listing work inside them, each under the submodule's own configuration, which is
    // not checked when the submodule is only in commits. fetch and push stay (their
    // transports are closed the same way in submodules); clone and pull are git's script.
    let enters = any(&|i| long(i, &["submodule"]) && i.value() == Some("diff"))
        || (!matches!(name, "fetch" | "push" | "clone" | "pull")
            && any(&|i| long(i, &["recurse-submodules"]) && i.value() != Some("no")));
    if enters {
        return Err(SUBMODULES.to_string());
    }
    // An index entry written by hand can be a gitlink (mode 160000, written in octal):
    // `git add` of a nested repository checks its configuration, this would not.
    let gitlink = |v: &str| {
        let mode = v.split(',').next().unwrap_or(v);
        u32::from_str_radix(mode, 8) == Ok(0o160000)
    };
    if name == "update-index"
        && (any(&|i| long(i, &["index-info"]))
            || crate::policy::trusted::git::guard::long_values(rest, "--cacheinfo", 4).any(gitlink))
    {
        return Err(GITLINK.to_string());
    }
    if let Some(reason) = crate::policy::trusted::git::guard::git_write_reason(name, rest) {
        return Err(reason);
    }
    // Merge strategies other than git's own run a git-merge-<name> program.
    let strategy_letter: &[char] = match name {
        "merge" | "pull" | "rebase" => &['s'],
        _ => &[],
    };
    for item in items.iter().chain(&other_reading) {
        if (long(item, &["strategy"]) || short(item, strategy_letter))
            && !item
                .value()
                .is_some_and(|v| STRATEGIES.contains(&v) || v.starts_with('-'))
        {
            {
                return Err(format!(
                    "{EXTERNAL} (merge strategy {}: only {} are built in)",
                    item.value().unwrap_or(""),
                    STRATEGIES.join(", ")
                ));
            }
        }
    }
    if any(&|i| long(i, &["output"])) || (name == "archive" && any(&|i| short(i, &['o']))) {
        return Err(OUTPUT.to_string());
    }
    if (name == "init" || name == "init-db")
        && (globals.repository_chosen || any(&|i| long(i, &["bare", "separate-git-dir"])))
    {
        return Err(BARE_INIT.to_string());
    }
    if starts_editor(name, &items, &operands) {
        return Err(EDITOR.to_string());
    }
    let resumes = match name {
        "rebase" | "cherry-pick" | "revert" => any(&|i| long(i, &["continue", "skip"])),
        "am" => {
            any(&|i| long(i, &["continue", "skip", "resolved", "allow-empty"]) || short(i, &['r']))
        }
        _ => false,
    };
    if resumes {
        return Err(RESUME.to_string());
    }
    // A closed world: an option the subcommand's table does not have is refused, since a
    // newer git may load or run something with it (every refusal above keeps its reason).
    match crate::policy::trusted::git::options::grammar(name) {
        Some(grammar) => crate::policy::trusted::rules::closed(
            &format!("git {name}"),
            &grammar,
            &parsed,
            |item| {
                crate::policy::trusted::git::options::not_read(name, item).map(|option| {
                    crate::policy::trusted::rules::not_known(&format!("git {name} option {option}"))
                })
            },
        ),
        None => Err(format!("git {name} has no option table")),
    }
}

/// True when the command would start an editor.
fn starts_editor(name: &str, items: &[Item], operands: &[&str]) -> bool {
    let any = |f: &dyn Fn(&Item) -> bool| items.iter().any(f);
    let message =
        |letters: &[char], options: &[&str]| any(&|i| short(i, letters) || long(i, options));
    match name {
        // A dry run only shows what would be committed.
        "commit" if any(&|i| long(i, &["dry-run"])) => false,
        "commit" => {
            let fixup_edits = any(&|i| {
                long(i, &["fixup"])
                    && i.value()
                        .is_some_and(|v| v.starts_with("amend:") || v.starts_with("reword:"))
            });
            let no_edit = any(&|i| {
                matches!(i, Item::Long { candidates, negated: true, .. } if candidates.contains(&"edit"))
                    || long(i, &["no-edit"])
            });
            let edits = fixup_edits
                || any(&|i| {
                    short(i, &['e', 'c', 'p'])
                        || long(i, &["edit", "reedit-message", "interactive", "patch"])
                });
            let has_message = no_edit
                || message(
                    &['m', 'F', 'C'],
                    &["message", "file", "reuse-message", "fixup", "dry-run"],
                );
            edits || !has_message
        }
        "tag" => {
            let annotated = any(&|i| {
                short(i, &['a', 's', 'u']) || long(i, &["annotate", "sign", "local-user"])
            });
            any(&|i| short(i, &['e']) || long(i, &["edit"]))
                || (annotated && !message(&['m', 'F'], &["message", "file"]))
        }
        "notes" => match operands.first().copied() {
            Some("edit") => true,
            Some("add") | Some("append") => {
                any(&|i| short(i, &['c', 'e']) || long(i, &["reedit-message", "edit"]))
                    || !message(&['m', 'F', 'C'], &["message", "file", "reuse-message"])
            }
            _ => false,
        },
        "add" | "stage" => {
            any(&|i| short(i, &['p', 'i', 'e']) || long(i, &["patch", "interactive", "edit"]))
        }
        "checkout" | "restore" | "reset" | "stash" => {
            any(&|i| short(i, &['p']) || long(i, &["patch"]))
        }
        "rebase" => {
            any(&|i| short(i, &['i']) || long(i, &["interactive", "edit-todo", "continue"]))
        }
        "merge" | "cherry-pick" | "revert" => {
            any(&|i| short(i, &['e']) || long(i, &["edit", "continue"]))
        }
        "am" => any(&|i| short(i, &['i']) || long(i, &["interactive"])),
        "replace" => any(&|i| short(i, &['e']) || long(i, &["edit"])),
        "pull" => any(&|i| short(i, &['e']) || long(i, &["edit"])),
        "branch" => any(&|i| long(i, &["edit-description"])),
        _ => false,
    }
}

/// A program that git itself starts for a command, outside the repository's configuration:
/// one of its shell scripts (run by `sh`), `man` for help pages, `gpg` for signatures. With
/// the kernel sandbox off nothing else stops it, so it runs only when that program is on the
/// allowlist (`Policy::check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The command form, as the refusal names it (`git submodule`, `git commit -S`).
    pub what: String,
    /// The program git starts.
    pub program: String,
    /// What to do instead.
    pub instead: &'static str,
}

/// Subcommands (and `merge-<strategy>` programs) that are shell scripts in every git
/// release that has them (so that a git whose programs are not found below is still
/// covered); others are found on disk ([`script_interpreter`]).
const SCRIPTS: &[&str] = &[
    "submodule",
    "request-pull",
    "merge-octopus",
    "merge-resolve",
    "quiltimport",
];

/// The interpreter named by the `#!` line of git's program `git-<name>` in one of
/// `exec_dirs` (git's `--exec-path` for the git that runs: `git bisect` is a script up to
/// git 2.40, `send-email` is perl).
fn script_interpreter(name: &str, exec_dirs: &[std::path::PathBuf]) -> Option<String> {
    use std::io::Read;
    exec_dirs.iter().find_map(|dir| {
        let mut head = [0u8; 128];
        let mut file = std::fs::File::open(dir.join(format!("git-{name}"))).ok()?;
        let n = file.read(&mut head).ok()?;
        let line = head[..n].strip_prefix(b"#!")?;
        let line = String::from_utf8_lossy(line);
        let mut words = line.lines().next()?.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?.to_string();
        if program == "env" {
            program = words.next()?.to_string();
        }
        Some(program)
    })
}

/// The interpreter that runs git's program `git-<name>` when it is a script.
fn script(name: &str, exec_dirs: &[std::path::PathBuf]) -> Option<String> {
    script_interpreter(name, exec_dirs).or_else(|| SCRIPTS.contains(&name).then(|| "sh".into()))
}

const SCRIPT_INSTEAD: &str = "a shell or interpreter is never on the allowlist; use git's \
                              built-in commands \
                              (for a submodule, git -C <path> in its own repository; for a \
                              merge, the ort strategy and one branch at a time)";
const MAN_INSTEAD: &str = "use git <command> -h for its options, or ask the operator to add man \
                           to ALLOW_COMMANDS";
const GPG_INSTEAD: &str = "leave out the signing or signature option, or ask the operator to \
                           add gpg to ALLOW_COMMANDS";

/// The programs git itself would start for `git <args>` (`program` is `git` or a
/// `git-<subcommand>` name) that the allowlist must allow: its shell scripts (`submodule`,
/// also through `clone`/`pull --recurse-submodules`, `request-pull`, the `octopus` and
/// `resolve` strategies, a merge of several branches),
/// `man` (`help <topic>`, `--help`), `gpg` (signing: `-S`/`--gpg-sign`, `tag -s`/`-u`,
/// `push --signed`; checking: `verify-commit`, `verify-tag`, `tag -v`, `--show-signature`,
/// `--verify-signatures`, the `%G` formats).
pub fn programs_started(
    program: &str,
    args: &[String],
    exec_dirs: &[std::path::PathBuf],
) -> Vec<Started> {
    let mut argv: Vec<String> = Vec::new();
    if let Some(sub) = program.strip_prefix("git-") {
        argv.push(sub.to_string());
    }
    argv.extend_from_slice(args);
    let Ok(globals) = globals(&argv) else {
        return Vec::new();
    };
    let global_help = argv[..globals.subcommand.unwrap_or(argv.len())]
        .iter()
        .any(|a| a == "--help");
    let mut out = Vec::new();
    let mut started = |what: String, program: &str, instead: &'static str| {
        out.push(Started {
            what,
            program: program.to_string(),
            instead,
        })
    };
    let Some(index) = globals.subcommand else {
        return out;
    };
    let name = argv[index].as_str();
    let rest = &argv[index + 1..];
    let [items, other] = grammar_for(name).readings(rest);
    let any = |f: &dyn Fn(&Item) -> bool| items.iter().chain(&other).any(f);
    let operands = items
        .iter()
        .filter(|i| matches!(i, Item::Operand(_)))
        .count();
    // Help pages: `git help <topic>`, `git --help <cmd>`, `git <cmd> --help`.
    let mut before_dashes = rest.iter().take_while(|a| *a != "--");
    if global_help
        || before_dashes.any(|a| a == "--help")
        || (name == "help"
            && (operands > 0 || any(&|i| short(i, &['m', 'i']) || long(i, &["man", "info"]))))
    {
        started(format!("git help ({name})"), "man", MAN_INSTEAD);
    }
    if let Some(interpreter) = script(name, exec_dirs) {
        started(
            format!("git {name}, a script of git's,"),
            &interpreter,
            SCRIPT_INSTEAD,
        );
    }
    // `clone` and `pull` hand submodules to `git submodule update`, a script of git's.
    if matches!(name, "clone" | "pull")
        && any(&|i| long(i, &["recurse-submodules"]) && i.value() != Some("no"))
    {
        if let Some(interpreter) = script("submodule", exec_dirs) {
            started(
                format!("git {name} --recurse-submodules (git submodule, a script of git's,)"),
                &interpreter,
                SCRIPT_INSTEAD,
            );
        }
    }
    if matches!(name, "merge" | "pull" | "rebase" | "cherry-pick" | "revert") {
        let letter: &[char] = if matches!(name, "merge" | "pull" | "rebase") {
            &['s']
        } else {
            &[]
        };
        for item in items.iter().chain(&other) {
            if long(item, &["strategy"]) || short(item, letter) {
                let Some(v) = item.value() else { continue };
                if let Some(interpreter) = script(&format!("merge-{v}"), exec_dirs) {
                    started(
                        format!("git {name} --strategy {v}, a script of git's,"),
                        &interpreter,
                        SCRIPT_INSTEAD,
                    );
                }
            }
        }
        // Several branches at once are merged by the octopus strategy.
        if name == "merge" && operands > 1 && !any(&|i| long(i, &["abort", "quit", "continue"])) {
            started(
                "git merge of several branches (the octopus strategy, a script of git's,)"
                    .to_string(),
                "sh",
                SCRIPT_INSTEAD,
            );
        }
    }
    let signs = match name {
        "commit" | "commit-tree" | "merge" | "rebase" | "cherry-pick" | "revert" | "am"
        | "pull" => any(&|i| long(i, &["gpg-sign"]) || short(i, &['S'])),
        "tag" => any(&|i| short(i, &['s', 'u']) || long(i, &["sign", "local-user"])),
        "push" | "send-pack" => any(&|i| long(i, &["signed"])),
        _ => false,
    };
    if signs {
        started(format!("git {name} with a signature"), "gpg", GPG_INSTEAD);
    }
    let verifies = match name {
        "verify-commit" | "verify-tag" => true,
        "tag" => any(&|i| short(i, &['v']) || long(i, &["verify"])),
        "merge" | "pull" => any(&|i| long(i, &["verify-signatures"])),
        _ => false,
    } || any(&|i| long(i, &["show-signature"]))
        || rest.iter().take_while(|a| *a != "--").any(|a| {
            let format = a.contains("%G") || a.contains("%(signature");
            match name {
                "log" | "show" | "whatchanged" | "rev-list" | "reflog" | "shortlog" => format,
                "for-each-ref" | "branch" | "tag" => format && a.starts_with("--format"),
                _ => false,
            }
        });
    if verifies {
        started(
            format!("git {name} checking signatures"),
            "gpg",
            GPG_INSTEAD,
        );
    }
    out
}
