//! Every route by which git starts a program, closed ("git by construction"),
//! through the real binary: two escape chains, built with git's own
//! plumbing as an attacker would, with the kernel sandbox on and off, and one case per route
//! of SECURITY.md's list ("git: every route to a program and how it is closed"). Each route
//! is armed so that the program it would start creates a marker file; the marker must stay
//! absent, and the call is either refused before anything starts (naming the key) or runs
//! with the route closed by the environment git is given.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::{git, is_error, path_str, process_id, tool_text, Server, TempDir};

const OFF: (&str, &str) = ("YIELDSHELL_SANDBOX", "off");
/// The refusal of a repository configuration (`gitguard::check_git`).
const CONFIG_REFUSED: &str = "git repository configuration runs a program";

/// A trusted-mode server allowing `allow`, working in `dir`, with extra environment.
fn server(dir: &TempDir, allow: &str, extra: &[(&str, &str)]) -> Server {
    let cwd = path_str(dir.path()).to_string();
    let mut env: Vec<(&str, &str)> =
        vec![("ALLOW_COMMANDS", allow), ("YIELDSHELL_DEFAULT_CWD", &cwd)];
    env.extend_from_slice(extra);
    Server::ready_with_env(&env)
}

/// Runs `argv` with `stdin` through `shell_execute`.
fn run(server: &Server, argv: &[&str], stdin: &str) -> Value {
    server.call("shell_execute", json!({ "command": argv, "stdin": stdin }))
}

/// Runs `argv` and returns its stdout, which must be a success.
fn run_ok(server: &Server, argv: &[&str], stdin: &str) -> String {
    let result = run(server, argv, stdin);
    assert!(!is_error(&result), "{argv:?} must run: {result}");
    tool_text(&result)
}

/// Every text of a result (the refusal, or git's stderr in its own block).
fn all_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Runs `command` through trusted-mode `exec` (the command language) to its end and returns
/// the result object.
fn exec_to_end(server: &Server, command: &str) -> Value {
    let result = server.call(
        "exec",
        json!({ "command": command, "side_effects": ["NONE"] }),
    );
    let object = server.result_object(&result);
    if matches!(object["status"].as_str(), Some("running" | "backgrounded")) {
        return server.wait_exit_of(&process_id(&object));
    }
    object
}

