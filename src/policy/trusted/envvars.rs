//! The variables `MCP_SHELL_CHILD_ENV_ALLOWLIST` may not name: those through which a child's
//! environment makes a program load or run code, or read options or a configuration that
//! names programs, which the argument rules never see.
//!
//! They are refused by family, not by the names found so far: a family is a prefix, a suffix
//! or an exact name, each with the reason it is there. Names are compared in upper case
//! (`npm_config_*` is npm's as much as `NPM_CONFIG_*`). git's variables are not here: they
//! are never passed, whatever the list says (`git::guard`).

/// How a family matches a name (upper-cased).
#[derive(Clone, Copy)]
enum Family {
    Prefix(&'static str),
    Suffix(&'static str),
    Exact(&'static str),
}
use Family::{Exact, Prefix, Suffix};

/// The families, each with why it is refused.
#[rustfmt::skip]
const FAMILIES: &[(Family, &str)] = &[
    // The dynamic loader (glibc's and macOS's), and what glibc reads for the programs it
    // starts: libraries preloaded or searched, audit modules, conversion modules, tunables.
    (Prefix("LD_"), "the dynamic loader's"),
    (Prefix("DYLD_"), "the dynamic loader's"),
    (Prefix("GLIBC_"), "glibc's tunables"),
    (Prefix("MALLOC_"), "glibc's allocator"),
    (Exact("GCONV_PATH"), "glibc loads conversion modules from it"),
    (Exact("GETCONF_DIR"), "getconf executes a program from it"),
    (Exact("LOCPATH"), "glibc reads locales from it"),
    (Exact("NLSPATH"), "message catalogues"),
    (Exact("HOSTALIASES"), "the resolver's"),
    (Exact("LOCALDOMAIN"), "the resolver's"),
    (Exact("RES_OPTIONS"), "the resolver's"),
    (Exact("RESOLV_HOST_CONF"), "the resolver's"),
    (Exact("NIS_PATH"), "the resolver's"),
    (Exact("TZDIR"), "time zone files"),
    // Interpreters' and runtimes' start-up code, module paths and options.
    (Prefix("PYTHON"), "Python's start-up code and module paths"),
    (Prefix("PERL"), "Perl's options and module paths"),
    (Prefix("RUBY"), "Ruby's options and module paths"),
    (Prefix("NODE_"), "Node's options and module paths"),
    (Prefix("LUA_"), "Lua's start-up code and module paths"),
    (Prefix("PHP"), "PHP's configuration"),
    (Prefix("JAVA"), "the JVM's options and home (agents, class paths)"),
    (Prefix("_JAVA"), "the JVM's options (agents)"),
    (Prefix("JDK_"), "the JDK launchers' options (agents)"),
    (Exact("CLASSPATH"), "the JVM's class path"),
    (Prefix("BASH_"), "bash's start-up file and functions"),
    (Exact("ENV"), "a shell's start-up file"),
    (Exact("SHELLOPTS"), "a shell's options"),
    (Exact("BASHOPTS"), "a shell's options"),
    (Exact("PS4"), "a shell's trace prompt runs substitutions"),
    (Exact("PROMPT_COMMAND"), "a shell runs it"),
    (Exact("SHELL"), "programs that run a shell run this one"),
    (Exact("IFS"), "a shell's word splitting"),
    // Programs' own option and flag variables: options the argv did not give.
    (Suffix("_OPTIONS"), "a program's options (TAR_OPTIONS, GREP_OPTIONS, JAVA_TOOL_OPTIONS)"),
    (Suffix("_OPTS"), "a program's options"),
    (Suffix("OPT"), "a program's options (ZIPOPT, UNZIPOPT)"),
    (Suffix("FLAGS"), "a program's or a build's flags (MAKEFLAGS, GOFLAGS, RUSTFLAGS, CFLAGS)"),
    (Exact("UNZIP"), "unzip's options"),
    (Exact("ZIP"), "zip's options"),
    (Exact("GZIP"), "gzip's options"),
    (Exact("XZ_DEFAULTS"), "xz's options"),
    (Exact("ZSTD_CLEVEL"), "zstd's options"),
    // Module and plugin paths of libraries and toolkits (GIO, GTK, GDK, GStreamer, GL,
    // Vulkan, Qt, SASL, PKCS#11, ImageMagick, OpenSSL, Kerberos, TPM).
    (Prefix("GIO_"), "GIO loads modules from it"),
    (Prefix("GTK_"), "GTK loads modules from it"),
    (Prefix("GDK_"), "GDK loads pixbuf loaders from it"),
    (Prefix("GST_"), "GStreamer loads plugins from it"),
    (Prefix("LIBGL_"), "Mesa loads drivers from it"),
    (Prefix("__GLX_"), "GLVND loads vendor libraries from it"),
    (Prefix("__EGL_"), "GLVND loads vendor libraries from it"),
    (Prefix("VK_"), "Vulkan loads layers and drivers from it"),
    (Prefix("QT_"), "Qt loads plugins from it"),
    (Prefix("SASL_"), "SASL loads mechanisms from it"),
    (Prefix("P11_KIT_"), "p11-kit loads modules from it"),
    (Prefix("MAGICK_"), "ImageMagick's delegates and coders run programs and load modules"),
    (Prefix("OPENSSL_"), "OpenSSL loads engines, providers and configurations from it"),
    (Prefix("KRB5"), "Kerberos loads plugins named in its configuration"),
    (Exact("GSS_MECH_CONFIG"), "GSS-API loads mechanisms named in it"),
    (Prefix("LDAP"), "OpenLDAP's configuration"),
    (Prefix("GNUTLS_"), "GnuTLS's configuration"),
    (Prefix("TSS2_"), "the TPM stack loads modules named in it"),
    (Prefix("TPM2TOOLS_"), "the TPM stack loads modules named in it"),
    (Exact("SEC_TSS_TCTI"), "the TPM stack loads modules named in it"),
    (Exact("JQ_LIBRARY_PATH"), "jq's modules"),
    (Exact("RIPGREP_CONFIG_PATH"), "ripgrep's options (--pre runs a program)"),
    (Prefix("BAT_"), "bat's configuration and pager"),
    (Prefix("RCLONE_"), "rclone's options (password commands, backend programs)"),
    (Prefix("RESTIC_"), "restic's options (RESTIC_PASSWORD_COMMAND)"),
    (Prefix("BORG_"), "borg's options (BORG_RSH, BORG_PASSCOMMAND)"),
    (Exact("AWKPATH"), "awk's program files"),
    (Exact("AWKLIBPATH"), "gawk loads extensions from it"),
    (Prefix("TEXMF"), "TeX's configuration enables shell escape"),
    // kpathsea reads any variable of texmf.cnf from the environment too (as written, or
    // upper-cased here): shell escape, its commands, where TeX may write, formats.
    (Prefix("SHELL_ESCAPE"), "TeX's shell escape and the commands it may run"),
    (Exact("OPENOUT_ANY"), "where TeX may write"),
    (Exact("OPENIN_ANY"), "what TeX may read"),
    (Prefix("MKTEX"), "TeX's font and format generation runs programs"),
    (Prefix("TEXFORMATS"), "TeX's format files"),
    (Prefix("KPATHSEA"), "TeX's path search"),
    (Prefix("PKG_CONFIG"), "pkg-config's program and files (PKG_CONFIG names the program go runs)"),
    (Exact("COMPILER_PATH"), "gcc runs its programs from it"),
    (
        Prefix("GCC_"),
        "gcc's program prefixes and roots (GCC_EXEC_PREFIX, GCC_ROOT), and GCC_COMPARE_DEBUG, \
         read as -fcompare-debug= (more driver options)",
    ),
    (Exact("BINUTILS_ROOT"), "gcc reads its specs and programs beneath it"),
    (Prefix("GOROOT"), "go runs its compiler and linker from it"),
    (Prefix("COLLECT_"), "gcc's collect2 and lto-wrapper read their options and programs here"),
    (Exact("LIBRARY_PATH"), "the linker's search path"),
    (
        Prefix("MAKE"),
        "make's program, extra makefiles and flags (gcc's lto-wrapper runs make)",
    ),
    (Exact("DEPENDENCIES_OUTPUT"), "gcc writes a dependency file where it says"),
    (Exact("SUNPRO_DEPENDENCIES"), "gcc writes a dependency file where it says"),
    // Variables that name a program to run.
    (Suffix("EDITOR"), "names an editor to run (EDITOR, VISUAL's kin, SYSTEMD_EDITOR)"),
    (Exact("VISUAL"), "names an editor to run"),
    (Suffix("PAGER"), "names a pager to run (PAGER, MANPAGER, PSQL_PAGER)"),
    (Exact("BROWSER"), "names a browser to run"),
    (Suffix("ASKPASS"), "names a password prompt to run (SSH_ASKPASS, SUDO_ASKPASS)"),
    (Prefix("SSH_ASKPASS"), "names a password prompt to run"),
    (Exact("SSH_SK_PROVIDER"), "ssh loads a security key library from it"),
    (Exact("SSH_SK_HELPER"), "ssh-keygen runs its security key helper from it"),
    (Prefix("LESS"), "less runs LESSOPEN and LESSCLOSE"),
    (Prefix("MANOPT"), "man's options"),
    (Exact("RSYNC_RSH"), "names a remote shell to run"),
    (Exact("RSYNC_CONNECT_PROG"), "names a program to run"),
    (Exact("CVS_RSH"), "names a remote shell to run"),
    (Exact("CC"), "names a compiler that builds run"),
    (Exact("CXX"), "names a compiler that builds run"),
    (Exact("CPP"), "names a preprocessor that tools run"),
    (Exact("LD"), "names a linker that builds run"),
    (Exact("AR"), "names an archiver that builds run"),
    (Exact("RUSTC"), "names the compiler cargo runs"),
    (Exact("RUSTDOC"), "names the program cargo runs"),
    (Exact("RUSTFMT"), "names the program cargo fmt runs"),
    (Prefix("RUSTC_"), "names a compiler wrapper cargo runs"),
    (Prefix("RUSTUP_"), "selects the toolchain that runs"),
    (Prefix("CARGO"), "cargo's configuration: runners, linkers, wrappers"),
    (Exact("GOTOOLCHAIN"), "go downloads and runs the toolchain it names"),
    (Exact("GOENV"), "go's configuration file (GOFLAGS with -toolexec)"),
    (
        Prefix("CGO_"),
        "cgo's compilers and flags, and the #cgo flags it lets source files pass \
         (CGO_CFLAGS_ALLOW admits -fplugin)",
    ),
    (Prefix("NPM_CONFIG_"), "npm's configuration: scripts, shells, node options"),
    (Exact("NPM_CONFIG"), "npm's configuration"),
    (Prefix("YARN_"), "yarn's configuration"),
    (Prefix("PNPM_"), "pnpm's configuration"),
    (Exact("NPMRC"), "npm's configuration"),
    // Configurations that name programs (credential helpers, exec plugins, agents), and the
    // home and configuration directories that hold them.
    (Exact("HOME"), "programs read their configuration (and plugins) from it"),
    (Prefix("XDG_CONFIG"), "programs read their configuration from it"),
    (Prefix("XDG_DATA"), "desktop files name programs to run"),
    (Exact("CURL_HOME"), "curl's configuration"),
    (Suffix("WGETRC"), "wget's configuration (WGETRC, SYSTEM_WGETRC: use_askpass runs a program)"),
    (Prefix("DBUS_"), "a D-Bus address may be unixexec:, which runs a program"),
    (Prefix("SYSTEMD_"), "systemctl's pager, editor and bus settings"),
    (Exact("TAPE"), "tar's default archive: host:file runs a remote shell"),
    (Exact("RSH"), "names a remote shell to run"),
    (Prefix("OPENSC"), "OpenSC loads card drivers named in its configuration"),
    (Exact("INPUTRC"), "readline's configuration"),
    (Exact("GNUPGHOME"), "gpg's configuration names programs and modules"),
    (Exact("KUBECONFIG"), "kubectl's configuration names exec credential plugins"),
    (Prefix("DOCKER_"), "docker's configuration names credential helpers"),
    (Exact("AWS_CONFIG_FILE"), "AWS configuration names credential processes"),
    (Exact("AWS_SHARED_CREDENTIALS_FILE"), "AWS configuration names credential processes"),
    (Exact("CLOUDSDK_CONFIG"), "gcloud's configuration"),
    (Exact("AZURE_CONFIG_DIR"), "az's configuration"),
    (Prefix("HELM_"), "helm's plugins and configuration"),
];

/// Why `name` may not be passed to children, when it may not.
pub fn refused(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("GIT_") {
        return None;
    }
    FAMILIES
        .iter()
        .find(|(family, _)| match family {
            Prefix(p) => upper.starts_with(p),
            Suffix(s) => upper.ends_with(s),
            Exact(e) => upper == *e,
        })
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::refused;

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
