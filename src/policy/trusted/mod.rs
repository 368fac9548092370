//! Trusted mode: allowlisted programs run as argv, never through a shell.
//!
//! A command reaches a process only after passing, for every pipeline stage and before any
//! stage starts: the structure check of the parser (`tokenize`), the argument hardening
//! (`harden`, applied even to allowlisted names), and the allowlist (`allow`). Programs are
//! then looked up in the safe `PATH` only. Redirection targets are opened by the server,
//! relative to the working directory, one path component at a time without following
//! symlinks (`sys::open_target_beneath`), so the file opened is the file checked.
//!
//! The child environment is `PATH` (the safe path) plus the variables named in
//! `MCP_SHELL_CHILD_ENV_ALLOWLIST`; nothing else of the server's environment reaches it.
//!
//! Program identity is checked twice: on the name as written (`harden::check`), and on the
//! file the name resolves to in the safe `PATH`, with symlinks followed and hard links
//! recognised (`harden::check_resolved`): `editor` is `vim.basic`, `x86_64` is `setarch`.
//!
//! Redirection targets (SPEC sections 5 and 11): relative, no `..`, no symlink on the path;
//! never into a git directory (a `.git` component, or any directory on the way, the working
//! directory and its ancestors included, that holds `HEAD` with `objects`, `refs` or `config`:
//! bare repositories too), never a file that would complete one (a `HEAD`, `config` or
//! `commondir` next to other git files); an existing target must be a regular file with one
//! hard link, judged through an `O_PATH` descriptor before anything opens it for writing (a
//! FIFO or a device is never opened).

pub mod allow;
pub mod getopt;
pub mod git;
pub mod harden;
pub mod identity;
pub mod names;
pub mod rules;
pub mod tokenize;

use std::ffi::OsString;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::base::config::Config;
use crate::base::sys::{self, OpenMode};
use allow::Allowlist;
use tokenize::Pipeline;

/// Whether `name` is a variable through which a child's environment makes a program load or
/// run code, or take options its argv did not give (which the hardening could not check):
/// the dynamic loader's (`LD_*`, and those glibc drops for set-user-id programs),
/// interpreters' start-up and path variables, and programs' option variables.
fn code_loading_variable(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "GCONV_PATH",
        "GETCONF_DIR",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TZDIR",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5DB",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUBYOPT",
        "RUBYLIB",
        "TAR_OPTIONS",
        "GREP_OPTIONS",
        "AWKPATH",
        "AWKLIBPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "PROMPT_COMMAND",
        "XDG_CONFIG_HOME",
        "XDG_CONFIG_DIRS",
        "HOME",
        "CURL_HOME",
        "WGETRC",
        "RSYNC_RSH",
        "RSYNC_CONNECT_PROG",
        "ZIPOPT",
        "UNZIP",
        "UNZIPOPT",
        "MAKEFLAGS",
        "MFLAGS",
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        "JQ_LIBRARY_PATH",
        // Libraries' own configuration that can load modules (red team, round 9): krb5
        // plugins, glibc tunables, LDAP and GnuTLS configuration, p11-kit servers.
        "KRB5_CONFIG",
        "KRB5_KDC_PROFILE",
        "GLIBC_TUNABLES",
        "LDAPCONF",
        "LDAPRC",
        "LDAPNOINIT",
        "GNUTLS_SYSTEM_PRIORITY_FILE",
        "P11_KIT_SERVER_ADDRESS",
        "P11_KIT_MODULE_PATH",
        "SASL_PATH",
        "GIO_MODULE_DIR",
        "GST_PLUGIN_PATH",
        // Round 11: krb5's GSS mechanism file names libraries git-remote-http loads for
        // Negotiate; SASL, OpenSSL and TPM stacks read module names the same way.
        "GSS_MECH_CONFIG",
        "SASL_CONF_PATH",
        "OPENSSL_CONF_INCLUDE",
        "TSS2_FAPICONF",
        "TSS2_TCTI",
        "TPM2TOOLS_TCTI",
        "SEC_TSS_TCTI",
    ];
    name.starts_with("LD_") || NAMES.contains(&name)
}

#[cfg(test)]
mod env_tests {
    use super::code_loading_variable;

    #[test]
    fn loader_and_option_variables_cannot_be_passed() {
        for bad in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "GCONV_PATH",
            "TAR_OPTIONS",
            "KRB5_CONFIG",
            "GLIBC_TUNABLES",
            "GSS_MECH_CONFIG",
        ] {
            assert!(code_loading_variable(bad), "{bad}");
        }
        for good in ["LANG", "LC_ALL", "TERM", "TZ", "NO_COLOR", "LDFLAGS_NOT"] {
            assert!(!code_loading_variable(good), "{good}");
        }
    }
}

