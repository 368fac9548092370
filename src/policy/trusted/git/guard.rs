//! Keeping git from running programs named in a repository's files.
//!
//! git runs programs that its configuration names: `core.fsmonitor`, hooks, `diff.external`,
//! diff, filter and merge drivers selected by attributes, pagers, editors, credential
//! helpers, `remote.<name>.uploadpack`... A caller who may run git and any program that
//! writes a file can write such a configuration and then run git. Three layers stop it:
//!
//! 1. The environment ([`git_env`], given to every trusted-mode stage, so that a git started
//!    by another allowed program is covered too; it cannot be raced): no system or global
//!    configuration, and command-scope configuration, which git reads after the repository's
//!    and which therefore wins, forcing every single-valued program key to a harmless value
//!    (`core.fsmonitor=false`, `core.hooksPath=/dev/null`, `core.pager=cat`, `core.editor=:`,
//!    ...), resetting the `credential.helper` list, turning off signing and signature
//!    checks the command did not ask for, and refusing discovery of bare repositories
//!    (`safe.bareRepository=explicit`). The transports are closed by `GIT_ALLOW_PROTOCOL`
//!    ([`ALLOWED_PROTOCOLS`]), which git keeps for every process it starts and which
//!    overrides every `protocol.*` setting: only `http`/`https` (and `ssh` when `ssh` is
//!    allowed), so no remote helper, `ext::` command or proxy starts, and no local
//!    transport starts git on another repository, whose side would run without the
//!    command-scope configuration (git removes it there) and with that repository's hooks.
//! 2. Right before spawning, every git directory a git stage will use (`-C`, `--git-dir`,
//!    the repository found by walking up from the working directory, its common directory
//!    and submodules' directories) is read, includes followed, and refused when it sets a key
//!    the environment cannot override: `diff.external`, drivers (`diff.<d>.command`,
//!    `textconv`, `filter.<d>.*`, `merge.<d>.driver`), `remote.<r>.uploadpack`/`receivepack`,
//!    `man.*`, `submodule.<s>.update=!cmd`, `trailer.<t>.cmd`, `tar.<fmt>.command`,
//!    `interactive.diffFilter`, and every `alias.*` (a command line git would run for a
//!    helper or strategy name without a program)... ([`check_git`]). A submodule's or
//!    nested repository's configuration is refused for the program keys the environment
//!    does override too (`core.fsmonitor`, `core.hooksPath`...: `keys::runs_for_the_person`):
//!    the person's own git, recursing into it, runs them. So that
//!    nothing changes them between this check and git's own reading, git never runs beside
//!    a program that may write files in the same tree as any of them (`git::lock`, given every
//!    directory and file read here).
//! 3. Every program but git and a few that only read (`cat`, `ls`, `grep`, `head`, `find`,
//!    `rm`...: `writers::READERS`) may not name a path with a `.git` component or ending in `.git`
//!    (`cp`, `mv`, `tee`, `install`, `ln`, `dd`, `rsync`, `touch`, `patch`, `split`, `uniq`,
//!    archive extractors...: `writers::check_writer_text`, with the writers' cases in `git/writers.cases`), nor a
//!    path inside a git directory or one that would complete one (`writers::check_writer`); `--exclude`
//!    patterns are not paths. git may not write a work tree into a git directory
//!    (`apply --unsafe-paths`, `checkout-index --prefix`, `--work-tree`: [`git_write_reason`]).

use std::ffi::OsString;

use crate::base::sys::libc;
use crate::policy::trusted::git::files::{gitlinks, parse_config};
use crate::policy::trusted::git::keys::{dangerous, runs_for_the_person, REASON};
use crate::policy::trusted::git::places::{nested_repositories, tracked_in_work_tree, MAX_WALK};
use crate::policy::trusted::git::tables::{INDEX_KEPT, ONLY_READ};
use crate::policy::trusted::words::Words;
use std::path::{Path, PathBuf};

