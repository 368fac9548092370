//! Program identity: which rule applies to a program, recognised by any of its names.
//!
//! Design decisions:
//!
//! - Two tables map program names to a [`Policy`]: [`DENIED`], always refused (with
//!   [`DENIED_PREFIXES`] for families such as `python3.12`), and [`CHECKED`], a per-program
//!   argument check (`rules::*`). [`ALIASES`] maps other names of the same program
//!   (`gawk` → `awk`).
//! - A name is normalised before the lookup, trying in turn: the lowercased basename
//!   (`/usr/bin/GAWK` → `gawk`), then the names derived from it by dropping what distributions
//!   and packagers add: a `.flavour` (`vim.basic`, `sh.distrib`, `git.real`), a target triplet
//!   (`perl5.36-x86_64-linux-gnu` → `perl5.36`, `x86_64-linux-gnu-gdb` → `gdb`), a `-flavour`
//!   (`busybox-static`, `gdb-multiarch`) and a trailing version (`python3.12` → `python`,
//!   `lua-5.4` → `lua`). The first derived name that is in the table decides. Every name
//!   starting with `python`, `pypy`, `qemu-`, `ld-linux`, `ld.so`, `ld64.so` or `ld-musl` is
//!   refused outright.
//! - The caller checks the name as written and, separately, the file it resolves to with
//!   symlinks followed (`/usr/bin/editor` → `vim.basic`), see `harden::check_resolved`.
//! - Every program whose job is to run another program named on its command line is refused,
//!   whatever else it does (`logsave`, `ssh-agent`, `dbus-run-session`, the `setarch`
//!   personalities such as `x86_64` and `linux32`, ...), as are shells, interpreters, editors
//!   and pagers with shell escapes, and build tools whose input files are shell recipes.

use super::rules;

/// What happens to a program that is in [`DENIED`] or [`CHECKED`].
#[derive(Clone, Copy)]
pub enum Policy {
    /// Always rejected: the program exists to run other programs or code, or has a trivial
    /// shell escape through its arguments or its stdin.
    Deny,
    /// Rejected when an argument check finds a dangerous form; `Err` holds the reason.
    Args(ArgCheck),
}

/// A per-program argument check: `Err` holds the reason.
pub type ArgCheck = fn(&[String]) -> Result<(), String>;

use super::names::derived_names;
use crate::policy::trusted::words::Words;
use Policy::{Args, Deny};