/// One stage, ready to spawn.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The program: an absolute path found in the safe `PATH`, or the allowlisted path.
    pub program: String,
    /// `argv[0]` as written by the caller.
    pub arg0: String,
    /// Arguments after `argv[0]`.
    pub args: Vec<String>,
}

/// The trusted-mode policy, built once at startup.
#[derive(Debug)]
pub struct Policy {
    allow: Allowlist,
    path_dirs: Vec<PathBuf>,
    base_env: Vec<(OsString, OsString)>,
    env_allowlist: Vec<String>,
    /// (device, inode, path) of every hardened program found in the safe `PATH`, so that a
    /// hard link under an innocent name is still known for what it is.
    known_inodes: Vec<(u64, u64, String)>,
    /// True when the kernel sandbox confines each call's writes beneath its working
    /// directory; otherwise a file-writing program may write anywhere (`gitlock`).
    writes_confined: bool,
}

impl Policy {
    /// Builds the policy; a bad allowlist value is a startup error.
    pub fn new(config: &Config) -> Result<Policy, String> {
        let allow = Allowlist::new(
            config.allow_commands.as_deref(),
            config.allowed_commands.as_deref(),
            config.allow_patterns.as_deref(),
        )?;
        let path_dirs: Vec<PathBuf> = config
            .safe_path
            .split(':')
            .filter(|d| d.starts_with('/'))
            .map(PathBuf::from)
            .collect();
        if let Some(name) = config
            .child_env_allowlist
            .iter()
            .find(|n| code_loading_variable(n))
        {
            return Err(format!(
                "invalid MCP_SHELL_CHILD_ENV_ALLOWLIST: {name} makes programs load or run code \
                 of the caller's choosing (the dynamic loader's, an interpreter's or a program's \
                 own option variables), which would undo the allowlist and its hardening; \
                 remove it from the list"
            ));
        }
        let mut base_env = vec![(OsString::from("PATH"), OsString::from(&config.safe_path))];
        for name in &config.child_env_allowlist {
            if name == "PATH" || git::guard::is_git_env_name(name) {
                continue;
            }
            if let Some((k, v)) = config.env.iter().find(|(k, _)| k.to_str() == Some(name)) {
                base_env.push((k.clone(), v.clone()));
            }
        }
        let known_inodes = known_inodes(&path_dirs);
        let writes_confined = matches!(
            config.sandbox,
            crate::base::config::SandboxMode::Auto | crate::base::config::SandboxMode::On
        ) && sys::landlock_abi().unwrap_or(0) >= 1;
        Ok(Policy {
            allow,
            path_dirs,
            base_env,
            env_allowlist: config.child_env_allowlist.clone(),
            known_inodes,
            writes_confined,
        })
    }

    /// Checks every stage (hardening, then allowlist) and resolves each program. Nothing
    /// starts unless every stage passes.
    pub fn check(&self, pipeline: &Pipeline) -> Result<Vec<Stage>, String> {
        if self.allow.is_empty() {
            return Err(allow::NOTHING_ALLOWED.to_string());
        }
        for argv in &pipeline.stages {
            harden::check(argv)?;
            let program = argv.first().map(String::as_str).unwrap_or("");
            self.allow
                .check(program)
                .map_err(|e| self.with_allowed(e))?;
        }
        for path in pipeline
            .stdin_path
            .iter()
            .chain(pipeline.stdout.as_ref().map(|r| &r.path))
        {
            check_redirect_path(path)?;
        }
        let stages = pipeline
            .stages
            .iter()
            .map(|argv| self.resolve(argv))
            .collect::<Result<Vec<Stage>, String>>()?;
        for (stage, argv) in stages.iter().zip(&pipeline.stages) {
            self.check_identity(stage, argv)?;
            self.check_git_started(stage, argv)?;
        }
        Ok(stages)
    }

