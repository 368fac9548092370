//! Rules for toolchain and crypto programs that load code or run programs named in their
//! arguments: compilers and linkers (`-wrapper`, plugins, `-B`, spec and response files),
//! openssl (engines, providers, configuration files that load them), ssh-keygen (PKCS#11 and
//! FIDO provider libraries), gpg (photo viewers, extension modules, option files and home
//! directories holding them), cpio (rsh commands and remote archives), go (subcommands that run
//! the code they build, `-toolexec`, persistent `go env -w`) and cargo (everything that
//! compiles or runs the workspace, `--config`, `-Z`). Every argument is examined as a possible option, values included: these rules can
//! only refuse more than the program would do, never less.

/// The arguments before a separate `--`.
fn before_double_dash(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// gcc, clang and friends, and the linkers.
pub fn check_cc(args: &[String]) -> Result<(), String> {
    let reject = || Err("compiler plugin or external program option".to_string());
    for arg in args {
        let a = arg.as_str();
        if a.starts_with('@')
            || a.contains("plugin")
            || a.starts_with("-wrapper")
            || (a.starts_with("-B")
                && ![
                    "-Bstatic",
                    "-Bdynamic",
                    "-Bsymbolic",
                    "-Bshareable",
                    "-Bgroup",
                ]
                .iter()
                .any(|k| a.starts_with(k)))
            || a.starts_with("--prefix")
            || a.starts_with("-specs")
            || a.starts_with("--specs")
            || a == "-load"
            || a.starts_with("-fpass-plugin")
            || a.starts_with("--gcc-toolchain")
            || a.starts_with("-ccc-")
            || (a.starts_with("-fuse-ld=") && a.contains('/'))
            || a.starts_with("--ld-path")
        {
            return reject();
        }
    }
    Ok(())
}

/// openssl: `-engine`, `-provider`, `-provider-path` load code, and a configuration file
/// (`-config`, `-conf`) can load engines and providers.
pub fn check_openssl(args: &[String]) -> Result<(), String> {
    for arg in args {
        let name = arg.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        if arg.starts_with('-')
            && [
                "engine",
                "provider",
                "provider-path",
                "config",
                "conf",
                "keyform",
            ]
            .contains(&name)
        {
            return Err("openssl engine, provider or configuration option".to_string());
        }
    }
    Ok(())
}

/// ssh-keygen `-D` (PKCS#11) and `-w` (FIDO provider) load a library.
pub fn check_ssh_keygen(args: &[String]) -> Result<(), String> {
    for arg in args {
        if let Some(cluster) = arg.strip_prefix('-') {
            if cluster.contains(['D', 'w']) {
                return Err("ssh-keygen provider library option".to_string());
            }
        }
    }
    Ok(())
}

/// gpg: viewers and helpers it runs, modules it loads, and option files and home directories
/// (which hold `gpg.conf`) that set them. Long options may be abbreviated.
pub fn check_gpg(args: &[String]) -> Result<(), String> {
    const PROHIBITED: &[&str] = &[
        "photo-viewer",
        "exec-path",
        "load-extension",
        "options",
        "homedir",
        "list-options",
        "verify-options",
        "keyserver-options",
        "agent-program",
        "dirmngr-program",
    ];
    for arg in before_double_dash(args) {
        if let Some(body) = arg.strip_prefix("--") {
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            // Exact options that are prefixes of prohibited ones.
            let exact = ["verify", "keyserver"].contains(&name);
            if !exact && name.len() >= 3 && PROHIBITED.iter().any(|o| o.starts_with(name)) {
                return Err("gpg external program or option file".to_string());
            }
        }
    }
    Ok(())
}

/// cpio: `--rsh-command` and remote archives (`-F host:file`), as for tar.
pub fn check_cpio(args: &[String]) -> Result<(), String> {
    let reject = || Err("cpio remote archive or rsh command".to_string());
    let force_local = args.iter().any(|a| a.starts_with("--force-l"));
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg.starts_with("--r")
            && "--rsh-command".starts_with(arg.split('=').next().unwrap_or(""))
        {
            return reject();
        }
        let value = if let Some(v) = arg.strip_prefix("--file=") {
            Some(v)
        } else if arg == "--file" || arg == "-F" || arg == "-O" || arg == "-I" {
            args.get(i).map(String::as_str)
        } else if arg.starts_with('-') && !arg.starts_with("--") && arg.len() > 2 {
            match arg.find(['F', 'O', 'I']).map(|p| &arg[p + 1..]) {
                Some("") => args.get(i).map(String::as_str),
                other => other,
            }
        } else {
            None
        };
        if let Some(v) = value {
            if !force_local && v.find(':').is_some_and(|c| !v[..c].contains('/')) {
                return reject();
            }
        }
    }
    Ok(())
}

/// go: `run`, `test`, `generate` and `tool` run code; `-toolexec`, `-exec` and `-vettool` run
/// programs; `go env -w` persists flags (`GOFLAGS=-toolexec=...`) for every later command.
pub fn check_go(args: &[String]) -> Result<(), String> {
    let reject = || Err("go command that runs programs".to_string());
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    if matches!(sub, Some("run" | "test" | "generate" | "tool" | "vet")) {
        return reject();
    }
    for arg in args {
        let name = arg.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        if arg.starts_with('-') && ["toolexec", "exec", "vettool", "overlay"].contains(&name) {
            return reject();
        }
        if sub == Some("env") && (arg == "-w" || arg == "-u") {
            return reject();
        }
    }
    Ok(())
}

/// cargo: only subcommands that do not compile the workspace are accepted. Compiling (`build`,
/// `check`, `clippy`, `test`, `doc`, ...) runs the workspace's build scripts and procedural
/// macros, which are code a redirection can write; `run` and `test` run what they build; an
/// unknown name is an alias or a `cargo-<name>` program. `--config` (a runner, a linker or
/// an alias on the command line) and `-Z` flags are refused everywhere.
pub fn check_cargo(args: &[String]) -> Result<(), String> {
    const SAFE: &[&str] = &[
        "new",
        "init",
        "add",
        "remove",
        "rm",
        "update",
        "search",
        "fmt",
        "tree",
        "metadata",
        "fetch",
        "vendor",
        "verify-project",
        "version",
        "help",
        "locate-project",
        "pkgid",
        "owner",
        "login",
        "logout",
        "generate-lockfile",
        "read-manifest",
        "report",
        "clean",
        "uninstall",
        "yank",
        "info",
    ];
    let reject = |what: &str| Err(format!("cargo {what}"));
    let mut sub: Option<&str> = None;
    for arg in args {
        let arg = arg.as_str();
        if arg == "--" {
            break;
        }
        if arg.starts_with("--config") || arg.starts_with("-Z") {
            return reject("configuration or unstable option");
        }
        if sub.is_none() && !arg.starts_with('-') {
            sub = Some(arg);
        }
    }
    match sub {
        Some(s) if !SAFE.contains(&s) => reject(&format!(
            "subcommand {s} (it compiles or runs code from the workspace, or is an alias or a \
             cargo-{s} program; accepted: {})",
            SAFE.join(", ")
        )),
        _ => Ok(()),
    }
}
