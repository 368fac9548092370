//! Trusted mode as a closed world, through the real binary: an allowlisted program without
//! argument rules is refused before anything runs, the operator's
//! `YIELDSHELL_UNREVIEWED_COMMANDS` accepts it (and the kernel layer still confines it), the
//! startup, the tool description and `check` say which names are always refused, and the
//! runners found among toolchains' programs are refused whatever the setting. Each call is
//! made with the kernel sandbox on (where the kernel has Landlock) and off.

use std::time::Duration;

use serde_json::json;

use crate::renamed::Renamed;
use crate::support::{all_text, is_error, path_str, run_binary, wait_until, Server};

const OFF: (&str, &str) = ("YIELDSHELL_SANDBOX", "off");
const NO_OPT_IN: (&str, &str) = ("YIELDSHELL_UNREVIEWED_COMMANDS", "");

/// `env` under a name nobody reviewed: it runs its argv.
const PROGRAMS: &[(&str, &str)] = &[("not-14", "/usr/bin/env")];

fn landlock() -> bool {
    yieldshell::internals::sys::landlock_abi().unwrap_or(0) >= 1
}

/// The sandbox settings to run each case under: on (when the kernel has Landlock) and off.
fn sandboxes() -> Vec<&'static [(&'static str, &'static str)]> {
    let mut out: Vec<&[(&str, &str)]> = vec![&[OFF]];
    if landlock() {
        out.push(&[]);
    } else {
        eprintln!("the kernel has no Landlock: only the sandbox-off cases run");
    }
    out
}

fn shell_execute(server: &Server, argv: &[&str]) -> (bool, String) {
    let result = server.call("shell_execute", json!({ "command": argv }));
    let text = all_text(&result);
    (!is_error(&result), text)
}

fn stderr_has(server: &Server, needle: &str) -> bool {
    wait_until(Duration::from_secs(5), || {
        server.stderr_text().contains(needle)
    })
}

#[test]
fn a_program_without_rules_is_refused_before_anything_runs() {
    let fx = Renamed::new("closed-refused", PROGRAMS);
    let loader = "/lib64/ld-linux-x86-64.so.2";
    for sandbox in sandboxes() {
        let mut extra = sandbox.to_vec();
        extra.push(NO_OPT_IN);
        let server = fx.trusted("not-14,cat", &extra);
        assert!(
            stderr_has(
                &server,
                "allowlist entries without argument rules are always refused: not-14 "
            ),
            "{}",
            server.stderr_text()
        );
        for argv in [
            &["not-14", "touch", "MARK"][..],
            &["not-14", loader, "/usr/bin/touch", "MARK"],
            &["cat", "/dev/null", "|", "not-14", "touch", "MARK"],
        ] {
            let (ok, text) = shell_execute(&server, argv);
            assert!(!ok, "{argv:?}: {text}");
            assert!(
                text.contains("not-14 is allowlisted but has no argument rules")
                    && text.contains("YIELDSHELL_UNREVIEWED_COMMANDS"),
                "{argv:?}: {text}"
            );
            assert!(!fx.work.join("MARK").exists(), "{argv:?} ran");
        }
        // exec's command line is refused the same way.
        let result = server.call(
            "exec",
            json!({"command": "not-14 touch MARK", "side_effects": ["OTHER"]}),
        );
        assert!(is_error(&result), "{result}");
        assert_eq!(
            result["structuredContent"]["status"], "failed_to_start",
            "{result}"
        );
        assert!(!fx.work.join("MARK").exists());
        // A reviewed program beside it still runs.
        let (ok, text) = shell_execute(&server, &["cat", "/dev/null"]);
        assert!(ok, "{text}");
    }
}

#[test]
fn the_operator_accepts_a_program_without_rules_and_the_kernel_still_confines_it() {
    let fx = Renamed::new("closed-opt-in", PROGRAMS);
    let outside = fx.out("escaped");
    for sandbox in sandboxes() {
        let mut extra = sandbox.to_vec();
        extra.push(("YIELDSHELL_UNREVIEWED_COMMANDS", "not-14"));
        let server = fx.trusted("not-14,touch", &extra);
        assert!(
            stderr_has(
                &server,
                "YIELDSHELL_UNREVIEWED_COMMANDS accepts not-14 without argument rules"
            ),
            "{}",
            server.stderr_text()
        );
        assert!(!server
            .stderr_text()
            .contains("without argument rules are always refused"));
        // Accepted: it runs an allowlisted program inside the working directory.
        let (ok, text) = shell_execute(&server, &["not-14", "touch", "INSIDE"]);
        assert!(ok, "{text}");
        assert!(fx.work.join("INSIDE").exists());
        std::fs::remove_file(fx.work.join("INSIDE")).expect("remove INSIDE");
        // Writing outside the working directory: only the kernel layer stops it.
        let (ok, text) = shell_execute(&server, &["not-14", "touch", &outside]);
        if sandbox.is_empty() {
            assert!(!ok, "{text}");
            assert!(
                !std::path::Path::new(&outside).exists(),
                "the sandbox let an accepted program write outside: {text}"
            );
        } else {
            assert!(ok, "{text}");
            std::fs::remove_file(&outside).expect("without the sandbox the write happens");
        }
    }
}

#[test]
fn a_pattern_that_admits_programs_without_rules_is_named_at_startup() {
    let fx = Renamed::new("closed-pattern", PROGRAMS);
    let path = fx.safe_path();
    let server = Server::ready_with_env(&[
        ("ALLOW_PATTERNS", "not-1[0-9]"),
        ("MCP_SHELL_SAFE_PATH", &path),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.work)),
    ]);
    assert!(
        stderr_has(
            &server,
            "ALLOW_PATTERNS entry not-1[0-9] admits programs without argument rules, which are \
             always refused: not-14 "
        ),
        "{}",
        server.stderr_text()
    );
    let (ok, text) = shell_execute(&server, &["not-14", "true"]);
    assert!(!ok && text.contains("has no argument rules"), "{text}");
}

