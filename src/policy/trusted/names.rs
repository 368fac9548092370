//! The names a program is known by, derived from its file name as distributions and
//! packagers write it: the lowercased basename, then without a `.flavour`, a target triplet,
//! a `-flavour` or a trailing version (see `identity`).

/// Trailing `-flavour`s that packagers add to a program's name.
const FLAVOURS: &[&str] = &[
    "static",
    "dbg",
    "debug",
    "nox",
    "tiny",
    "basic",
    "gtk",
    "gtk3",
    "athena",
    "minimal",
    "multiarch",
    "real",
    "bin",
    "dist",
    "distrib",
    "classic",
    "legacy",
    "wrapper",
    "stable",
];

/// Every name `program` (a name as written or a path) is known by: its last component,
/// lower-cased, then the names [`derived_names`] gives it.
pub fn names_of(program: &str) -> Vec<String> {
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    derived_names(&base)
}

/// The name itself, then the names derived from it by dropping packaging additions, in the
/// order they are tried.
pub fn derived_names(base: &str) -> Vec<String> {
    let mut names = vec![base.to_string()];
    let mut i = 0;
    while i < names.len() && names.len() < 16 {
        let name = names[i].clone();
        i += 1;
        let mut next: Vec<String> = Vec::new();
        if let Some(stem) = name.strip_suffix(".exe") {
            next.push(stem.to_string());
        }
        if let Some((stem, _)) = name.split_once('.') {
            if !stem.is_empty() && !stem.ends_with(|c: char| c.is_ascii_digit()) {
                next.push(stem.to_string());
            }
        }
        if let Some(stripped) = strip_triplet(&name) {
            next.push(stripped);
        }
        if let Some((stem, flavour)) = name.rsplit_once('-') {
            if FLAVOURS.contains(&flavour) && !stem.is_empty() {
                next.push(stem.to_string());
            }
        }
        if let Some(stem) = strip_version(&name) {
            next.push(stem.to_string());
        }
        for n in next {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}

/// `perl5.36-x86_64-linux-gnu` → `perl5.36`; `x86_64-linux-gnu-gdb` → `gdb`.
pub fn strip_triplet(name: &str) -> Option<String> {
    let (left, right) = name.split_once("-linux")?;
    // `-linux-gnu-gdb`: the program follows the ABI part.
    let after_abi = right.trim_start_matches('-');
    if let Some((_abi, program)) = after_abi.split_once('-') {
        if !program.is_empty() {
            return Some(program.to_string());
        }
    }
    // `perl5.36-x86_64-linux-gnu`: the program precedes the architecture.
    let (program, _arch) = left.split_once('-')?;
    (!program.is_empty()).then(|| program.to_string())
}

/// `python3.12` → `python`, `lua-5.4` → `lua`, `pip3` → `pip`; `None` when nothing to strip.
pub fn strip_version(name: &str) -> Option<&str> {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.len() == name.len() || !name[trimmed.len()..].contains(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let trimmed = trimmed
        .strip_suffix('-')
        .or_else(|| trimmed.strip_suffix('_'))
        .unwrap_or(trimmed);
    if trimmed.is_empty() {
        return None;
    }
    Some(trimmed)
}
