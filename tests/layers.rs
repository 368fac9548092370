//! The import graph of `src/`: the layers import only downward and no files import each
//! other in a circle.
//!
//! Every `crate::`, `super::` and `self::` path in a source file (its `use` lines and its
//! inline paths, test modules included, strings and comments left out) is resolved to the
//! file that defines the module it names. An arrow from a file to a file of a higher layer
//! fails, naming both files; so does any circle of arrows, named file by file. The layers,
//! top to bottom, are the folders of `src/` (see ARCHITECTURE.md).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layer folders, top to bottom.
const LAYERS: [&str; 5] = ["protocol", "tools", "process", "policy", "base"];

/// Longest code line count a source file may have, its test modules excluded.
const MAX_CODE_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/a/b.rs` and `src/a/b/mod.rs` are `["a", "b"]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("a file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The file that defines the longest prefix of `path` that is a module.
fn file_of(path: &[String]) -> Option<PathBuf> {
    for n in (1..=path.len()).rev() {
        let base = path[..n].iter().fold(src(), |p, s| p.join(s));
        let flat = base.with_extension("rs");
        if flat.is_file() {
            return Some(flat);
        }
        let nested = base.join("mod.rs");
        if nested.is_file() {
            return Some(nested);
        }
    }
    None
}

/// The text with comments, strings and character literals blanked out (lengths kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in out.iter_mut().take(to.min(b.len())).skip(from) {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 1;
            let mut j = i + 2;
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"')) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') || (i > 0 && is_ident(b[i - 1])) {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let start = i + 2 + hashes;
            let end = b[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| start + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('a', '\n', '\u{..}'); a lifetime has no closing quote.
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .take(10)
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match close {
                Some(end) => {
                    blank(&mut out, i, end + 1);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Reads one path (`a::b::{c, d::e}`) at `i`; returns every full path it names.
fn read_paths(b: &[u8], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = read_paths(b, i, path.clone(), out);
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                match b.get(i) {
                    Some(b',') => i += 1,
                    Some(b'}') => return i + 1,
                    _ => return i,
                }
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                if b.get(i) == Some(&b'}') {
                    return i + 1;
                }
            }
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if i == start {
            out.push(path);
            return i;
        }
        path.push(String::from_utf8_lossy(&b[start..i]).into_owned());
        if b[i..].starts_with(b"::") {
            i += 2;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// Every module path a file names, resolved to absolute paths.
fn named_paths(file: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(file).expect("readable source");
    let code = code_only(&text);
    let b = code.as_bytes();
    let module = module_of(file);
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                depth += 1;
                i += 1;
                continue;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                i += 1;
                continue;
            }
            _ => (),
        }
        if i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':' || b[i - 1] == b'$') {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"mod ") {
            let mut j = i + 4;
            let start = j;
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            let name = String::from_utf8_lossy(&b[start..j]).into_owned();
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b.get(j) == Some(&b'{') {
                inline.push((depth, name));
                depth += 1;
                i = j + 1;
                continue;
            }
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(_, n)| n.clone()))
            .collect();
        let (base, skip) = if b[i..].starts_with(b"crate::") {
            (Vec::new(), 7)
        } else if b[i..].starts_with(b"super::") {
            (here[..here.len().saturating_sub(1)].to_vec(), 7)
        } else if b[i..].starts_with(b"self::") {
            (here.clone(), 6)
        } else {
            i += 1;
            continue;
        };
        let mut found = Vec::new();
        i = read_paths(b, i + skip, base, &mut found);
        for mut p in found {
            // `super::super::x` climbs once more per `super`.
            while let Some(pos) = p.iter().position(|s| s == "super") {
                p.remove(pos);
                if pos > 0 {
                    p.remove(pos - 1);
                }
            }
            p.retain(|s| s != "self");
            out.push(p);
        }
    }
    out
}

fn layer_of(file: &Path) -> Option<usize> {
    let first = module_of(file).into_iter().next()?;
    LAYERS.iter().position(|l| *l == first)
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src().parent().expect("the crate root"))
        .unwrap_or(p)
        .display()
        .to_string()
}

/// Every arrow of `src/` between two files (the crate root and `main.rs` left out).
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut arrows = BTreeMap::new();
    for file in files {
        if file == src().join("lib.rs") || file == src().join("main.rs") {
            continue;
        }
        let mut to = BTreeSet::new();
        for path in named_paths(&file) {
            if let Some(target) = file_of(&path) {
                if target != file && target != src().join("lib.rs") {
                    to.insert(target);
                }
            }
        }
        arrows.insert(file, to);
    }
    arrows
}

#[test]
fn every_source_file_is_in_a_layer() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let outside: Vec<String> = files
        .iter()
        .filter(|f| **f != src().join("lib.rs") && **f != src().join("main.rs"))
        .filter(|f| layer_of(f).is_none())
        .map(|f| rel(f))
        .collect();
    assert!(
        outside.is_empty(),
        "files outside the layer folders {LAYERS:?}: {outside:?}"
    );
}

#[test]
fn imports_point_down() {
    let mut upward = Vec::new();
    for (from, tos) in graph() {
        let Some(lf) = layer_of(&from) else { continue };
        for to in tos {
            if let Some(lt) = layer_of(&to) {
                if lt < lf {
                    upward.push(format!(
                        "{} ({}) imports {} ({})",
                        rel(&from),
                        LAYERS[lf],
                        rel(&to),
                        LAYERS[lt]
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a lower layer to a higher one:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_import_cycles() {
    let g = graph();
    // Tarjan's strongly connected components, iteratively small enough to recurse.
    struct T<'a> {
        g: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        cycles: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(rel(w));
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.cycles.push(comp);
            }
        }
    }
    let mut t = T {
        g: &g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        cycles: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    let lines: Vec<String> = t.cycles.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        lines.is_empty(),
        "files that import each other in a circle:\n{}",
        lines.join("\n")
    );
}

#[test]
fn no_source_file_is_over_800_lines_of_code() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).expect("readable source");
        let code = match text.find("#[cfg(test)]\nmod ") {
            Some(i) => &text[..i],
            None => &text,
        };
        let n = code.lines().count();
        if n > MAX_CODE_LINES {
            long.push(format!("{} ({n} lines)", rel(&f)));
        }
    }
    assert!(
        long.is_empty(),
        "split these files (over {MAX_CODE_LINES} lines of code): {long:?}"
    );
}

#[test]
fn the_resolver_sees_what_it_must() {
    // The checks above are only as good as the reading of paths: check it on known text.
    let code = code_only("use crate::a::{b, c::{d, E}}; // crate::x\nlet s = \"crate::y\";");
    let mut found = Vec::new();
    let at = code.find("crate::").expect("a path");
    read_paths(code.as_bytes(), at + 7, Vec::new(), &mut found);
    assert_eq!(
        found,
        vec![
            vec!["a".to_string(), "b".to_string()],
            vec!["a".into(), "c".into(), "d".into()],
            vec!["a".into(), "c".into(), "E".into()],
        ]
    );
    assert!(!code.contains("crate::x") && !code.contains("crate::y"));
}
