//! Compiler drivers and linkers: gcc, clang and friends, and ld, lld, gold and mold. They run
//! programs and load libraries named in their arguments (`-wrapper`, plugins, `-B`, spec and
//! response files, configuration files).

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const CC_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-O2", "-c", "x.c", "-o", "x.o"],
        &["-Wl,-Bstatic", "x.o"],
        &["-g", "x.c"],
    ],
    refuse: &[
        &["-wrapper", "sh", "x.c"],
        &["-fplugin=/x.so", "x.c"],
        &["@args"],
        &["-B/tmp/x", "x.c"],
        &["-specs=x", "x.c"],
        &["-Xclang", "-load", "-Xclang", "/x.so", "x.c"],
        &["-Wl,@opts", "x.o"],
        &["--config", "x.cfg", "x.c"],
        &["-fcompare-debug=-wrapper sh,-c,id", "-c", "x.c"],
        &["-fcompare-debug=-B.", "-c", "x.c"],
    ],
};

/// gcc, clang and friends, and the linkers.
pub fn check_cc(args: &[String]) -> Result<(), String> {
    let reject = || Err("compiler plugin or external program option".to_string());
    for arg in args {
        let a = arg.as_str();
        if a.starts_with('@')
            // `-Wl,@file` hands the linker (`-Wa,` the assembler) a file of options.
            || (a.starts_with("-W") && a.contains(",@"))
            // clang's configuration files hold any option (`-fplugin=` among them).
            || a.starts_with("--config")
            || a == "-config"
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
            // gcc reads the value as more driver options (`-wrapper`, `-B`, `@file`) for
            // its second compile; only the bare flag is left.
            || (a.starts_with("-fcompare-debug=") && a != "-fcompare-debug=")
        {
            return reject();
        }
    }
    Ok(())
}
