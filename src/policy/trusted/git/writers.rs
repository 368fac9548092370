//! Programs that may write files, kept out of git directories: which programs write
//! (`is_writer`, with the few readers that may name a git path), the refusal of a writer
//! that names a git directory (`check_writer_text`) or would write into one on disk
//! (`check_writer`), and multi-call binaries that act on the name they are run under.

use std::path::Path;

use super::guard::{looks_like_git_dir, names_git_dir};
use crate::policy::trusted::words::Words;

/// Programs that only read the files they name (or only remove them: removing cannot make
/// git run anything): they may name `.git` paths. Not `tree` (`-o FILE`, and `-i` prints
/// names alone), `less` (`-o FILE`) or `more`. Every other program may not, since any
/// program can write a file (`uniq IN OUT`, `xxd -r`, `shuf -o`, `cc -o`, `openssl -out`,
/// archive extraction...). git itself is judged by its own rules.
pub(crate) const READERS: Words = Words(
    "cat tac ls dir vdir grep egrep fgrep rg ag ack head tail wc stat file du diff cmp md5sum
     sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum od hexdump hd strings
     readlink realpath basename dirname echo printf test [ find fd fdfind locate which nl cut tr
     column expand jq bat batcat namei lsattr getfacl rm rmdir unlink true false pwd sleep seq",
);

/// True when `resolved` is a multi-call binary (`busybox`, `toybox`, uutils' `coreutils`),
/// which acts on the name it is run under: only that name is judged.
pub fn is_multi_call(resolved: &str) -> bool {
    crate::policy::trusted::names::names_of(resolved)
        .iter()
        .any(|n| matches!(n.as_str(), "busybox" | "toybox" | "coreutils"))
}

/// True when `program` (a name as written or a resolved path) may write files: every
/// program but git and the [`READERS`].
pub fn is_writer(program: &str) -> bool {
    !crate::policy::trusted::names::names_of(program)
        .iter()
        .any(|n| READERS.contains(n.as_str()) || n == "git" || n.starts_with("git-"))
}

/// The arguments of a writer that name paths it may write: all but the patterns of
/// `--exclude`-like options (`tar --exclude=.git`, `rsync --exclude .git`, zip's `-x` list),
/// which only keep files from being written.
fn path_arguments<'a>(program: &str, args: &'a [String]) -> Vec<&'a String> {
    let zip = crate::policy::trusted::names::names_of(program)
        .iter()
        .any(|n| n == "zip");
    let is_exclude = |a: &str| {
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        matches!(
            name,
            "--exclude" | "--exclude-dir" | "--ignore" | "--exclude-vcs"
        )
    };
    let mut kept = Vec::new();
    let mut zip_list = false;
    for (k, a) in args.iter().enumerate() {
        if zip {
            if a == "-x" || a == "--exclude" {
                zip_list = true;
                continue;
            }
            if zip_list && !a.starts_with('-') {
                continue;
            }
            zip_list = false;
        }
        let follows_exclude = k > 0 && !args[k - 1].contains('=') && is_exclude(&args[k - 1]);
        if !(follows_exclude || (a.contains('=') && is_exclude(a))) {
            kept.push(a);
        }
    }
    kept
}