/// Names that are always refused, grouped by why.
#[rustfmt::skip]
pub(crate) const DENIED: &[Words] = &[
    // Shells.
    Words(
        "sh bash zsh fish csh ksh dash ash tcsh mksh pdksh oksh loksh lksh yash posh rbash elvish
         nu xonsh pwsh powershell osh ysh oils-for-unix sash rc es hush ion murex scsh execlineb
         git-shell scalar tclsh wish expect",
    ),
    // Multi-call binaries whose applets include a shell, awk, sed and find.
    Words("busybox toybox"),
    // Interpreters: they run code given on the command line, on stdin or in a file the caller
    // can write.
    Words(
        "perl cperl raku rakudo perl6 ruby jruby mruby truffleruby irb erb node nodejs deno bun
         tsx ts-node gjs qjs quickjs rhino jjs jrunscript php php-cgi hhvm lua luajit texlua
         luatex lualatex r rscript julia guile racket sbcl clisp ecl ccl csi gsi chez scheme
         petite mit-scheme ocaml ghci runghc runhaskell scala groovy jshell java kotlin kscript
         swift elixir iex erl escript clojure clj bb janet fennel gforth pike octave maxima
         gnuplot m4 gm4 osascript exiftool cscript wscript dotnet mono csharp ipython jupyter
         pydoc dc ed red",
    ),
    // Package runners and build tools: they run code from packages or from recipe files the
    // caller can write (`make`'s recipes are shell commands, `just`'s too, build files of
    // bazel, gradle, maven, sbt... are code).
    Words(concat!(
        "pip pipx npx uvx bunx uv poetry pipenv pdm hatch tox conda mamba micromamba gem bundle
         bundler rake cpan cpanm make bmake cmake ninja meson scons libtool nix nix-shell guix",
        // cargo reads `.cargo/config.toml` from the working directory and its ancestors,
        // which a redirection can write: its aliases turn `cargo fmt` into `cargo run`, and
        // `build.rustc`/`rustc-wrapper` name what `cargo tree` and `cargo metadata` start.
        " cargo",
    )),
    // Wrappers: their job is to run the program named in their arguments.
    Words(
        "env xargs chroot flock gdb gdbserver ionice nice nohup script scriptlive setsid stdbuf
         taskset time timeout timelimit unshare watch sudo sudoedit su doas pkexec run0 runuser
         sg newgrp nsenter chrt numactl cpulimit prlimit setpriv capsh chpst su-exec gosu
         setuidgid envuidgid envdir softlimit setlock pgrphack fghack tcpserver tcpsvd udpsvd
         unbuffer faketime fakeroot fakechroot proot bwrap firejail flatpak flatpak-spawn
         systemd-run systemd-nspawn systemd-cat systemd-inhibit systemd-socket-activate
         machinectl schroot lxc-attach lxc-execute lxc-unshare cgexec schedtool hwloc-bind
         trickle nocache eatmydata strace ltrace ldd memusage xtrace sotruss xe dsh mpirun
         mpiexec srun sbatch salloc qsub bsub pm2 forever honcho foreman overmind please runc
         crun ctr docker podman nerdctl singularity apptainer distrobox toolbox udocker ansible
         ansible-playbook puppet salt-call busctl dbus-send gdbus qdbus sshfs just bazel bazelisk
         buck buck2 ant mvn gradle sbt lein mix rebar3 cabal stack dune latexmk context mtxrun
         arara conjure yt-dlp youtube-dl calc sage gp lldb lldb-server valgrind perf rr uftrace
         bpftrace trace-cmd heaptrack hyperfine daemonize daemon start-stop-daemon run-parts
         parallel sem rush pdsh pssh parallel-ssh clush entr watchexec nodemon reflex screen tmux
         byobu dtach abduco zellij logsave ssh-agent gpg-agent dbus-run-session dbus-launch
         xvfb-run xinit startx run-one run-this-one keep-one-running run-one-constantly
         run-one-until-success run-one-until-failure catchsegv chronic ifne pee mispipe lckdo tsp
         nq rlwrap ccache sccache distcc torsocks torify proxychains proxychains4 tsocks sshpass
         wine wine64 box64 box86 xdg-open run-mailcap see edit compose",
    ),
    // Programs of toolchains and libraries whose job is to run a program or code they are
    // given: gettext's `msgexec`/`msgfilter` (a program per message), gnupg's
    // `gpg-connect-agent` (`/exec`), gprofng's collectors (the profiled program), LLVM's
    // `lli` (IR on stdin), perl's `prove` (test scripts), python's `pdb`, `rpcgen` (runs the C
    // preprocessor it is told), GLib's `gio` (`launch`, `open`).
    Words("msgexec msgfilter gpg-connect-agent gp-collect-app gprofng lli prove pdb rpcgen gio"),
    // setarch and its personality names (`x86_64 CMD` runs CMD).
    Words(
        "setarch linux32 linux64 uname26 i386 i486 i586 i686 x86_64 x86-64 x86 ia64 alpha arm
         armv7l armv8l armh aarch64 arm64 ppc ppc32 ppc64 ppc64le ppcle s390 s390x sparc sparc32
         sparc32bash sparc64 mips mips32 mips64 parisc parisc32 parisc64 loongarch loongarch64
         riscv32 riscv64",
    ),
    // Schedulers run their input as shell commands later; shell builtins that exist as
    // executables on some systems and run their arguments.
    Words("at batch crontab command exec eval builtin source ."),
    // Editors, pagers, viewers, file managers and terminals with shell escapes or `-e CMD`.
    // They read commands from stdin, which the caller sets.
    Words(
        "ex less man more pg sed ssed vi view vim nvim gvim rvim rview gview evim eview vimx
         vimdiff vimtutor nvi elvis nex levee vis nano pico rnano emacs emacsclient joe jmacs
         jpico jstar rjoe zile mg jed ne e3 dte amp ee aee hx helix micro kak kakoune mc mcedit
         mcview mcdiff most lv editor pager sensible-editor sensible-pager sensible-browser
         select-editor x-www-browser www-browser w3m lynx links links2 elinks ranger nnn lf vifm
         ncdu tig lazygit gitui code codium subl gedit kate xterm x-terminal-emulator
         gnome-terminal konsole kitty alacritty urxvt rxvt wezterm foot tilix terminator
         xfce4-terminal lxterminal mate-terminal",
    ),
    // Database shells with `\!`, `.shell`, `HOST` or `system` commands.
    Words("mysql psql sqlite3 sqlite mariadb duckdb sqlplus mongo mongosh"),
    // Remote, network and mail tools that run local commands (`ProxyCommand`, `-e`, `exec:`,
    // `!`, tilde escapes, `${run...}`), and version control systems whose command line sets
    // configuration that runs commands (`hg --config alias.x=!cmd`, `svn --editor-cmd`).
    Words(
        "ssh rsync zip scp sftp ftp lftp ncftp smbclient telnet nc ncat netcat socat autossh mosh
         rsh rlogin rcp rexec dbclient mail mailx s-nail bsd-mailx heirloom-mailx mutt neomutt
         alpine pine aerc sendmail exim exim4 nmap tcpdump hg svn bzr darcs fossil cvs",
    ),
];

