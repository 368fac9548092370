//! Keeping git from running programs named in a repository's files (REDTEAM findings 1, 2).
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
//!    ...), resetting the `credential.helper` list, refusing the `ext::` transport and
//!    discovery of bare repositories (`safe.bareRepository=explicit`).
//! 2. Right before spawning, every git directory a git stage will use (`-C`, `--git-dir`,
//!    the repository found by walking up from the working directory, its common directory
//!    and submodules' directories) is read, includes followed, and refused when it sets a key
//!    the environment cannot override: `diff.external`, drivers (`diff.<d>.command`,
//!    `textconv`, `filter.<d>.*`, `merge.<d>.driver`), `remote.<r>.uploadpack`/`receivepack`,
//!    `man.*`, `submodule.<s>.update=!cmd`, `trailer.<t>.cmd`... ([`check_git`]). A
//!    configuration written between this check and git's own reading of it is not seen: the
//!    third layer refuses the writes.
//! 3. File-writing programs (`cp`, `mv`, `tee`, `install`, `ln`, `dd`, `rsync`, `sed`,
//!    `touch`, `patch`, `split`, archive extractors...) may not name a path with a `.git`
//!    component or ending in `.git` ([`check_writer_text`], with the hardening table), nor a
//!    path inside a git directory or one that would complete one ([`check_writer`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Command-scope configuration forced on every trusted-mode process: `(key, value)`.
pub const FORCED_CONFIG: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("core.attributesFile", "/dev/null"),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("protocol.ext.allow", "never"),
    ("protocol.git.allow", "never"),
    ("safe.bareRepository", "explicit"),
    ("help.format", "man"),
];

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
];

/// True for the names of the environment that yieldshell sets for git (a caller may not
/// set them, and the server's own values never reach a child).
pub fn is_git_env_name(name: &str) -> bool {
    name.starts_with("GIT_CONFIG")
        || FORCED_ENV.iter().any(|(k, _)| *k == name)
        || matches!(
            name,
            "GIT_SSH" | "GIT_EXTERNAL_DIFF" | "GIT_EXEC_PATH" | "GIT_TEMPLATE_DIR"
        )
}

/// The environment given to every trusted-mode process (layer 1).
pub fn git_env() -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = FORCED_ENV
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    env.push((
        "GIT_CONFIG_COUNT".into(),
        FORCED_CONFIG.len().to_string().into(),
    ));
    for (i, (k, v)) in FORCED_CONFIG.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}").into(), OsString::from(k)));
        env.push((format!("GIT_CONFIG_VALUE_{i}").into(), OsString::from(v)));
    }
    env
}

const REASON: &str = "git repository configuration runs a program";

/// True when a configuration entry would make git run a program that the environment
/// cannot override.
fn dangerous(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let (section, rest) = lower.split_once('.').unwrap_or((&lower, ""));
    let name = rest.rsplit('.').next().unwrap_or("");
    let has_sub = rest.contains('.');
    match section {
        "diff" => lower == "diff.external" || (has_sub && matches!(name, "command" | "textconv")),
        "filter" => has_sub,
        "merge" => has_sub && name == "driver",
        "remote" => has_sub && matches!(name, "uploadpack" | "receivepack" | "vcs"),
        "man" | "browser" | "web" | "difftool" | "mergetool" | "guitool" | "hook" => true,
        "submodule" => has_sub && name == "update" && value.trim_start().starts_with('!'),
        "trailer" => has_sub && matches!(name, "cmd" | "command"),
        "uploadpack" => name == "packobjectshook",
        "sendemail" => true,
        "core" => name == "gitproxy",
        "url" => lower.contains("::") || value.contains("::"),
        _ => false,
    }
}

/// One configuration entry: key (`section.sub.name`) and value.
type Entry = (String, String);

