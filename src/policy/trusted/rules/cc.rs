//! Compiler drivers: gcc, clang and friends. They run programs and load libraries named in
//! their arguments (`-wrapper`, plugins, `-B`, spec and response files, configuration files).
//!
//! The compiler drivers (gcc, g++, cc, c++, cpp, clang, clang++, clang-cpp, gfortran, tcc) are a
//! closed grammar of option families: the families gcc and clang document that cannot load or
//! run code (`-O*`, `-W*`, `-f*`, `-m*`, `-g*`, `-D`, `-I`, `-L`, `-l`, `-std=`, `-x`, `-o`, the
//! preprocessor's `-M*` and `-i*` paths, …) are accepted, the options that load or run
//! something are refused (`--sysroot` among them), and any other option is refused as
//! unknown: their option sets are too large to list one by one, and a driver reads an
//! unlisted spelling in ways a deny-list does not foresee (`--pref DIR` is gcc's abbreviation
//! of `--prefix`, `-Bstatic` is `-B static`).
//! Every argument, values included, is also checked against the deny-list, so a value passed on
//! to another tool (`-Wl,`, `-Xlinker`, `-Xclang`, `-mllvm`) is judged there.
//!
//! The linkers run on their own have a closed grammar of their own, in `ld`.

use crate::policy::trusted::words::Words;

/// The reason of every option that loads or runs something.
const RUNS: &str = "compiler plugin or external program option";

/// True when `a`, read as an option or as any option's value, loads a library or runs a
/// program: response files, configuration and spec files, plugins, wrappers, program search
/// prefixes, another toolchain, a linker named by path.
fn runs_or_loads(a: &str, b_linker_flags: bool) -> bool {
    a.starts_with('@')
        // `-Wl,@file` hands the linker (`-Wa,` the assembler) a file of options.
        || (a.starts_with("-W") && a.contains(",@"))
        // clang's configuration files hold any option (`-fplugin=` among them).
        || a.starts_with("--config")
        || a == "-config"
        || a.contains("plugin")
        || a.starts_with("-wrapper")
        // A linker's `-Bstatic`-like flags; a compiler driver reads every `-B` as a program
        // prefix (`gcc -Bstatic` runs `./staticas`).
        || (a.starts_with("-B")
            && !(b_linker_flags
                && [
                    "-Bstatic",
                    "-Bdynamic",
                    "-Bsymbolic",
                    "-Bshareable",
                    "-Bgroup",
                ]
                .iter()
                .any(|k| a.starts_with(k))))
        || a.starts_with("--prefix")
        || a.starts_with("-specs")
        || a.starts_with("--specs")
        // LLVM's plugin loader, as a cc1 (`-Xclang`) or backend (`-mllvm`) option.
        || a.starts_with("-load")
        || a.starts_with("-fpass-plugin")
        || a.starts_with("--gcc-toolchain")
        || a.starts_with("-ccc-")
        || (a.starts_with("-fuse-ld=") && a.contains('/'))
        || a.starts_with("--ld-path")
        // gcc reads the value as more driver options (`-wrapper`, `-B`, `@file`) for
        // its second compile; only the bare flag is left.
        || (a.starts_with("-fcompare-debug=") && a != "-fcompare-debug=")
        // The offload compiler's driver reads these as its own options (`-B`, `-wrapper`).
        || a.starts_with("-foffload-options")
        || (a.starts_with("-foffload=") && a["-foffload=".len()..].contains('='))
}

/// Why link-time optimisation, and the options that name its files, are refused (see
/// `check_cc`).
const LTO: &str = "link-time optimisation runs make on a makefile built from the file names \
     (build without -flto, -save-temps, -dumpdir and -dumpbase, with no $ or line break in a \
     name)";

/// True when an option that passes a comma-separated list on to the linker, assembler or
/// preprocessor (`-Wl,`, `-Wa,`, `-Wp,`) holds an item that runs or loads something.
fn passes_on_to_runs(a: &str) -> bool {
    ["-Wl,", "-Wa,", "-Wp,"].iter().any(|p| {
        a.strip_prefix(p)
            .is_some_and(|list| list.split(',').any(|item| runs_or_loads(item, true)))
    })
}

/// True for a sysroot given to a compiler driver: clang looks for a GCC installation under
/// the sysroot and runs the linker it finds beside it (`ld` in its `<triple>/bin`), so a
/// directory the caller wrote could supply the program. A driver named `cc` may be clang.
fn is_sysroot(a: &str) -> bool {
    a == "--sysroot" || a.starts_with("--sysroot=")
}

/// Options whose value is the next argument when it is not attached (gcc's `Separate` and
/// `JoinedOrSeparate` options, and clang's): the value is checked only by the deny-list, never
/// as an option. `-I`, `-o` and the like are also accepted with the value attached.
pub(crate) const SEPARATE: Words = Words(
    "-o -x -I -L -l -D -U -u -z -T -J -A -include -imacros -isystem -iquote -idirafter -iprefix
     -iwithprefix -iwithprefixbefore -isysroot -imultilib -imultiarch -iframework -MF -MT -MQ
     -aux-info -Xlinker -Xassembler -Xpreprocessor -Xclang -mllvm -target -arch -framework
     --param",
);