    /// Refuses a git command for which git itself would start a program that is not on the
    /// allowlist (its shell scripts, `man`, `gpg`: `rules::git::programs_started`). With the
    /// kernel sandbox on, the program could not start anyway; with it off, nothing else
    /// would stop it.
    fn check_git_started(&self, stage: &Stage, argv: &[String]) -> Result<(), String> {
        let program = argv.first().map(String::as_str).unwrap_or("");
        let base = program.rsplit('/').next().unwrap_or(program);
        if base != "git" && !base.starts_with("git-") {
            return Ok(());
        }
        // git's programs (`--exec-path`) as installed beside this git: `<prefix>/bin/git`
        // has them in `<prefix>/libexec/git-core` or `<prefix>/lib/git-core`; a
        // `git-<name>` program is one of them.
        let real = std::fs::canonicalize(&stage.program).unwrap_or_default();
        let mut exec_dirs = Vec::new();
        if let Some(dir) = real.parent() {
            if base.starts_with("git-") {
                exec_dirs.push(dir.to_path_buf());
            }
            if let Some(prefix) = dir.parent() {
                exec_dirs.push(prefix.join("libexec/git-core"));
                exec_dirs.push(prefix.join("lib/git-core"));
            }
        }
        for started in git::rules::programs_started(base, &argv[1..], &exec_dirs) {
            if self.allow.check(&started.program).is_err() {
                return Err(format!(
                    "{}git starts a program that is not on the allowlist: {} runs {} (git \
                     starts it itself, so the allowlist must allow it, and the hardening \
                     cannot check what it does); {}",
                    rules::PREFIX,
                    started.what,
                    started.program,
                    started.instead
                ));
            }
        }
        Ok(())
    }

    /// A refusal by the allowlist, with what it allows (the next step for the caller).
    fn with_allowed(&self, refusal: String) -> String {
        if !refusal.starts_with("Command not allowed") {
            return refusal;
        }
        let mut allowed: Vec<String> = self.allow.names().to_vec();
        allowed.extend(self.allow.patterns().map(|p| format!("names matching {p}")));
        format!(
            "{refusal} (allowed: {}; ask the operator to add it to ALLOW_COMMANDS)",
            allowed.join(", ")
        )
    }

    /// Checks a resolved program under the name of the file it is (symlinks followed) and
    /// under the name of any hardened program it is a hard link of.
    fn check_identity(&self, stage: &Stage, argv: &[String]) -> Result<(), String> {
        let real = std::fs::canonicalize(&stage.program).map_err(|e| {
            format!(
                "Cannot resolve program {}: {}",
                stage.program,
                crate::base::config::plain_io(&e)
            )
        })?;
        let real_text = real.display().to_string();
        harden::check_resolved(argv, &real_text)?;
        if let Ok(meta) = std::fs::metadata(&real) {
            use std::os::unix::fs::MetadataExt;
            for (dev, ino, path) in &self.known_inodes {
                if (*dev, *ino) == (meta.dev(), meta.ino()) && *path != real_text {
                    harden::check_resolved(argv, path)?;
                }
            }
        }
        Ok(())
    }

    fn resolve(&self, argv: &[String]) -> Result<Stage, String> {
        let name = argv.first().cloned().unwrap_or_default();
        let args = argv[1..].to_vec();
        if name.contains('/') {
            // Allowed only because exactly this path is on the allowlist.
            return Ok(Stage {
                program: name.clone(),
                arg0: name,
                args,
            });
        }
        for dir in &self.path_dirs {
            let candidate = dir.join(&name);
            if is_executable(&candidate) {
                return Ok(Stage {
                    program: candidate.display().to_string(),
                    arg0: name,
                    args,
                });
            }
        }
        Err(format!(
            "Command not found: {name} (searched the safe PATH {})",
            self.path_text()
        ))
    }

    fn path_text(&self) -> String {
        self.path_dirs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    }

    /// The child environment with a call's overlay; only allowlisted names may be set.
    pub fn env(&self, overlay: &[(String, String)]) -> Result<Vec<(OsString, OsString)>, String> {
        let mut env = self.base_env.clone();
        for (k, v) in overlay {
            if !self.env_allowlist.iter().any(|a| a == k) || k == "PATH" {
                return Err(format!(
                    "environment variable {k} cannot be set in trusted mode: only the names in \
                     MCP_SHELL_CHILD_ENV_ALLOWLIST may be set ({})",
                    if self.env_allowlist.is_empty() {
                        "empty".to_string()
                    } else {
                        self.env_allowlist.join(",")
                    }
                ));
            }
            if git::guard::is_git_env_name(k) {
                return Err(format!(
                    "environment variable {k} cannot be set in trusted mode: yieldshell sets \
                     git's configuration variables itself, so that git never runs a program \
                     named by a repository's files"
                ));
            }
            env.retain(|(ek, _)| ek.to_str() != Some(k));
            env.push((k.into(), v.into()));
        }
        env.extend(git::guard::git_env(
            self.allow.check("ssh").is_ok(),
            self.allow.check("gpg").is_ok(),
        ));
        Ok(env)
    }