/// Programs with argument checks.
const CHECKED: &[(&str, ArgCheck)] = &[
    ("find", rules::find::check),
    ("awk", rules::awk::check),
    ("tar", rules::tar::check),
    ("gtar", rules::tar::check),
    ("bsdtar", rules::tar::check_bsd),
    ("sort", rules::sort::check),
    ("git", super::git::rules::check),
    ("fd", rules::misc::check_fd),
    ("rg", rules::misc::check_rg),
    ("split", rules::misc::check_split),
    ("diff3", rules::misc::check_diff_program),
    ("sdiff", rules::misc::check_sdiff),
    ("wget", rules::misc::check_wget),
    ("cc", rules::cc::check_cc),
    ("gcc", rules::cc::check_cc),
    ("c++", rules::cc::check_cc),
    ("g++", rules::cc::check_cc),
    ("cpp", rules::cc::check_cc),
    ("clang", rules::cc::check_cc),
    ("clang++", rules::cc::check_cc),
    ("clang-cpp", rules::cc::check_cc),
    ("gfortran", rules::cc::check_cc),
    ("tcc", rules::cc::check_cc),
    ("ld", rules::ld::check_ld),
    ("lld", rules::ld::check_ld),
    ("ld.lld", rules::ld::check_ld),
    ("ld.bfd", rules::ld::check_ld),
    ("ld.gold", rules::ld::check_ld),
    ("mold", rules::ld::check_ld),
    ("openssl", rules::openssl::check_openssl),
    ("curl", rules::curl::check),
    ("ssh-keygen", rules::tools::check_ssh_keygen),
    ("gpg", rules::gpg::check_gpg),
    ("gpg2", rules::gpg::check_gpg),
    ("gpgv", rules::gpg::check_gpgv),
    ("cpio", rules::tools::check_cpio),
    ("go", rules::go::check_go),
    ("npm", rules::npm::check_npm),
    ("yarn", rules::npm::check_node_package_manager),
    ("yarnpkg", rules::npm::check_node_package_manager),
    ("pnpm", rules::npm::check_node_package_manager),
    ("systemctl", rules::systemctl::check_systemctl),
    ("pandoc", rules::apps::check_pandoc),
    ("bat", rules::apps::check_bat),
    ("batcat", rules::apps::check_bat),
    ("aria2c", rules::aria2c::check_aria2c),
    ("rclone", rules::apps::check_backup),
    ("restic", rules::apps::check_backup),
    ("borg", rules::apps::check_backup),
    ("convert", rules::apps::check_magick),
    ("magick", rules::apps::check_magick),
    ("mogrify", rules::apps::check_magick),
    ("identify", rules::apps::check_magick),
    ("composite", rules::apps::check_magick),
    ("montage", rules::apps::check_magick),
    ("compare", rules::apps::check_magick),
    ("stream", rules::apps::check_magick),
    ("display", rules::apps::check_magick),
    ("animate", rules::apps::check_magick),
    ("import", rules::apps::check_magick),
    ("gm", rules::apps::check_magick),
    ("tex", rules::tex::check_tex),
    ("etex", rules::tex::check_tex),
    ("pdftex", rules::tex::check_tex),
    ("xetex", rules::tex::check_xetex),
    ("latex", rules::tex::check_tex),
    ("pdflatex", rules::tex::check_tex),
    ("xelatex", rules::tex::check_xetex),
    ("ptex", rules::tex::check_tex),
    ("uptex", rules::tex::check_tex),
    ("platex", rules::tex::check_tex),
    ("uplatex", rules::tex::check_tex),
];

/// Every name with an argument check, for the test that walks the rules' examples.
#[cfg(test)]
pub fn checked_names() -> impl Iterator<Item = &'static str> {
    CHECKED.iter().map(|(name, _)| *name)
}

/// Alternate names, mapped to the name used in the tables.
const ALIASES: &[(&str, &str)] = &[
    ("bfind", "find"),
    ("gfind", "find"),
    ("gawk", "awk"),
    ("mawk", "awk"),
    ("nawk", "awk"),
    ("original-awk", "awk"),
    ("onetrue-awk", "awk"),
    ("bwk-awk", "awk"),
    ("goawk", "awk"),
    ("frawk", "awk"),
    ("gsort", "sort"),
    ("gsed", "sed"),
    ("fdfind", "fd"),
    ("gsplit", "split"),
    ("gdiff3", "diff3"),
    ("gsdiff", "sdiff"),
    ("ripgrep", "rg"),
    ("genv", "env"),
    ("gtimeout", "timeout"),
    ("gnice", "nice"),
    ("gnohup", "nohup"),
    ("gstdbuf", "stdbuf"),
    ("gchroot", "chroot"),
    ("gxargs", "xargs"),
    ("gtime", "time"),
    ("gmake", "make"),
];

