//! Everyday work through the real binary: the commands an agent sends every day, with a
//! typical allowlist, in a prepared project, with the kernel sandbox on and off. Each is
//! checked for its exit status and its output. A rule or a sandbox that refuses ordinary work
//! is a bug, and these tests are where it shows (`sed` and `sort -o` stay out: MCP Shell
//! Server refuses them, and trusted mode never accepts what it refuses): `tar` compressing (tar starts its compressor
//! itself), `sort` spilling to its temporary directory, and in shell mode's `workspace`,
//! installing a package with npm and pip and building a crate with a new dependency, each
//! from a registry the test makes itself (no network). A tool that is not installed is
//! skipped with a printed reason; nothing is installed by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{is_error, run_binary, unique_marker, Server, TempDir};

/// A typical allowlist.
const ALLOWED: &str = "git,ls,cat,grep,find,tar,gzip,xz,bzip2,zstd,lzip,lzma,lzop,compress,\
                       sort,uniq,wc,tail,head,jq,awk,cut,tr,diff,mkdir,touch,cp,mv,rm,\
                       echo,printf,seq,md5sum,sha256sum,mktemp,basename,dirname,du,stat,\
                       comm,nl,tee,od,cmp,paste,rev,base64";

/// The safe `PATH` of the servers here (the default).
const SAFE_PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// What a step's stdout must be.
enum Out<'a> {
    /// Exactly this.
    Is(&'a str),
    /// Holding each of these.
    Has(&'a [&'a str]),
    /// Anything (the status says enough, or a later step reads the result).
    Any,
}

/// A trusted-mode server over the project, the kernel sandbox `on` or `off`.
struct Everyday {
    server: Server,
    dir: TempDir,
    sandbox: &'static str,
    count: usize,
}

impl Everyday {
    fn new(sandbox: &'static str) -> Everyday {
        let dir = TempDir::new(&format!("usability-{sandbox}"));
        prepare_project(dir.path());
        let cwd = dir.path().to_str().expect("utf-8 path").to_string();
        let server = Server::ready_with_env(&[
            ("ALLOW_COMMANDS", ALLOWED),
            ("YIELDSHELL_DEFAULT_CWD", &cwd),
            ("YIELDSHELL_SANDBOX", sandbox),
        ]);
        Everyday {
            server,
            dir,
            sandbox,
            count: 0,
        }
    }

    /// Runs `argv` with `shell_execute` and checks its status and stdout; returns stdout.
    fn run(&mut self, argv: &[&str], status: i64, out: Out<'_>) -> String {
        let result = self
            .server
            .call("shell_execute", json!({ "command": argv }));
        self.judge(&format!("{argv:?}"), &result, status, out)
    }

    /// Runs a command line with trusted mode's `exec` and checks it like `run`.
    fn exec(&mut self, line: &str, status: i64, out: Out<'_>) -> String {
        let result = self.server.call(
            "exec",
            json!({ "command": line, "side_effects": ["NONE"], "yield_ms": 50000 }),
        );
        let object = &result["structuredContent"];
        let got = object["exit_code"].as_i64().unwrap_or(-1);
        let stdout = object["stdout"].as_str().unwrap_or_default().to_string();
        self.count += 1;
        assert!(
            got == status && matches(&stdout, &out),
            "sandbox {}: exec {line:?}: wanted status {status}, got {got}: {result}",
            self.sandbox
        );
        stdout
    }