#[test]
fn description_and_check_name_the_programs_without_rules() {
    let fx = Renamed::new("closed-describe", PROGRAMS);
    let server = fx.trusted("not-14,cat", &[NO_OPT_IN]);
    let list = server.result("tools/list", json!({}));
    let description = list["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "shell_execute"))
        .and_then(|t| t["description"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        description.contains("Always refused (allowlisted, but without argument rules): not-14."),
        "{description}"
    );
    let path = fx.safe_path();
    let env = [
        ("ALLOW_COMMANDS", "not-14,cat"),
        ("MCP_SHELL_SAFE_PATH", &path),
        ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.work)),
    ];
    let out = run_binary(&["check", "not-14", "touch", "x"], &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("always refused (allowlisted, but without argument rules; YIELDSHELL_UNREVIEWED_COMMANDS accepts them): not-14"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not-14 is allowlisted but has no argument rules"),
        "{stdout}"
    );
    let mut env = env.to_vec();
    env.push(("YIELDSHELL_UNREVIEWED_COMMANDS", "not-14"));
    let out = run_binary(&["check", "not-14", "touch", "x"], &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "accepted without argument rules (only the kernel layer confines them): not-14"
        ),
        "{stdout}"
    );
}

#[test]
fn runners_among_toolchain_programs_are_refused_whatever_the_setting() {
    let runners = [
        "msgexec",
        "msgfilter",
        "gpg-connect-agent",
        "gp-collect-app",
        "gprofng",
        "lli",
        "lli-14",
        "prove",
        "pdb3",
        "rpcgen",
        "gio",
        "ld-linux-x86-64.so.2",
    ];
    let allow = runners.join(",");
    for sandbox in sandboxes() {
        let mut env = sandbox.to_vec();
        env.push(("ALLOW_COMMANDS", &allow));
        env.push(("YIELDSHELL_UNREVIEWED_COMMANDS", &allow));
        let server = Server::ready_with_env(&env);
        for name in runners {
            let (ok, text) = shell_execute(&server, &[name, "-h"]);
            assert!(!ok, "{name}: {text}");
            assert!(
                text.contains("Command rejected by default security policy: "),
                "{name}: {text}"
            );
        }
        assert!(
            stderr_has(
                &server,
                "YIELDSHELL_UNREVIEWED_COMMANDS entry msgexec has no effect"
            ),
            "{}",
            server.stderr_text()
        );
    }
}

/// The routes by which a program with rules, or one without, would load a library or run a
/// program named by the caller: each refused before anything runs, naming its rule.
#[test]
fn named_routes_to_a_library_or_a_program_are_refused() {
    let allow = "openssl,curl,nm,opt-14,javac,gpg,cat,cargo,npm,rg,bsdtar,gcc,sdiff";
    let so = "/tmp/yieldshell-not-a-library.so";
    let cases: &[(&[&str], &str)] = &[
        (&["openssl", "engine", so], "openssl"),
        (
            &[
                "openssl",
                "engine",
                "-t",
                "dynamic",
                "-pre",
                "SO_PATH:/x.so",
            ],
            "openssl",
        ),
        (
            &["openssl", "s_client", "-ssl_client_engine", "x"],
            "openssl engine",
        ),
        (&["openssl"], "openssl without a known subcommand"),
        (&["openssl", "req", "-config", "x.cnf"], "openssl engine"),
        (
            &["curl", "--engine", so, "https://example.com"],
            "curl engine",
        ),
        (&["curl", "--eng", so, "https://example.com"], "curl engine"),
        (&["curl", "-K", "cfg"], "curl engine"),
        (
            &["curl", "--unix-socket", "/run/docker.sock", "http://x/"],
            "curl engine",
        ),
        (
            &["curl", "--from-the-future", "https://example.com"],
            "not known to the rule",
        ),
        (
            &["nm", &format!("--plugin={so}"), "x.o"],
            "nm is allowlisted but has no argument rules",
        ),
        (
            &["opt-14", &format!("-load={so}")],
            "opt-14 is allowlisted but has no argument rules",
        ),
        (
            &["javac", "-J-agentpath:/x.so", "X.java"],
            "javac is allowlisted but has no argument rules",
        ),
        (
            &["gpg", "--edit-key", "k", "--command-fd", "0"],
            "gpg external program",
        ),
        // A project's .cargo/config.toml aliases `fmt` to `run`, and names rustc wrappers.
        (&["cargo", "fmt"], "security policy: cargo"),
        // npm opens help with the browser a project's .npmrc names.
        (
            &["npm", "help", "install"],
            "package manager subcommand help",
        ),
        (&["rg", "--hostname-bin=sh", "x"], "rg --hostname-bin"),
        // gcc reads -fcompare-debug's value as more driver options for its second compile.
        (
            &[
                "gcc",
                "-fcompare-debug=-wrapper /lib64/ld-linux-x86-64.so.2,/bin/sh,-c,id",
                "-c",
                "f.c",
            ],
            "compiler plugin or external program option",
        ),
        (
            &["gcc", "-fcompare-debug=-B.", "-c", "f.c"],
            "compiler plugin or external program option",
        ),
        // gcc reads `-Bstatic` as `-B static` (it runs `./staticas`), and `--pref` as `--prefix`.
        (
            &["gcc", "-Bstatic", "-c", "f.c"],
            "compiler plugin or external program option",
        ),
        (
            &["gcc", "--pref", "static", "-c", "f.c"],
            "compiler option --pref is not known to the rule",
        ),
        // gcc's lto-wrapper runs make on a makefile holding the output's name, where
        // `${shell …}` runs a command (sandbox off).
        (
            &[
                "gcc",
                "-O2",
                "-flto=2",
                "-flto-partition=max",
                "p.c",
                "-o",
                "p${shell id>PWNED}",
            ],
            "link-time optimisation",
        ),
        (&["gcc", "-flto", "-c", "p.c"], "link-time optimisation"),
        (
            &["gcc", "x.o", "-o", "p$(shell id)"],
            "link-time optimisation",
        ),
        (
            &["gcc", "-Wl,-B,x", "x.o"],
            "compiler plugin or external program option",
        ),
        // A planted LTO object starts lto-wrapper at any link; with `-save-temps` or
        // `-dumpdir` the names make reads come from the caller (`!=` runs a command).
        (
            &["gcc", "-save-temps", "m.o", "-o", "p!=id>IDOUT #"],
            "link-time optimisation",
        ),
        (
            &[
                "gcc",
                "-save-temps",
                "-dumpdir",
                "e!=id>D2 #",
                "m.o",
                "-o",
                "prog",
            ],
            "link-time optimisation",
        ),
        // An interactive merge's `e` command starts ed, which runs `!command` from stdin.
        (&["sdiff", "-o", "out", "a", "b"], "interactive merge"),
        (&["sdiff", "--out=out", "a", "b"], "interactive merge"),
        (
            &["bsdtar", "-cf", "x.tar", "--from-the-future", "f"],
            "unknown bsdtar option",
        ),
    ];
    for sandbox in sandboxes() {
        let mut env = sandbox.to_vec();
        env.push(("ALLOW_COMMANDS", allow));
        let server = Server::ready_with_env(&env);
        for (argv, expected) in cases {
            let (ok, text) = shell_execute(&server, argv);
            assert!(!ok, "{argv:?}: {text}");
            assert!(
                text.contains(expected),
                "{argv:?}: expected {expected:?} in {text}"
            );
        }
        for argv in [&["openssl", "version"][..], &["curl", "--version"]] {
            let (ok, text) = shell_execute(&server, argv);
            assert!(ok, "{argv:?}: {text}");
        }
    }
}

