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
//! Redirection targets: relative, no `..`, no symlink on the path;
//! never into a git directory (a `.git` component, or any directory on the way, the working
//! directory and its ancestors included, that holds `HEAD` with `objects`, `refs` or `config`:
//! bare repositories too), never a file that would complete one (a `HEAD`, `config` or
//! `commondir` next to other git files); an existing target must be a regular file with one
//! hard link, judged through an `O_PATH` descriptor before anything opens it for writing (a
//! FIFO or a device is never opened).

pub mod allow;
pub mod envvars;
pub mod getopt;
pub mod git;
pub mod harden;
pub mod helpers;
pub mod identity;
pub mod names;
pub mod redirects;
pub mod refusal;
pub mod reviewed;
pub mod rules;
pub mod tokenize;
pub mod words;

#[cfg(test)]
mod word_tables;

use std::ffi::OsString;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::base::config::Config;
use crate::base::sys::{self, OpenMode};
use allow::Allowlist;
use redirects::{check_git_directories, check_redirect_path, open_contained};
use refusal::Rule;
pub use refusal::{Refusal, Rule as RefusalRule};
use reviewed::Review;
use tokenize::Pipeline;

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
    /// directory; otherwise a file-writing program may write anywhere (`git::lock`).
    writes_confined: bool,
    /// Allowlisted programs the operator accepts without argument rules, as written.
    unreviewed: Vec<String>,
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
            .split(sys::PATH_LIST_SEPARATOR)
            .filter(|d| Path::new(d).is_absolute())
            .map(PathBuf::from)
            .collect();
        if let Some((name, why)) = config
            .child_env_allowlist
            .iter()
            .find_map(|n| envvars::refused(n).map(|why| (n, why)))
        {
            return Err(format!(
                "invalid MCP_SHELL_CHILD_ENV_ALLOWLIST: {name} makes programs load or run code \
                 of the caller's choosing, or read options or a configuration that name \
                 programs ({why}), which would undo the allowlist and its hardening; remove it \
                 from the list"
            ));
        }
        let mut base_env = vec![(OsString::from("PATH"), OsString::from(&config.safe_path))];
        for name in sys::LAUNCH_ENV {
            if let Some((k, v)) = config.env.iter().find(|(k, _)| k.to_str() == Some(name)) {
                base_env.push((k.clone(), v.clone()));
            }
        }
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
            unreviewed: config.unreviewed_commands.clone(),
        })
    }

    /// Checks every stage and resolves each program. Nothing starts unless every stage
    /// passes. A refusal nobody may overrule wins over one a person may approve: the
    /// allowlist, the helpers a program starts itself (`helpers`), control characters,
    /// redirections, the program's resolution and git's checks are final wherever they
    /// fail; the argument hardening (on the name as written and on the file it resolves
    /// to) and the review (`reviewed`: a program without rules runs only when the operator
    /// accepted it) are approvable. With the kernel sandbox on, tar's compressor becomes a
    /// stage of its own, and `pipeline` is changed to say so.
    pub fn check(&self, pipeline: &mut Pipeline) -> Result<Vec<Stage>, Refusal> {
        match self.check_approvable(pipeline, false)? {
            (_, Some(held)) => Err(held),
            (stages, None) => Ok(stages),
        }
    }

    /// `check`, with the first approvable refusal ([`Rule::approvable`]) held back until
    /// every other rule passed: `Err` is a final refusal; `Ok` with a refusal is the first
    /// approvable one, which `waived` (the person approved this call) skips.
    pub fn check_approvable(
        &self,
        pipeline: &mut Pipeline,
        waived: bool,
    ) -> Result<(Vec<Stage>, Option<Refusal>), Refusal> {
        if self.allow.is_empty() {
            return Err(Refusal::new(Rule::NotAllowed, allow::NOTHING_ALLOWED));
        }
        let mut held: Option<Refusal> = None;
        let mut hold = |refusal: Result<(), Refusal>| {
            if let Err(r) = refusal {
                if !waived && held.is_none() {
                    held = Some(r);
                }
            }
        };
        for _ in 0..2 {
            for argv in &pipeline.stages {
                let program = argv.first().map(String::as_str).unwrap_or("");
                let hardening = harden::check(argv);
                if let Err(refusal) = self.allow.check(program) {
                    // Final either way. When the hardening refuses the stage too, its words
                    // come first, as MCP Shell Server (whose default policy precedes its
                    // allowlist) says them: `Command rejected by default security policy: sh`.
                    return Err(Refusal::new(
                        Rule::NotAllowed,
                        match hardening {
                            Err(why) => why,
                            Ok(()) => self.with_allowed(refusal),
                        },
                    ));
                }
                if let Some(why) = harden::malformed(argv) {
                    return Err(Refusal::launch(why));
                }
                hold(hardening.map_err(Refusal::arguments));
            }
            // Checked as written first, then as changed (a stage added for a helper).
            let before = pipeline.stages.len();
            self.split_helpers(pipeline)
                .map_err(|e| Refusal::new(Rule::NotAllowed, e))?;
            if pipeline.stages.len() == before {
                break;
            }
        }
        for path in pipeline
            .stdin_path
            .iter()
            .chain(pipeline.stdout.as_ref().map(|r| &r.path))
        {
            check_redirect_path(path).map_err(Refusal::launch)?;
        }
        // A program that cannot be found is never asked about; when an argument rule
        // refuses it too, the refusal is final in the rule's words.
        let stages = match pipeline
            .stages
            .iter()
            .map(|argv| self.resolve(argv))
            .collect::<Result<Vec<Stage>, String>>()
        {
            Ok(stages) => stages,
            Err(e) => return Err(Refusal::launch(held.map_or(e, |h| h.text))),
        };
        for (stage, argv) in stages.iter().zip(&pipeline.stages) {
            self.check_git_started(stage, argv)
                .map_err(|e| Refusal::new(Rule::NotAllowed, e))?;
        }
        for (stage, argv) in stages.iter().zip(&pipeline.stages) {
            let (real, identity) = self.check_identity(stage, argv).map_err(Refusal::launch)?;
            hold(identity.map_err(Refusal::arguments));
            hold(self.check_reviewed(&real, argv));
        }
        Ok((stages, held))
    }

    /// Refuses a stage whose program has no argument rules and is not one of the inert
    /// programs, under the name as written or the file it resolves to, unless the operator
    /// accepted the name as written (`YIELDSHELL_UNREVIEWED_COMMANDS`).
    /// `real` is the file the stage's program resolves to (`check_identity`).
    fn check_reviewed(&self, real: &Path, argv: &[String]) -> Result<(), Refusal> {
        let written = argv.first().map(String::as_str).unwrap_or("");
        if self.unreviewed.iter().any(|u| u == written) {
            return Ok(());
        }
        let refuse = |resolved: Option<&str>| {
            Err(Refusal::new(
                Rule::Unreviewed(written.to_string()),
                reviewed::unreviewed_text(written, resolved),
            ))
        };
        if reviewed::review(written) == Review::Unreviewed {
            return refuse(None);
        }
        let real = real.display().to_string();
        let real_base = real.rsplit('/').next().unwrap_or(&real);
        if !identity::is_multi_call(real_base) && reviewed::review(&real) == Review::Unreviewed {
            return refuse(Some(&real));
        }
        Ok(())
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

    /// A refusal by the allowlist, with what it allows (the next step for the caller) when
    /// the program is one it does not name.
    fn with_allowed(&self, refusal: allow::NotAllowed) -> String {
        if !matches!(refusal, allow::NotAllowed::NotListed(_)) {
            return refusal.to_string();
        }
        let mut allowed: Vec<String> = self.allow.names().to_vec();
        allowed.extend(self.allow.patterns().map(|p| format!("names matching {p}")));
        format!(
            "{refusal} (allowed: {}; ask the operator to add it to ALLOW_COMMANDS)",
            allowed.join(", ")
        )
    }

    /// Checks a resolved program under the name of the file it is (symlinks followed) and
    /// under the name of any hardened program it is a hard link of. The outer `Err` is a
    /// program that cannot be resolved; otherwise the file it resolves to, and an argument
    /// rule's refusal or not.
    fn check_identity(
        &self,
        stage: &Stage,
        argv: &[String],
    ) -> Result<(PathBuf, Result<(), String>), String> {
        let real = std::fs::canonicalize(&stage.program).map_err(|e| {
            format!(
                "Cannot resolve program {}: {}",
                stage.program,
                crate::base::config::plain_io(&e)
            )
        })?;
        let real_text = real.display().to_string();
        // A program the system refuses to run directly (a batch file, which cmd.exe would
        // parse) is final.
        if let Some(refusal) = sys::refuse_program(&real) {
            return Err(format!("{}{refusal}", rules::PREFIX));
        }
        let verdict = (|| {
            harden::check_resolved(argv, &real_text)?;
            if let Ok(meta) = std::fs::metadata(&real) {
                use crate::base::sys::ext::MetadataExt;
                for (dev, ino, path) in &self.known_inodes {
                    if (*dev, *ino) == (meta.dev(), meta.ino()) && *path != real_text {
                        harden::check_resolved(argv, path)?;
                    }
                }
            }
            Ok(())
        })();
        Ok((real, verdict))
    }

    fn resolve(&self, argv: &[String]) -> Result<Stage, String> {
        let name = argv.first().cloned().unwrap_or_default();
        let args = argv[1..].to_vec();
        if name.contains(std::path::is_separator) {
            // Allowed only because exactly this path is on the allowlist.
            return Ok(Stage {
                program: name.clone(),
                arg0: name,
                args,
            });
        }
        for dir in &self.path_dirs {
            let found = sys::program_candidates(dir, &name)
                .into_iter()
                .find(|c| is_executable(c));
            if let Some(candidate) = found {
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
            .join(&sys::PATH_LIST_SEPARATOR.to_string())
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
            // The temporary directory is the server's (the call's own one with the sandbox
            // on): a name a call chose reaches the makefile gcc's lto-wrapper writes there,
            // which make reads as makefile syntax.
            if sys::TEMP_DIR_VARS.contains(&k.as_str()) {
                return Err(format!(
                    "environment variable {k} cannot be set by a call in trusted mode: the \
                     temporary directory is the server's (make reads its name as makefile \
                     syntax when gcc's link-time optimisation runs)"
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
    /// (`git::guard`); then the admission that keeps git and
    /// file-writing programs from running at the same time in one tree (`git::lock`). The
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
                // git that may write files is a writer too: where it
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

    /// Opens the redirection targets under `cwd`: (stdin source, stdout target). With
    /// `Redirects::Judge` nothing is opened or made: the targets are judged as an open would
    /// judge them, and `None` stands for each.
    pub fn open_redirects(
        &self,
        cwd: &Path,
        pipeline: &Pipeline,
        how: Redirects,
    ) -> Result<(Option<File>, Option<File>), String> {
        let input = match &pipeline.stdin_path {
            Some(path) => open_contained(cwd, path, OpenMode::Read, how)?,
            None => None,
        };
        let output = match &pipeline.stdout {
            Some(r) => {
                let mode = if r.append {
                    OpenMode::Append
                } else {
                    OpenMode::Truncate
                };
                open_contained(cwd, &r.path, mode, how)?
            }
            None => None,
        };
        Ok((input, output))
    }

    /// Prepares a trusted launch in `cwd`, for `exec`, `shell_execute` and `yieldshell
    /// check` alike, so that `check` decides what a call decides: every stage checked and
    /// resolved (`check`), the child environment with the call's `overlay` (`env`), git's
    /// directories and the admission beside writers (`check_git_use`), and the
    /// redirections, opened (`Redirects::Open`) or judged without being opened
    /// (`Redirects::Judge`).
    ///
    /// An approvable refusal ([`Rule::approvable`]) comes last, after every final check,
    /// the redirections' judged without being opened (an open creates or truncates);
    /// `waived` (the person approved this call) skips it.
    pub fn prepare(
        &self,
        pipeline: &mut Pipeline,
        cwd: &Path,
        overlay: &[(String, String)],
        how: Redirects,
        waived: bool,
    ) -> Result<Prepared, Refusal> {
        let (stages, held) = self.check_approvable(pipeline, waived)?;
        let env = self.env(overlay).map_err(Refusal::launch)?;
        let git_ticket = self
            .check_git_use(
                cwd,
                &stages,
                pipeline.stdout.as_ref().map(|r| r.path.as_str()),
            )
            .map_err(Refusal::launch)?;
        if let Some(held) = held {
            self.open_redirects(cwd, pipeline, Redirects::Judge)
                .map_err(Refusal::launch)?;
            return Err(held);
        }
        let (stdin, stdout) = self
            .open_redirects(cwd, pipeline, how)
            .map_err(Refusal::launch)?;
        Ok(Prepared {
            stages,
            env,
            git_ticket,
            stdin,
            stdout,
        })
    }
}

/// Whether [`Policy::prepare`] opens the redirection targets or only judges them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// Open them (a call).
    Open,
    /// Judge them as an open would, opening and making nothing (`yieldshell check`).
    Judge,
}

/// A trusted launch as [`Policy::prepare`] made it.
#[derive(Debug)]
pub struct Prepared {
    /// The stages, checked and resolved.
    pub stages: Vec<Stage>,
    /// The child environment.
    pub env: Vec<(OsString, OsString)>,
    /// git's admission beside writers, held until the call's record ends.
    pub git_ticket: git::lock::Ticket,
    /// The `<` source, when there is one (never with `Redirects::Judge`).
    pub stdin: Option<File>,
    /// The `>`/`>>` target, when there is one (never with `Redirects::Judge`).
    pub stdout: Option<File>,
}

/// Every file in the safe `PATH` whose name has a hardening rule, by inode.
fn known_inodes(path_dirs: &[PathBuf]) -> Vec<(u64, u64, String)> {
    use crate::base::sys::ext::MetadataExt;
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
pub fn is_git_program(program: &str) -> bool {
    names::names_of(program)
        .iter()
        .any(|n| n == "git" || n.starts_with("git-"))
}

fn is_executable(path: &Path) -> bool {
    use crate::base::sys::ext::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