/// Command-scope configuration forced on every trusted-mode process: `key=value` words (an
/// empty value is nothing after the `=`), read by [`forced_config`].
pub const FORCED_CONFIG: Words = Words(concat!(
    "core.fsmonitor=false core.hooksPath=/dev/null core.pager=cat core.editor=: sequence.editor=:
     core.sshCommand=ssh core.askPass= core.alternateRefsCommand= core.attributesFile=/dev/null
     credential.helper= gpg.program=gpg gpg.openpgp.program=gpg",
    // One signature program whatever the format the repository or a signature asks for:
    // signing uses `gpg.format`'s program, verifying the program of the signature's own
    // format (an x509 or ssh signature in a commit would start gpgsm or ssh-keygen), so
    // only `gpg` ever runs, and only when the command asks and `gpg` is allowed
    // (`rules::git::programs_started`).
    " gpg.format=openpgp gpg.x509.program=gpg gpg.ssh.program=gpg gpg.ssh.defaultKeyCommand=
     protocol.ext.allow=never protocol.git.allow=never safe.bareRepository=explicit
     help.format=man",
    // The default merge strategies: a repository's `resolve` or `octopus` is one of git's
    // shell scripts (run by sh, past the allowlist when the kernel sandbox is off). With
    // `ort` for both, a merge of several branches fails ("Not handling anything other than
    // two heads merge") and nothing starts.
    " pull.twohead=ort pull.octopus=ort",
    // gpg is a program too: it runs only when the command asks for a signature (`-S`,
    // `--show-signature`, `verify-commit`...), never because the repository says so.
    " commit.gpgSign=false tag.gpgSign=false tag.forceSignAnnotated=false log.showSignature=false
     merge.verifySignatures=false push.gpgSign=false",
));

/// The forced configuration's `(key, value)` pairs, in order.
pub fn forced_config() -> impl Iterator<Item = (&'static str, &'static str)> {
    FORCED_CONFIG.iter().filter_map(|word| word.split_once('='))
}

/// The transports a git stage may use when `ssh` is not on the allowlist: `http` and
/// `https`, served by git's own `git-remote-http(s)`, which runs no program named by a
/// repository (its credential helpers are reset above). Not `file` (a local path or
/// `file://`: git starts `git-upload-pack`/`git-receive-pack` on the other repository with
/// the command-scope configuration removed, so that repository's hooks and settings would
/// run), not `ext` (runs a command), not `git` (`core.gitProxy` names a program), and no
/// remote helper (`<helper>::address`, `remote.<r>.vcs`, an unknown `scheme://`: git would
/// start `git remote-<helper>`, and without such a program an alias of that name).
pub const ALLOWED_PROTOCOLS: &str = "http:https";

/// The signature program git is given when gpg is not on the allowlist: no such file.
pub const NO_GPG: &str = "/dev/null/gpg-is-not-on-the-allowlist";

/// Plain environment variables forced on every trusted-mode process.
pub const FORCED_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", ":"),
    ("GIT_SEQUENCE_EDITOR", ":"),
    ("GIT_ASKPASS", ""),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_SSH_COMMAND", "ssh"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
];

/// True for the names of the environment that yieldshell sets for git (a caller may not
/// set them, and the server's own values never reach a child).
pub fn is_git_env_name(name: &str) -> bool {
    name.starts_with("GIT_CONFIG")
        || FORCED_ENV.iter().any(|(k, _)| *k == name)
        || matches!(
            name,
            "GIT_SSH"
                | "GIT_ALLOW_PROTOCOL"
                | "GIT_PROXY_COMMAND"
                | "GIT_EXTERNAL_DIFF"
                | "GIT_EXEC_PATH"
                | "GIT_TEMPLATE_DIR"
                | "GIT_DIR"
                | "GIT_WORK_TREE"
                | "GIT_COMMON_DIR"
                | "GIT_INDEX_FILE"
                | "GIT_OBJECT_DIRECTORY"
                | "GIT_ALTERNATE_OBJECT_DIRECTORIES"
                | "GIT_ATTR_SOURCE"
                | "GIT_CEILING_DIRECTORIES"
                | "GIT_DISCOVERY_ACROSS_FILESYSTEM"
        )
}

/// The environment given to every trusted-mode process (layer 1). `ssh_allowed`: `ssh` is
/// on the allowlist, so git may use it as a transport (it is the program git starts for
/// `ssh://` and `host:path` addresses; otherwise git refuses those addresses itself).
pub fn git_env(ssh_allowed: bool, gpg_allowed: bool) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = FORCED_ENV
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    // git keeps this variable for every process it starts, the other side of a transport
    // included, and it overrides every `protocol.*` setting of any configuration.
    let protocols = if ssh_allowed {
        format!("{ALLOWED_PROTOCOLS}:ssh")
    } else {
        ALLOWED_PROTOCOLS.to_string()
    };
    env.push(("GIT_ALLOW_PROTOCOL".into(), protocols.into()));
    env.push((
        "GIT_CONFIG_COUNT".into(),
        forced_config().count().to_string().into(),
    ));
    for (i, (k, v)) in forced_config().enumerate() {
        // git verifies signatures where the repository asks (`%G?` in `format.pretty` or
        // a `pretty.<name>`, `export-subst`, merging a signed tag): without gpg on the
        // allowlist it finds no program to run, instead of a `gpg` on the PATH that the
        // kernel sandbox, when off, would not stop.
        let v = if k.ends_with(".program") && !gpg_allowed {
            NO_GPG
        } else {
            v
        };
        env.push((format!("GIT_CONFIG_KEY_{i}").into(), OsString::from(k)));
        env.push((format!("GIT_CONFIG_VALUE_{i}").into(), OsString::from(v)));
    }
    env
}