/// The names `cp`, `mv`, `ln` and `install` give what they copy, move or link into a
/// directory (`cp h/HEAD .` makes `./HEAD`; `cp -r s/. .` makes each entry of `s` in `.`),
/// which no argument names: the target directory is `-t DIR` (`--target-directory`) or the
/// last operand when it is a directory. Empty for other programs.
fn final_names(cwd: &Path, program: &str, args: &[String]) -> Vec<String> {
    let copies = crate::policy::trusted::names::names_of(program)
        .iter()
        .any(|n| matches!(n.as_str(), "cp" | "mv" | "ln" | "install"));
    if !copies {
        return Vec::new();
    }
    let (mut operands, mut target, mut options_end) = (Vec::new(), None, false);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if options_end || !a.starts_with('-') || a == "-" {
            operands.push(a);
        } else if a == "--" {
            options_end = true;
        } else if a == "-t" || a == "--target-directory" {
            target = args.get(i).map(String::as_str);
            i += 1;
        } else if let Some(dir) = a.strip_prefix("--target-directory=") {
            target = Some(dir);
        } else if let Some(dir) = a.strip_prefix("-t").filter(|d| !d.is_empty()) {
            target = Some(dir);
        }
    }
    let dir = match target {
        Some(t) => t,
        None if operands.len() >= 2 && cwd.join(operands[operands.len() - 1]).is_dir() => {
            operands.pop().unwrap_or_default()
        }
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    for source in operands {
        let trimmed = source.trim_end_matches('/');
        if trimmed == "." || trimmed.ends_with("/.") {
            // `s/.`: what `s` holds lands in the target.
            let entries = std::fs::read_dir(cwd.join(trimmed)).into_iter().flatten();
            for e in entries.flatten().take(4096) {
                out.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        } else if let Some(name) = Path::new(trimmed).file_name() {
            out.push(format!("{dir}/{}", name.to_string_lossy()));
        }
    }
    out
}

/// The names a decompressor or a download writes that its arguments give only in part:
/// `gzip -d HEAD.gz` (and `xz`, `bzip2`, `zstd`, `lz4`, their `un*` names, any suffix)
/// writes `HEAD`; `curl -O URL` and `wget URL` write the URL's last path segment. Read with
/// room to spare (any last extension is taken off; every URL's last segment counts), which
/// can only refuse more. What an archive's members or a server names is not here.
fn computed_names(program: &str, args: &[String]) -> Vec<String> {
    let names = crate::policy::trusted::names::names_of(program);
    let is = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
    let operands = args.iter().filter(|a| !a.starts_with('-'));
    let mut out = Vec::new();
    if is(&[
        "gzip",
        "gunzip",
        "xz",
        "unxz",
        "lzma",
        "unlzma",
        "bzip2",
        "bunzip2",
        "zstd",
        "unzstd",
        "lz4",
        "unlz4",
        "lzip",
        "lzop",
        "brotli",
        "compress",
        "uncompress",
    ]) {
        // The output lies beside its input.
        for operand in operands {
            let name = operand.rsplit('/').next().unwrap_or(operand);
            if let Some((stem, _)) = name.rsplit_once('.').filter(|(s, _)| !s.is_empty()) {
                let dir = &operand[..operand.len() - name.len()];
                out.push(format!("{dir}{stem}"));
            }
        }
    } else if is(&["curl", "wget"]) {
        for operand in operands.filter(|o| o.contains("://")) {
            let path = operand.split(['?', '#']).next().unwrap_or(operand);
            if let Some(last) = path.rsplit('/').next().filter(|l| !l.is_empty()) {
                out.push(last.to_string());
            }
        }
    }
    out
}

/// Layer 3, on the text: a file-writing program may not name a `.git` path (as an operand,
/// an option's value, or inside a script such as sed's `w .git/config`), also behind
/// percent-escapes: wget (`-x`) and curl (`--remote-name` with `--remote-name-all` or
/// globbing) name files after a URL's path, which they decode (`%2egit/config`).
/// `Err(reason)`.
pub fn check_writer_text(program: &str, args: &[String]) -> Result<(), String> {
    if !is_writer(program) {
        return Ok(());
    }
    match path_arguments(program, args)
        .into_iter()
        .find(|a| names_git_dir(a) || names_git_dir(&percent_decoded(a)))
    {
        Some(arg) => Err(format!(
            "write into a git directory ({arg}: a file-writing program may not name a .git \
             path, whose config and hooks would make a later git command run code)"
        )),
        None => Ok(()),
    }
}

/// `text` with its percent-escapes (`%2e`, `%2E`) decoded, again and again until none is
/// left (a double escape `%252e` is decoded twice): a program may decode more than once, and
/// decoding more only refuses more. A `%` not followed by two hex digits stays as it is.
fn percent_decoded(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    // Each pass shortens the text, so the passes end.
    loop {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            match (
                bytes[i],
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (b'%', Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                }
                (b, _, _) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        if out.len() == bytes.len() {
            return String::from_utf8_lossy(&out).into_owned();
        }
        bytes = out;
    }
}

/// Layer 3, on the file system: no path named by a file-writing program may lie inside a
/// git directory (whatever its name), be one, or complete one, as written or with the
/// symbolic links of its existing part resolved (`hk -> .git/hooks` makes `hk/pre-commit` a
/// hook; a dangling link is followed to the name it would create).
pub fn check_writer(cwd: &Path, program: &str, args: &[String]) -> Result<(), String> {
    if !is_writer(program) {
        return Ok(());
    }
    let mut finals = final_names(cwd, program, args);
    finals.extend(computed_names(program, args));
    for arg in path_arguments(program, args).into_iter().chain(&finals) {
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
                    crate::policy::trusted::rules::PREFIX
                ));
            }
            crate::policy::trusted::check_git_directories(cwd, text).map_err(|e| {
                format!(
                    "{}write into a git directory ({})",
                    crate::policy::trusted::rules::PREFIX,
                    e.trim_start_matches("Redirection target ")
                )
            })?;
            check_resolved(&full, text)?;
        }
    }
    Ok(())
}

