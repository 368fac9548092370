//! The variables `MCP_SHELL_CHILD_ENV_ALLOWLIST` may not name: those through which a child's
//! environment makes a program load or run code, or read options or a configuration that
//! names programs, which the argument rules never see.
//!
//! They are refused by family, not by the names found so far: a family is a prefix, a suffix
//! or an exact name, each with the reason it is there. Names are compared in upper case
//! (`npm_config_*` is npm's as much as `NPM_CONFIG_*`). git's variables are not here: they
//! are never passed, whatever the list says (`git::guard`).

/// The families, one a line: the pattern (`NAME*` a prefix, `*NAME` a suffix, else the exact
/// name), then why it is refused. The table is one string (see `words`); each of its parts
/// starts on a line of its own.
const FAMILIES: &str = concat!(
    // The dynamic loader (glibc's and macOS's), and what glibc reads for the programs it
    // starts: libraries preloaded or searched, audit modules, conversion modules, tunables.
    "
    LD_* the dynamic loader's
    DYLD_* the dynamic loader's
    GLIBC_* glibc's tunables
    MALLOC_* glibc's allocator
    GCONV_PATH glibc loads conversion modules from it
    GETCONF_DIR getconf executes a program from it
    LOCPATH glibc reads locales from it
    NLSPATH message catalogues
    HOSTALIASES the resolver's
    LOCALDOMAIN the resolver's
    RES_OPTIONS the resolver's
    RESOLV_HOST_CONF the resolver's
    NIS_PATH the resolver's
    TZDIR time zone files",
    // Interpreters' and runtimes' start-up code, module paths and options.
    "
    PYTHON* Python's start-up code and module paths
    PERL* Perl's options and module paths
    RUBY* Ruby's options and module paths
    NODE_* Node's options and module paths
    LUA_* Lua's start-up code and module paths
    PHP* PHP's configuration
    JAVA* the JVM's options and home (agents, class paths)
    _JAVA* the JVM's options (agents)
    JDK_* the JDK launchers' options (agents)
    CLASSPATH the JVM's class path
    BASH_* bash's start-up file and functions
    ENV a shell's start-up file
    SHELLOPTS a shell's options
    BASHOPTS a shell's options
    PS4 a shell's trace prompt runs substitutions
    PROMPT_COMMAND a shell runs it
    SHELL programs that run a shell run this one
    IFS a shell's word splitting",
    // Programs' own option and flag variables: options the argv did not give.
    "
    *_OPTIONS a program's options (TAR_OPTIONS, GREP_OPTIONS, JAVA_TOOL_OPTIONS)
    *_OPTS a program's options
    *OPT a program's options (ZIPOPT, UNZIPOPT)
    *FLAGS a program's or a build's flags (MAKEFLAGS, GOFLAGS, RUSTFLAGS, CFLAGS)
    UNZIP unzip's options
    ZIP zip's options
    GZIP gzip's options
    XZ_DEFAULTS xz's options
    ZSTD_CLEVEL zstd's options",
    // Module and plugin paths of libraries and toolkits (GIO, GTK, GDK, GStreamer, GL,
    // Vulkan, Qt, SASL, PKCS#11, ImageMagick, OpenSSL, Kerberos, TPM).
    "
    GIO_* GIO loads modules from it
    GTK_* GTK loads modules from it
    GDK_* GDK loads pixbuf loaders from it
    GST_* GStreamer loads plugins from it
    LIBGL_* Mesa loads drivers from it
    __GLX_* GLVND loads vendor libraries from it
    __EGL_* GLVND loads vendor libraries from it
    VK_* Vulkan loads layers and drivers from it
    QT_* Qt loads plugins from it
    SASL_* SASL loads mechanisms from it
    P11_KIT_* p11-kit loads modules from it
    MAGICK_* ImageMagick's delegates and coders run programs and load modules
    OPENSSL_* OpenSSL loads engines, providers and configurations from it
    KRB5* Kerberos loads plugins named in its configuration
    GSS_MECH_CONFIG GSS-API loads mechanisms named in it
    LDAP* OpenLDAP's configuration
    GNUTLS_* GnuTLS's configuration
    TSS2_* the TPM stack loads modules named in it
    TPM2TOOLS_* the TPM stack loads modules named in it
    SEC_TSS_TCTI the TPM stack loads modules named in it
    JQ_LIBRARY_PATH jq's modules
    RIPGREP_CONFIG_PATH ripgrep's options (--pre runs a program)
    BAT_* bat's configuration and pager
    RCLONE_* rclone's options (password commands, backend programs)
    RESTIC_* restic's options (RESTIC_PASSWORD_COMMAND)
    BORG_* borg's options (BORG_RSH, BORG_PASSCOMMAND)
    AWKPATH awk's program files
    AWKLIBPATH gawk loads extensions from it
    TEXMF* TeX's configuration enables shell escape",
    // kpathsea reads any variable of texmf.cnf from the environment too (as written, or
    // upper-cased here): shell escape, its commands, where TeX may write, formats.
    "
    SHELL_ESCAPE* TeX's shell escape and the commands it may run
    OPENOUT_ANY where TeX may write
    OPENIN_ANY what TeX may read
    MKTEX* TeX's font and format generation runs programs
    TEXFORMATS* TeX's format files
    KPATHSEA* TeX's path search
    PKG_CONFIG* pkg-config's program and files (PKG_CONFIG names the program go runs)
    COMPILER_PATH gcc runs its programs from it
    GCC_* gcc's program prefixes and roots (GCC_EXEC_PREFIX, GCC_ROOT), and GCC_COMPARE_DEBUG, \
     read as -fcompare-debug= (more driver options)
    BINUTILS_ROOT gcc reads its specs and programs beneath it
    GOROOT* go runs its compiler and linker from it
    COLLECT_* gcc's collect2 and lto-wrapper read their options and programs here
    LIBRARY_PATH the linker's search path
    MAKE* make's program, extra makefiles and flags (gcc's lto-wrapper runs make)
    DEPENDENCIES_OUTPUT gcc writes a dependency file where it says
    SUNPRO_DEPENDENCIES gcc writes a dependency file where it says",
    // Variables that name a program to run.
    "
    *EDITOR names an editor to run (EDITOR, VISUAL's kin, SYSTEMD_EDITOR)
    VISUAL names an editor to run
    *PAGER names a pager to run (PAGER, MANPAGER, PSQL_PAGER)
    BROWSER names a browser to run
    *ASKPASS names a password prompt to run (SSH_ASKPASS, SUDO_ASKPASS)
    SSH_ASKPASS* names a password prompt to run
    SSH_SK_PROVIDER ssh loads a security key library from it
    SSH_SK_HELPER ssh-keygen runs its security key helper from it
    LESS* less runs LESSOPEN and LESSCLOSE
    MANOPT* man's options
    RSYNC_RSH names a remote shell to run
    RSYNC_CONNECT_PROG names a program to run
    CVS_RSH names a remote shell to run
    CC names a compiler that builds run
    CXX names a compiler that builds run
    CPP names a preprocessor that tools run
    LD names a linker that builds run
    AR names an archiver that builds run
    RUSTC names the compiler cargo runs
    RUSTDOC names the program cargo runs
    RUSTFMT names the program cargo fmt runs
    RUSTC_* names a compiler wrapper cargo runs
    RUSTUP_* selects the toolchain that runs
    CARGO* cargo's configuration: runners, linkers, wrappers
    GOTOOLCHAIN go downloads and runs the toolchain it names
    GOENV go's configuration file (GOFLAGS with -toolexec)
    CGO_* cgo's compilers and flags, and the #cgo flags it lets source files pass \
     (CGO_CFLAGS_ALLOW admits -fplugin)
    NPM_CONFIG_* npm's configuration: scripts, shells, node options
    NPM_CONFIG npm's configuration
    YARN_* yarn's configuration
    PNPM_* pnpm's configuration
    NPMRC npm's configuration",
    // Configurations that name programs (credential helpers, exec plugins, agents), and the
    // home and configuration directories that hold them.
    "
    HOME programs read their configuration (and plugins) from it
    XDG_CONFIG* programs read their configuration from it
    XDG_DATA* desktop files name programs to run
    CURL_HOME curl's configuration
    *WGETRC wget's configuration (WGETRC, SYSTEM_WGETRC: use_askpass runs a program)
    DBUS_* a D-Bus address may be unixexec:, which runs a program
    SYSTEMD_* systemctl's pager, editor and bus settings
    TAPE tar's default archive: host:file runs a remote shell
    RSH names a remote shell to run
    OPENSC* OpenSC loads card drivers named in its configuration
    INPUTRC readline's configuration
    GNUPGHOME gpg's configuration names programs and modules
    KUBECONFIG kubectl's configuration names exec credential plugins
    DOCKER_* docker's configuration names credential helpers
    AWS_CONFIG_FILE AWS configuration names credential processes
    AWS_SHARED_CREDENTIALS_FILE AWS configuration names credential processes
    CLOUDSDK_CONFIG gcloud's configuration
    AZURE_CONFIG_DIR az's configuration
    HELM_* helm's plugins and configuration",
);