/// A repository with one commit at `dir`.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("f.txt"), "one\n").expect("write");
    git(dir, &["add", "f.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// The dynamic loader: the kernel sandbox must let it run, since it loads every allowed
/// program, and it runs any program it is given.
fn loader() -> Option<&'static str> {
    [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/ld-linux-x86-64.so.2",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
}

/// Writes the files `(path, mode, text)` into the work tree of `repo` with git's plumbing
/// only, through the server (`hash-object -w --stdin`, `update-index --add --cacheinfo`,
/// `checkout-index -a`): no writing program ever names a git path.
fn plumb(server: &Server, repo: &str, files: &[(String, &str, String)]) {
    for (path, mode, text) in files {
        let out = run_ok(
            server,
            &["git", "-C", repo, "hash-object", "-w", "--stdin"],
            text,
        );
        let oid = out.trim().to_string();
        assert_eq!(oid.len(), 40, "hash-object: {out:?}");
        run_ok(
            server,
            &[
                "git",
                "-C",
                repo,
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("{mode},{oid},{path}"),
            ],
            "",
        );
    }
    run_ok(
        server,
        &["git", "-C", repo, "checkout-index", "-a", "-f"],
        "",
    );
}

/// The files of a bare repository `t/` whose configuration adds `config`.
fn bare_repository(config: &str) -> Vec<(String, &'static str, String)> {
    vec![
        (
            "t/HEAD".into(),
            "100644",
            "ref: refs/heads/main\n".to_string(),
        ),
        (
            "t/config".into(),
            "100644",
            format!("[core]\n\trepositoryformatversion = 0\n\tbare = true\n{config}"),
        ),
        ("t/objects/info/keep".into(), "100644", String::new()),
        ("t/refs/heads/keep".into(), "100644", String::new()),
    ]
}

fn assert_absent(marker: &Path, what: &str) {
    assert!(
        !marker.exists(),
        "{what}: {} exists, a program ran",
        marker.display()
    );
}

/// Chain 1 of the issue: with only git allowed, plumbing writes a bare repository whose
/// `remote "p/x".url = foo::<marker>` and `alias.remote-foo = !<loader>`, and a symbolic link
/// `p/x` to `touch`; `git -C o --git-dir=t fetch p/x` would start `git remote-foo`, fall back
/// to the alias, and the loader would run `touch <marker>`.
fn chain_1(extra: &[(&str, &str)]) {
    let Some(ld) = loader() else {
        eprintln!("skipped: no dynamic loader at a known path");
        return;
    };
    let dir = TempDir::new("git-chain1");
    repository(&dir.path().join("o"));
    let marker = dir.path().join("MARK");
    let mark = path_str(&marker);
    let server = server(&dir, "git", extra);
    let with_alias = bare_repository(&format!(
        "[remote \"p/x\"]\n\turl = foo::{mark}\n\tfetch = +refs/heads/*:refs/x/*\n\
         [alias]\n\tremote-foo = !{ld}\n"
    ));
    let mut files = with_alias;
    files.push(("p/x".into(), "120000", "/usr/bin/touch".into()));
    plumb(&server, "o", &files);
    assert!(
        dir.path().join("o/t/config").exists(),
        "plumbing wrote the bare repository"
    );
    let result = run(
        &server,
        &["git", "-C", "o", "--git-dir=t", "fetch", "p/x"],
        "",
    );
    assert_absent(&marker, "chain 1");
    let text = all_text(&result);
    assert!(is_error(&result), "{result}");
    // Refused for its alias, or because `t` is a git directory tracked in the
    // work tree of `o`, where a checkout of `o` could rewrite it while git runs.
    assert!(
        text.contains(CONFIG_REFUSED)
            && (text.contains("alias.remote-foo") || text.contains("/o/t lies in the work tree")),
        "{text}"
    );
    // The same through `exec`.
    let object = exec_to_end(&server, "git -C o --git-dir=t fetch p/x");
    assert_absent(&marker, "chain 1 through exec");
    assert_eq!(object["status"], "failed_to_start", "{object}");
    assert!(
        object.to_string().contains("alias.remote-foo")
            || object.to_string().contains("/o/t lies in the work tree"),
        "{object}"
    );
    // Without the alias (or with it in a file the check could not see), git itself refuses
    // to start the helper: the transport is not allowed, whatever the configuration says.
    let without_alias = bare_repository(&format!(
        "[remote \"p/x\"]\n\turl = foo::{mark}\n[protocol]\n\tallow = always\n\
         [protocol \"foo\"]\n\tallow = always\n"
    ));
    plumb(&server, "o", &without_alias);
    let result = run(
        &server,
        &["git", "-C", "o", "--git-dir=t", "fetch", "p/x"],
        "",
    );
    let text = all_text(&result);
    assert!(is_error(&result), "{result}");
    assert!(
        text.contains("transport 'foo' not allowed") || text.contains("/o/t lies in the work tree"),
        "{text}"
    );
    assert_absent(&marker, "chain 1 without the alias");
}

#[test]
fn chain_1_remote_helper_alias_runs_nothing_with_the_sandbox_on() {
    chain_1(&[]);
}

#[test]
fn chain_1_remote_helper_alias_runs_nothing_with_the_sandbox_off() {
    chain_1(&[OFF]);
}

/// Chain 2 of the issue: plumbing plants a bare repository with an executable
/// `hooks/reference-transaction`; `git -C o push t <sha>:refs/tags/x` would run it on the
/// other side of the local transport, where git removes the command-scope configuration.
fn chain_2(extra: &[(&str, &str)]) {
    let dir = TempDir::new("git-chain2");
    repository(&dir.path().join("o"));
    let marker = dir.path().join("MARK");
    let hook = format!("#!/bin/sh\ntouch {}\n", path_str(&marker));
    let server = server(&dir, "git", extra);
    // The target's configuration even allows the file transport: it does not count.
    let mut files = bare_repository("[protocol \"file\"]\n\tallow = always\n");
    for name in [
        "reference-transaction",
        "pre-receive",
        "update",
        "post-receive",
        "post-update",
    ] {
        files.push((format!("t/hooks/{name}"), "100755", hook.clone()));
    }
    plumb(&server, "o", &files);
    let head = run_ok(&server, &["git", "-C", "o", "rev-parse", "HEAD"], "");
    let refspec = format!("{}:refs/tags/x", head.trim());
    let target = format!("file://{}", path_str(&dir.path().join("o/t")));
    for address in ["t", "./t", target.as_str()] {
        let result = run(&server, &["git", "-C", "o", "push", address, &refspec], "");
        assert_absent(&marker, "chain 2");
        let text = all_text(&result);
        assert!(is_error(&result), "push {address}: {result}");
        assert!(
            text.contains("transport 'file' not allowed"),
            "push {address}: {text}"
        );
    }
    // The same through `exec`.
    let object = exec_to_end(&server, &format!("git -C o push t {refspec}"));
    assert_absent(&marker, "chain 2 through exec");
    assert!(
        object.to_string().contains("transport 'file' not allowed"),
        "{object}"
    );
    // Every other local transport is closed the same way: fetch, clone, ls-remote, archive.
    for argv in [
        &["git", "-C", "o", "fetch", "t"][..],
        &["git", "clone", "-q", "o/t", "copy"],
        &["git", "clone", "-q", "--no-local", "o", "copy2"],
        &["git", "ls-remote", "o"],
        &["git", "-C", "o", "archive", "--remote=t", "HEAD"],
    ] {
        let result = run(&server, argv, "");
        let text = all_text(&result);
        assert!(is_error(&result), "{argv:?}: {result}");
        assert!(
            text.contains("transport 'file' not allowed"),
            "{argv:?}: {text}"
        );
    }
    assert_absent(&marker, "local transports");
}

#[test]
fn chain_2_local_push_runs_no_target_hook_with_the_sandbox_on() {
    chain_2(&[]);
}

#[test]
fn chain_2_local_push_runs_no_target_hook_with_the_sandbox_off() {
    chain_2(&[OFF]);
}

/// A repository at the root of a fresh directory, and a server (sandbox off: only what git
/// is given decides) allowing `allow`.
fn route_fixture(label: &str, allow: &str) -> (TempDir, Server, String) {
    let dir = TempDir::new(label);
    repository(dir.path());
    let server = server(&dir, allow, &[OFF]);
    let mark = path_str(&dir.path().join("MARK")).to_string();
    (dir, server, mark)
}

/// Appends `extra` to the repository's configuration, written by the test: what a writer the
/// rules do not know could have left there.
fn arm(dir: &TempDir, base: &str, extra: &str) {
    std::fs::write(dir.path().join(".git/config"), format!("{base}{extra}")).expect("write");
}

fn plant_hook(dir: &Path, rel: &str, mark: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, format!("#!/bin/sh\ntouch {mark}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Routes that cannot be forced off from the command scope: refused before anything starts,
/// naming the key, whichever git command is asked for.
#[test]
fn routes_refused_before_the_run_name_their_key() {
    let (dir, server, mark) = route_fixture("git-refused", "git");
    let base = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    std::fs::write(
        dir.path().join(".gitattributes"),
        "* diff=x filter=y merge=z\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("inc.cfg"),
        format!("[alias]\n\tremote-foo = !touch {mark}\n"),
    )
    .expect("write");
    let t = format!("touch {mark}");
    for (extra, key, argv) in [
        (
            format!("[alias]\n\tremote-foo = !{t}\n"),
            "alias.remote-foo",
            &["git", "status"][..],
        ),
        (
            format!("[alias]\n\tmerge-foo = -c core.pager=\"{t}\" log\n"),
            "alias.merge-foo",
            &["git", "log"],
        ),
        (
            format!("[hook \"h\"]\n\tcommand = {t}\n\tevent = pre-commit\n"),
            "hook.h.command",
            &["git", "commit", "-q", "--allow-empty", "-m", "x"],
        ),
        (
            format!("[url \"ext::{t}\"]\n\tinsteadOf = zz:\n"),
            "url.ext::",
            &["git", "fetch", "zz:x"],
        ),
        (
            "[remote \"v\"]\n\tvcs = foo\n".to_string(),
            "remote.v.vcs",
            &["git", "fetch", "v"],
        ),
        (
            format!("[remote \"o\"]\n\turl = https://127.0.0.1:1/x\n\tuploadpack = {t}\n"),
            "remote.o.uploadpack",
            &["git", "fetch", "o"],
        ),
        (
            format!("[remote \"o\"]\n\turl = https://127.0.0.1:1/x\n\treceivepack = {t}\n"),
            "remote.o.receivepack",
            &["git", "push", "o", "main"],
        ),
        (
            format!("[core]\n\tgitProxy = {t}\n"),
            "core.gitproxy",
            &["git", "fetch", "git://127.0.0.1:1/x"],
        ),
        (
            format!("[filter \"y\"]\n\tclean = {t}\n"),
            "filter.y.clean",
            &["git", "add", "f.txt"],
        ),
        // Run by prune, gc and repack --cruft (git 2.42 and later).
        (
            format!("[gc]\n\trecentObjectsHook = {t}\n"),
            "gc.recentobjectshook",
            &["git", "prune", "--expire=now"],
        ),
        // A pkcs11: certificate makes p11-kit load the user's modules.
        (
            "[http]\n\tsslCert = pkcs11:object=x\n".to_string(),
            "http.sslcert",
            &["git", "ls-remote", "https://127.0.0.1:1/x"],
        ),
        // A cookie jar written where the repository says.
        (
            "[http]\n\tcookieFile = /tmp/yieldshell-jar\n\tsaveCookies = true\n".to_string(),
            "http.savecookies",
            &["git", "ls-remote", "https://127.0.0.1:1/x"],
        ),
        (
            format!("[filter \"y\"]\n\tsmudge = {t}\n"),
            "filter.y.smudge",
            &["git", "checkout", "--", "f.txt"],
        ),
        (
            format!("[filter \"y\"]\n\tprocess = {t}\n"),
            "filter.y.process",
            &["git", "status"],
        ),
        (
            format!("[diff]\n\texternal = {t}\n"),
            "diff.external",
            &["git", "diff"],
        ),
        (
            format!("[diff \"x\"]\n\tcommand = {t}\n"),
            "diff.x.command",
            &["git", "log", "-p"],
        ),
        (
            format!("[diff \"x\"]\n\ttextconv = {t}\n"),
            "diff.x.textconv",
            &["git", "show"],
        ),
        (
            format!("[merge \"z\"]\n\tdriver = {t}\n"),
            "merge.z.driver",
            &["git", "merge", "main"],
        ),
        (
            format!("[tar \"evil\"]\n\tcommand = {t}\n"),
            "tar.evil.command",
            &["git", "archive", "--format=evil", "HEAD"],
        ),
        (
            format!("[interactive]\n\tdiffFilter = {t}\n"),
            "interactive.difffilter",
            &["git", "status"],
        ),
        (
            format!("[uploadpack]\n\tpackObjectsHook = {t}\n"),
            "uploadpack.packobjectshook",
            &["git", "status"],
        ),
        (
            format!("[man]\n\tviewer = v\n[man \"v\"]\n\tcmd = {t}\n"),
            "man.viewer",
            &["git", "status"],
        ),
        (
            format!("[browser \"b\"]\n\tcmd = {t}\n"),
            "browser.b.cmd",
            &["git", "status"],
        ),
        (
            format!("[web]\n\tbrowser = {t}\n"),
            "web.browser",
            &["git", "status"],
        ),
        (
            format!("[difftool \"d\"]\n\tcmd = {t}\n"),
            "difftool.d.cmd",
            &["git", "status"],
        ),
        (
            format!("[mergetool \"m\"]\n\tcmd = {t}\n"),
            "mergetool.m.cmd",
            &["git", "status"],
        ),
        (
            format!("[submodule \"s\"]\n\tupdate = !{t}\n"),
            "submodule.s.update",
            &["git", "status"],
        ),
        (
            format!("[trailer \"t\"]\n\tcommand = {t}\n"),
            "trailer.t.command",
            &["git", "log"],
        ),
        (
            format!("[sendemail]\n\tsendmailCmd = {t}\n"),
            "sendemail.sendmailcmd",
            &["git", "status"],
        ),
        (
            format!("[imap]\n\ttunnel = {t}\n"),
            "imap.tunnel",
            &["git", "status"],
        ),
        (
            "[init]\n\ttemplateDir = tpl\n".to_string(),
            "init.templatedir",
            &["git", "status"],
        ),
        (
            "[include]\n\tpath = ../inc.cfg\n".to_string(),
            "alias.remote-foo",
            &["git", "status"],
        ),
        (
            "[includeIf \"gitdir:/\"]\n\tpath = ../inc.cfg\n".to_string(),
            "alias.remote-foo",
            &["git", "status"],
        ),
    ] {
        arm(&dir, &base, &extra);
        let result = run(&server, argv, "");
        let text = all_text(&result);
        assert!(
            is_error(&result),
            "{key}: {argv:?} must be refused: {result}"
        );
        // An include in the work tree is refused as such (for example a checkout could
        // rewrite it while git runs), before its keys are read.
        assert!(
            text.contains(CONFIG_REFUSED)
                && (text.contains(key) || text.contains("lies in the work tree of")),
            "{key}: {text}"
        );
        assert!(!Path::new(&mark).exists(), "{key}: a program ran");
    }
    // The same attributes with nothing configured are harmless.
    arm(&dir, &base, "");
    run_ok(&server, &["git", "status", "--short"], "");
}

/// Routes closed by the environment git is given: git runs, the program does not.
#[test]
fn routes_forced_off_let_git_run_and_run_nothing() {
    let (dir, server, mark) = route_fixture("git-forced", "git");
    let base = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    let marker = Path::new(&mark).to_path_buf();
    let t = format!("touch {mark}");
    // Hooks of our own side, in the default place and where the repository points.
    for hook in [
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
        "pre-auto-gc",
        "post-rewrite",
    ] {
        plant_hook(dir.path(), &format!(".git/hooks/{hook}"), &mark);
        plant_hook(dir.path(), &format!("hooks2/{hook}"), &mark);
    }
    arm(
        &dir,
        &base,
        &format!(
            "[core]\n\thooksPath = hooks2\n\tfsmonitor = \"{t}; true\"\n\tpager = \"{t}; cat\"\n\
             \teditor = \"{t}\"\n\taskPass = \"{t}\"\n\tsshCommand = \"{t}\"\n\
             \talternateRefsCommand = \"{t}\"\n\
             [pager]\n\tlog = \"{t}; cat\"\n\tstatus = \"{t}; cat\"\n\
             [sequence]\n\teditor = \"{t}\"\n\
             [credential]\n\thelper = \"!{t}\"\n[credential \"http://127.0.0.1\"]\n\thelper = \"!{t}\"\n\
             [gpg]\n\tprogram = \"{t}\"\n\tformat = openpgp\n[gpg \"openpgp\"]\n\tprogram = \"{t}\"\n\
             [gpg \"ssh\"]\n\tprogram = \"{t}\"\n\tdefaultKeyCommand = \"{t}\"\n\
             [commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n[log]\n\tshowSignature = true\n\
             [gc]\n\tauto = 1\n[help]\n\tformat = web\n[protocol]\n\tallow = always\n"
        ),
    );
    std::fs::write(dir.path().join("f.txt"), "two\n").expect("write");
    // fsmonitor, pager (`-p` and `pager.<cmd>`).
    let status = run_ok(&server, &["git", "-p", "status", "--short"], "");
    assert!(status.contains("M f.txt"), "{status}");
    // Hooks, signing (commit.gpgSign), auto gc.
    run_ok(&server, &["git", "commit", "-q", "-a", "-m", "second"], "");
    run_ok(&server, &["git", "checkout", "-q", "-b", "other"], "");
    run_ok(&server, &["git", "tag", "-a", "-m", "m", "v1"], "");
    run_ok(&server, &["git", "gc", "--auto"], "");
    // Signature checks (log.showSignature), pager.
    let log = run_ok(&server, &["git", "-p", "log", "-n", "1"], "");
    assert!(log.contains("second"), "{log}");
    // The editors, the pager and the askpass program git would start.
    for (var, want) in [
        ("GIT_EDITOR", ":"),
        ("GIT_SEQUENCE_EDITOR", ":"),
        ("GIT_PAGER", "cat"),
    ] {
        let out = run_ok(&server, &["git", "var", var], "");
        assert_eq!(out.trim(), want, "{var}");
    }
    // The credential helpers, the askpass program and the terminal prompt, through a
    // server that asks for credentials.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::Builder::new()
        .name("http-401".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\
                      Content-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        })
        .expect("spawn");
    let url = format!("http://127.0.0.1:{port}/r.git");
    let result = run(&server, &["git", "ls-remote", &url], "");
    assert!(is_error(&result), "{result}");
    // ssh is not allowed: the ssh transport (and the program of core.sshCommand) is refused
    // by git itself, as is git:// (whose proxy names a program).
    for address in ["ssh://127.0.0.1:1/x", "127.0.0.1:x", "git://127.0.0.1:1/x"] {
        let result = run(&server, &["git", "ls-remote", address], "");
        let text = all_text(&result);
        assert!(is_error(&result), "{address}: {result}");
        assert!(text.contains("not allowed"), "{address}: {text}");
    }
    // ext:: and any remote helper, named by the repository's remote.
    arm(
        &dir,
        &base,
        &format!("[remote \"e\"]\n\turl = \"ext::{t}\"\n[remote \"h\"]\n\turl = foo::x\n"),
    );
    for (remote, protocol) in [("e", "ext"), ("h", "foo")] {
        let result = run(&server, &["git", "fetch", remote], "");
        let text = all_text(&result);
        assert!(is_error(&result), "{remote}: {result}");
        assert!(
            text.contains(&format!("transport '{protocol}' not allowed")),
            "{text}"
        );
    }
    // A merge strategy named by the configuration that git does not build in is refused
    // (the sequencer keeps the repository's value over the forced `ort`);
    // a built-in one runs.
    arm(
        &dir,
        &base,
        "[pull]\n\ttwohead = resolve\n\toctopus = foo\n",
    );
    let result = run(&server, &["git", "merge", "-m", "m", "other"], "");
    assert!(is_error(&result), "{result}");
    assert!(all_text(&result).contains("pull.twohead"), "{result}");
    arm(&dir, &base, "[pull]\n\ttwohead = ort\n");
    run_ok(
        &server,
        &["git", "commit", "-q", "--allow-empty", "-m", "o1"],
        "",
    );
    run_ok(&server, &["git", "checkout", "-q", "main"], "");
    run_ok(
        &server,
        &["git", "commit", "-q", "--allow-empty", "-m", "m1"],
        "",
    );
    let result = run(&server, &["git", "merge", "-m", "m", "other"], "");
    let text = all_text(&result);
    assert!(!is_error(&result), "{result}");
    assert!(text.contains("by the 'ort' strategy"), "{text}");
    assert_absent(&marker, "forced routes");
}

/// With ssh on the allowlist, the ssh transport is allowed, and it starts `ssh`, never the
/// repository's `core.sshCommand`.
#[test]
fn ssh_transport_starts_ssh_only_when_allowed_and_never_the_repository_command() {
    if !Path::new("/usr/bin/ssh").exists() {
        eprintln!("skipped: /usr/bin/ssh is not installed");
        return;
    }
    let (dir, server, mark) = route_fixture("git-ssh", "git,ssh");
    let base = std::fs::read_to_string(dir.path().join(".git/config")).expect("read");
    arm(
        &dir,
        &base,
        &format!("[core]\n\tsshCommand = \"touch {mark}\"\n[ssh]\n\tvariant = simple\n"),
    );
    // Port 1 refuses the connection: ssh fails, and nothing else ran.
    let result = run(
        &server,
        &["git", "ls-remote", "ssh://yieldshell-test@127.0.0.1:1/x"],
        "",
    );
    let text = all_text(&result);
    assert!(is_error(&result), "{result}");
    assert!(!text.contains("not allowed"), "ssh is allowed here: {text}");
    assert_absent(Path::new(&mark), "core.sshCommand");
}

/// The transport list cannot be widened: neither by a call's environment nor by the
/// server's own (a name in `MCP_SHELL_CHILD_ENV_ALLOWLIST` that yieldshell sets for git is
/// never passed through).
#[test]
fn the_transport_list_cannot_be_widened_by_any_environment() {
    let dir = TempDir::new("git-env");
    repository(&dir.path().join("o"));
    repository(&dir.path().join("p"));
    let server = server(
        &dir,
        "git",
        &[
            OFF,
            (
                "MCP_SHELL_CHILD_ENV_ALLOWLIST",
                "GIT_ALLOW_PROTOCOL,GIT_PROXY_COMMAND",
            ),
            ("GIT_ALLOW_PROTOCOL", "file:ext:http:https"),
            ("GIT_PROXY_COMMAND", "/usr/bin/touch"),
        ],
    );
    for name in ["GIT_ALLOW_PROTOCOL", "GIT_PROXY_COMMAND"] {
        let result = server.call(
            "exec",
            json!({ "command": "git -C o fetch ../p", "side_effects": ["NONE"],
                    "env": { name: "file" } }),
        );
        let object = server.result_object(&result);
        assert_eq!(object["status"], "failed_to_start", "{name}: {object}");
    }
    let result = run(&server, &["git", "-C", "o", "fetch", "../p"], "");
    assert!(is_error(&result), "{result}");
    assert!(
        all_text(&result).contains("transport 'file' not allowed"),
        "{result}"
    );
}

/// A bare-looking git directory at `dir` with `config` as its configuration.
fn git_dir_at(dir: &Path, config: &str) {
    std::fs::create_dir_all(dir.join("objects/info")).expect("mkdir");
    std::fs::create_dir_all(dir.join("refs/heads")).expect("mkdir");
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").expect("write");
    std::fs::write(
        dir.join("config"),
        format!("[core]\n\trepositoryformatversion = 0\n{config}"),
    )
    .expect("write");
}

fn round_2(extra: &[(&str, &str)]) {
    // Escapes through where git resolves its directory and work tree, each with a marker.
    let dir = TempDir::new("git-round2");
    repository(dir.path());
    let mark = dir.path().join("MARK");
    let script = dir.path().join("pwn.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", path_str(&mark))).expect("write");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let server = server(&dir, "git,tar", extra);
    // 1. `--git-dir` before `-C`: git resolves the relative git directory after changing
    //    directory, so the checker must read sub/x/config, not x/config.
    git_dir_at(&dir.path().join("x"), "\tbare = true\n");
    git_dir_at(
        &dir.path().join("sub/x"),
        &format!(
            "\tbare = true\n[diff]\n\texternal = {}\n",
            path_str(&script)
        ),
    );
    std::fs::write(dir.path().join("sub/f1"), "1\n").expect("write");
    std::fs::write(dir.path().join("sub/f2"), "2\n").expect("write");
    let result = run(
        &server,
        &[
            "git",
            "--git-dir=x",
            "-C",
            "sub",
            "diff",
            "--no-index",
            "f1",
            "f2",
        ],
        "",
    );
    assert!(is_error(&result), "{result}");
    // Read at sub/x (not x): its external diff, or sub/x itself, a git directory
    // tracked in the work tree.
    let text = all_text(&result);
    assert!(
        text.contains("diff.external") || text.contains("/sub/x lies in the work tree"),
        "{result}"
    );
    assert_absent(&mark, "--git-dir before -C");
    // 2. `core.worktree` naming the git directory itself, or another repository's `.git`:
    //    a checkout would write that directory's configuration after the check.
    git_dir_at(&dir.path().join("y"), "\tbare = false\n\tworktree = .\n");
    let result = run(&server, &["git", "--git-dir=y", "status"], "");
    assert!(is_error(&result), "{result}");
    assert!(
        all_text(&result).contains("core.worktree")
            || all_text(&result).contains("lies in the work tree"),
        "{result}"
    );
    let other = format!(
        "\tbare = false\n\tworktree = {}\n",
        path_str(&dir.path().join(".git"))
    );
    git_dir_at(&dir.path().join("z"), &other);
    let result = run(&server, &["git", "--git-dir=z", "status"], "");
    assert!(is_error(&result), "{result}");
    assert!(
        all_text(&result).contains("core.worktree")
            || all_text(&result).contains("lies in the work tree"),
        "{result}"
    );
    // A submodule's git directory names its work tree with `..`: still accepted.
    let module = dir.path().join(".git/modules/m");
    git_dir_at(&module, "\tbare = false\n\tworktree = ../../../m\n");
    std::fs::create_dir_all(dir.path().join("m")).expect("mkdir");
    run_ok(&server, &["git", "status", "--short"], "");
    assert_absent(&mark, "core.worktree");
}

#[test]
fn git_dir_before_c_and_core_worktree_in_a_git_dir_are_refused_with_the_sandbox_on() {
    round_2(&[]);
}

#[test]
fn git_dir_before_c_and_core_worktree_in_a_git_dir_are_refused_with_the_sandbox_off() {
    round_2(&[("YIELDSHELL_SANDBOX", "off")]);
}