/// Reads a git configuration file's entries the way git does (sections, quoted
/// subsections, old `[section.sub]` form, quoted values, escapes, comments, continuation
/// lines). `Err` on text git would refuse too.
pub fn parse_config(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut section = String::new();
    let mut chars = text.chars().peekable();
    let bad = |what: &str| Err(format!("cannot read the configuration: {what}"));
    loop {
        // Skip blank space between items.
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if c == '#' || c == ';' {
            for c in chars.by_ref() {
                if c == '\n' {
                    break;
                }
            }
            continue;
        }
        if c == '[' {
            chars.next();
            let mut head = String::new();
            let mut sub: Option<String> = None;
            loop {
                match chars.next() {
                    None => return bad("unterminated section header"),
                    Some(']') => break,
                    Some('"') if sub.is_none() => {
                        let mut s = String::new();
                        loop {
                            match chars.next() {
                                None | Some('\n') => return bad("unterminated subsection"),
                                Some('"') => break,
                                Some('\\') => match chars.next() {
                                    Some(c) if c != '\n' => s.push(c),
                                    _ => return bad("bad escape in subsection"),
                                },
                                Some(c) => s.push(c),
                            }
                        }
                        sub = Some(s);
                    }
                    Some(c) if c.is_whitespace() && sub.is_none() => {}
                    Some(c) if sub.is_none() => head.push(c),
                    Some(_) => return bad("text after a subsection"),
                }
            }
            section = match sub {
                Some(s) => format!("{}.{s}", head.to_ascii_lowercase()),
                None => head.to_ascii_lowercase(),
            };
            continue;
        }
        // name [= value]
        let mut name = String::new();
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '-')
        {
            name.push(chars.next().unwrap_or_default());
        }
        if name.is_empty() {
            return bad("a line that is neither a section nor a variable");
        }
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            let mut quoted = false;
            let mut pending_space = String::new();
            let mut started = false;
            while let Some(c) = chars.next() {
                match c {
                    '\n' => break,
                    '\\' => match chars.next() {
                        Some('\n') => continue,
                        Some('n') => value.push('\n'),
                        Some('t') => value.push('\t'),
                        Some('b') => {
                            value.pop();
                        }
                        Some(c @ ('\\' | '"')) => value.push(c),
                        _ => return bad("bad escape in a value"),
                    },
                    '"' => quoted = !quoted,
                    '#' | ';' if !quoted => {
                        for c in chars.by_ref() {
                            if c == '\n' {
                                break;
                            }
                        }
                        break;
                    }
                    c if c.is_whitespace() && !quoted => {
                        if started {
                            pending_space.push(c);
                        }
                        continue;
                    }
                    c => {
                        value.push_str(&pending_space);
                        pending_space.clear();
                        value.push(c);
                        started = true;
                        continue;
                    }
                }
                value.push_str(&pending_space);
                pending_space.clear();
                started = true;
            }
            if quoted {
                return bad("unterminated quote in a value");
            }
        } else {
            match chars.next() {
                None | Some('\n') => {}
                Some('#') | Some(';') => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                }
                Some(_) => return bad("text after a variable name"),
            }
        }
        if section.is_empty() {
            return bad("a variable before any section");
        }
        entries.push((format!("{section}.{}", name.to_ascii_lowercase()), value));
    }
    Ok(entries)
}

/// Checks one configuration file and the files it includes (depth-limited like git).
fn check_config_file(path: &Path, depth: usize) -> Result<(), String> {
    if depth > 10 {
        return Err(format!(
            "{REASON}: {} includes files more than 10 levels deep",
            path.display()
        ));
    }
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(()),
        Err(e) => {
            return Err(format!(
                "{REASON}? {} cannot be read to be checked: {}",
                path.display(),
                crate::config::plain_io(&e)
            ))
        }
    };
    let entries = parse_config(&text).map_err(|e| format!("{REASON}? {}: {e}", path.display()))?;
    for (key, value) in &entries {
        if dangerous(key, value) {
            return Err(format!(
                "{REASON}: {} sets {key} (git would run a program named by the repository; \
                 remove the entry to use git here)",
                path.display()
            ));
        }
        let lower = key.to_ascii_lowercase();
        if lower == "include.path" || (lower.starts_with("includeif.") && lower.ends_with(".path"))
        {
            let target = if let Some(rest) = value.strip_prefix("~/") {
                match std::env::var_os("HOME") {
                    Some(home) => PathBuf::from(home).join(rest),
                    None => continue,
                }
            } else {
                let base = path.parent().unwrap_or(Path::new("/"));
                base.join(value)
            };
            check_config_file(&target, depth + 1)?;
        }
    }
    Ok(())
}

/// True when `dir` looks like a git directory (`HEAD` with `objects`, `refs` or `config`).
fn looks_like_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").exists()
        && ["objects", "refs", "config", "commondir"]
            .iter()
            .any(|m| dir.join(m).exists())
}