/// Refuses `full` (the path `text` names) when a symbolic link on the way leads inside a git
/// directory, or to one.
fn check_resolved(full: &Path, text: &str) -> Result<(), String> {
    let Some((real, links)) = super::lock::resolved(full) else {
        return Ok(());
    };
    if links.is_empty() {
        return Ok(());
    }
    let prefix = crate::policy::trusted::rules::PREFIX;
    if looks_like_git_dir(&real) {
        return Err(format!(
            "{prefix}write into a git directory ({text} leads through a symbolic link to the \
             git directory {}: its config and hooks would make a later git command run code)",
            real.display()
        ));
    }
    crate::policy::trusted::check_git_directories(Path::new("/"), &real.to_string_lossy()).map_err(
        |e| {
            format!(
                "{prefix}write into a git directory ({text} leads through a symbolic link to {}: \
                 {})",
                real.display(),
                e.trim_start_matches("Redirection target ")
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(check_writer_text("uniq", &s(&["in", ".git/config"])).is_err());
        assert!(check_writer_text("xxd", &s(&["-r", "d", ".git/config"])).is_err());
        assert!(check_writer_text("git", &s(&["--git-dir=.git", "log"])).is_ok());
        assert!(check_writer_text("tar", &s(&["-czf", "a.tgz", "--exclude=.git", "."])).is_ok());
        assert!(check_writer_text("rsync", &s(&["-a", "--exclude", ".git", "a/", "b/"])).is_ok());
        assert!(check_writer_text("rsync", &s(&["--exclude", "x", ".git/"])).is_err());
        assert!(check_writer_text("rm", &s(&["-f", ".git/index.lock"])).is_ok());
        assert!(
            check_writer_text("zip", &s(&["-r", "a.zip", ".", "-x", ".git/*", "t/.git"])).is_ok()
        );
        assert!(check_writer_text("zip", &s(&["-x", ".git/*", "-r", "x.git", "."])).is_err());
        assert!(check_writer_text("/usr/bin/tee", &s(&[".git"])).is_err());
        assert!(check_writer_text("wget", &s(&["-x", "http://h/%2egit/config"])).is_err());
        assert!(check_writer_text("wget", &s(&["-x", "http://h/a%252E%67IT/x"])).is_err());
        assert!(check_writer_text("wget", &s(&["-x", "http://h/a%2egitx/%zz%"])).is_ok());
        assert_eq!(percent_decoded("%2e%2Egit%2f%%4"), "..git/%%4");
        assert_eq!(
            computed_names("gzip", &s(&["-d", "-S", ".x", "d/HEAD.x"])),
            ["d/HEAD"]
        );
        assert_eq!(computed_names("unxz", &s(&["HEAD.xz", "-k"])), ["HEAD"]);
        assert_eq!(
            computed_names("curl", &s(&["-sO", "file:///tmp/z/HEAD?x=1", "-o", "y"])),
            ["HEAD"]
        );
        assert!(computed_names("cat", &s(&["HEAD.gz"])).is_empty());
    }

    /// A symbolic link on the way into a git directory is followed, existing or dangling,
    /// in every ancestor of the path.
    #[cfg(unix)]
    #[test]
    fn writer_through_a_link_into_a_git_directory() {
        use std::os::unix::fs::symlink;
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let root = std::env::temp_dir().join(format!("yieldshell-wlink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in [".git/hooks", ".git/objects", "src"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        for (link, to) in [
            ("hk", ".git/hooks"),
            ("lk", "hk"),
            ("dangling", ".git/hooks/post-checkout"),
            ("up", "src/.."),
            ("code", "src"),
        ] {
            symlink(to, root.join(link)).expect("symlink");
        }
        let check = |program: &str, args: &[&str]| check_writer(&root, program, &s(args));
        assert!(check("cp", &["x", "hk/pre-commit"]).is_err());
        assert!(check("chmod", &["+x", "hk/pre-commit"]).is_err());
        assert!(check("cp", &["-t", "hk", "x"]).is_err());
        assert!(check("cp", &["x", "lk/pre-commit"]).is_err());
        assert!(check("tee", &["dangling"]).is_err());
        assert!(check("cp", &["x", "up/.git/hooks/x"]).is_err());
        assert!(check("cp", &["x", "up/code/y"]).is_ok());
        assert!(check("cp", &["x", "code/new/y"]).is_ok());
        let _ = std::fs::remove_dir_all(&root);
    }
}