/// Checks one configuration file and the files it includes (depth-limited like git). Every
/// file git would read, present or not, is added to `used`.
fn check_config_file(
    path: &Path,
    depth: usize,
    nested: bool,
    used: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if depth > 10 {
        return Err(format!(
            "{REASON}: {} includes files more than 10 levels deep",
            path.display()
        ));
    }
    used.push(path.to_path_buf());
    if depth > 0 {
        // An included file in a work tree: a checkout there (git, which the lock does not
        // count as a writer) could rewrite or create it while git runs.
        if let Some(outer) = tracked_in_work_tree(path) {
            return Err(format!(
                "{REASON}? the included configuration file {} lies in the work tree of {} as \
                 a file git checks out, so a git command there could change it while this \
                 one runs; keep included files inside a .git directory or outside any work \
                 tree",
                path.display(),
                outer.display()
            ));
        }
    }
    let Some(bytes) = read_regular(path)? else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let entries = parse_config(&text).map_err(|e| format!("{REASON}? {}: {e}", path.display()))?;
    for (key, value) in &entries {
        if dangerous(key, value) {
            return Err(format!(
                "{REASON}: {} sets {key} (git would run a program named by the repository; \
                 remove the entry to use git here)",
                path.display()
            ));
        }
        if nested && runs_for_the_person(key, value) {
            return Err(format!(
                "{REASON}: {} sets {key}, in a repository nested in this one (a submodule, \
                 or one git can record as a submodule): the person's git would run it when \
                 it recurses there (`git status` above it); remove the entry, or the \
                 nested repository",
                path.display()
            ));
        }
        let lower = key.to_ascii_lowercase();
        if lower == "core.worktree" {
            // A work tree that is (or lies in) a git directory lets a checkout write that
            // directory's configuration after this check (`core.worktree = .`, or another
            // repository's `.git`), as `--work-tree` would.
            let base = path.parent().unwrap_or(Path::new("/"));
            let mut tree = PathBuf::new();
            for part in base.join(value.trim()).components() {
                match part {
                    std::path::Component::ParentDir => {
                        tree.pop();
                    }
                    std::path::Component::CurDir => (),
                    other => tree.push(other),
                }
            }
            if names_git_dir(value) || inside_git_dir(&tree) {
                return Err(format!(
                    "write into a git directory ({} sets core.worktree = {value}: git would \
                     write the work tree's files into a git directory, and its config and \
                     hooks would make a later git command run code); remove the entry",
                    path.display()
                ));
            }
        }
        if lower == "include.path" || (lower.starts_with("includeif.") && lower.ends_with(".path"))
        {
            // git follows every include whatever its condition (`includeIf.<cond>.path`:
            // `gitdir:`, `onbranch:`, `hasconfig:remote.*.url:` can all become true), so
            // every one is followed here. git expands `~/` from `HOME`, `~user/` from the
            // password database and `%(prefix)/` from its build: the checker could read
            // another file than git would, so such a path is refused rather than skipped
            // (a trusted-mode child has no `HOME`; `~root/..` is one such path).
            if value.starts_with('~') || value.starts_with("%(") {
                return Err(format!(
                    "{REASON}? {} includes {value:?}, a path that git expands from the \
                     password database, HOME or its installation prefix, so it cannot be \
                     checked; write the include as an absolute path or one relative to the \
                     including file",
                    path.display()
                ));
            }
            let base = path.parent().unwrap_or(Path::new("/"));
            check_config_file(&base.join(value), depth + 1, nested, used)?;
        }
    }
    Ok(())
}

/// True when `dir` looks like a git directory (`HEAD` with `objects`, `refs` or `config`).
pub fn looks_like_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").exists()
        && ["objects", "refs", "config", "commondir"]
            .iter()
            .any(|m| dir.join(m).exists())
}

/// The largest git file read to be checked (an index of a very large repository).
const MAX_READ: u64 = 256 << 20;