/// The git directory that `.git` (a directory, or a file `gitdir: <path>`) stands for.
fn dot_git_target(dot_git: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    Some(dot_git.parent().unwrap_or(Path::new("/")).join(target))
}

/// Checks a git directory: its configuration files (with includes), its common directory's,
/// and those of the submodules it holds.
fn check_git_dir(dir: &Path, depth: usize) -> Result<(), String> {
    for name in ["config", "config.worktree"] {
        check_config_file(&dir.join(name), 0)?;
    }
    if let Ok(common) = std::fs::read_to_string(dir.join("commondir")) {
        let common = dir.join(common.trim());
        if depth < 4 {
            check_git_dir(&common, depth + 1)?;
        }
    }
    if depth < 4 {
        check_modules(&dir.join("modules"), depth + 1)?;
    }
    Ok(())
}

/// Submodules' git directories live under `modules/`, nested by name (which may contain `/`).
fn check_modules(dir: &Path, depth: usize) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if looks_like_git_dir(&path) {
            check_git_dir(&path, depth)?;
        } else if depth < 6 {
            check_modules(&path, depth + 1)?;
        }
    }
    Ok(())
}

/// The git directory found by walking up from `start` as git does (a `.git` in a directory,
/// or the directory itself when it is a git directory).
fn discover(start: &Path) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if let Some(target) = dot_git_target(&d.join(".git")) {
            return Some(target);
        }
        if looks_like_git_dir(d) {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// Layer 2: checks every git directory a git stage (`args` after `argv[0]`) run in `cwd`
/// will use. `Err` holds the complete refusal.
pub fn check_git(cwd: &Path, args: &[String]) -> Result<(), String> {
    let mut start = cwd.to_path_buf();
    let mut explicit: Vec<PathBuf> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let value = |i: usize| args.get(i + 1).map(String::as_str).unwrap_or("");
        if arg == "-C" {
            start = start.join(value(i));
            i += 2;
            continue;
        }
        let (name, attached) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg, None),
        };
        if matches!(name, "--git-dir" | "--work-tree") {
            let v = attached.unwrap_or_else(|| value(i));
            let path = start.join(v);
            if name == "--git-dir" {
                explicit.push(path);
            } else if let Some(found) = discover(&path) {
                explicit.push(found);
            }
            i += if attached.is_some() { 1 } else { 2 };
            continue;
        }
        if !arg.starts_with('-') || arg == "--" {
            break;
        }
        i += 1;
    }
    explicit.extend(discover(&start));
    for dir in explicit {
        check_git_dir(&dir, 0).map_err(|e| format!("{}{e}", super::harden::PREFIX))?;
    }
    Ok(())
}

/// Programs that write files named on their command line.
const WRITERS: &[&str] = &[
    "cp", "gcp", "mv", "gmv", "install", "ginstall", "ln", "gln", "link", "tee", "gtee", "dd",
    "rsync", "tar", "gtar", "bsdtar", "cpio", "bsdcpio", "pax", "unzip", "7z", "7za", "7zr", "ar",
    "sed", "gsed", "touch", "gtouch", "truncate", "patch", "split", "csplit", "mkdir", "chmod",
    "shred", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma",
    "unlzma", "uudecode", "curl", "wget", "iconv", "dos2unix", "unix2dos", "sponge", "mkfifo",
    "mknod", "base64", "busybox", "rename", "mktemp",
];

/// True when `program` (a name as written or a resolved path) is a file-writing program.
pub fn is_writer(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    super::identity::derived_names(&base)
        .iter()
        .any(|n| WRITERS.contains(&n.as_str()))
}

/// True when `text` names a `.git` directory or a repository named `*.git`.
fn names_git_dir(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices(".git").any(|(at, _)| {
        let after = &lower[at + 4..];
        after.is_empty() || after.starts_with('/') || after.starts_with('\\')
    })
}

/// Layer 3, on the text: a file-writing program may not name a `.git` path (as an operand,
/// an option's value, or inside a script such as sed's `w .git/config`). `Err(reason)`.
pub fn check_writer_text(program: &str, args: &[String]) -> Result<(), String> {
    if !is_writer(program) {
        return Ok(());
    }
    match args.iter().find(|a| names_git_dir(a)) {
        Some(arg) => Err(format!(
            "write into a git directory ({arg}: a file-writing program may not name a .git \
             path, whose config and hooks would make a later git command run code)"
        )),
        None => Ok(()),
    }
}