    /// The checks that need the working directory, made right before the stages start: every
    /// git directory a git stage will use, and every path a file-writing stage names
    /// (`gitguard`, REDTEAM findings 1 and 2); then the admission that keeps git and
    /// file-writing programs from running at the same time in one tree (`gitlock`). The
    /// ticket must be attached to the record once it is started.
    ///
    /// `stdout` is the call's output redirection: a writer of its target for every other call
    /// (admitted before the target is opened), and refused beside a git stage of this call
    /// that reads a file there.
    pub fn check_git_use(
        &self,
        cwd: &Path,
        stages: &[Stage],
        stdout: Option<&str>,
    ) -> Result<git::lock::Ticket, String> {
        let mut claims = Vec::new();
        let mut git_reads: Vec<PathBuf> = Vec::new();
        let mut git_checked: Vec<(&Stage, Vec<PathBuf>)> = Vec::new();
        for stage in stages {
            let resolved = std::fs::canonicalize(&stage.program)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| stage.program.clone());
            // A multi-call binary acts on the name it is run under.
            let names: Vec<&str> = if git::writers::is_multi_call(&resolved) {
                vec![stage.arg0.as_str()]
            } else {
                vec![stage.arg0.as_str(), resolved.as_str()]
            };
            let program = stage.arg0.clone();
            if names.iter().any(|n| is_git_program(n)) {
                refuse_process_relative(&git::lock::arg_paths(cwd, &stage.args))?;
                let mut roots = git::lock::roots(cwd, &stage.args);
                let reads = git::guard::check_git(cwd, &stage.args)?;
                refuse_process_relative(&reads)?;
                // What git reads below the working directory (its git directories and
                // configuration files; not the work trees that hold the working directory).
                git_reads.extend(reads.iter().filter(|r| !cwd.starts_with(r)).cloned());
                roots.extend(reads);
                git_checked.push((stage, roots.clone()));
                // git that may write files is a writer too (red team, round 8): where it
                // writes, as for any writer (anywhere without the kernel sandbox).
                let dashed = names.iter().find_map(|n| {
                    let base = n.rsplit('/').next().unwrap_or(n);
                    base.strip_prefix("git-")
                });
                let (kind, roots) = if git::rules::only_reads(dashed, &stage.args) {
                    (git::lock::Kind::Git, roots)
                } else if self.writes_confined {
                    (git::lock::Kind::GitWriter, roots)
                } else {
                    (git::lock::Kind::GitWriter, vec![PathBuf::from("/")])
                };
                claims.push(git::lock::Claim {
                    kind,
                    program: git_program_name(&program, dashed, &stage.args),
                    roots,
                });
            } else if names.iter().any(|n| git::writers::is_writer(n)) {
                refuse_process_relative(&git::lock::arg_paths(cwd, &stage.args))?;
                // Without the kernel sandbox, a writer may write anywhere (an archive's
                // absolute member names, any program's computed paths).
                let roots = if self.writes_confined {
                    git::lock::roots(cwd, &stage.args)
                } else {
                    vec![PathBuf::from("/")]
                };
                claims.push(git::lock::Claim {
                    kind: git::lock::Kind::Writer,
                    program,
                    roots,
                });
            }
            for name in &names {
                git::writers::check_writer(cwd, name, &stage.args)?;
            }
        }
        let outside = match stdout {
            Some(path) => {
                let target = cwd.join(path);
                if let Some(read) = git_reads
                    .iter()
                    .find(|r| target.starts_with(r) || r.starts_with(&target))
                {
                    return Err(format!(
                        "{}Redirection target {path} is where git reads its repository \
                         ({}) in the same command: git would read what the redirection \
                         writes; redirect to a file outside the git directory",
                        rules::PREFIX,
                        read.display()
                    ));
                }
                Some(git::lock::Claim {
                    kind: git::lock::Kind::Writer,
                    program: format!("the redirection > {path}"),
                    roots: vec![target],
                })
            }
            None => None,
        };
        let ticket = git::lock::admit_with(claims, outside)?;
        // The check above ran before the admission: a writer that started and ended in
        // between may have changed what git reads. Admitted, no writer can start in these
        // trees until git's record ends, so a second check sees what git will read.
        for (stage, roots) in &git_checked {
            let mut again = git::lock::roots(cwd, &stage.args);
            again.extend(git::guard::check_git(cwd, &stage.args)?);
            if again.iter().any(|r| !roots.contains(r)) {
                return Err(format!(
                    "{}git's repository changed while it was being checked (another call wrote \
                     its configuration); run the command again",
                    rules::PREFIX
                ));
            }
        }
        Ok(ticket)
    }

    /// Opens the redirection targets under `cwd`: (stdin source, stdout target).
    pub fn open_redirects(
        &self,
        cwd: &Path,
        pipeline: &Pipeline,
    ) -> Result<(Option<File>, Option<File>), String> {
        let input = match &pipeline.stdin_path {
            Some(path) => Some(open_contained(cwd, path, OpenMode::Read)?),
            None => None,
        };
        let output = match &pipeline.stdout {
            Some(r) => {
                let mode = if r.append {
                    OpenMode::Append
                } else {
                    OpenMode::Truncate
                };
                Some(open_contained(cwd, &r.path, mode)?)
            }
            None => None,
        };
        Ok((input, output))
    }
}

