//! Reading git's own files, as git reads them: the configuration syntax (sections, quoted
//! subsections, the old `[section.sub]` form, quoted values, escapes, comments, continuation
//! lines) and the paths of the submodules (gitlinks) recorded in an index file. Used by
//! `git::guard` to decide on what git will do with a repository.

/// One configuration entry: key (`section.sub.name`) and value.
pub type Entry = (String, String);

/// Reads a git configuration file's entries the way git does (sections, quoted
/// subsections, old `[section.sub]` form, quoted values, escapes, comments, continuation
/// lines). `Err` on text git would refuse too.
pub fn parse_config(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut section = String::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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

/// The paths of the submodules (gitlinks, mode 160000) in a git index file; `None` when the
/// index cannot be read as one. Versions 2, 3 and 4; object names of `hash_len` bytes.
pub fn gitlinks(index: &[u8], hash_len: usize) -> Option<Vec<String>> {
    let be32 = |at: usize| -> Option<u32> {
        index
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    let count = be32(8)? as usize;
    if !(2..=4).contains(&version) {
        return None;
    }
    let mut links = Vec::new();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let entry = at;
        let mode = be32(entry + 24)?;
        let flags_at = entry + 40 + hash_len;
        let flags = u16::from_be_bytes([*index.get(flags_at)?, *index.get(flags_at + 1)?]);
        let mut path_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            path_at += 2;
        }
        let path: Vec<u8> = if version == 4 {
            // A varint: how many bytes to drop from the previous path, then the rest.
            let mut strip: usize = 0;
            loop {
                let byte = *index.get(path_at)?;
                path_at += 1;
                strip = strip
                    .checked_mul(128)?
                    .checked_add(usize::from(byte & 0x7f))?;
                if byte & 0x80 == 0 {
                    break;
                }
                strip = strip.checked_add(1)?;
            }
            let end = path_at + index.get(path_at..)?.iter().position(|b| *b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&index[path_at..end]);
            at = end + 1;
            path
        } else {
            let end = path_at + index.get(path_at..)?.iter().position(|b| *b == 0)?;
            let path = index[path_at..end].to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = entry + (end - entry + 8) / 8 * 8;
            path
        };
        if mode & 0o170000 == 0o160000 {
            links.push(String::from_utf8_lossy(&path).into_owned());
        }
        previous = path;
    }
    // The extensions, up to the trailing hash: a split index (`link`) keeps entries in a
    // shared index file, which this does not read, so it is not read as complete.
    let end = index.len().checked_sub(hash_len)?;
    while at + 8 <= end {
        let signature = index.get(at..at + 4)?;
        if signature == b"link" {
            return None;
        }
        let size = be32(at + 4)? as usize;
        at = at.checked_add(8)?.checked_add(size)?;
    }
    Some(links)
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
    fn index_gitlinks_in_every_version() {
        let root = std::env::temp_dir().join(format!("yieldshell-gitlinks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("mkdir");
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .expect("git");
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(root.join("a.txt"), "a").expect("write");
        git(&["add", "a.txt"]);
        let oid = "0123456789012345678901234567890123456789";
        for path in ["deps/lib-one", "deps/lib-two", "z"] {
            git(&[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{oid},{path}"),
            ]);
        }
        let want = ["deps/lib-one", "deps/lib-two", "z"];
        for version in ["2", "3", "4"] {
            git(&["update-index", "--index-version", version]);
            let index = std::fs::read(root.join(".git/index")).expect("read");
            assert_eq!(
                gitlinks(&index, 20),
                Some(want.iter().map(|s| s.to_string()).collect())
            );
        }
        assert_eq!(gitlinks(b"DIRC\0\0\0\x09", 20), None);
        assert_eq!(gitlinks(b"DIRC\0\0\0\x02\0\0\0\x05", 20), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
