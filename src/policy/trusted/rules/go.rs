//! go: subcommands that run the code they build, options that run programs (`-toolexec`,
//! `-exec`, `-vettool`, the external linker), and persistent `go env -w`.

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const GO_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["build", "./..."],
        &["version"],
        &["env", "GOPATH"],
        &["fmt", "./..."],
    ],
    refuse: &[
        &["run", "."],
        &["test", "./..."],
        &["generate"],
        &["build", "-toolexec=sh", "."],
        &["env", "-w", "GOFLAGS=-toolexec=sh"],
        &["vet", "./..."],
        &["build", "-ldflags=-linkmode=external -extld=./x", "."],
        &["build", "-compiler=gccgo", "-gccgoflags=-wrapper=x", "."],
    ],
};

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
        // The external linker and its flags (`-ldflags=-extld=PROG`, `-extldflags`), and
        // gccgo with its flags, name programs the build runs.
        if arg.contains("extld")
            || (arg.starts_with('-') && ["compiler", "gccgoflags"].contains(&name))
        {
            return reject();
        }
        if sub == Some("env") && (arg == "-w" || arg == "-u") {
            return reject();
        }
    }
    Ok(())
}