/// Every file in the safe `PATH` whose name has a hardening rule, by inode.
fn known_inodes(path_dirs: &[PathBuf]) -> Vec<(u64, u64, String)> {
    use std::os::unix::fs::MetadataExt;
    let mut known = Vec::new();
    for dir in path_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if identity::classify(name).1.is_none() {
                continue;
            }
            if let Ok(meta) = std::fs::metadata(entry.path()) {
                if meta.is_file() && meta.nlink() > 1 {
                    known.push((meta.dev(), meta.ino(), entry.path().display().to_string()));
                }
            }
        }
    }
    known
}

/// Refuses a path of a git or file-writing stage that passes through a process's working
/// directory or root in `/proc` (`lock::process_relative`): what the server checks there
/// is not what the stage uses.
fn refuse_process_relative(paths: &[PathBuf]) -> Result<(), String> {
    match paths.iter().find(|p| git::lock::process_relative(p)) {
        Some(path) => Err(format!(
            "{}path through a process's directory in /proc ({}): it names another \
             directory in each process (/proc/self/cwd is the server's working directory \
             when it checks the path, and the command's when the command uses it); name the \
             directory itself",
            rules::PREFIX,
            path.display()
        )),
        None => Ok(()),
    }
}

/// The program of a git stage for a lock refusal: `git` with its subcommand.
fn git_program_name(program: &str, dashed: Option<&str>, args: &[String]) -> String {
    if dashed.is_some() {
        return program.to_string();
    }
    match args.iter().find(|a| !a.starts_with('-')) {
        Some(sub) if args.first() == Some(sub) => format!("{program} {sub}"),
        _ => program.to_string(),
    }
}

/// True for git and its `git-<subcommand>` programs, under any packaging name.
fn is_git_program(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    names::derived_names(&base)
        .iter()
        .any(|n| n == "git" || n.starts_with("git-"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The textual rules for a redirection target: relative, no `..`, not into `.git`.
fn check_redirect_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err(
            "Redirection target is empty: give a file name relative to the working directory"
                .into(),
        );
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(format!(
            "Redirection target must be relative to the working directory, got the absolute path {path}"
        ));
    }
    for c in p.components() {
        match c {
            Component::ParentDir => {
                return Err(format!("Redirection target may not contain '..': {path}"));
            }
            Component::Normal(n) if n == ".git" => {
                // Writing into .git (config, hooks) would make a later allowed `git` run code.
                return Err(format!(
                    "Redirection target may not be inside a .git directory: {path}"
                ));
            }
            _ => (),
        }
    }
    Ok(())
}

fn open_contained(cwd: &Path, path: &str, mode: OpenMode) -> Result<File, String> {
    check_redirect_path(path)?;
    let writing = mode != OpenMode::Read;
    if writing {
        check_git_directories(cwd, path)?;
    }
    let check = |stat: &sys::TargetStat| -> Result<(), String> {
        if stat.kind == "symlink" {
            return Err(format!(
                "Redirection target may not go through a symlink: {path}"
            ));
        }
        if stat.kind != "regular file" {
            return Err(format!(
                "Redirection target must be a regular file: {path} is a {}",
                stat.kind
            ));
        }
        if writing && stat.nlink > 1 {
            return Err(format!(
                "Redirection target has more than one hard link: {path} has {} names, and \
                 writing it would change the file under every one of them; write to a new \
                 file instead",
                stat.nlink
            ));
        }
        Ok(())
    };
    match sys::open_target_beneath(cwd, Path::new(path), mode, &check) {
        Ok(Ok(file)) => Ok(file),
        Ok(Err(verdict)) if verdict.starts_with("Redirection target") => Err(verdict),
        Ok(Err(verdict)) => Err(format!("Cannot open redirection target {path}: {verdict}")),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) if is_symlink_on_path(cwd, path) => {
                format!("Redirection target may not go through a symlink: {path}")
            }
            _ => format!(
                "Cannot open redirection target {path}: {}",
                crate::base::config::plain_io(&e)
            ),
        }),
    }
}