/// Why `name` may not be passed to children, when it may not.
pub fn refused(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("GIT_") {
        return None;
    }
    families()
        .find(|(pattern, _)| matches(pattern, &upper))
        .map(|(_, why)| why)
}

/// The families in order: each line's pattern and reason.
fn families() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAMILIES
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .filter_map(|line| line.split_once(' '))
}

/// Whether the upper-cased name `upper` is in the family `pattern`.
fn matches(pattern: &str, upper: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        upper.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        upper.ends_with(suffix)
    } else {
        upper == pattern
    }
}

/// The table's first fault, if any: a line without a reason, a pattern with a character a
/// variable's upper-cased name does not have or a `*` inside, or a pattern written twice.
#[cfg(test)]
pub fn fault() -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    for line in FAMILIES.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((pattern, why)) = line.split_once(' ') else {
            return Some(format!("{line:?} has no reason"));
        };
        let bare = pattern.strip_suffix('*').unwrap_or(pattern);
        let bare = bare.strip_prefix('*').unwrap_or(bare);
        let plain = bare
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if bare.is_empty() || !plain || why.trim().is_empty() || pattern.matches('*').count() > 1 {
            return Some(format!("malformed family {line:?}"));
        }
        if !seen.insert(pattern) {
            return Some(format!("{pattern:?} is written twice"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{fault, refused};

    #[test]
    fn the_table_is_well_formed() {
        assert_eq!(fault(), None);
    }

    #[test]
    fn families_are_refused_and_ordinary_names_are_not() {
        for bad in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "GCONV_PATH",
            "TAR_OPTIONS",
            "KRB5_CONFIG",
            "GLIBC_TUNABLES",
            "GSS_MECH_CONFIG",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "JAVA_OPTS",
            "PYTHONSTARTUP",
            "PYTHONWARNINGS",
            "PERL5OPT",
            "RUBYOPT",
            "NODE_OPTIONS",
            "BASH_ENV",
            "BASH_FUNC_ls%%",
            "ENV",
            "GIO_EXTRA_MODULES",
            "GTK_MODULES",
            "GDK_PIXBUF_MODULE_FILE",
            "SSH_SK_PROVIDER",
            "KUBECONFIG",
            "GOFLAGS",
            "CGO_CFLAGS_ALLOW",
            "GCC_COMPARE_DEBUG",
            "COLLECT_LTO_WRAPPER",
            "MAKE",
            "MAKEFILES",
            "MAKELEVEL",
            "DEPENDENCIES_OUTPUT",
            "SSH_SK_HELPER",
            "CGO_LDFLAGS_ALLOW",
            "RUSTFMT",
            "NPM_CONFIG_SCRIPT_SHELL",
            "npm_config_script_shell",
            "GNUPGHOME",
            "AWS_CONFIG_FILE",
            "MANPAGER",
            "SSH_ASKPASS",
            "OPENSSL_MODULES",
            "MAGICK_CONFIGURE_PATH",
            "VK_LAYER_PATH",
            "HOME",
            "CC",
            "CARGO_HOME",
            "RIPGREP_CONFIG_PATH",
            "RESTIC_PASSWORD_COMMAND",
            "BORG_RSH",
            "BAT_CONFIG_PATH",
            "SYSTEM_WGETRC",
            "DBUS_SESSION_BUS_ADDRESS",
            "DBUS_SYSTEM_BUS_ADDRESS",
            "DBUS_STARTER_ADDRESS",
            "BINUTILS_ROOT",
            "GCC_ROOT",
            "GOROOT",
            "PKG_CONFIG",
            "OPENSC_CONF",
            "shell_escape",
            "shell_escape_commands",
            "openout_any",
            "TEXFORMATS",
            "MKTEXFMT",
            "TAPE",
            "SYSTEMD_PAGERSECURE",
        ] {
            assert!(refused(bad).is_some(), "{bad}");
        }
        for good in [
            "LANG",
            "LC_ALL",
            "MY_TOOL_HOME",
            "TERM",
            "TZ",
            "NO_COLOR",
            "LDFLAGS_NOT",
            "GIT_AUTHOR_NAME",
            "CI",
            "USER",
            "COLUMNS",
        ] {
            assert!(refused(good).is_none(), "{good}: {:?}", refused(good));
        }
    }
}