    fn judge(&mut self, what: &str, result: &Value, status: i64, out: Out<'_>) -> String {
        let object = &result["structuredContent"];
        let got = object["status"].as_i64().unwrap_or(-1);
        let stdout = object["stdout"].as_str().unwrap_or_default().to_string();
        self.count += 1;
        assert!(
            got == status && (status != 0 || !is_error(result)),
            "sandbox {}: {what}: wanted status {status}, got {got}: {result}",
            self.sandbox
        );
        assert!(
            matches(&stdout, &out),
            "sandbox {}: {what}: unexpected stdout: {result}",
            self.sandbox
        );
        stdout
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

fn matches(stdout: &str, out: &Out<'_>) -> bool {
    match out {
        Out::Is(text) => stdout == *text,
        Out::Has(parts) => parts.iter().all(|p| stdout.contains(p)),
        Out::Any => true,
    }
}

/// Runs a program of the test itself (not through the server), which must succeed.
fn host(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The program `name` in the safe `PATH`, if installed.
fn installed(name: &str) -> Option<PathBuf> {
    SAFE_PATH
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// A small project: a git repository with two commits, sources, notes, JSON and CSV data,
/// and a file of a few MB with numbers to sort.
fn prepare_project(dir: &Path) {
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("README.md", "# demo\n\nA small project.\n");
    write(
        "src/main.c",
        "#include <stdio.h>\nint main(void) {\n    /* TODO: greet */\n    return 0;\n}\n",
    );
    write("src/util.c", "int add(int a, int b) { return a + b; }\n");
    write("src/lib/deep.h", "// TODO: document\n#define DEEP 1\n");
    write(
        "notes.txt",
        "beta line\nalpha line\ngamma line\nalpha line\n",
    );
    write("nums.txt", "3\n1\n2\n10\n");
    write("data.csv", "name,age\nann,31\nbob,27\n");
    write(
        "package.json",
        "{\"name\": \"demo\", \"version\": \"1.2.3\", \"deps\": {\"left\": \"1\", \"right\": \"2\"}}\n",
    );
    write(
        ".gitignore",
        "*.tgz\n*.tar\n*.tar.*\nbig.txt\nsorted.txt\nout.txt\nout/\n",
    );
    // About 5 MB: more than `sort -S 1M` holds, so sort spills to its temporary directory.
    let mut big = String::with_capacity(6 << 20);
    for i in 0..400_000u64 {
        big.push_str(&format!("{:06} line {}\n", (i * 7919) % 100_003, i));
    }
    write("big.txt", &big);
    host(dir, "git", &["init", "-q", "-b", "main"]);
    host(dir, "git", &["config", "user.name", "Dev"]);
    host(dir, "git", &["config", "user.email", "dev@example.com"]);
    host(dir, "git", &["add", "-A"]);
    host(dir, "git", &["commit", "-q", "-m", "first"]);
    write(
        "src/util.c",
        "int add(int a, int b) { return a + b; }\nint one(void) { return 1; }\n",
    );
    host(dir, "git", &["commit", "-q", "-am", "second: one()"]);
}

/// Everyday commands: files, search, text, JSON, pipelines and redirections.
fn files_and_text(e: &mut Everyday) {
    e.run(&["ls"], 0, Out::Has(&["README.md", "src", "notes.txt"]));
    e.run(
        &["ls", "-la", "src"],
        0,
        Out::Has(&["main.c", "util.c", "lib"]),
    );
    e.run(
        &["cat", "README.md"],
        0,
        Out::Is("# demo\n\nA small project.\n"),
    );
    e.run(
        &["head", "-n", "2", "notes.txt"],
        0,
        Out::Is("beta line\nalpha line\n"),
    );
    e.run(
        &["tail", "-n", "1", "notes.txt"],
        0,
        Out::Is("alpha line\n"),
    );
    e.run(&["wc", "-l", "notes.txt"], 0, Out::Is("4 notes.txt\n"));
    e.run(
        &["grep", "-rn", "TODO", "src"],
        0,
        Out::Has(&["src/main.c:3:", "src/lib/deep.h:1:"]),
    );
    e.run(&["grep", "-c", "alpha", "notes.txt"], 0, Out::Is("2\n"));
    e.run(
        &["grep", "-q", "nothing-like-this", "notes.txt"],
        1,
        Out::Is(""),
    );
    e.run(
        &["find", ".", "-name", "*.c", "-not", "-path", "./.git/*"],
        0,
        Out::Has(&["./src/main.c", "./src/util.c"]),
    );
    e.run(
        &["find", "src", "-type", "f", "|", "sort"],
        0,
        Out::Is("src/lib/deep.h\nsrc/main.c\nsrc/util.c\n"),
    );
    e.run(
        &["sort", "notes.txt", "|", "uniq", "-c"],
        0,
        Out::Is("      2 alpha line\n      1 beta line\n      1 gamma line\n"),
    );
    e.run(&["sort", "-n", "nums.txt"], 0, Out::Is("1\n2\n3\n10\n"));
    e.run(&["jq", "-r", ".name", "package.json"], 0, Out::Is("demo\n"));
    e.run(
        &["jq", "-r", ".deps | keys[]", "package.json"],
        0,
        Out::Is("left\nright\n"),
    );
    e.run(
        &["jq", "-e", ".missing", "package.json"],
        1,
        Out::Is("null\n"),
    );
    e.run(
        &["awk", "{ s += $1 } END { print s }", "nums.txt"],
        0,
        Out::Is("16\n"),
    );
    e.run(
        &["awk", "-F,", "NR > 1 { print $1 }", "data.csv"],
        0,
        Out::Is("ann\nbob\n"),
    );
    e.run(&["awk", "NR == 2", "notes.txt"], 0, Out::Is("alpha line\n"));
    e.run(
        &[
            "awk",
            // No `;` in an argument: shell_execute refuses it, as MCP Shell Server does.
            "{ sub(/line/, \"LINE\") } 1",
            "notes.txt",
            "|",
            "head",
            "-n",
            "1",
        ],
        0,
        Out::Is("beta LINE\n"),
    );
    e.run(
        &["cut", "-d,", "-f2", "data.csv"],
        0,
        Out::Is("age\n31\n27\n"),
    );
    e.run(
        &["tr", "a-z", "A-Z", "<", "README.md", "|", "head", "-n", "1"],
        0,
        Out::Is("# DEMO\n"),
    );
    e.run(&["seq", "3", ">", "out.txt"], 0, Out::Is(""));
    e.run(&["seq", "4", "5", ">>", "out.txt"], 0, Out::Is(""));
    e.run(&["cat", "out.txt"], 0, Out::Is("1\n2\n3\n4\n5\n"));
    e.run(
        &["diff", "notes.txt", "out.txt"],
        1,
        Out::Has(&["< beta line", "> 1"]),
    );
    e.run(&["mkdir", "-p", "out/a/b"], 0, Out::Is(""));
    e.run(&["cp", "notes.txt", "out/a/b/copy.txt"], 0, Out::Is(""));
    e.run(
        &["mv", "out/a/b/copy.txt", "out/a/moved.txt"],
        0,
        Out::Is(""),
    );
    e.run(&["cmp", "notes.txt", "out/a/moved.txt"], 0, Out::Is(""));
    e.run(&["rm", "-r", "out/a"], 0, Out::Is(""));
    e.run(
        &["printf", "%s-%s\\n", "a", "b", "|", "tee", "out/tee.txt"],
        0,
        Out::Is("a-b\n"),
    );
    e.run(&["sha256sum", "out/tee.txt"], 0, Out::Has(&["out/tee.txt"]));
    e.run(
        &["base64", "README.md", "|", "base64", "-d", "|", "wc", "-c"],
        0,
        Out::Is("25\n"),
    );
    e.exec(
        "grep -rl TODO src | sort",
        0,
        Out::Is("src/lib/deep.h\nsrc/main.c\n"),
    );
    e.exec("cat < nums.txt | sort -rn | head -n 1", 0, Out::Is("10\n"));
    // A program that writes its temporary files where TMPDIR says.
    let made = e.run(&["mktemp"], 0, Out::Any);
    assert!(!made.trim().is_empty(), "mktemp printed nothing");
}

/// sort of a file larger than its buffer: it spills to temporary files (TMPDIR, else /tmp),
/// which a sandboxed call may write only in its own temporary directory.
fn sort_spills(e: &mut Everyday) {
    e.run(
        &["sort", "-S", "1M", "big.txt", "|", "wc", "-l"],
        0,
        Out::Is("400000\n"),
    );
    e.run(
        &["sort", "-S", "1M", "big.txt", ">", "sorted.txt"],
        0,
        Out::Is(""),
    );
    e.run(
        &["head", "-n", "1", "sorted.txt"],
        0,
        Out::Is("000000 line 0\n"),
    );
    e.run(
        &[
            "sort", "-S", "1M", "-n", "-r", "big.txt", "|", "head", "-n", "1",
        ],
        0,
        Out::Has(&["100002 line"]),
    );
}

/// git's daily commands.
fn git_daily(e: &mut Everyday) {
    e.run(&["git", "status", "--short"], 0, Out::Is(""));
    e.run(
        &["git", "log", "--oneline"],
        0,
        Out::Has(&["second: one()", "first"]),
    );
    e.run(
        &["git", "log", "-1", "--format=%an %s"],
        0,
        Out::Is("Dev second: one()\n"),
    );
    e.run(
        &["git", "diff", "HEAD~1", "--stat"],
        0,
        Out::Has(&["src/util.c", "1 insertion"]),
    );
    e.run(
        &["git", "show", "--stat", "HEAD"],
        0,
        Out::Has(&["second: one()"]),
    );
    e.run(
        &["git", "blame", "src/util.c"],
        0,
        Out::Has(&["Dev", "int one(void)"]),
    );
    std::fs::write(e.path("README.md"), "# demo\n\nA small project, changed.\n").expect("write");
    e.run(&["git", "status", "--short"], 0, Out::Is(" M README.md\n"));
    e.run(
        &["git", "diff"],
        0,
        Out::Has(&["+A small project, changed."]),
    );
    e.run(&["git", "add", "README.md"], 0, Out::Is(""));
    e.run(
        &["git", "diff", "--cached", "--name-only"],
        0,
        Out::Is("README.md\n"),
    );
    e.run(
        &["git", "commit", "-q", "-m", "third: readme"],
        0,
        Out::Is(""),
    );
    e.run(&["git", "rev-list", "--count", "HEAD"], 0, Out::Is("3\n"));
    e.run(&["git", "checkout", "-q", "-b", "feature"], 0, Out::Is(""));
    e.run(
        &["git", "branch", "--show-current"],
        0,
        Out::Is("feature\n"),
    );
    std::fs::write(e.path("notes.txt"), "work in progress\n").expect("write");
    e.run(&["git", "stash"], 0, Out::Has(&["Saved working directory"]));
    e.run(&["git", "status", "--short"], 0, Out::Is(""));
    e.run(&["git", "stash", "list"], 0, Out::Has(&["stash@{0}"]));
    e.run(&["git", "stash", "pop"], 0, Out::Any);
    e.run(&["cat", "notes.txt"], 0, Out::Is("work in progress\n"));
    e.run(&["git", "checkout", "--", "notes.txt"], 0, Out::Is(""));
    e.run(&["git", "checkout", "-q", "main"], 0, Out::Is(""));
    e.run(&["git", "branch"], 0, Out::Has(&["feature", "* main"]));
    e.run(
        &["git", "grep", "-n", "TODO"],
        0,
        Out::Has(&["src/main.c:3:"]),
    );
    e.run(&["git", "tag", "v1"], 0, Out::Is(""));
    e.run(&["git", "describe", "--tags"], 0, Out::Is("v1\n"));
}

/// tar with every compressor installed: creating (tar starts the compressor itself),
/// listing and extracting.
fn tar_every_compressor(e: &mut Everyday) {
    e.run(&["tar", "-cf", "plain.tar", "src"], 0, Out::Is(""));
    e.run(&["tar", "-tf", "plain.tar"], 0, Out::Has(&["src/main.c"]));
    let cases: &[(&str, &str, &str)] = &[
        ("gzip", "-z", "out.tgz"),
        ("bzip2", "-j", "out.tbz2"),
        ("xz", "-J", "out.txz"),
        ("zstd", "--zstd", "out.tzst"),
        ("lzip", "--lzip", "out.tar.lz"),
        ("lzma", "--lzma", "out.tar.lzma"),
        ("lzop", "--lzop", "out.tar.lzo"),
        ("compress", "-Z", "out.tar.Z"),
    ];
    for (program, option, archive) in cases {
        if installed(program).is_none() {
            eprintln!(
                "usability (sandbox {}): skipped tar {option}: {program} is not installed in \
                 the safe PATH",
                e.sandbox
            );
            continue;
        }
        e.run(&["tar", "-c", option, "-f", archive, "src"], 0, Out::Is(""));
        e.run(
            &["tar", "-t", option, "-f", archive],
            0,
            Out::Has(&["src/main.c", "src/lib/deep.h"]),
        );
        let into = format!("out/x-{program}");
        e.run(&["mkdir", "-p", &into], 0, Out::Is(""));
        e.run(
            &["tar", "-x", option, "-f", archive, "-C", &into],
            0,
            Out::Is(""),
        );
        e.run(
            &["cmp", "src/main.c", &format!("{into}/src/main.c")],
            0,
            Out::Is(""),
        );
        // Reading, tar finds the compression by itself (not for lzma, which has no magic
        // number: GNU tar then lists the members and fails on what follows them).
        if *program != "lzma" {
            e.run(&["tar", "-tf", archive], 0, Out::Has(&["src/util.c"]));
        }
    }
    // The everyday spellings: a bundle, -a by the suffix, verbose, the archive on stdout.
    e.run(&["tar", "czf", "bundle.tgz", "src"], 0, Out::Is(""));
    e.run(&["tar", "tzf", "bundle.tgz"], 0, Out::Has(&["src/util.c"]));
    e.run(&["tar", "-caf", "auto.tar.gz", "src"], 0, Out::Is(""));
    e.run(
        &["tar", "-tzf", "auto.tar.gz"],
        0,
        Out::Has(&["src/util.c"]),
    );
    if installed("xz").is_some() {
        e.run(
            &["tar", "-caf", "auto.tar.xz", "src", "README.md"],
            0,
            Out::Is(""),
        );
        e.run(&["tar", "-tJf", "auto.tar.xz"], 0, Out::Has(&["README.md"]));
    }
    let verbose = e.server.call(
        "shell_execute",
        json!({"command": ["tar", "-cvzf", "verbose.tgz", "src"]}),
    );
    let object = &verbose["structuredContent"];
    let listing = format!(
        "{}{}",
        object["stdout"].as_str().unwrap_or_default(),
        object["stderr"].as_str().unwrap_or_default()
    );
    assert!(
        object["status"] == 0 && listing.contains("src/main.c"),
        "sandbox {}: tar -cvzf: {verbose}",
        e.sandbox
    );
    e.count += 1;
    e.run(
        &[
            "tar", "-czf", "-", "src", "|", "gzip", "-dc", "|", "tar", "-t",
        ],
        0,
        Out::Has(&["src/main.c"]),
    );
    e.run(
        &["tar", "-czf", "-", "src", ">", "redirected.tgz"],
        0,
        Out::Is(""),
    );
    e.run(
        &["tar", "-tzf", "redirected.tgz"],
        0,
        Out::Has(&["src/main.c"]),
    );
    // The compressors on their own.
    e.run(&["gzip", "-k", "notes.txt"], 0, Out::Is(""));
    e.run(
        &["gzip", "-dc", "notes.txt.gz"],
        0,
        Out::Is("beta line\nalpha line\ngamma line\nalpha line\n"),
    );
    e.run(&["rm", "notes.txt.gz"], 0, Out::Is(""));
    for (program, flag) in [("xz", "-dc"), ("bzip2", "-dc"), ("zstd", "-dcq")] {
        if installed(program).is_none() {
            continue;
        }
        e.run(
            &[program, "-c", "nums.txt", ">", "out/nums.z"],
            0,
            Out::Is(""),
        );
        e.run(&[program, flag, "out/nums.z"], 0, Out::Is("3\n1\n2\n10\n"));
    }
}

/// Runs one group of everyday commands in a fresh project, with the sandbox `on` (skipped
/// without Landlock) or `off`.
fn everyday(sandbox: &'static str, group: fn(&mut Everyday), least: usize) {
    if sandbox == "on" && yieldshell::internals::sys::landlock_abi().unwrap_or(0) < 1 {
        eprintln!("skipped: this kernel has no Landlock, so the sandbox cannot be on");
        return;
    }
    let mut e = Everyday::new(sandbox);
    group(&mut e);
    eprintln!(
        "usability (sandbox {sandbox}): {} commands ran as expected",
        e.count
    );
    assert!(e.count >= least, "only {} commands ran", e.count);
}

#[test]
fn files_search_text_and_pipelines_work_with_the_sandbox_on() {
    everyday("on", files_and_text, 30);
}

#[test]
fn files_search_text_and_pipelines_work_with_the_sandbox_off() {
    everyday("off", files_and_text, 30);
}

#[test]
fn sort_spills_past_its_buffer_with_the_sandbox_on() {
    everyday("on", sort_spills, 4);
}

#[test]
fn sort_spills_past_its_buffer_with_the_sandbox_off() {
    everyday("off", sort_spills, 4);
}

#[test]
fn git_daily_commands_work_with_the_sandbox_on() {
    everyday("on", git_daily, 25);
}

#[test]
fn git_daily_commands_work_with_the_sandbox_off() {
    everyday("off", git_daily, 25);
}

#[test]
fn tar_compresses_with_every_compressor_with_the_sandbox_on() {
    everyday("on", tar_every_compressor, 20);
}

#[test]
fn tar_compresses_with_every_compressor_with_the_sandbox_off() {
    everyday("off", tar_every_compressor, 20);
}

/// A helper tar starts by itself must be allowlisted: otherwise the call is refused before
/// anything runs, naming the helper and the setting.
#[test]
fn a_compressor_that_is_not_allowlisted_is_refused_by_name() {
    let dir = TempDir::new("usability-helper");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    let cwd = dir.path().to_str().expect("utf-8 path").to_string();
    for sandbox in ["auto", "off"] {
        let server = Server::ready_with_env(&[
            ("ALLOW_COMMANDS", "tar,gzip"),
            ("YIELDSHELL_DEFAULT_CWD", &cwd),
            ("YIELDSHELL_SANDBOX", sandbox),
        ]);
        let refused = server.call_err(
            "shell_execute",
            json!({"command": ["tar", "-cJf", "a.txz", "a.txt"]}),
        );
        let text = refused.to_string();
        assert!(
            text.contains("tar -J runs xz") && text.contains("ALLOW_COMMANDS"),
            "{refused}"
        );
        assert!(!dir.path().join("a.txz").exists(), "nothing runs");
        let refused = server.call_err(
            "shell_execute",
            json!({"command": ["tar", "-xaf", "a.txz", "--xz"]}),
        );
        assert!(refused.to_string().contains("xz"), "{refused}");
        // The allowlisted one works, and no shell is involved.
        let ok = server.call(
            "shell_execute",
            json!({"command": ["tar", "-czf", "a.tgz", "a.txt"]}),
        );
        assert!(!is_error(&ok), "sandbox {sandbox}: {ok}");
        assert!(dir.path().join("a.tgz").exists());
    }
    // `check` says the same, and shows the compressor's stage when the sandbox is on.
    let check = |sandbox: &str, argv: &[&str]| {
        let mut args = vec!["--sandbox", sandbox, "check"];
        args.extend_from_slice(argv);
        let out = run_binary(
            &args,
            &[
                ("ALLOW_COMMANDS", "tar,gzip"),
                ("YIELDSHELL_DEFAULT_CWD", &cwd),
            ],
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = check("auto", &["tar", "-cJf", "a.txz", "a.txt"]);
    assert!(code == Some(1) && text.contains("tar -J runs xz"), "{text}");
    let (code, text) = check("off", &["tar", "-czf", "a.tgz", "a.txt"]);
    assert!(code == Some(0) && !text.contains("stage 2"), "{text}");
    if yieldshell::internals::sys::landlock_abi().unwrap_or(0) >= 1 {
        let (code, text) = check("auto", &["tar", "-czf", "a.tgz", "a.txt"]);
        assert!(code == Some(0) && text.contains("stage 2: gzip"), "{text}");
        assert!(text.contains("TMPDIR"), "{text}");
    }
}

/// The workspace project of the package tests: a server in shell mode under `workspace`,
/// whose `HOME` (the person's caches) lies outside `/tmp` and outside the root.
struct Workspace {
    server: Server,
    root: PathBuf,
    home: PathBuf,
    base: PathBuf,
    env: Vec<(String, String)>,
}

impl Workspace {
    fn new(label: &str) -> Option<Workspace> {
        Workspace::with_env(label, &[])
    }

    /// A workspace whose server gets `extra` too (a path value may name `{base}`).
    fn with_env(label: &str, extra: &[(&str, &str)]) -> Option<Workspace> {
        if yieldshell::internals::sys::landlock_abi().unwrap_or(0) < 1 {
            eprintln!("skipped {label}: this kernel has no Landlock, so workspace cannot start");
            return None;
        }
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique_marker(label));
        let (root, home) = (base.join("root"), base.join("home"));
        std::fs::create_dir_all(&root).expect("mkdir root");
        std::fs::create_dir_all(&home).expect("mkdir home");
        let root = root.canonicalize().expect("canonical root");
        let home = home.canonicalize().expect("canonical home");
        let real_home = std::env::var("HOME").unwrap_or_default();
        let rustup =
            std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
        let path = std::env::var("PATH").unwrap_or_default();
        let mut env: Vec<(String, String)> = [
            ("YIELDSHELL_MODE", "shell"),
            ("YIELDSHELL_SANDBOX", "workspace"),
            ("YIELDSHELL_ALLOWED_CWDS", root.to_str().expect("utf-8")),
            ("YIELDSHELL_DEFAULT_CWD", root.to_str().expect("utf-8")),
            ("HOME", home.to_str().expect("utf-8")),
            ("RUSTUP_HOME", &rustup),
            ("PATH", &path),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let base_str = base.to_str().expect("utf-8").to_string();
        env.extend(
            extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.replace("{base}", &base_str))),
        );
        let server = Workspace::start(&env);
        Some(Workspace {
            server,
            root,
            home,
            base,
            env,
        })
    }

    fn start(env: &[(String, String)]) -> Server {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Server::ready_with_env(&env)
    }

    /// Another server of the same settings (the next start of the person's agent).
    fn next_server(&self) -> Server {
        Workspace::start(&self.env)
    }

    /// Runs a shell command in the root; (exit code, stdout and stderr).
    fn sh(&self, command: &str) -> (i64, String) {
        let result = self.server.exec(json!({
            "command": format!("{command} 2>&1"),
            "yield_ms": 50000,
            "timeout_ms": 120000,
        }));
        assert_eq!(result["status"], "completed", "{command}: {result}");
        (
            result["exit_code"].as_i64().unwrap_or(-1),
            result["stdout"].as_str().unwrap_or_default().to_string(),
        )
    }

    fn cache(&self) -> PathBuf {
        self.home.join(".cache/yieldshell/workspace")
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// npm installs a package (packed by the test from a local directory) in a workspace root:
/// its cache is the server's own, not the person's `~/.npm`, which the sandbox would refuse.
#[test]
fn npm_installs_a_package_in_a_workspace() {
    if !on_path("npm") {
        eprintln!("skipped npm_installs_a_package_in_a_workspace: npm is not installed");
        return;
    }
    let Some(w) = Workspace::new("usability-npm") else {
        return;
    };
    let pkg = w.base.join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    std::fs::write(
        pkg.join("package.json"),
        "{\"name\": \"tiny-local\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n",
    )
    .expect("write");
    std::fs::write(pkg.join("index.js"), "module.exports = () => 42;\n").expect("write");
    let packed = Command::new("npm")
        .args(["pack", "--silent"])
        .current_dir(&pkg)
        .env("npm_config_cache", w.base.join("test-npm-cache"))
        .output()
        .expect("npm pack");
    assert!(packed.status.success(), "npm pack: {packed:?}");
    let tarball = pkg.join("tiny-local-1.0.0.tgz");
    std::fs::write(
        w.root.join("package.json"),
        "{\"name\": \"proj\", \"version\": \"1.0.0\"}\n",
    )
    .expect("write");
    let (code, out) = w.sh(&format!(
        "npm install --no-audit --no-fund {}",
        tarball.display()
    ));
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Unknown env config"), "{out}");
    let (code, out) = w.sh("node -e 'console.log(require(\"tiny-local\")())'");
    assert_eq!((code, out.trim()), (0, "42"));
    assert!(
        std::fs::read_dir(w.cache().join("npm"))
            .expect("npm cache")
            .next()
            .is_some(),
        "npm wrote its cache in the server's own directory"
    );
    assert!(
        !w.home.join(".npm").exists(),
        "the person's ~/.npm is untouched"
    );
}

/// pip installs a wheel (built by the test) into a venv with no index; its cache is the
/// server's own.
#[test]
fn pip_installs_a_package_in_a_workspace() {
    if !on_path("python3") {
        eprintln!("skipped pip_installs_a_package_in_a_workspace: python3 is not installed");
        return;
    }
    let Some(w) = Workspace::new("usability-pip") else {
        return;
    };
    let wheels = w.base.join("wheels");
    std::fs::create_dir_all(&wheels).expect("mkdir");
    let made = Command::new("python3")
        .arg("-c")
        .arg(WHEEL_MAKER)
        .arg(&wheels)
        .output()
        .expect("python3");
    assert!(made.status.success(), "{made:?}");
    let (code, out) = w.sh("python3 -m venv venv");
    if code != 0 {
        eprintln!(
            "skipped pip_installs_a_package_in_a_workspace: python3 cannot make a venv here: {out}"
        );
        return;
    }
    let (code, out) = w.sh(&format!(
        "venv/bin/pip install --no-index --find-links {} tinypkg",
        wheels.display()
    ));
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("cache has been disabled"), "{out}");
    let (code, out) = w.sh("venv/bin/python -c 'import tinypkg; print(tinypkg.VALUE)'");
    assert_eq!((code, out.trim()), (0, "42"));
    let (code, out) = w.sh("venv/bin/pip cache dir");
    assert_eq!(code, 0, "{out}");
    assert_eq!(Path::new(out.trim()), w.cache().join("pip"));
    assert!(
        !w.home.join(".cache/pip").exists(),
        "the person's pip cache is untouched"
    );
}

/// A wheel of the package `tinypkg` (`VALUE = 42`), written into the directory `argv[1]`.
const WHEEL_MAKER: &str = r#"
import sys, zipfile, hashlib, base64
name, ver = "tinypkg", "1.0"
files = {
    f"{name}/__init__.py": "VALUE = 42\n",
    f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n",
    f"{name}-{ver}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append(f"{name}-{ver}.dist-info/RECORD,,")
files[f"{name}-{ver}.dist-info/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(f"{sys.argv[1]}/{name}-{ver}-py3-none-any.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
"#;

/// cargo builds a crate with a new dependency from a local registry the test makes: it
/// unpacks the crate beneath `CARGO_HOME`, the server's own.
#[test]
fn cargo_builds_a_crate_with_a_new_dependency_in_a_workspace() {
    if !on_path("cargo") {
        eprintln!("skipped cargo_builds_a_crate_with_a_new_dependency_in_a_workspace: cargo is not installed");
        return;
    }
    let Some(w) = Workspace::new("usability-cargo") else {
        return;
    };
    // The registry: one crate, its index entry (with the crate's checksum).
    let registry = w.base.join("registry");
    let unpacked = w.base.join("crate/tinydep-0.1.0");
    std::fs::create_dir_all(unpacked.join("src")).expect("mkdir");
    std::fs::create_dir_all(registry.join("index/ti/ny")).expect("mkdir");
    std::fs::write(
        unpacked.join("Cargo.toml"),
        "[package]\nname = \"tinydep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("write");
    std::fs::write(
        unpacked.join("src/lib.rs"),
        "pub fn answer() -> u32 { 42 }\n",
    )
    .expect("write");
    let archive = registry.join("tinydep-0.1.0.crate");
    host(
        &w.base.join("crate"),
        "tar",
        &["-czf", archive.to_str().expect("utf-8"), "tinydep-0.1.0"],
    );
    let sum = host(&registry, "sha256sum", &["tinydep-0.1.0.crate"]);
    let sum = sum.split_whitespace().next().expect("a checksum");
    std::fs::write(
        registry.join("index/ti/ny/tinydep"),
        format!(
            "{{\"name\":\"tinydep\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\
             \"features\":{{}},\"yanked\":false}}\n"
        ),
    )
    .expect("write");
    // The project, with the new dependency.
    let app = w.root.join("app");
    std::fs::create_dir_all(app.join("src")).expect("mkdir");
    std::fs::create_dir_all(app.join(".cargo")).expect("mkdir");
    std::fs::write(
        app.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\ntinydep = \"0.1\"\n\n[workspace]\n",
    )
    .expect("write");
    std::fs::write(
        app.join("src/main.rs"),
        "fn main() { println!(\"{}\", tinydep::answer()); }\n",
    )
    .expect("write");
    std::fs::write(
        app.join(".cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nlocal-registry = \"{}\"\n",
            registry.display()
        ),
    )
    .expect("write");
    let (code, out) = w.sh("cd app && cargo run --offline -q");
    assert_eq!((code, out.trim()), (0, "42"), "{out}");
    assert!(
        w.cache().join("cargo/registry/src").is_dir(),
        "cargo unpacked the crate beneath the server's CARGO_HOME"
    );
    assert!(
        !w.home.join(".cargo/registry").exists(),
        "the person's ~/.cargo is untouched"
    );
}

/// The server makes its package caches ready without following a link a call planted in
/// them: a `cargo` directory replaced by a link to another directory does not receive the
/// copied `config.toml` at the next start, a `yieldshell` directory replaced by a link does
/// not receive `workspace`; the caches are then neither granted nor named, with a warning.
#[test]
fn the_package_caches_are_made_without_following_planted_links() {
    let Some(w) = Workspace::with_env(
        "usability-cache-links",
        &[
            ("XDG_CACHE_HOME", "{base}/root/xdg"),
            ("CARGO_HOME", "{base}/home/.cargo"),
        ],
    ) else {
        return;
    };
    std::fs::create_dir_all(w.home.join(".cargo")).expect("mkdir");
    std::fs::write(w.home.join(".cargo/config.toml"), "[net]\noffline = true\n").expect("write");
    let victim = w.base.join("victim");
    std::fs::create_dir_all(&victim).expect("mkdir");
    std::fs::write(victim.join("config.toml"), "theirs\n").expect("write");
    let cache = w.root.join("xdg/yieldshell/workspace");
    // The first call makes the caches; it replaces their `cargo` with a link.
    let (code, out) = w.sh(&format!(
        "printenv CARGO_HOME && cd {} && mv cargo cargo.old && ln -s {} cargo",
        cache.display(),
        victim.display()
    ));
    assert_eq!(code, 0, "{out}");
    assert_eq!(Path::new(out.trim()), cache.join("cargo"));
    let next = w.next_server();
    let result = next.exec(json!({"command": "printenv CARGO_HOME; true", "yield_ms": 50000}));
    assert_eq!(result["exit_code"], 0, "{result}");
    let named = result["stdout"].as_str().unwrap_or_default();
    assert!(
        !named.contains("yieldshell/workspace"),
        "the caches are not named: {result}"
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("config.toml")).expect("read"),
        "theirs\n",
        "nothing written through the link"
    );
    assert!(
        next.stderr_text()
            .contains("not a directory of the server's user"),
        "{}",
        next.stderr_text()
    );
    drop(next);
    // A call replaces the `yieldshell` directory itself with a link.
    let elsewhere = w.base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let (code, out) = w.sh(&format!(
        "cd {} && mv yieldshell yieldshell.old && ln -s {} yieldshell",
        w.root.join("xdg").display(),
        elsewhere.display()
    ));
    assert_eq!(code, 0, "{out}");
    let next = w.next_server();
    let result = next.exec(json!({"command": "printenv CARGO_HOME; true", "yield_ms": 50000}));
    let named = result["stdout"].as_str().unwrap_or_default();
    assert!(!named.contains("yieldshell/workspace"), "{result}");
    assert_eq!(
        std::fs::read_dir(&elsewhere).expect("read").count(),
        0,
        "nothing made through the link"
    );
}
