//! Which keys of a git configuration make git run a program that the forced environment
//! cannot override (`dangerous`), so that a configuration setting one is refused before
//! git runs (`guard`); and which keys of a nested repository's configuration the person's
//! own git runs when it recurses into it (`runs_for_the_person`). Keys are matched as git matches them: section and name without
//! regard to case, a subsection as written.
//!
//! May import: `base` (nothing else is needed).

/// How every refusal of a repository's configuration begins.
pub const REASON: &str = "git repository configuration runs a program";

/// True when an entry of a submodule's or nested repository's configuration names a
/// program that the person's own git runs when it recurses into that repository from the
/// one above (`git status` runs `core.fsmonitor` there, a recursive checkout its hooks, a
/// recursive fetch its ssh command and credential helper). The server's git has them
/// forced off, the person's git does not; and unlike the top repository's, a nested
/// repository's configuration is not bound read-only by the sandbox.
pub fn runs_for_the_person(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let off = matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "false" | "no" | "off" | "0" | "true" | "yes" | "on" | "1"
    );
    match lower.as_str() {
        // A boolean asks for git's own built-in monitor; anything else is a program.
        "core.fsmonitor" => !off,
        "core.hookspath" | "core.sshcommand" | "core.askpass" | "core.alternaterefscommand" => true,
        "credential.helper" => !value.trim().is_empty(),
        _ => {
            lower.starts_with("credential.")
                && lower.ends_with(".helper")
                && !value.trim().is_empty()
        }
    }
}

/// True when a configuration entry would make git run a program that the environment
/// cannot override.
pub fn dangerous(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let (section, rest) = lower.split_once('.').unwrap_or((&lower, ""));
    let name = rest.rsplit('.').next().unwrap_or("");
    let has_sub = rest.contains('.');
    match section {
        // `diff` runs git inside every submodule a diff shows, under that submodule's own
        // configuration, which is not checked when it is only in commits.
        "diff" if lower == "diff.submodule" => value.trim().eq_ignore_ascii_case("diff"),
        "diff" => lower == "diff.external" || (has_sub && matches!(name, "command" | "textconv")),
        "filter" => has_sub,
        "merge" => has_sub && name == "driver",
        "remote" => has_sub && matches!(name, "uploadpack" | "receivepack" | "vcs"),
        "man" | "browser" | "web" | "difftool" | "mergetool" | "guitool" | "hook" => true,
        "submodule" => {
            (has_sub && name == "update" && value.trim_start().starts_with('!'))
                // `git pull` then hands the submodules to `git submodule update`, a shell
                // script of git's, as `--recurse-submodules` would.
                || (lower == "submodule.recurse"
                    && !matches!(
                        value.trim().to_ascii_lowercase().as_str(),
                        "false" | "no" | "off" | "0"
                    ))
        }
        "trailer" => has_sub && matches!(name, "cmd" | "command"),
        "uploadpack" => name == "packobjectshook",
        "sendemail" | "imap" => true,
        // `git init` copies a template's files, `config` included, into a new repository.
        "init" => name == "templatedir",
        "core" => name == "gitproxy",
        // git 2.42 and later run each value from `gc`, `prune` and `repack --cruft`, and
        // from the automatic gc after a commit or fetch.
        "gc" => name == "recentobjectshook",
        // git-remote-http writes its cookie jar where the configuration says
        // (anywhere without the sandbox, with content the remote chose).
        // A `pkcs11:` certificate or key makes curl's TLS library start p11-kit, which
        // loads every module its configuration names, the user's own included (a
        // module planted in ~/.config/pkcs11 runs a program, even with the sandbox on).
        "http" => {
            (name == "savecookies"
                && !matches!(
                    value.trim().to_ascii_lowercase().as_str(),
                    "false" | "no" | "off" | "0" | ""
                ))
                || (matches!(
                    name,
                    "sslcert"
                        | "sslkey"
                        | "sslcainfo"
                        | "proxysslcert"
                        | "proxysslkey"
                        | "proxysslcainfo"
                ) && value.trim().to_ascii_lowercase().starts_with("pkcs11:"))
        }
        // An alias is a command line git runs when a name it computes (a remote helper's
        // `remote-<helper>`, a merge strategy's `merge-<name>`) has no program: `!program`,
        // or git options (`-c core.pager=...`) that would override the forced settings.
        "alias" => true,
        // `git archive --format=<fmt>` (or `-o x.<fmt>`) pipes through this command.
        "tar" => has_sub && name == "command",
        // `git add -p` pipes the diff through this command.
        "interactive" => name == "difffilter",
        "url" => lower.contains("::") || value.contains("::"),
        // Default merge strategies: git runs `git-merge-<name>` for a name it does not build
        // in (a `/` in it reaches the work tree), and a shell script for `resolve` and
        // `octopus`. Forcing `ort` is not enough: the sequencer (cherry-pick, revert,
        // rebase) keeps the first value it reads, the repository's.
        "pull" => {
            matches!(name, "twohead" | "octopus")
                && !value
                    .split_whitespace()
                    .all(|s| BUILT_IN_STRATEGIES.contains(&s))
        }
        // Options every `git merge` of that branch takes as if written on its command line
        // (`-s <name>`, `-S`), past the argument rules.
        "branch" => has_sub && name == "mergeoptions",
        // `git status` and `commit` run `git submodule summary`, a shell script of git's.
        "status" => {
            name == "submodulesummary"
                && !matches!(
                    value.trim().to_ascii_lowercase().as_str(),
                    "false" | "no" | "off" | "0"
                )
        }
        _ => false,
    }
}