/// Reads a file git would read, without blocking the server: opened non-blocking and judged
/// on the open descriptor, so a FIFO or a device (`include.path = /dev/stdin`, a `.git`
/// FIFO) is refused without being read. `None` when there is no such file.
fn read_regular(path: &Path) -> Result<Option<Vec<u8>>, String> {
    use crate::base::sys::ext::OpenOptionsExt;
    use std::io::Read;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let cannot = |what: String| {
        Err(format!(
            "{REASON}? {} cannot be checked: {what}",
            path.display()
        ))
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e) => return cannot(crate::base::config::plain_io(&e)),
    };
    match file.metadata() {
        // Another name of the file, in a tree the lock does not tie to this repository,
        // lets a writer change it while git runs (for example `y/foo`, a hard link
        // of `x/.git/config` from an archive, rewritten by `tar -x` beside `git diff` in x).
        Ok(m) if m.is_file() && crate::base::sys::ext::MetadataExt::nlink(&m) > 1 => {
            return Err(format!(
                "{REASON}? {} has {} names (hard links): a program writing another of them \
                 could change it between this check and git reading it; give it one name \
                 (copy it, then remove the others)",
                path.display(),
                crate::base::sys::ext::MetadataExt::nlink(&m)
            ))
        }
        Ok(m) if m.is_file() && m.len() <= MAX_READ => {}
        Ok(m) if m.is_file() => return cannot(format!("larger than {MAX_READ} bytes")),
        Ok(_) => return cannot("not a regular file".into()),
        Err(e) => return cannot(crate::base::config::plain_io(&e)),
    }
    let mut bytes = Vec::new();
    match file.take(MAX_READ).read_to_end(&mut bytes) {
        Ok(_) => Ok(Some(bytes)),
        Err(e) => cannot(crate::base::config::plain_io(&e)),
    }
}

/// The git directory that `.git` (a directory, or a file `gitdir: <path>`) stands for;
/// `None` when there is no `.git` or git would not take it as one. Read as git reads it
/// (`read_gitfile_gently`): the file starts with exactly `gitdir: `, and the path is the
/// rest, bytes as they are, less only the line ends at its end (a space before or after it
/// is part of the name), relative to the file's directory.
fn dot_git_target(dot_git: &Path) -> Result<Option<PathBuf>, String> {
    match std::fs::metadata(dot_git) {
        Ok(meta) if meta.is_dir() => return Ok(Some(dot_git.to_path_buf())),
        Ok(_) => {}
        Err(_) => return Ok(None),
    }
    let Some(bytes) = read_regular(dot_git)? else {
        return Ok(None);
    };
    Ok(bytes.strip_prefix(b"gitdir: ").map(|target| {
        dot_git
            .parent()
            .unwrap_or(Path::new("/"))
            .join(path_as_git_reads(target))
    }))
}

/// A path written in one of git's pointer files (`gitdir: ` files, `commondir`): the bytes
/// as they are, less the `\n` and `\r` at the end, which is all git removes.
fn path_as_git_reads(bytes: &[u8]) -> PathBuf {
    use crate::base::sys::ext::OsStrExt;
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    PathBuf::from(std::ffi::OsStr::from_bytes(&bytes[..end]))
}

/// Checks a git directory: its configuration files (with includes), its common directory's,
/// and those of the submodules it holds. Each directory checked is added to `used`.
/// `nested`: a submodule's or a repository nested in a work tree, whose program keys the
/// person's git runs (`runs_for_the_person`).
fn check_git_dir(
    dir: &Path,
    depth: usize,
    nested: bool,
    used: &mut Vec<PathBuf>,
) -> Result<(), String> {
    used.push(dir.to_path_buf());
    if let Some(outer) = tracked_in_work_tree(dir) {
        return Err(format!(
            "{REASON}? the git directory {} lies in the work tree of {} as files git checks \
             out, so a git command there could rewrite its configuration while this one \
             runs; use a git directory outside any work tree, or named .git",
            dir.display(),
            outer.display()
        ));
    }
    for name in ["config", "config.worktree"] {
        check_config_file(&dir.join(name), 0, nested, used)?;
    }
    if let Some(common) = read_regular(&dir.join("commondir"))? {
        let common = dir.join(path_as_git_reads(&common));
        if depth < 4 {
            check_git_dir(&common, depth + 1, nested, used)?;
        }
    }
    if depth < 4 {
        check_modules(&dir.join("modules"), depth + 1, used)?;
    }
    Ok(())
}