/// Options without a value, accepted as written.
pub(crate) const EXACT: Words = Words(
    "-c -S -E -v -### -pipe -pthread -pthreads -shared -shared-libgcc -static -static-pie -pie
     -no-pie -rdynamic -s -r -p -pg -Q -H -P -C -CC -M -MM -MD -MMD -MG -MP -w -ansi -pedantic
     -pedantic-errors -nostdlib -nostdlib++ -nostdinc -nostdinc++ -nodefaultlibs -nostartfiles
     -nolibc -undef -trigraphs -traditional -traditional-cpp -symbolic -time -no-integrated-cpp
     -emit-llvm -no-canonical-prefixes -dumpspecs -dumpversion -dumpfullversion -dumpmachine
     --version --help --target-help --verbose --ansi --pedantic --pedantic-errors --static
     --shared --coverage -coverage -integrated-as -no-integrated-as -Qunused-arguments -cpp
     -nocpp",
);

/// Option families accepted by prefix: optimisation, warnings (`-Wl,`, `-Wa,` and `-Wp,` pass
/// their values on, and the deny-list judges them), code generation and language features
/// (`-f*`, but for the plugins and `-fcompare-debug=` refused above), machine options, debug
/// information, macros, include and library paths and libraries, the language and standard,
/// the output, dumps, and what the driver prints about itself. None of them names a program
/// or a library to load.
pub(crate) const FAMILIES: Words = Words(
    "-O -W -f -m -g -D -U -I -L -l -x -o -J -d -std= --std= -print- --print- -static-lib -stdlib=
     --stdlib= -rtlib= --rtlib= -unwindlib= --unwindlib= --target= --param= --help= -include
     -imacros -isystem -iquote -idirafter -iprefix -iwithprefix -isysroot -imultilib -imultiarch
     -iframework -MF -MT -MQ",
);

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const CC_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-O2", "-c", "x.c", "-o", "x.o"],
        &["-Wl,-Bstatic", "x.o"],
        &["-fno-lto", "-c", "x.c"],
        &["-Wl,-z,relro,-Bsymbolic", "x.o"],
        &["-g", "x.c"],
        &[
            "-std=c11",
            "-Wall",
            "-Wno-unused",
            "-fPIC",
            "-shared",
            "x.c",
            "-o",
            "libx.so",
        ],
        &[
            "-I", "inc", "-Iinc2", "-DX=1", "-D", "Y", "-isystem", "sys", "-c", "x.c",
        ],
        &["-x", "c", "-", "-E", "-MMD", "-MF", "x.d"],
        &[
            "-march=native",
            "-pthread",
            "x.c",
            "-L",
            "lib",
            "-lm",
            "-l",
            "z",
        ],
        &["-Xlinker", "--gc-sections", "-fuse-ld=lld", "x.c"],
        &["--version"],
        &[
            "-MD",
            "-MT",
            "x.o",
            "-MF",
            "x.o.d",
            "-o",
            "x.o",
            "-c",
            "x.c",
            "--coverage",
        ],
        &[
            "-shared",
            "-Wl,-soname,libx.so.1",
            "-Wl,--as-needed",
            "-Wl,-z,relro,-z,now",
            "-Xlinker",
            "-rpath",
            "-Xlinker",
            "/opt/lib",
            "x.o",
            "-o",
            "libx.so.1",
        ],
        &[
            "-Qunused-arguments",
            "--target=aarch64-linux-gnu",
            "-stdlib=libc++",
            "--param=ssp-buffer-size=4",
            "-Wp,-D_FORTIFY_SOURCE=2",
            "-c",
            "x.c",
        ],
        &["-E", "-dM", "-x", "c++", "-"],
        &["-print-file-name=libc.so"],
        &["-cpp", "-ffree-form", "-J", "mod", "-c", "x.f90"],
    ],
    refuse: &[
        &["-wrapper", "sh", "x.c"],
        &["-fplugin=/x.so", "x.c"],
        &["@args"],
        &["-B/tmp/x", "x.c"],
        &["-B", "/tmp/x", "x.c"],
        &["-Bstatic", "-c", "x.c"],
        &["--prefix=/tmp/x", "x.c"],
        &["--pref", "/tmp/x", "x.c"],
        &["-specs=x", "x.c"],
        &["--specs", "x", "x.c"],
        &["-Xclang", "-load", "-Xclang", "/x.so", "x.c"],
        &["-mllvm", "-load=/x.so", "x.c"],
        &["-Xlinker", "-plugin", "-Xlinker", "x.so", "x.c"],
        &["-Wl,@opts", "x.o"],
        &["-Wl,-plugin,x.so", "x.o"],
        &["-Wl,-B,x", "x.o"],
        &["-flto", "-c", "x.c"],
        &["-O2", "-flto=2", "x.c"],
        &["-flto=auto", "x.c"],
        &["x.o", "-o", "p${shell id}"],
        &["x.o", "-o", "p$(shell id)"],
        &["-o", "a\n\tid", "x.c"],
        &["-save-temps", "m.o", "-o", "p!=id>IDOUT #"],
        &["-save-temps=obj", "m.o", "-o", "p"],
        &["-dumpdir", "e!=id #", "m.o", "-o", "p"],
        &["-dumpbase", "x", "-c", "x.c"],
        &["--config", "x.cfg", "x.c"],
        &["--config=x.cfg", "x.c"],
        &["-fcompare-debug=-wrapper sh,-c,id", "-c", "x.c"],
        &["-fcompare-debug=-B.", "-c", "x.c"],
        &["-fuse-ld=/tmp/ld", "x.c"],
        &["-cc1", "-load", "x.so"],
        &["-run", "x.c"],
        &["--sysroot=sys", "x.c"],
        &["--sysroot", "sys", "x.c"],
        &["-fopenmp", "-foffload-options=-B/tmp/x", "x.c"],
        &["-foffload=nvptx-none=-B/tmp/x", "x.c"],
        &["--some-future-option", "x.c"],
        &["-Zfuture", "x.c"],
        &["--", "x.c"],
        &["-T", "link.ld", "x.o"],
        &["-Tlink.ld", "x.o"],
        &["-Wl,-T,link.ld", "x.o"],
        &["-Wl,--script=link.ld", "x.o"],
        &["-Xlinker", "-T", "-Xlinker", "link.ld", "x.o"],
    ],
};