/// The merge strategies git builds in (no program, no script).
const BUILT_IN_STRATEGIES: &[&str] = &["ort", "recursive", "ours", "subtree"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_the_persons_git_runs_in_a_nested_repository() {
        for (k, v, want) in [
            ("core.fsmonitor", "/tmp/payload", true),
            ("core.fsmonitor", "true", false),
            ("core.fsmonitor", "false", false),
            ("core.hooksPath", ".husky", true),
            ("core.sshCommand", "ssh -i k", true),
            ("credential.helper", "store", true),
            ("credential.helper", "", false),
            ("credential.https://x.helper", "!x", true),
            ("core.editor", "vi", false),
            ("user.name", "x", false),
        ] {
            assert_eq!(runs_for_the_person(k, v), want, "{k}={v}");
        }
    }

    #[test]
    fn dangerous_keys() {
        for (k, v, want) in [
            ("diff.external", "/lib64/ld-linux-x86-64.so.2", true),
            ("diff.x.textconv", "cat", true),
            ("diff.x.command", "x", true),
            ("diff.x.funcname", "^f", false),
            ("diff.algorithm", "histogram", false),
            ("filter.lfs.clean", "git-lfs clean", true),
            ("merge.x.driver", "x", true),
            ("merge.conflictstyle", "diff3", false),
            ("remote.origin.uploadpack", "x", true),
            ("remote.origin.url", "https://x/y.git", false),
            ("man.viewer", "x", true),
            ("submodule.s.update", "!x", true),
            ("submodule.s.update", "rebase", false),
            ("core.fsmonitor", "x", false),
            ("core.hookspath", ".husky", false),
            ("url.ext::sh.insteadof", "x:", true),
            ("user.name", "a", false),
            ("trailer.t.cmd", "x", true),
            ("init.templatedir", "t", true),
            ("init.defaultbranch", "main", false),
            ("imap.tunnel", "x", true),
            ("alias.remote-foo", "!/lib64/ld-linux-x86-64.so.2", true),
            ("alias.st", "status", true),
            ("tar.tgz.command", "gzip -cn", true),
            ("tar.umask", "0022", false),
            ("interactive.difffilter", "x", true),
            ("pull.twohead", "x/evil", true),
            ("pull.twohead", "resolve", true),
            ("pull.octopus", "ort octopus", true),
            ("pull.twohead", "ort", false),
            ("pull.octopus", "recursive ours", false),
            ("pull.rebase", "true", false),
            ("branch.main.mergeoptions", "-s resolve", true),
            ("branch.main.merge", "refs/heads/main", false),
            ("submodule.recurse", "true", true),
            ("diff.submodule", "diff", true),
            ("diff.submodule", "log", false),
            ("status.submodulesummary", "true", true),
            ("status.submodulesummary", "5", true),
            ("status.submodulesummary", "0", false),
            ("status.short", "true", false),
            ("submodule.recurse", "", true),
            ("submodule.recurse", "false", false),
            ("submodule.s.recurse", "true", false),
            ("interactive.singlekey", "true", false),
        ] {
            assert_eq!(dangerous(k, v), want, "{k}={v}");
        }
    }
}