/// Submodules' git directories live under `modules/`, nested by name (which may contain `/`).
fn check_modules(dir: &Path, depth: usize, used: &mut Vec<PathBuf>) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if looks_like_git_dir(&path) {
            check_git_dir(&path, depth, true, used)?;
        } else if depth < 6 {
            check_modules(&path, depth + 1, used)?;
        }
    }
    Ok(())
}

/// Every git directory git could use when started in `start`: walking up, each `.git` (a
/// directory, or a file `gitdir: <path>`) and each directory that is itself a git directory.
/// git stops at the first valid one; all are taken, since an invalid one (an empty `.git`)
/// makes git walk on. Each with the work tree it belongs to, when it has one.
fn discover(start: &Path) -> Result<Vec<(PathBuf, Option<PathBuf>)>, String> {
    let mut found = Vec::new();
    let mut dir = Some(start);
    while let Some(d) = dir {
        if let Some(target) = dot_git_target(&d.join(".git"))? {
            found.push((target, Some(d.to_path_buf())));
        }
        if looks_like_git_dir(d) {
            found.push((d.to_path_buf(), None));
        }
        dir = d.parent();
    }
    Ok(found)
}

/// Checks the submodules of a work tree whose git directory is `git_dir`: each gitlink of
/// the index with a `.git` of its own (git runs itself there for `status`, `diff`...).
fn check_submodules(
    git_dir: &Path,
    work_tree: &Path,
    depth: usize,
    walk: bool,
    used: &mut Vec<PathBuf>,
) -> Result<(), String> {
    let Some(index) = read_regular(&git_dir.join("index"))? else {
        return Ok(());
    };
    let config = read_regular(&git_dir.join("config"))?.unwrap_or_default();
    let sha256 = std::str::from_utf8(&config).is_ok_and(|c| {
        parse_config(c).is_ok_and(|entries| {
            entries
                .iter()
                .any(|(k, v)| k == "extensions.objectformat" && v.eq_ignore_ascii_case("sha256"))
        })
    });
    let Some(links) = gitlinks(&index, if sha256 { 32 } else { 20 }) else {
        return Err(format!(
            "{REASON}? the index {} cannot be read to find its submodules (a split index, \
             whose entries are partly in a sharedindex file, is not read: use a repository \
             without one)",
            git_dir.join("index").display()
        ));
    };
    for link in &links {
        let sub = work_tree.join(link);
        if let Some(target) = dot_git_target(&sub.join(".git"))? {
            check_repository(&target, Some(&sub), depth + 1, walk, used)?;
        }
    }
    // Every other repository in the work tree too: one that is not a
    // submodule now becomes one when a checkout, reset or merge adds its gitlink, and git
    // then runs itself inside it (to report its changes) under its configuration.
    let mut budget = MAX_WALK;
    let nested = if walk {
        nested_repositories(work_tree, &mut budget)?
    } else {
        Vec::new()
    };
    for sub in nested {
        if links.iter().any(|l| work_tree.join(l) == sub) {
            continue;
        }
        if let Some(target) = dot_git_target(&sub.join(".git"))? {
            check_repository(&target, Some(&sub), depth + 1, walk, used)?;
        }
    }
    Ok(())
}

/// Checks a git directory and, when it has a work tree, the submodules checked out there.
/// Every directory and file git would read for it is added to `used` (the work tree too).
fn check_repository(
    git_dir: &Path,
    work_tree: Option<&Path>,
    depth: usize,
    walk: bool,
    used: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if depth > 8 {
        return Err(format!(
            "{REASON}? submodules nested more than 8 deep under {}",
            git_dir.display()
        ));
    }
    check_git_dir(git_dir, 0, depth > 0, used)?;
    if let Some(work_tree) = work_tree {
        used.push(work_tree.to_path_buf());
        check_submodules(git_dir, work_tree, depth, walk, used)?;
    }
    Ok(())
}

/// True when `path`, or a directory it lies in, is a git directory or is named `.git`.
fn inside_git_dir(path: &Path) -> bool {
    let mut dir = Some(path);
    while let Some(d) = dir {
        if d.file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case(".git"))
            || looks_like_git_dir(d)
        {
            return true;
        }
        dir = d.parent();
    }
    false
}