/// The files that make a directory a git directory (with `HEAD`).
const GIT_MARKERS: &[&str] = &[
    "HEAD",
    "config",
    "objects",
    "refs",
    "commondir",
    "packed-refs",
];

/// True when `dir` is a git directory: `HEAD` with `objects`, `refs`, `config` or `commondir`
/// (a bare repository, a `.git` directory under any name, a linked worktree's directory).
fn is_git_directory(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok()
        && ["objects", "refs", "config", "commondir"]
            .iter()
            .any(|m| std::fs::symlink_metadata(dir.join(m)).is_ok())
}

/// Refuses a write into any git directory on the way to the target (the working directory
/// and its ancestors included), and a write that would complete one.
fn check_git_directories(cwd: &Path, path: &str) -> Result<(), String> {
    let target = cwd.join(path);
    let refuse = |dir: &Path| {
        Err(format!(
            "Redirection target may not be inside a git directory: {path} ({} holds HEAD and \
             the repository's files; its config and hooks would make a later git command run \
             code)",
            dir.display()
        ))
    };
    let mut dir = target.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == ".git") || is_git_directory(d) {
            return refuse(d);
        }
        dir = d.parent();
    }
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if let Some(parent) = target.parent() {
        if GIT_MARKERS[..3].contains(&name) || name == "commondir" {
            let others = GIT_MARKERS
                .iter()
                .filter(|m| **m != name)
                .any(|m| std::fs::symlink_metadata(parent.join(m)).is_ok());
            if others {
                return Err(format!(
                    "Redirection target may not be a git directory's file: {path} would sit \
                     next to other git files in {} and could make it a repository whose \
                     config a later git command runs",
                    parent.display()
                ));
            }
        }
    }
    if name == ".gitconfig" || path.contains(".config/git/") {
        return Err(format!(
            "Redirection target may not be a git configuration file: {path}"
        ));
    }
    Ok(())
}

fn is_symlink_on_path(cwd: &Path, path: &str) -> bool {
    let mut p = cwd.to_path_buf();
    for c in Path::new(path).components() {
        p.push(c);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod policy_tests {
    use super::*;

    #[test]
    fn redirect_path_rules() {
        let check = |p: &str, ok: bool| assert_eq!(check_redirect_path(p).is_ok(), ok, "{p}");
        check("out.txt", true);
        check("sub/out.txt", true);
        check("./out.txt", true);
        check("/etc/passwd", false);
        check("../x", false);
        check("a/../../x", false);
        check(".git/config", false);
        check("sub/.git/hooks/pre-commit", false);
        check("", false);
    }

    #[test]
    fn git_directories_are_protected() {
        let root = std::env::temp_dir().join(format!("yieldshell-gitdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["bare/objects", "bare/refs", "half", "plain/sub", "cfg"] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(root.join("bare/config"), "").expect("write");
        std::fs::write(root.join("half/HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(root.join("cfg/config"), "").expect("write");
        let check = |cwd: &str, path: &str, ok: bool| {
            let got = check_git_directories(&root.join(cwd), path);
            assert_eq!(got.is_ok(), ok, "{cwd} {path}: {got:?}");
        };
        check("", "bare/config", false);
        check("", "bare/hooks/pre-commit", false);
        check("", "bare/objects/x", false);
        check("bare", "description", false);
        check("bare/refs", "x", false);
        check("", "half/config", false);
        check("", "half/objects", false);
        check("", "cfg/HEAD", false);
        check("", "cfg/other", true);
        check("", "half/notes.txt", true);
        check("", "plain/sub/config", true);
        check("", "plain/HEAD", true);
        check("", ".gitconfig", false);
        check("", "home/.config/git/config", false);
        check("plain", "out.txt", true);
        let _ = std::fs::remove_dir_all(&root);
    }
}