/// `MCP_SHELL_CHILD_ENV_ALLOWLIST` refuses code-loading and program-naming variables by
/// family at startup (exit 2, naming the variable and its family); ordinary names pass and
/// reach the child.
#[test]
fn environment_families_are_refused_at_startup() {
    for name in [
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "LD_PRELOAD",
        "PYTHONWARNINGS",
        "GTK_MODULES",
        "SSH_SK_PROVIDER",
        "KUBECONFIG",
        "GOFLAGS",
        "GCC_COMPARE_DEBUG",
        "MAKE",
        "MAKEFILES",
        "SSH_SK_HELPER",
        "CGO_CFLAGS_ALLOW",
        "RUSTFMT",
        "npm_config_script_shell",
        "GNUPGHOME",
        "AWS_CONFIG_FILE",
        "SYSTEM_WGETRC",
        "DBUS_SESSION_BUS_ADDRESS",
        "BINUTILS_ROOT",
        "GCC_ROOT",
        "GOROOT",
        "PKG_CONFIG",
        "shell_escape",
    ] {
        let list = format!("LANG,{name}");
        let out = run_binary(
            &[],
            &[
                ("ALLOW_COMMANDS", "printenv"),
                ("MCP_SHELL_CHILD_ENV_ALLOWLIST", &list),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid MCP_SHELL_CHILD_ENV_ALLOWLIST: {name} ")),
            "{name}: {stderr}"
        );
    }
    let server = Server::ready_with_env(&[
        ("ALLOW_COMMANDS", "printenv"),
        ("MCP_SHELL_CHILD_ENV_ALLOWLIST", "LANG,LC_ALL,MY_TOOL_HOME"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("MY_TOOL_HOME", "/opt/tool"),
    ]);
    let (ok, text) = shell_execute(&server, &["printenv"]);
    assert!(ok, "{text}");
    for want in ["LANG=C.UTF-8", "LC_ALL=C.UTF-8", "MY_TOOL_HOME=/opt/tool"] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

/// A program the operator accepted without rules (here an interpreter under a new name)
/// cannot run a copy of a program from a memfd inside the sandbox: `memfd_create` without
/// `MFD_NOEXEC_SEAL` is refused, and a sealed memfd cannot be executed. Without the sandbox
/// the same call runs the copy (the argument layer is the only one there).
#[test]
fn memfd_execution_is_refused_inside_the_sandbox() {
    let fx = Renamed::new("closed-memfd", &[("mrun", "/usr/bin/python3")]);
    if !fx.bin.join("mrun").exists() {
        eprintln!("skipped: no /usr/bin/python3 to copy");
        return;
    }
    let script = |flags: u32| {
        format!(
            "import os\ntry:\n    fd = os.memfd_create('copy', {flags})\nexcept OSError as e:\n    \
             print('memfd_create refused:', e.errno); raise SystemExit(3)\nos.write(fd, \
             open('/usr/bin/id', 'rb').read())\nos.execv('/proc/self/fd/%d' % fd, ['id'])\n"
        )
    };
    for sandbox in sandboxes() {
        let server = fx.trusted("mrun", sandbox);
        std::fs::write(fx.work.join("plain.py"), script(0)).expect("write plain.py");
        std::fs::write(fx.work.join("sealed.py"), script(8)).expect("write sealed.py");
        let (ok, text) = shell_execute(&server, &["mrun", "plain.py"]);
        if sandbox.is_empty() {
            assert!(!ok, "{text}");
            assert!(
                text.contains(&format!("memfd_create refused: {}", libc::EPERM)),
                "{text}"
            );
            // Sealed against execution: made, but the copy does not run.
            let (ok, text) = shell_execute(&server, &["mrun", "sealed.py"]);
            assert!(!ok && !text.contains("uid="), "{text}");
        } else {
            assert!(ok && text.contains("uid="), "{text}");
        }
    }
}

/// `yieldshell check ARGS...`: `None` when it allows, the refusal's text when it refuses
/// (exit 1 with a `refused:` line), and the whole report.
fn check_verdict(args: &[&str], env: &[(&str, &str)]) -> (Option<String>, String) {
    let out = run_binary(args, env);
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    let verdict = match out.status.code() {
        Some(0) => None,
        Some(1) => Some(
            report
                .lines()
                .find_map(|l| l.strip_prefix("refused: "))
                .unwrap_or_else(|| panic!("{args:?}: no refusal in {report}"))
                .to_string(),
        ),
        other => panic!("{args:?}: check exited {other:?}: {report}"),
    };
    (verdict, report)
}

/// `yieldshell check` prepares the launch as a call does: of a few hundred argv (accepted
/// and refused programs and options, redirection targets through a symlink, a linked
/// directory, a hard link, a FIFO, a directory, into `.git`, absolute, `..`, missing),
/// with the sandbox on and off, `check` and `shell_execute` give the same verdict, and a
/// refusal the same text.
#[test]
fn check_never_disagrees_with_the_call() {
    let fx = Renamed::new("closed-agree", PROGRAMS);
    let work = &fx.work;
    std::fs::write(work.join("data.txt"), "b\na\n").expect("data.txt");
    std::fs::write(work.join("out.txt"), "").expect("out.txt");
    std::fs::write(work.join("hard"), "").expect("hard");
    std::fs::hard_link(work.join("hard"), fx.outside.join("hard2")).expect("hard link");
    std::os::unix::fs::symlink("/etc/hostname", work.join("link")).expect("link");
    std::os::unix::fs::symlink(&fx.outside, work.join("linkdir")).expect("linkdir");
    std::fs::create_dir_all(work.join("sub")).expect("sub");
    std::fs::create_dir_all(work.join(".git")).expect(".git");
    let fifo = std::process::Command::new("mkfifo")
        .arg(work.join("fifo"))
        .status()
        .expect("mkfifo");
    assert!(fifo.success());
    let commands: &[&[&str]] = &[
        &["cat", "data.txt"],
        &["ls", "-l"],
        &["wc", "-l", "data.txt"],
        &["sort", "data.txt"],
        &["sort", "-o", "x", "data.txt"],
        &["grep", "-c", "a", "data.txt"],
        &["echo", "hi"],
        &["head", "-n1", "data.txt"],
        &["tee", "t.txt"],
        &["find", ".", "-name", "x"],
        &["find", ".", "-exec", "id", "+"],
        &["tar", "-cf", "-", "data.txt"],
        &["sh", "-c", "id"],
        &["rm", "x"],
        &["not-14", "id"],
        &["openssl", "version"],
        &["openssl", "engine"],
        &["curl", "--engine", "x", "http://127.0.0.1:9/"],
        &["git", "status"],
        &["git", "-c", "core.pager=id", "log"],
    ];
    let redirections: &[&[&str]] = &[
        &[],
        &[">", "out.txt"],
        &[">>", "out.txt"],
        &[">", "link"],
        &[">", "linkdir/x"],
        &[">", "hard"],
        &[">", "fifo"],
        &[">", "sub"],
        &[">", "sub/new.txt"],
        &[">", ".git/config"],
        &[">", "/tmp/yieldshell-agree-abs"],
        &[">", "../up"],
        &["<", "link"],
        &["<", "data.txt"],
        &["<", "missing.txt"],
    ];
    let allow = "cat,ls,wc,sort,grep,echo,head,tee,find,tar,sh,not-14,openssl,curl,git";
    let path = fx.safe_path();
    let mut compared = 0;
    let mut both = [0, 0];
    for sandbox in sandboxes() {
        let mut env: Vec<(&str, &str)> = vec![
            ("ALLOW_COMMANDS", allow),
            ("MCP_SHELL_SAFE_PATH", &path),
            ("YIELDSHELL_DEFAULT_CWD", path_str(work)),
        ];
        env.extend_from_slice(sandbox);
        let server = Server::ready_with_env(&env);
        for command in commands {
            for (i, redirection) in redirections.iter().enumerate() {
                let mut argv: Vec<&str> = command.to_vec();
                if i % 2 == 1 {
                    argv.extend(["|", "wc", "-c"]);
                }
                argv.extend(redirection.iter());
                let mut args = vec!["check"];
                args.extend(argv.iter());
                let (checked, report) = check_verdict(&args, &env);
                let result = server.call("shell_execute", json!({ "command": argv }));
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                let ran = result["structuredContent"]["process_id"].is_string();
                let called = (!ran).then(|| {
                    text.strip_prefix("Error executing command: ")
                        .unwrap_or(text)
                        .to_string()
                });
                assert_eq!(
                    checked, called,
                    "{argv:?} (sandbox {sandbox:?}): check said {report}, the call {result}"
                );
                both[usize::from(called.is_some())] += 1;
                compared += 1;
            }
        }
    }
    eprintln!(
        "{compared} argv compared: {} allowed, {} refused, no disagreement",
        both[0], both[1]
    );
    assert!(both[0] > 20 && both[1] > 100, "{both:?}");
    assert!(!std::path::Path::new("/tmp/yieldshell-agree-abs").exists());
}

/// A call's `env` is judged alike by `check --env` and by trusted `exec`: names outside
/// MCP_SHELL_CHILD_ENV_ALLOWLIST, PATH and the names the server sets itself are refused with
/// the same text, the allowlisted ones pass, with the sandbox on and off.
#[test]
fn check_never_disagrees_with_the_call_about_the_environment() {
    let fx = Renamed::new("closed-agree-env", &[]);
    let work = &fx.work;
    std::fs::write(work.join("data.txt"), "b\na\n").expect("data.txt");
    let commands = [
        "cat data.txt",
        "sort data.txt | wc -l",
        "git status",
        "sh -c id",
    ];
    let overlays: &[&[(&str, &str)]] = &[
        &[],
        &[("LANG", "C")],
        &[("LC_ALL", "C"), ("MY_TOOL_HOME", "/opt/tool")],
        &[("LD_PRELOAD", "/tmp/x.so")],
        &[("LANG", "C"), ("LD_AUDIT", "/tmp/x.so")],
        &[("PATH", "/tmp")],
        &[("GIT_CONFIG_GLOBAL", "/tmp/gitconfig")],
        &[("GIT_DIR", "/tmp")],
        &[("JAVA_TOOL_OPTIONS", "-agentpath:/tmp/x.so")],
        &[("TMPDIR", "/tmp")],
        &[("HOME", "/tmp")],
    ];
    let path = fx.safe_path();
    let (mut allowed, mut refused) = (0, 0);
    for sandbox in sandboxes() {
        let mut env: Vec<(&str, &str)> = vec![
            ("ALLOW_COMMANDS", "cat,sort,wc,git,sh"),
            ("MCP_SHELL_SAFE_PATH", &path),
            ("MCP_SHELL_CHILD_ENV_ALLOWLIST", "LANG,LC_ALL,MY_TOOL_HOME"),
            ("YIELDSHELL_DEFAULT_CWD", path_str(work)),
        ];
        env.extend_from_slice(sandbox);
        let server = Server::ready_with_env(&env);
        for command in commands {
            for overlay in overlays {
                let mut args = vec!["check".to_string()];
                for (k, v) in *overlay {
                    args.extend(["--env".to_string(), format!("{k}={v}")]);
                }
                args.push(command.to_string());
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (checked, report) = check_verdict(&args, &env);
                let env_arg: serde_json::Map<String, serde_json::Value> = overlay
                    .iter()
                    .map(|(k, v)| (k.to_string(), json!(v)))
                    .collect();
                let result = server.call(
                    "exec",
                    json!({"command": command, "env": env_arg, "side_effects": ["NONE"]}),
                );
                let ran = result["structuredContent"]["process_id"].is_string()
                    || result["structuredContent"]["status"] == "completed";
                let called = (!ran).then(|| {
                    result["structuredContent"]["error"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                });
                assert_eq!(
                    checked, called,
                    "{command} with {overlay:?} (sandbox {sandbox:?}): check said {report}, \
                     the call {result}"
                );
                if called.is_some() {
                    refused += 1;
                } else {
                    allowed += 1;
                }
            }
        }
    }
    eprintln!("{allowed} allowed, {refused} refused, no disagreement");
    assert!(
        allowed >= 8 && refused >= 30,
        "{allowed} allowed, {refused} refused"
    );
}

/// A call cannot name the temporary directory, even where MCP_SHELL_CHILD_ENV_ALLOWLIST lists
/// it: gcc's lto-wrapper writes a makefile there whose name make reads as makefile syntax
/// (`u$(shell id)` ran a command, sandbox off). Other listed names still pass.
#[test]
fn a_call_cannot_name_the_temporary_directory() {
    let fx = Renamed::new("closed-tmpdir", &[]);
    let path = fx.safe_path();
    for sandbox in sandboxes() {
        let mut env: Vec<(&str, &str)> = vec![
            ("ALLOW_COMMANDS", "cat"),
            ("MCP_SHELL_SAFE_PATH", &path),
            ("MCP_SHELL_CHILD_ENV_ALLOWLIST", "TMPDIR,TMP,TEMP,LANG"),
            ("YIELDSHELL_DEFAULT_CWD", path_str(&fx.work)),
        ];
        env.extend_from_slice(sandbox);
        let server = Server::ready_with_env(&env);
        for name in ["TMPDIR", "TMP", "TEMP"] {
            let result = server.call(
                "exec",
                json!({"command": "cat /dev/null", "env": {name: "/tmp/u$(shell id)"},
                       "side_effects": ["NONE"]}),
            );
            let error = result["structuredContent"]["error"]
                .as_str()
                .unwrap_or_default();
            assert!(
                error.contains(&format!("{name} cannot be set by a call")),
                "{name} (sandbox {sandbox:?}): {result}"
            );
        }
        let result = server.call(
            "exec",
            json!({"command": "cat /dev/null", "env": {"LANG": "C"}, "side_effects": ["NONE"]}),
        );
        assert_eq!(
            result["structuredContent"]["status"], "completed",
            "LANG (sandbox {sandbox:?}): {result}"
        );
    }
}

/// The closed grammars of fd, rg, split, diff3, sdiff, wget, gpg, gpgv, openssl and the
/// linkers, through the real binary: each program's route to a program or library the caller
/// names is refused in the spellings the program reads (abbreviations, `=`, clusters, after an
/// operand, a planted configuration), nothing runs (the runner's marker is never written), an
/// option the grammar does not have is refused naming it, and everyday calls run.
#[test]
fn closed_grammars_refuse_every_spelling_of_a_route_and_unknown_options() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Renamed::new("closed-grammars", &[]);
    let work = &fx.work;
    // What each route would run: it leaves MARK behind.
    let runner = work.join("runner");
    std::fs::write(&runner, "#!/bin/sh\ntouch MARK\nexit 1\n").expect("runner");
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // A home directory whose gpg.conf names the agent gpg starts (`--card-status` starts it).
    std::fs::create_dir(work.join("h")).expect("h");
    std::fs::set_permissions(work.join("h"), std::fs::Permissions::from_mode(0o700))
        .expect("chmod h");
    std::fs::write(
        work.join("h/gpg.conf"),
        format!("agent-program {}\n", path_str(&runner)),
    )
    .expect("gpg.conf");
    // An OpenSSL configuration that loads a provider module from the working directory.
    std::fs::write(
        work.join("evil.cnf"),
        "openssl_conf = init\n[init]\nproviders = p\n[p]\nx = x_sect\n[x_sect]\n\
         module = ./runner\nactivate = 1\n",
    )
    .expect("evil.cnf");
    for name in ["a", "b", "c", "data.txt"] {
        std::fs::write(work.join(name), "one\ntwo\n").expect("data");
    }
    // diff3 and sdiff run diff.
    let allow = "fd,rg,split,diff,diff3,sdiff,wget,gpg,gpgv,openssl,ld,ld.bfd,mold";
    const RUNS: &str = "compiler plugin or external program option";
    const GPG: &str = "gpg external program or option file";
    const OPENSSL: &str = "openssl engine, provider or configuration option";
    let url = "http://127.0.0.1:9/";
    let refused: &[(&[&str], &str)] = &[
        (&["fd", "-Hx", "./runner"], "fd --exec"),
        (&["fd", "--exec-b", "./runner"], "fd --exec"),
        (
            &["fd", "--from-the-future", "x"],
            "fd option --from-the-future is not known to the rule",
        ),
        (&["rg", "--pre=./runner", "x"], "rg --pre"),
        (&["rg", "-n", "x", "--pr", "./runner"], "rg --pre"),
        (&["rg", "-K", "x"], "rg option -K is not known to the rule"),
        (
            &["split", "--fil", "./runner", "data.txt"],
            "split --filter",
        ),
        (
            &["split", "-l1", "data.txt", "--f=./runner"],
            "split --filter",
        ),
        (
            &["split", "--from-the-future", "data.txt"],
            "split option --from-the-future is not known to the rule",
        ),
        (
            &["diff3", "--d=./runner", "a", "b", "c"],
            "external diff program",
        ),
        (
            &["diff3", "-Z", "a", "b", "c"],
            "diff3 option -Z is not known to the rule",
        ),
        (
            &["sdiff", "--diff", "./runner", "a", "b"],
            "external diff program",
        ),
        (&["sdiff", "-sout", "a", "b"], "interactive merge"),
        (&["wget", "-qex=y", url], "wget command option"),
        (&["wget", "--use-a", "./runner", url], "wget command option"),
        (&["wget", "--conf=h/gpg.conf", url], "wget command option"),
        (
            &["wget", "-j", url],
            "wget option -j is not known to the rule",
        ),
        (&["gpg", "--homedir", "h", "--card-status"], GPG),
        (&["gpg", "--home=h", "--card-status"], GPG),
        (&["gpg", "--agent-p=./runner", "--card-status"], GPG),
        (&["gpg", "-k", "--opt", "h/gpg.conf"], GPG),
        (
            &["gpg", "--from-the-future", "-k"],
            "gpg option --from-the-future is not known to the rule",
        ),
        (&["gpgv", "--home=h", "x.sig"], GPG),
        (&["openssl", "req", "--config=evil.cnf", "-new"], OPENSSL),
        (
            &["openssl", "dgst", "-provider-path", ".", "data.txt"],
            OPENSSL,
        ),
        (
            &["openssl", "x509", "-from-the-future"],
            "openssl option -from-the-future is not known to the rule",
        ),
        (&["ld", "-plugin", "./runner", "m.o"], RUNS),
        (&["ld.bfd", "-plugin-opt=./runner", "m.o"], RUNS),
        (&["ld", "--error-h", "./runner", "m.o"], RUNS),
        (&["ld", "-o", "@opts", "m.o"], RUNS),
        (&["mold", "-run", "./runner"], RUNS),
        (
            &["ld", "--from-the-future", "m.o"],
            "linker option --from-the-future is not known to the rule",
        ),
    ];
    for sandbox in sandboxes() {
        let mut extra = sandbox.to_vec();
        extra.push(NO_OPT_IN);
        let server = fx.trusted(allow, &extra);
        for (argv, expected) in refused {
            let (ok, text) = shell_execute(&server, argv);
            assert!(!ok, "{argv:?}: {text}");
            assert!(
                text.contains(expected),
                "{argv:?}: expected {expected:?} in {text}"
            );
            assert!(!work.join("MARK").exists(), "{argv:?} ran the runner");
        }
        for argv in [
            &["split", "-l", "1", "data.txt", "part-"][..],
            &["diff3", "-m", "a", "b", "c"],
            &["sdiff", "-s", "a", "b"],
            &["openssl", "dgst", "-sha256", "data.txt"],
            &["gpg", "--version"],
            &["gpgv", "--version"],
            &["ld", "--version"],
            &["wget", "--version"],
        ] {
            let (ok, text) = shell_execute(&server, argv);
            assert!(ok, "{argv:?}: {text}");
        }
        assert!(work.join("part-ab").exists(), "split ran");
    }
}

/// A fixture for the closed grammars of find, sort and awk: a runner that leaves MARK behind
/// and a data file.
fn closed_text_tools(label: &str) -> Renamed {
    use std::os::unix::fs::PermissionsExt;
    let fx = Renamed::new(label, &[]);
    let runner = fx.work.join("runner");
    std::fs::write(&runner, "#!/bin/sh\ntouch MARK\nexit 1\n").expect("runner");
    std::fs::set_permissions(&runner, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(fx.work.join("data.txt"), "b:2\na:1\n").expect("data.txt");
    fx
}

/// Runs each refused argv (refused with its text, the runner's MARK and the file `out` never
/// written) and each accepted one (its output holding the text given), with the sandbox on
/// and off.
fn refuses_and_runs(
    fx: &Renamed,
    allow: &str,
    refused: &[(&[&str], &str)],
    accepted: &[(&[&str], &str)],
) {
    for sandbox in sandboxes() {
        let mut extra = sandbox.to_vec();
        extra.push(NO_OPT_IN);
        let server = fx.trusted(allow, &extra);
        for (argv, expected) in refused {
            let (ok, text) = shell_execute(&server, argv);
            assert!(!ok, "{argv:?}: {text}");
            assert!(
                text.contains(expected),
                "{argv:?}: expected {expected:?} in {text}"
            );
            assert!(!fx.work.join("MARK").exists(), "{argv:?} ran the runner");
            assert!(!fx.work.join("out").exists(), "{argv:?} wrote out");
        }
        for (argv, expected) in accepted {
            let (ok, text) = shell_execute(&server, argv);
            assert!(ok, "{argv:?}: {text}");
            assert!(
                text.contains(expected),
                "{argv:?}: expected {expected:?} in {text}"
            );
        }
    }
}

/// find's closed grammar through the real binary: the primaries that run a program or write a
/// file are refused in every position (after options, operators, other primaries' values),
/// a primary find does not know is refused naming it (nothing runs), and everyday searches
/// run.
#[test]
fn find_refuses_unknown_primaries_and_runs_everyday_searches() {
    let fx = closed_text_tools("closed-find");
    const EXEC: &str = "find -exec";
    let refused: &[(&[&str], &str)] = &[
        (&["find", ".", "-exec", "./runner", "{}", "+"], EXEC),
        (
            &[
                "find", "-L", ".", "-name", "x", "-o", "-execdir", "./runner", "{}", "+",
            ],
            EXEC,
        ),
        (
            &["find", "-D", "stat", ".", "!", "-ok", "./runner", "{}", "+"],
            EXEC,
        ),
        (
            &["find", ".", "-name", "--", "-exec", "./runner", "{}", "+"],
            EXEC,
        ),
        (&["find", ".", "-fprint", "out"], "find file output"),
        (
            &["find", ".", "-type", "f", "-fprintf", "out", "%p"],
            "find file output",
        ),
        (
            &["find", ".", "-from-the-future"],
            "find primary -from-the-future is not known to the rule",
        ),
        (
            &["find", ".", "-exek", "./runner", "{}", "+"],
            "find primary -exek is not known to the rule",
        ),
        (
            &["find", "-D", "future", "."],
            "find option -D future is not known to the rule",
        ),
    ];
    let accepted: &[(&[&str], &str)] = &[
        (&["find", ".", "-name", "data.txt"], "./data.txt"),
        (&["find", ".", "-name", "-exec"], ""),
        (
            &[
                "find",
                "-O2",
                ".",
                "-maxdepth",
                "1",
                "-type",
                "f",
                "-printf",
                "%f\\n",
            ],
            "runner",
        ),
        (
            &[
                "find", ".", "(", "-name", "*.txt", "-o", "-name", "x", ")", "-print0",
            ],
            "data.txt",
        ),
    ];
    refuses_and_runs(&fx, "find", refused, accepted);
}

/// sort's closed grammar through the real binary: `-o`, `-T`, `--compress-program` and
/// `--files0-from` are refused in every spelling (`-y -o FILE`, which GNU sort reads as
/// `-o FILE`, among them), an option sort does not have is refused naming it, and everyday
/// sorts run.
#[test]
fn sort_refuses_unknown_options_and_runs_everyday_sorts() {
    let fx = closed_text_tools("closed-sort");
    const REASON: &str = "sort external program or path option";
    let refused: &[(&[&str], &str)] = &[
        (&["sort", "-y", "-o", "out", "data.txt"], REASON),
        (&["sort", "-ro", "out", "data.txt"], REASON),
        (&["sort", "data.txt", "--out=out"], REASON),
        (
            &["sort", "--compress-p=./runner", "-S", "1", "data.txt"],
            REASON,
        ),
        (&["sort", "--files0", "data.txt"], REASON),
        (
            &["sort", "--from-the-future", "data.txt"],
            "sort option --from-the-future is not known to the rule",
        ),
        (
            &["sort", "-rna", "data.txt"],
            "sort option -a is not known to the rule",
        ),
    ];
    let accepted: &[(&[&str], &str)] = &[
        (&["sort", "data.txt"], "a:1\nb:2"),
        (&["sort", "-r", "data.txt"], "b:2\na:1"),
        (&["sort", "-t", ":", "-k2,2n", "data.txt"], "a:1\nb:2"),
        (&["sort", "-y0", "-u", "--", "data.txt"], "a:1"),
        (&["sort", "--rev", "--stable", "data.txt"], "b:2\na:1"),
    ];
    refuses_and_runs(&fx, "sort", refused, accepted);
}

/// awk's closed grammar through the real binary (the machine's awk: mawk or gawk): program
/// text from files and `-W exec`, `system` and pipes are refused, an option or `-W` name no
/// awk has is refused naming it (nothing runs), and everyday programs run.
#[test]
fn awk_refuses_unknown_options_and_runs_everyday_programs() {
    let fx = closed_text_tools("closed-awk");
    std::fs::write(fx.work.join("p.awk"), "BEGIN { system(\"./runner\") }\n").expect("p.awk");
    const REASON: &str = "awk external access";
    let refused: &[(&[&str], &str)] = &[
        (&["awk", "BEGIN { system(\"./runner\") }"], REASON),
        (&["awk", "BEGIN { print | \"./runner\" }"], REASON),
        (&["awk", "-f", "p.awk"], REASON),
        (&["awk", "-W", "interactive,exec", "p.awk"], REASON),
        (&["awk", "--exe=p.awk"], REASON),
        (&["awk", "{ print > \"out\" }", "data.txt"], REASON),
        (
            &["awk", "--from-the-future", "{print}", "data.txt"],
            "awk option --from-the-future is not known to the rule",
        ),
        (
            &["awk", "-W", "from-the-future", "{print}", "data.txt"],
            "awk option -W from-the-future is not known to the rule",
        ),
        (
            &["awk", "-a", "{print}", "data.txt"],
            "awk option -a is not known to the rule",
        ),
    ];
    let accepted: &[(&[&str], &str)] = &[
        (&["awk", "-F:", "{ print $1 }", "data.txt"], "b\na"),
        (
            &[
                "awk",
                "-F",
                ":",
                "-v",
                "n=2",
                "$2 == n { print $1 }",
                "data.txt",
            ],
            "b",
        ),
        (&["awk", "-F:", "$2 > 1", "data.txt"], "b:2"),
        (&["awk", "--", "END { print NR }", "data.txt"], "2"),
    ];
    refuses_and_runs(&fx, "awk", refused, accepted);
}

/// git's closed grammar through the real binary: an option a known subcommand does not have
/// (or a `--no-` form git does not negate, or an abbreviation where git takes only whole
/// names) is refused naming it, with nothing run (no commit made), and everyday calls run.
#[test]
fn git_refuses_unknown_options_of_known_subcommands_and_runs_everyday_calls() {
    let fx = closed_text_tools("closed-git");
    let dir = &fx.work;
    crate::support::git(dir, &["init", "-q", "-b", "main"]);
    crate::support::git(dir, &["config", "user.email", "t@example.com"]);
    crate::support::git(dir, &["config", "user.name", "t"]);
    crate::support::git(dir, &["add", "data.txt"]);
    crate::support::git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join("data.txt"), "b:2\na:1\nc:3\n").expect("data.txt");
    let refused: &[(&[&str], &str)] = &[
        (
            &["git", "status", "--from-the-future"],
            "git status option --from-the-future is not known to the rule",
        ),
        (
            &["git", "commit", "-a", "-m", "unknown", "--from-the-future"],
            "git commit option --from-the-future is not known to the rule",
        ),
        (
            &["git", "commit", "-m", "unknown", "-a", "--no-trailer"],
            "git commit option --no-trailer is not known to the rule",
        ),
        (
            &["git", "log", "--onel"],
            "git log option --onel is not known to the rule",
        ),
        (
            &["git", "log", "--sendmail-cmd=./runner"],
            "git log option --sendmail-cmd is not known to the rule",
        ),
        (
            &["git", "stash", "push", "--from-the-future"],
            "git stash option --from-the-future is not known to the rule",
        ),
        (
            &["git", "diff", "-j", "HEAD"],
            "git diff option -j is not known to the rule",
        ),
    ];
    let accepted: &[(&[&str], &str)] = &[
        (&["git", "status", "--short"], "M data.txt"),
        (&["git", "log", "--oneline", "-n", "5"], "first"),
        (&["git", "diff", "--stat"], "data.txt"),
        (&["git", "branch", "-a"], "main"),
        (&["git", "rev-parse", "--abbrev-ref", "HEAD"], "main"),
        (
            &["git", "commit", "--allow-empty", "-q", "-m", "everyday"],
            "",
        ),
        (&["git", "log", "--format=%s", "-n", "1"], "everyday"),
        (
            &["git", "log", "--stat", "--format=%s", "--reverse"],
            "data.txt",
        ),
    ];
    refuses_and_runs(&fx, "git", refused, accepted);
    // Nothing refused was committed: the commits are the first one and the everyday ones.
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(dir)
        .output()
        .expect("git log");
    let subjects = String::from_utf8_lossy(&log.stdout);
    assert!(!subjects.contains("unknown"), "{subjects}");
    assert!(subjects.contains("first"), "{subjects}");
}

/// wget names the files of `-x` after the URL's path, which it decodes: a percent-escaped
/// `.git` component is refused before wget runs, so no `.git` is written.
#[test]
fn wget_may_not_write_a_percent_escaped_git_path() {
    let fx = closed_text_tools("closed-wget-escape");
    for argv in [
        &[
            "wget",
            "-q",
            "-x",
            "-nH",
            "http://127.0.0.1:9/%2egit/config",
        ][..],
        &[
            "wget",
            "-q",
            "-x",
            "-nH",
            "http://127.0.0.1:9/%2E%67it/hooks/pre-commit",
        ],
    ] {
        for sandbox in sandboxes() {
            let mut extra = sandbox.to_vec();
            extra.push(NO_OPT_IN);
            let server = fx.trusted("wget", &extra);
            let (ok, text) = shell_execute(&server, argv);
            assert!(!ok, "{argv:?}: {text}");
            assert!(
                text.contains("write into a git directory"),
                "{argv:?}: {text}"
            );
            assert!(!fx.work.join(".git").exists(), "{argv:?} wrote .git");
        }
    }
}

/// curl's URL globbing fills `#1` of an output name, and `-O`'s name, with the glob's text:
/// such names are refused before curl runs (no `.git` is written), and a plain download of
/// the same file runs.
#[test]
fn curl_may_not_name_its_output_from_a_url_glob() {
    let fx = closed_text_tools("closed-curl-glob");
    let source = fx.work.join("src");
    std::fs::create_dir_all(source.join("git")).expect("src/git");
    std::fs::write(source.join("git/config"), "[core]\n").expect("config");
    std::fs::write(source.join(".git"), "gitdir: /nowhere\n").expect("src/.git");
    let glob = format!("file://{}/{{git}}/config", path_str(&source));
    let dot = format!("file://{}/.gi{{t}}", path_str(&source));
    let plain = format!("file://{}/git/config", path_str(&source));
    const REASON: &str = "curl output name made from a URL glob";
    let refused: &[(&[&str], &str)] = &[
        (
            &["curl", "-s", &glob, "-o", ".#1/config", "--create-dirs"],
            REASON,
        ),
        (&["curl", "-s", "-O", &dot], REASON),
    ];
    let accepted: &[(&[&str], &str)] = &[(&["curl", "-s", &plain], "[core]")];
    refuses_and_runs(&fx, "curl", refused, accepted);
    assert!(!fx.work.join(".git").exists(), "curl wrote .git");
}

/// A symbolic link to a directory inside a git directory (`hk -> .git/hooks`, as an archive
/// can leave behind) does not let a writer reach a hook: the path is resolved before the
/// program runs, and the hook is never written.
#[test]
fn writers_may_not_reach_a_git_directory_through_a_link() {
    let fx = closed_text_tools("closed-writer-link");
    for dir in [".git/hooks", ".git/objects", ".git/refs"] {
        std::fs::create_dir_all(fx.work.join(dir)).expect("mkdir");
    }
    std::fs::write(fx.work.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::os::unix::fs::symlink(".git/hooks", fx.work.join("hk")).expect("hk");
    std::os::unix::fs::symlink("data.txt", fx.work.join("plain")).expect("plain");
    const REASON: &str = "write into a git directory (hk/pre-commit leads through a symbolic link";
    let refused: &[(&[&str], &str)] = &[
        (&["cp", "runner", "hk/pre-commit"], REASON),
        (&["chmod", "+x", "hk/pre-commit"], REASON),
    ];
    let accepted: &[(&[&str], &str)] = &[(&["cp", "plain", "copy.txt"], "")];
    refuses_and_runs(&fx, "cp,chmod", refused, accepted);
    assert!(
        !fx.work.join(".git/hooks/pre-commit").exists(),
        "the hook was written"
    );
    assert!(fx.work.join("copy.txt").exists(), "cp did not run");
}

/// A linker script names the link's output itself (`OUTPUT(out)`): `-T` and its other
/// spellings, on ld and passed on by a compiler driver, are refused before anything runs,
/// and `out` is never written; ld without a script still runs.
#[test]
fn linker_scripts_are_refused() {
    let fx = closed_text_tools("closed-ld-script");
    std::fs::write(fx.work.join("a.c"), "int x;\n").expect("a.c");
    let built = std::process::Command::new("cc")
        .args(["-c", "a.c", "-o", "a.o"])
        .current_dir(&fx.work)
        .status()
        .expect("cc");
    assert!(built.success(), "cc -c a.c");
    // Unchecked, ld links a.o into `out`, the name the script gives.
    std::fs::write(fx.work.join("s.ld"), "OUTPUT(out)\nINPUT(a.o)\n").expect("s.ld");
    const REASON: &str = "linker script";
    let refused: &[(&[&str], &str)] = &[
        (&["ld", "-T", "s.ld"], REASON),
        (&["ld", "--script=s.ld"], REASON),
        (&["ld", "-dT", "s.ld"], REASON),
        (&["cc", "-nostdlib", "-Wl,-T,s.ld"], REASON),
        (&["cc", "-nostdlib", "-T", "s.ld"], REASON),
    ];
    let accepted: &[(&[&str], &str)] = &[(&["ld", "--version"], "GNU")];
    refuses_and_runs(&fx, "ld,cc", refused, accepted);
    let server = fx.trusted("ld", &[OFF, NO_OPT_IN]);
    let (ok, text) = shell_execute(&server, &["ld", "-r", "-o", "linked.o", "a.o"]);
    assert!(ok && fx.work.join("linked.o").exists(), "ld -r: {text}");
}

/// A decompressor or a download writes a name its arguments give only in part (`gzip -d
/// HEAD.gz` writes `HEAD`): with `objects` and `refs` in the working directory, that `HEAD`
/// would make it a git directory, and it is refused before anything runs, sandbox off.
#[test]
fn a_decompressed_head_beside_git_files_is_refused() {
    let fx = Renamed::new("cw-gunzip", &[]);
    for dir in ["objects", "refs"] {
        std::fs::create_dir_all(fx.work.join(dir)).expect("mkdir");
    }
    let gz = std::process::Command::new("sh")
        .arg("-c")
        .arg("printf 'ref: refs/heads/main\\n' | gzip > HEAD.gz && printf 'x\\n' | gzip > notes.gz")
        .current_dir(&fx.work)
        .status()
        .expect("gzip");
    assert!(gz.success());
    let server = fx.trusted("gzip", &[OFF, NO_OPT_IN]);
    let (ok, text) = shell_execute(&server, &["gzip", "-d", "HEAD.gz"]);
    assert!(
        !ok && text.contains("HEAD would sit next to other git files"),
        "{text}"
    );
    assert!(!fx.work.join("HEAD").exists());
    let (ok, text) = shell_execute(&server, &["gzip", "-d", "notes.gz"]);
    assert!(ok && fx.work.join("notes").exists(), "{text}");
}