/// The values of a long option that takes one, written in full or abbreviated to at least
/// `min` characters (`--pre=x`, `--prefix x`), as git's option parser reads them.
pub fn long_values<'a>(
    args: &'a [String],
    option: &'a str,
    min: usize,
) -> impl Iterator<Item = &'a str> + 'a {
    args.iter().enumerate().filter_map(move |(k, a)| {
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a.as_str(), None),
        };
        if name.len() < min || !option.starts_with(name) {
            return None;
        }
        attached.or_else(|| args.get(k + 1).map(String::as_str))
    })
}

/// The operands of a subcommand (arguments that are not options, all of them after `--`),
/// skipping the value of each option in `with_value` written as a separate argument.
fn operands(rest: &[String], with_value: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = rest.iter();
    while let Some(a) = args.next() {
        if a == "--" {
            out.extend(args.by_ref().cloned());
        } else if with_value.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') || a == "-" {
            out.push(a.clone());
        }
    }
    out
}

/// The files and directories that git subcommands write output into where they are told:
/// `format-patch -o`, `bugreport -o`, `diagnose -o` (`--output-directory`), the file of
/// `bundle create`, `fast-import` marks, `mailsplit -o`, `mailinfo`'s files,
/// `merge-file`'s first file, `index-pack -o`. (`--output` and `archive -o` are refused
/// outright by the rules.)
pub fn output_paths(subcommand: &str, rest: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    match subcommand {
        "format-patch" | "bugreport" | "diagnose" => {
            out.extend(long_values(rest, "--output-directory", 10).map(str::to_string));
            for (k, a) in rest.iter().enumerate() {
                if a == "--" {
                    break;
                }
                if a == "-o" {
                    out.extend(rest.get(k + 1).cloned());
                } else if let Some(v) = a.strip_prefix("-o") {
                    out.push(v.to_string());
                }
            }
        }
        "bundle" if rest.first().is_some_and(|a| a == "create") => {
            out.extend(rest[1..].iter().find(|a| !a.starts_with('-')).cloned());
        }
        // The marks file it writes.
        "fast-import" => {
            for name in [
                "--export-marks",
                "--import-marks",
                "--import-marks-if-exists",
            ] {
                out.extend(long_values(rest, name, name.len()).map(str::to_string));
            }
        }
        // The files named as operands, written with content from stdin
        // (`git mailinfo r/.git/config r/msg` writes a configuration git may then read).
        "mailinfo" => out.extend(operands(rest, &[])),
        // The first file is overwritten with the merge (unless -p; refused either way).
        "merge-file" => out.extend(operands(rest, &["-L"]).into_iter().take(1)),
        // `-o <index>` (beside the pack file it writes only `.idx`, `.rev` and `.keep`).
        "index-pack" => out.extend(
            rest.windows(2)
                .filter(|w| w[0] == "-o")
                .map(|w| w[1].clone()),
        ),
        // The directory it writes the messages into (`-o<dir>`).
        "mailsplit" => {
            out.extend(
                rest.iter()
                    .take_while(|a| *a != "--")
                    .filter_map(|a| a.strip_prefix("-o"))
                    .map(str::to_string),
            );
        }
        _ => {}
    }
    out
}

/// Refusals of git subcommands that write files where they are told (text only; the file
/// system is checked by [`check_git`]): `apply --unsafe-paths` (a patch may then create
/// `.git/hooks/x`), `apply --directory`, `checkout-index --prefix` (a string prefix, so
/// `.gi` + `t/config` is `.git/config`), `worktree add` and `--work-tree` naming `.git`.
pub fn git_write_reason(subcommand: &str, rest: &[String]) -> Option<String> {
    let reason = |what: &str| {
        Some(format!(
            "write into a git directory ({what}: its config and hooks would make a later git \
             command run code)"
        ))
    };
    if let Some(v) = output_paths(subcommand, rest)
        .into_iter()
        .find(|v| names_git_dir(v))
    {
        return reason(&format!(
            "git {subcommand} writes its output into {v}, which must be outside any git \
             directory"
        ));
    }
    match subcommand {
        "apply" => {
            if rest.iter().any(|a| {
                let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
                name.len() >= 5 && "--unsafe-paths".starts_with(name)
            }) {
                return reason("git apply --unsafe-paths writes wherever the patch says");
            }
            if let Some(v) = long_values(rest, "--directory", 3).find(|v| names_git_dir(v)) {
                return reason(&format!("git apply --directory {v}"));
            }
        }
        "checkout-index" => {
            if let Some(v) = long_values(rest, "--prefix", 3)
                .find(|v| names_git_dir(v) || (!v.is_empty() && !v.ends_with('/')))
            {
                return reason(&format!(
                    "git checkout-index --prefix {v}: the prefix must be a directory ending \
                     with / and not a git directory"
                ));
            }
        }
        "worktree" => {
            if let Some(v) = rest.iter().find(|a| names_git_dir(a)) {
                return reason(&format!("git worktree {v}"));
            }
        }
        _ => {}
    }
    None
}