/// Refused by prefix: every name starting with one of these.
const DENIED_PREFIXES: &[(&str, &str)] = &[
    ("python", "python"),
    ("pypy", "pypy"),
    ("qemu-", "qemu"),
    ("s6-", "s6"),
];

/// Why a name that [`classify`] denies (as it shows it) is always refused, and what to do
/// instead, for shells and interpreters, whose refusal surprises most.
pub fn why_denied(shown: &str) -> Option<&'static str> {
    if DENIED[2].contains(shown) || DENIED_PREFIXES[..2].iter().any(|(_, s)| *s == shown) {
        Some(
            "an interpreter runs whatever code it is given, inline, on stdin or in a file, \
             which no allowlist can check: call allowlisted programs directly, or run scripts \
             on a shell-mode server",
        )
    } else if DENIED[0].contains(shown) {
        Some(
            "a shell runs any command line, past the allowlist: call allowlisted programs \
             directly (pipes and < > >> are parsed without a shell)",
        )
    } else {
        None
    }
}

/// Names that are always refused, for the startup check of `ALLOW_PATTERNS` (with the usual
/// versioned names of the prefixed ones).
pub fn denied_samples() -> impl Iterator<Item = &'static str> {
    DENIED.iter().flat_map(|g| g.iter()).chain([
        "python",
        "python3",
        "python3.12",
        "python2",
        "pypy",
        "pypy3",
    ])
}

fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, target)| target)
}

fn lookup(name: &str) -> Option<Policy> {
    let name = canonical(name);
    if DENIED.iter().any(|group| group.contains(name)) {
        return Some(Deny);
    }
    CHECKED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| Args(*f))
}

/// Finds the rule for a program (as written or as resolved) and the name to show in a
/// rejection.
pub fn classify(program: &str) -> (String, Option<Policy>) {
    let base = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    for name in derived_names(&base) {
        for (prefix, shown) in DENIED_PREFIXES {
            if name.starts_with(prefix) {
                return (shown.to_string(), Some(Deny));
            }
        }
        if ["ld-linux", "ld.so", "ld64.so", "ld-musl"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            return (base, Some(Deny));
        }
        if let Some(policy) = lookup(&name) {
            return (canonical(&name).to_string(), Some(policy));
        }
    }
    (base, None)
}

/// Multi-call binaries: what they do depends on the name they are run under (`argv[0]`), so
/// the resolved file says nothing beyond the name as written.
pub fn is_multi_call(resolved_base: &str) -> bool {
    matches!(resolved_base, "busybox" | "toybox")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_stripping() {
        let cases: &[(&str, Option<&str>)] = &[
            ("python3.12", Some("python")),
            ("lua-5.4", Some("lua")),
            ("pip3", Some("pip")),
            ("sqlite3", Some("sqlite")),
            ("ls", None),
            ("123", None),
            ("x.", None),
        ];
        for (name, want) in cases {
            assert_eq!(
                crate::policy::trusted::names::strip_version(name),
                *want,
                "{name:?}"
            );
        }
    }

    #[test]
    fn names_are_normalised() {
        let cases: &[(&str, &str)] = &[
            ("perl5.36-x86_64-linux-gnu", "perl"),
            ("/usr/bin/vim.basic", "vim"),
            ("vim.tiny", "vim"),
            ("x86_64-linux-gnu-gdb", "gdb"),
            ("gdb-multiarch", "gdb"),
            ("busybox-static", "busybox"),
            ("busybox.static", "busybox"),
            ("sh.distrib", "sh"),
            ("git.real", "git"),
            ("ksh93", "ksh"),
            ("python3.12", "python"),
            ("qemu-x86_64-static", "qemu"),
            ("x86_64", "x86_64"),
            ("GAWK", "awk"),
            ("tclsh8.6", "tclsh"),
            ("lua5.4", "lua"),
            ("ruby3.1", "ruby"),
            ("php8.2", "php"),
            ("guile-3.0", "guile"),
        ];
        for (name, want) in cases {
            let (shown, policy) = classify(name);
            assert!(policy.is_some(), "{name:?} not recognised");
            assert_eq!(shown, *want, "{name:?}");
        }
        for name in [
            "ls",
            "sha256sum",
            "shellcheck",
            "perltidy",
            "ssh-add",
            "lessecho",
        ] {
            assert!(classify(name).1.is_none(), "{name:?} wrongly recognised");
        }
    }
}