/// The arguments the driver hands the linker, in order: `-Wl,` items, `-Xlinker` values and
/// `-T` with its value (attached or the next argument; `-T` names a linker script, and
/// `-Ttext=ADDR` is passed on as it is).
fn linker_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if let Some(list) = a.strip_prefix("-Wl,") {
            out.extend(list.split(',').map(String::from));
        } else if a == "-Xlinker" || a == "-T" {
            if a == "-T" {
                out.push(a.to_string());
            }
            out.extend(args.get(i).cloned());
            i += 1;
        } else if a.starts_with("-T") {
            out.push(a.to_string());
        }
    }
    out
}

/// The compiler drivers: the deny-list over every argument, then the option families.
pub fn check_cc(args: &[String]) -> Result<(), String> {
    if args
        .iter()
        .any(|a| runs_or_loads(a, false) || is_sysroot(a) || passes_on_to_runs(a))
    {
        return Err(RUNS.to_string());
    }
    super::ld::check_linker_args(&linker_args(args))?;
    // Link-time optimisation: gcc's lto-wrapper writes a makefile holding file names and
    // runs make on it (`-flto=N`, `auto`, and plain `-flto` since gcc 11). An LTO object a
    // call planted starts it at any link, so what make could read as its own syntax is kept
    // out of the names: `$` (`$(shell …)` runs a command) and line breaks in any argument,
    // and `-save-temps`, `-dumpdir` and `-dumpbase`, which put the caller's names where make
    // reads rules (`!=` runs a command). A call cannot name the temporary directory either
    // (`Policy::env`).
    if let Some(a) = args.iter().find(|a| {
        a.starts_with("-flto")
            || a.starts_with("-save-temps")
            || a.starts_with("-dumpdir")
            || a.starts_with("-dumpbase")
            || a.contains(['$', '\n', '\r'])
    }) {
        return Err(format!(
            "{LTO}: {}",
            if a.starts_with('-') {
                a.as_str()
            } else {
                "a name with $ or a line break"
            }
        ));
    }
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        // An operand (a source, object or library file), or stdin.
        if !a.starts_with('-') || a == "-" {
            continue;
        }
        if SEPARATE.contains(a) {
            i += 1;
            continue;
        }
        if EXACT.contains(a) || FAMILIES.iter().any(|f| a.starts_with(f)) {
            continue;
        }
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        return Err(crate::policy::trusted::rules::not_known(&format!(
            "compiler option {name}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reasons_name_the_unknown_option_and_keep_the_dangerous_ones() {
        assert_eq!(
            check_cc(&argv(&["--future=1", "x.c"])),
            Err(
                "compiler option --future is not known to the rule (a newer version may load \
                 or run something with it): leave it out, or write it in full as the program's \
                 manual does"
                    .to_string()
            )
        );
        assert_eq!(check_cc(&argv(&["-Bstatic", "x.c"])), Err(RUNS.to_string()));
        // A separate value is never read as an option, but the deny-list still sees it.
        assert_eq!(check_cc(&argv(&["-o", "-Zx", "x.c"])), Ok(()));
        assert_eq!(
            check_cc(&argv(&["-o", "-wrapper", "x.c"])),
            Err(RUNS.to_string())
        );
    }
}