/// Layer 2: checks every git directory a git stage (`args` after `argv[0]`) run in `cwd`
/// will use, and refuses git writing a work tree into a git directory. `Ok` holds the
/// directories and files git will work in and read (for `git::lock`): the start directory,
/// every git directory (found walking up, `--git-dir`, a `gitdir:` file's target, common
/// directories, submodules'), their work trees, the `gitdir:` files and the configuration
/// files with their includes. `Err` the complete refusal.
pub fn check_git(cwd: &Path, args: &[String]) -> Result<Vec<PathBuf>, String> {
    let refuse = |e: String| format!("{}{e}", crate::policy::trusted::rules::PREFIX);
    let mut start = cwd.to_path_buf();
    let mut repositories: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    let mut work_trees: Vec<PathBuf> = Vec::new();
    let mut gitfiles: Vec<PathBuf> = Vec::new();
    // The global options as `rules` read them (for a `git-<subcommand>` program, whose
    // arguments hold none, nothing is read and the work tree is walked).
    let read = super::argv::parse(args).unwrap_or_default();
    for dir in &read.chdirs {
        start = start.join(dir);
    }
    // git resolves a relative path against the directory it ends in, after every `-C`
    // (even one written after it).
    for (is_git_dir, written) in &read.dirs {
        let path = start.join(written);
        if *is_git_dir {
            // A directory, or a file `gitdir: <path>` as git reads it.
            let target = dot_git_target(&path).map_err(refuse)?;
            if target.as_ref().is_some_and(|t| *t != path) {
                gitfiles.push(path.clone());
            }
            repositories.push((target.unwrap_or(path), None));
        } else {
            repositories.extend(discover(&path).map_err(refuse)?);
            work_trees.push(path);
        }
    }
    let rest = match read.subcommand {
        Some(index) => &args[index..],
        None => &args[args.len()..],
    };
    // Only a command that may add a gitlink to the index can enter a repository that is not
    // a submodule yet: the work tree is walked for all but those that only read.
    let walk = !rest.first().is_some_and(|name| {
        ONLY_READ.contains(name.as_str()) || INDEX_KEPT.contains(&name.as_str())
    });
    // Subcommands that write a work tree's files where they are told.
    match rest.first().map(String::as_str) {
        Some("checkout-index") => {
            work_trees.extend(long_values(rest, "--prefix", 3).map(|v| start.join(v)));
        }
        Some("worktree") if rest.get(1).is_some_and(|a| a == "add") => {
            work_trees.extend(
                rest[2..]
                    .iter()
                    .filter(|a| !a.starts_with('-'))
                    .map(|a| start.join(a)),
            );
        }
        _ => {}
    }
    if let Some((sub, tail)) = rest.split_first() {
        for v in output_paths(sub, tail) {
            let path = start.join(&v);
            if inside_git_dir(&path) {
                return Err(refuse(format!(
                    "write into a git directory (git {sub} writes its output into {v}, inside \
                     the git directory {}; its config and hooks would make a later git \
                     command run code): write it outside the git directory",
                    path.display()
                )));
            }
        }
    }
    for tree in &work_trees {
        let text = tree.display().to_string();
        if names_git_dir(&text) || inside_git_dir(tree) {
            return Err(refuse(format!(
                "write into a git directory ({text}: git would write the work tree's files \
                 there, and its config and hooks would make a later git command run code)"
            )));
        }
    }
    repositories.extend(discover(&start).map_err(refuse)?);
    let mut used = vec![start];
    used.extend(gitfiles);
    for (dir, work_tree) in repositories {
        check_repository(&dir, work_tree.as_deref(), 0, walk, &mut used).map_err(refuse)?;
    }
    Ok(used)
}

