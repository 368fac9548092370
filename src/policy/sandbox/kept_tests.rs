//! Tests of the protected paths' answers kept between calls (`answers`, `lookup`'s stamps,
//! `Protected::find`, `Watch::created`), on real directories.

use crate::policy::sandbox::protected::Protected;
use std::path::Path;
use std::time::Duration;

const QUIET: Duration = Duration::from_millis(50);

/// Waits until every path in `paths` last changed at least twice [`QUIET`] ago (the event
/// the answers wait for).
fn until_quiet(paths: &[&Path]) {
    let bound = Duration::from_secs(10);
    assert!(
        super::lookup::wait_unchanged(paths, QUIET * 2, bound),
        "never quiet"
    );
}

/// Finds twice, until the second answer is the kept one: a change outside the test to a
/// directory the answer read (the busy system temporary directory above these tests, whose
/// path the git directory's is resolved through) makes a try not count.
fn kept_pair(
    p: &Protected,
    cwd: &Path,
    writable: &Path,
    quiet: &[&Path],
) -> crate::policy::sandbox::protected::Found {
    for _ in 0..50 {
        until_quiet(quiet);
        let given = p.answers_kept_given();
        let first = p.find(cwd, &[], &[writable]);
        p.find(cwd, &[], &[writable]);
        if p.answers_kept_given() > given {
            return first;
        }
    }
    panic!("no answer of {} was kept in 50 tries", cwd.display());
}

fn protected(list: &str) -> Protected {
    let names: Vec<String> = list.split(',').map(String::from).collect();
    Protected::with_quiet(&names, QUIET)
}

fn fresh(name: &str) -> std::path::PathBuf {
    let base = std::env::temp_dir().join(format!("ys-kept-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    std::fs::canonicalize(&base).unwrap()
}

/// An answer is given again while nothing it read changed, and looked up afresh after
/// a name was made, a file it read was written, or an entry was renamed.
#[test]
fn a_kept_answer_stands_only_while_nothing_it_read_changed() {
    let base = fresh("names");
    let p = protected("git,.envrc,.vscode/tasks.json");
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
    std::fs::create_dir_all(repo.join(".vscode")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    until_quiet(&[
        &repo,
        &repo.join(".git"),
        &repo.join(".vscode"),
        &repo.join(".git/config"),
    ]);
    let first = p.find(&repo, &[], &[&repo]);
    assert!(first.missing.contains(&repo.join(".envrc")), "{first:?}");
    let again = p.find(&repo, &[], &[&repo]);
    assert_eq!(
        p.answers_kept_given(),
        1,
        "the second find is the kept answer"
    );
    assert_eq!(again.missing, first.missing);

    // A name made in the directory: looked up afresh, and protected.
    std::fs::write(repo.join(".envrc"), "x").unwrap();
    let made = p.find(&repo, &[], &[&repo]);
    assert_eq!(p.answers_kept_given(), 1);
    assert!(
        made.protected.iter().any(|e| e.path == repo.join(".envrc")),
        "{made:?}"
    );
    assert!(!made.missing.contains(&repo.join(".envrc")));

    // Not kept: the directory had just changed.
    p.find(&repo, &[], &[&repo]);
    assert_eq!(
        p.answers_kept_given(),
        1,
        "a directory that just changed is not kept"
    );

    // A file it read (the git directory's configuration) written: afresh, and the
    // hooks directory it names now protected.
    until_quiet(&[&repo, &repo.join(".git"), &repo.join(".git/config")]);
    p.find(&repo, &[], &[&repo]);
    p.find(&repo, &[], &[&repo]);
    assert_eq!(p.answers_kept_given(), 2);
    std::fs::write(repo.join(".git/config"), "[core]\n\thooksPath = .vscode\n").unwrap();
    let hooks = p.find(&repo, &[], &[&repo]);
    assert_eq!(p.answers_kept_given(), 2);
    assert!(
        hooks
            .protected
            .iter()
            .any(|e| e.path == repo.join(".vscode")),
        "{hooks:?}"
    );

    // A name made in a subdirectory it looked in.
    until_quiet(&[&repo, &repo.join(".vscode"), &repo.join(".git/config")]);
    p.find(&repo, &[], &[&repo]);
    std::fs::write(repo.join(".vscode/tasks.json"), "{}").unwrap();
    let tasks = p.find(&repo, &[], &[&repo]);
    assert!(
        tasks
            .protected
            .iter()
            .any(|e| e.path == repo.join(".vscode/tasks.json")),
        "{tasks:?}"
    );

    // The git directory swapped for another (a rename in the repository).
    until_quiet(&[&repo, &repo.join(".vscode"), &repo.join(".git")]);
    let before = p.find(&repo, &[], &[&repo]);
    let given = p.answers_kept_given();
    std::fs::rename(repo.join(".git"), repo.join("old-git")).unwrap();
    std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "x").unwrap();
    let swapped = p.find(&repo, &[], &[&repo]);
    assert_eq!(p.answers_kept_given(), given);
    let id = |f: &crate::policy::sandbox::protected::Found| {
        f.protected
            .iter()
            .find(|e| e.path == repo.join(".git"))
            .map(|e| e.id)
    };
    assert_ne!(id(&before), id(&swapped), "the new .git is the one bound");
    let _ = std::fs::remove_dir_all(&base);
}

/// A linked worktree's answer rests on its `.git` file and on the git directory it
/// names: a `.git` file written to name another is looked up afresh.
#[test]
fn a_kept_answer_follows_what_a_git_file_names() {
    let base = fresh("worktree");
    let p = protected("git");
    let main = base.join("main");
    let other = base.join("other");
    for g in [&main, &other] {
        std::fs::create_dir_all(g.join(".git/objects")).unwrap();
        std::fs::write(g.join(".git/HEAD"), "x").unwrap();
    }
    let wt = base.join("wt");
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    std::fs::write(
        wt.join(".git"),
        format!("gitdir: {}\n", main.join(".git").display()),
    )
    .unwrap();
    let cwd = wt.join("sub");
    let quiet = [
        &base,
        &main,
        &main.join(".git"),
        &wt,
        &cwd,
        &wt.join(".git"),
    ];
    let quiet: Vec<&Path> = quiet.iter().map(|p| p.as_path()).collect();
    let first = kept_pair(&p, &cwd, &base, &quiet);
    assert!(
        first.protected.iter().any(|e| e.path == main.join(".git")),
        "{first:?}"
    );
    let given = p.answers_kept_given();
    // The file rewritten in place (its directory unchanged).
    std::fs::write(
        wt.join(".git"),
        format!("gitdir: {}\n", other.join(".git").display()),
    )
    .unwrap();
    let moved = p.find(&cwd, &[], &[&base]);
    assert_eq!(p.answers_kept_given(), given);
    assert!(
        moved.protected.iter().any(|e| e.path == other.join(".git")),
        "{moved:?}"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// A directory that is as it was says nothing was made in it; one that changed is
/// looked in.
#[test]
fn a_watch_skips_only_directories_that_did_not_change() {
    let base = fresh("watch");
    let p = protected(".envrc,.bashrc,.zshrc");
    until_quiet(&[&base]);
    let found = p.find(&base, &[], &[&base]);
    let watch = crate::policy::sandbox::protected::Watch::of(found);
    assert!(watch.created().is_empty());
    std::fs::write(base.join(".zshrc"), "x").unwrap();
    assert_eq!(watch.created(), vec![base.join(".zshrc").as_path()]);
    let _ = std::fs::remove_dir_all(&base);
}