/// Layer 3, on the file system: no path named by a file-writing program may lie inside a
/// git directory (whatever its name), be one, or complete one.
pub fn check_writer(cwd: &Path, program: &str, args: &[String]) -> Result<(), String> {
    if !is_writer(program) {
        return Ok(());
    }
    for arg in args {
        let mut candidates = vec![arg.as_str()];
        if let Some(rest) = arg.strip_prefix('-') {
            candidates.clear();
            if let Some((_, v)) = rest.split_once('=') {
                candidates.push(v);
            } else if !rest.starts_with('-') && rest.len() > 1 {
                candidates.push(&rest[1..]);
            }
        } else if let Some((_, v)) = arg.split_once('=') {
            // dd's of=PATH and friends.
            candidates.push(v);
        }
        for text in candidates {
            if text.is_empty() {
                continue;
            }
            let full = cwd.join(text);
            if looks_like_git_dir(&full) {
                return Err(format!(
                    "{}write into a git directory ({text} is a git directory: its config and \
                     hooks would make a later git command run code)",
                    super::harden::PREFIX
                ));
            }
            super::check_git_directories(cwd, text).map_err(|e| {
                format!(
                    "{}write into a git directory ({})",
                    super::harden::PREFIX,
                    e.trim_start_matches("Redirection target ")
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parsing() {
        let text = "[core]\n\tfsmonitor = \"id > x; true\"\n[diff \"x\"]\n textconv = cat # c\n\
                    [Remote \"o\"]\n\turl = a\\\n b\n\tbare\n[section.Sub]\nk=\"a;b\" ; c\n";
        let got = parse_config(text).expect("parses");
        let want: Vec<(String, String)> = [
            ("core.fsmonitor", "id > x; true"),
            ("diff.x.textconv", "cat"),
            ("remote.o.url", "a b"),
            ("remote.o.bare", ""),
            ("section.sub.k", "a;b"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
        assert!(parse_config("[core\n").is_err());
        assert!(parse_config("x = 1\n").is_err());
        assert!(parse_config("[a]\nk = \"open\n").is_err());
    }

    #[test]
    fn dangerous_keys() {
        for (k, v, want) in [
            ("diff.external", "/lib64/ld-linux-x86-64.so.2", true),
            ("diff.x.textconv", "cat", true),
            ("diff.x.command", "x", true),
            ("diff.x.funcname", "^f", false),
            ("diff.algorithm", "histogram", false),
            ("filter.lfs.clean", "git-lfs clean", true),
            ("merge.x.driver", "x", true),
            ("merge.conflictstyle", "diff3", false),
            ("remote.origin.uploadpack", "x", true),
            ("remote.origin.url", "https://x/y.git", false),
            ("man.viewer", "x", true),
            ("submodule.s.update", "!x", true),
            ("submodule.s.update", "rebase", false),
            ("core.fsmonitor", "x", false),
            ("core.hookspath", ".husky", false),
            ("url.ext::sh.insteadof", "x:", true),
            ("user.name", "a", false),
            ("trailer.t.cmd", "x", true),
        ] {
            assert_eq!(dangerous(k, v), want, "{k}={v}");
        }
    }

    #[test]
    fn git_env_is_counted() {
        let env = git_env();
        let count = env
            .iter()
            .find(|(k, _)| k == "GIT_CONFIG_COUNT")
            .map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(count, Some(FORCED_CONFIG.len().to_string()));
        assert!(env
            .iter()
            .all(|(k, _)| is_git_env_name(&k.to_string_lossy())));
    }

    #[test]
    fn writer_text() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_writer_text("cp", &s(&["cfg", ".git/config"])).is_err());
        assert!(check_writer_text("cp", &s(&["-t.git", "cfg"])).is_err());
        assert!(check_writer_text("dd", &s(&["of=sub/.GIT/config"])).is_err());
        assert!(check_writer_text("sed", &s(&["w .git/config", "f"])).is_err());
        assert!(check_writer_text("cp", &s(&["-r", "repo", "copy.git"])).is_err());
        assert!(check_writer_text("cp", &s(&[".gitignore", "b/.gitattributes"])).is_ok());
        assert!(check_writer_text("cat", &s(&[".git/config"])).is_ok());
        assert!(check_writer_text("/usr/bin/tee", &s(&[".git"])).is_err());
    }
}