/// True when `text` names a `.git` directory or a repository named `*.git`.
pub fn names_git_dir(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices(".git").any(|(at, _)| {
        let after = &lower[at + 4..];
        after.is_empty() || after.starts_with('/') || after.starts_with('\\')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_git_names_every_directory_git_uses() {
        let base = std::env::temp_dir().join(format!("yieldshell-gitused-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        for d in ["b/.git/objects", "b/.git/worktrees/w", "x", "c"] {
            std::fs::create_dir_all(base.join(d)).expect("mkdir");
        }
        let write = |rel: &str, text: &str| std::fs::write(base.join(rel), text).expect("write");
        write("b/.git/HEAD", "ref: refs/heads/main\n");
        write("b/.git/config", "[include]\n\tpath = ../../c/extra.cfg\n");
        write("b/.git/worktrees/w/HEAD", "ref: refs/heads/w\n");
        write("b/.git/worktrees/w/commondir", "../..\n");
        // x is a linked work tree of b: its gitfile names b's worktree directory.
        write("x/.git", "gitdir: ../b/.git/worktrees/w\n");
        let used = check_git(&base.join("x"), &["status".to_string()]).expect("clean");
        for want in [
            "x",
            "x/../b/.git/worktrees/w",
            "x/../b/.git/worktrees/w/../..",
            "x/../b/.git/worktrees/w/../../../../c/extra.cfg",
        ] {
            assert!(used.contains(&base.join(want)), "{want} not in {used:?}");
        }
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A gitfile's path and a `commondir` are read as git reads them:
    /// spaces around the name are part of it, so `gitdir: gd ` names `gd `, not a clean `gd`.
    #[test]
    fn gitfile_and_commondir_paths_keep_their_spaces() {
        let base = std::env::temp_dir().join(format!("yieldshell-gitspace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let armed = "[diff]\n\texternal = ./ev\n";
        for (dir, config) in [
            ("gd ", armed),
            ("gd", ""),
            ("w2/ g2", armed),
            ("w2/g2", ""),
            ("cd ", armed),
            ("cd", ""),
            ("b/wt", ""),
        ] {
            std::fs::create_dir_all(base.join(dir).join("objects")).expect("mkdir");
            std::fs::write(base.join(dir).join("HEAD"), "ref: refs/heads/main\n").expect("write");
            std::fs::write(base.join(dir).join("config"), config).expect("write");
        }
        for (work, gitfile) in [("w1", "gitdir: ../gd \n"), ("w2", "gitdir:  g2\r\n")] {
            std::fs::create_dir_all(base.join(work)).expect("mkdir");
            std::fs::write(base.join(work).join(".git"), gitfile).expect("write");
        }
        // A linked work tree whose common directory is `cd ` (with the space).
        std::fs::write(base.join("b/wt/commondir"), "../../cd \n").expect("write");
        std::fs::create_dir_all(base.join("w3")).expect("mkdir");
        std::fs::write(base.join("w3/.git"), "gitdir: ../b/wt\n").expect("write");
        for work in ["w1", "w2", "w3"] {
            let e = check_git(&base.join(work), &["diff".to_string()]).expect_err(work);
            // The armed directory is read: its external diff, or (w2, whose ` g2` lies in
            // the work tree of w2) that placement itself.
            assert!(
                e.contains("diff.external") || e.contains("/ g2 lies in the work tree"),
                "{work}: {e}"
            );
        }
        // What git would not take as a gitfile is not followed either.
        std::fs::write(base.join("w1/.git"), "gitdir:../gd \n").expect("write");
        assert!(check_git(&base.join("w1"), &["diff".to_string()]).is_ok());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn git_env_is_counted() {
        let env = git_env(false, false);
        let count = env
            .iter()
            .find(|(k, _)| k == "GIT_CONFIG_COUNT")
            .map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(count, Some(FORCED_CONFIG.iter().count().to_string()));
        let protocols = |env: &[(OsString, OsString)]| {
            env.iter()
                .find(|(k, _)| k == "GIT_ALLOW_PROTOCOL")
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        // No local transport, no ext::, no remote helper; ssh only when allowed.
        assert_eq!(protocols(&env).as_deref(), Some("http:https"));
        assert_eq!(
            protocols(&git_env(true, false)).as_deref(),
            Some("http:https:ssh")
        );
        assert!(is_git_env_name("GIT_ALLOW_PROTOCOL") && is_git_env_name("GIT_PROXY_COMMAND"));
        // Signature programs: none that runs unless gpg is allowed.
        let program = |env: &[(OsString, OsString)]| {
            let i = forced_config().position(|(k, _)| k == "gpg.program");
            let key = format!("GIT_CONFIG_VALUE_{}", i.expect("forced"));
            env.iter()
                .find(|(k, _)| *k == *key)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(program(&env).as_deref(), Some(NO_GPG));
        assert_eq!(program(&git_env(false, true)).as_deref(), Some("gpg"));
        assert!(env
            .iter()
            .all(|(k, _)| is_git_env_name(&k.to_string_lossy())));
    }
}
