//! The tests that walk every table written as words (`words`, `getopt::Longs`): a malformed
//! word (an unknown suffix, a stray character) or a name written twice fails here, not on a
//! call. A table written in the sources but missing from these lists fails too (they are
//! counted against the sources), so a new table cannot go unchecked.

use crate::policy::trusted::getopt::Longs;
use crate::policy::trusted::git::{guard, tables as git, writers};
use crate::policy::trusted::rules::{
    apps, aria2c, awk, cc, curl, find, go, gpg, ld, misc, npm, openssl, sort, systemctl, tar, tex,
    tools,
};
use crate::policy::trusted::words::{plain_name, Words};
use crate::policy::trusted::{identity, reviewed};

/// A word of a table of program names: any word (`[` is a program).
fn any_word(word: &'static str) -> Option<&'static str> {
    Some(word)
}

/// A word of git's forced configuration: `key=value`, keyed by the key.
fn config_key(word: &'static str) -> Option<&'static str> {
    word.split_once('=').and_then(|(key, _)| plain_name(key))
}

/// Every table written with `Words`, with what each word must be.
#[allow(clippy::type_complexity)]
fn word_tables() -> Vec<(String, Words, fn(&'static str) -> Option<&'static str>)> {
    let mut tables: Vec<(String, Words, fn(&'static str) -> Option<&'static str>)> = vec![
        ("git KNOWN".into(), git::KNOWN, plain_name),
        ("git DENIED".into(), git::DENIED, plain_name),
        ("git ONLY_READ".into(), git::ONLY_READ, plain_name),
        ("git READERS".into(), writers::READERS, any_word),
        ("git FORCED_CONFIG".into(), guard::FORCED_CONFIG, config_key),
        (
            "openssl commands".into(),
            openssl::OPENSSL_COMMANDS,
            plain_name,
        ),
        (
            "openssl ciphers".into(),
            openssl::OPENSSL_CIPHERS,
            plain_name,
        ),
        ("openssl digests".into(), openssl::DIGESTS, plain_name),
        ("cc SEPARATE".into(), cc::SEPARATE, any_word),
        ("cc EXACT".into(), cc::EXACT, any_word),
        ("cc FAMILIES".into(), cc::FAMILIES, any_word),
        ("find PRIMARIES".into(), find::PRIMARIES, find::primary_name),
    ];
    for (i, group) in identity::DENIED.iter().enumerate() {
        tables.push((format!("identity DENIED[{i}]"), *group, plain_name));
    }
    tables.push(("go BUILD".into(), go::BUILD, go::flag_name));
    tables.push(("go MODULE".into(), go::MODULE, go::flag_name));
    tables.push(("go NONE".into(), go::NONE, go::flag_name));
    for (sub, second, _, own) in go::SUBCOMMANDS {
        tables.push((format!("go {sub} {second:?}"), *own, go::flag_name));
    }
    for (names, why) in npm::RUNS {
        tables.push((format!("npm RUNS {why:?}"), *names, plain_name));
    }
    for (names, why) in reviewed::INERT {
        tables.push((format!("INERT {why:?}"), *names, any_word));
    }
    tables
}

/// Every long-option table written with `Longs::words`.
fn long_tables() -> Vec<(&'static str, Longs)> {
    vec![
        ("pandoc", apps::PANDOC.long),
        ("bat", apps::BAT.long),
        ("aria2c", aria2c::GRAMMAR.long),
        ("awk", awk::GRAMMAR.long),
        ("curl", curl::GRAMMAR.long),
        ("gpg", gpg::GPG.long),
        ("gpgv", gpg::GPGV.long),
        ("ld", ld::LD.long),
        ("fd", misc::FD.long),
        ("rg", misc::RG.long),
        ("split", misc::SPLIT.long),
        ("diff3", misc::DIFF3.long),
        ("sdiff", misc::SDIFF.long),
        ("wget", misc::WGET.long),
        ("sort", sort::GRAMMAR.long),
        ("systemctl", systemctl::GRAMMAR.long),
        ("GNU tar", tar::LONG),
        ("bsdtar", tar::BSD_LONG),
        ("tex", tex::OPTIONS),
        ("ssh-keygen", tools::SSH_KEYGEN.long),
        ("cpio", tools::CPIO.long),
        ("git fetch", git::FETCH_LONG),
        ("git pull", git::PULL_LONG),
        ("git clone", git::CLONE_LONG),
        ("git push", git::PUSH_LONG),
        ("git ls-remote", git::LS_REMOTE_LONG),
        ("git send-pack", git::PACK_LONG),
        ("git archive", git::ARCHIVE_LONG),
        ("git rebase", git::REBASE_LONG),
        ("git grep", git::GREP_LONG),
        ("git commit", git::COMMIT_LONG),
        ("git tag", git::TAG_LONG),
        ("git merge", git::MERGE_LONG),
        ("git am", git::AM_LONG),
        ("git notes", git::NOTES_LONG),
        ("git add", git::PATCH_LONG),
        ("git log", git::LOG_LONG),
    ]
}

/// How many times `needle` is written in the sources under `src/`, leaving out the files
/// that define the word tables' types (their own tests write small tables).
fn written_in_sources(needle: &str) -> usize {
    fn walk(dir: &std::path::Path, needle: &str, count: &mut usize) {
        let entries = std::fs::read_dir(dir).expect("src is readable");
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, needle, count);
                continue;
            }
            let own = ["words.rs", "word_tables.rs", "getopt.rs"];
            if path.extension().is_some_and(|x| x == "rs") && !own.iter().any(|o| path.ends_with(o))
            {
                let text = std::fs::read_to_string(&path).expect("a source file is readable");
                *count += text.matches(needle).count();
            }
        }
    }
    let mut count = 0;
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    walk(&src, needle, &mut count);
    count
}

#[test]
fn every_long_table_is_well_formed() {
    let tables = long_tables();
    for (program, table) in &tables {
        assert!(
            matches!(table, Longs::Words(_)),
            "{program}: not written as words"
        );
        assert_eq!(table.fault(), None, "{program}'s long options");
    }
    assert_eq!(
        tables.len(),
        written_in_sources("Longs::words("),
        "a table written with Longs::words is missing from long_tables"
    );
}

#[test]
fn every_word_table_is_well_formed() {
    let tables = word_tables();
    for (table, words, key) in &tables {
        assert_eq!(words.fault(key), None, "{table}");
    }
    assert_eq!(
        tables.len(),
        written_in_sources("Words("),
        "a table written with Words is missing from word_tables"
    );
}

#[test]
fn a_malformed_long_table_is_caught() {
    assert_eq!(Longs::words("a= b? c").fault(), None);
    assert!(Longs::words("a= b! c").fault().is_some());
    assert!(Longs::words("a= b=? c").fault().is_some());
    assert!(Longs::words("a= b a?").fault().is_some());
}
