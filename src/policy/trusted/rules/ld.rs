//! The linkers (ld, ld.bfd, ld.gold, lld, ld.lld, mold): a closed grammar. The option list is
//! the union of GNU ld 2.40's and gold 1.16's `--help` (every long option and short letter, and
//! whether it takes a value; where the two disagree the value is read as optional, so the next
//! argument is judged as an option too), with lld's `--load-pass-plugin` and `-mllvm` and
//! mold's `-run` so that they are named when refused, and a few everyday lld options
//! (`--lto-O3`, `--thinlto-jobs`, `--color-diagnostics`, `--pack-dyn-relocs`). The options are read as GNU ld reads them
//! (`getopt_long_only`): a long option with one dash or two, by any unambiguous prefix, its
//! value as `=value` or the next argument; a single dash that selects no long option is a
//! cluster of short letters (`-lc`, `-L/usr/lib`, `-znow`). lld and mold take no
//! abbreviations: an ambiguous one is refused as unknown (GNU ld refuses it too), and after a
//! unique one the next argument is judged as an option as well as a value; their options that
//! neither GNU linker has are refused as unknown.
//!
//! Refused, and why: `-plugin`/`--plugin` (a library the linker loads), `-plugin-opt` (the LTO
//! plugin runs the lto-wrapper program its first option names), lld's `--load-pass-plugin` and
//! `-mllvm` (LLVM's `-load` loads a library), mold's `-run` (it runs its command, standing in
//! for every linker the command starts), `--error-handling-script` (ld runs it on undefined
//! symbols), and a response file (`@file`, in any argument, values included: the linkers
//! expand it before reading options), and linker scripts (`-T`/`--script`, `-dT`/
//! `--default-script`, `-c`/`--mri-script`: a script names its output and inputs itself,
//! `OUTPUT(.git/hooks/pre-commit)`, `INPUT`, `GROUP`, `INCLUDE`, `SEARCH_DIR`, which the
//! writers' check cannot read). An input file ld does not recognise as an object is read as
//! a script too (an implicit linker script, as `libc.so` is); such a file is not refused
//! (docs/trusted-mode.md names it as a limit). Accepted: `-dynamic-linker` (it only names
//! the interpreter written into the output), `--wrap`, `--sysroot`, `--threads`,
//! `--version-script` and `--dynamic-list` (they name symbols, not files), and every other
//! option of the list.

use crate::policy::trusted::getopt::{Arg, Grammar};

/// GNU ld's and gold's options (see the module's comment).
#[rustfmt::skip]
const LD: Grammar = Grammar {
    short: &[
        ('(', Arg::No), (')', Arg::No), ('A', Arg::Required), ('E', Arg::No), ('F', Arg::Required),
        ('G', Arg::Optional), ('I', Arg::Required), ('L', Arg::Required), ('M', Arg::No),
        ('N', Arg::No), ('O', Arg::Optional), ('P', Arg::Required), ('R', Arg::Required),
        ('S', Arg::No), ('T', Arg::Required), ('V', Arg::No), ('X', Arg::No), ('Y', Arg::Required),
        ('a', Arg::Required), ('b', Arg::Required), ('c', Arg::Required), ('d', Arg::No),
        ('e', Arg::Required), ('f', Arg::Required), ('g', Arg::No), ('h', Arg::Required),
        ('i', Arg::No), ('l', Arg::Required), ('m', Arg::Required), ('n', Arg::No),
        ('o', Arg::Required), ('p', Arg::No), ('q', Arg::No), ('r', Arg::No), ('s', Arg::No),
        ('t', Arg::No), ('u', Arg::Required), ('v', Arg::No), ('w', Arg::No), ('x', Arg::No),
        ('y', Arg::Required), ('z', Arg::Required),
    ],
    long: &[
        ("Bdynamic", Arg::No), ("Bgroup", Arg::No), ("Bno-symbolic", Arg::No),
        ("Bshareable", Arg::No), ("Bstatic", Arg::No), ("Bsymbolic", Arg::No),
        ("Bsymbolic-functions", Arg::No), ("EB", Arg::No), ("EL", Arg::No), ("Map", Arg::Required),
        ("Qy", Arg::No), ("Tbss", Arg::Required), ("Tdata", Arg::Required),
        ("Tldata-segment", Arg::Required), ("Trodata-segment", Arg::Required),
        ("Ttext", Arg::Required), ("Ttext-segment", Arg::Required), ("Ur", Arg::No),
        ("accept-unknown-input-arch", Arg::Required), ("add-needed", Arg::No),
        ("add-stdcall-alias", Arg::No), ("allow-multiple-definition", Arg::Required),
        ("allow-shlib-undefined", Arg::No), ("apply-dynamic-relocs", Arg::No),
        ("architecture", Arg::Required), ("as-needed", Arg::No), ("assert", Arg::Required),
        ("audit", Arg::Required), ("auxiliary", Arg::Required), ("base_file", Arg::Required),
        ("be8", Arg::No), ("build-id", Arg::Optional),
        ("build-id-chunk-size-for-treehash", Arg::Required),
        ("build-id-min-file-size-for-treehash", Arg::Required), ("call_shared", Arg::No),
        ("check-sections", Arg::No), ("compat-implib", Arg::No),
        ("compress-debug-sections", Arg::Required), ("copy-dt-needed-entries", Arg::No),
        ("cref", Arg::No), ("ctf-share-types", Arg::Required), ("ctf-variables", Arg::No),
        ("ctors-in-init-array", Arg::No), ("dT", Arg::No), ("dc", Arg::No),
        ("debug", Arg::Required), ("default-imported-symver", Arg::No),
        ("default-script", Arg::Required), ("default-symver", Arg::No), ("define-common", Arg::No),
        ("defsym", Arg::Required), ("demangle", Arg::Optional), ("depaudit", Arg::Required),
        ("dependency-file", Arg::Required), ("detect-odr-violations", Arg::No),
        ("disable-auto-image-base", Arg::No), ("disable-auto-import", Arg::No),
        ("disable-large-address-aware", Arg::No), ("disable-long-section-names", Arg::No),
        ("disable-multiple-abs-defs", Arg::Required), ("disable-new-dtags", Arg::No),
        ("disable-reloc-section", Arg::No), ("disable-runtime-pseudo-reloc", Arg::No),
        ("disable-stdcall-fixup", Arg::No), ("discard-all", Arg::No), ("discard-locals", Arg::No),
        ("discard-none", Arg::No), ("dll", Arg::No), ("dll-search-prefix", Arg::Required),
        ("dn", Arg::No), ("dp", Arg::No), ("dy", Arg::No), ("dynamic-linker", Arg::Required),
        ("dynamic-list", Arg::Required), ("dynamic-list-cpp-new", Arg::No),
        ("dynamic-list-cpp-typeinfo", Arg::Required), ("dynamic-list-data", Arg::No),
        ("eh-frame-hdr", Arg::No), ("embedded-relocs", Arg::No), ("emit-relocs", Arg::No),
        ("emit-stub-syms", Arg::No), ("enable-auto-image-base", Arg::Optional),
        ("enable-auto-import", Arg::No), ("enable-extra-pe-debug", Arg::No),
        ("enable-extra-pep-debug", Arg::No), ("enable-long-section-names", Arg::No),
        ("enable-new-dtags", Arg::No), ("enable-non-contiguous-regions", Arg::No),
        ("enable-non-contiguous-regions-warnings", Arg::No), ("enable-reloc-section", Arg::No),
        ("enable-runtime-pseudo-reloc", Arg::No), ("enable-stdcall-fixup", Arg::No),
        ("end-group", Arg::No), ("end-lib", Arg::No), ("entry", Arg::Required),
        ("error-handling-script", Arg::Required), ("error-unresolved-symbols", Arg::No),
        ("exclude-all-symbols", Arg::No), ("exclude-libs", Arg::Required),
        ("exclude-modules-for-implib", Arg::Required), ("exclude-symbols", Arg::Required),
        ("export-all-symbols", Arg::No), ("export-dynamic", Arg::No),
        ("export-dynamic-symbol", Arg::Required), ("export-dynamic-symbol-list", Arg::Required),
        ("fatal-warnings", Arg::No), ("file-alignment", Arg::Required), ("filter", Arg::Required),
        ("fini", Arg::Required), ("fix-arm1176", Arg::No), ("fix-cortex-a53-835769", Arg::No),
        ("fix-cortex-a53-843419", Arg::No), ("fix-cortex-a8", Arg::No), ("fix-v4bx", Arg::No),
        ("fix-v4bx-interworking", Arg::No), ("flto", Arg::No), ("flto-partition", Arg::Required),
        ("force-exe-suffix", Arg::No), ("force-group-allocation", Arg::No),
        ("format", Arg::Required), ("fuse-ld", Arg::Required), ("gc-keep-exported", Arg::No),
        ("gc-sections", Arg::No), ("gdb-index", Arg::No), ("gnu-unique", Arg::No),
        ("gpsize", Arg::Required), ("hash-bucket-empty-fraction", Arg::Required),
        ("hash-size", Arg::Required), ("hash-style", Arg::Required), ("heap", Arg::Required),
        ("help", Arg::No), ("icf", Arg::Required), ("icf-iterations", Arg::Required),
        ("ignore-unresolved-symbol", Arg::Required), ("image-base", Arg::Required),
        ("incremental", Arg::No), ("incremental-base", Arg::Required),
        ("incremental-changed", Arg::No), ("incremental-full", Arg::No),
        ("incremental-patch", Arg::Required), ("incremental-startup-unchanged", Arg::No),
        ("incremental-unchanged", Arg::No), ("incremental-unknown", Arg::No),
        ("incremental-update", Arg::No), ("init", Arg::Required), ("just-symbols", Arg::Required),
        ("keep-files-mapped", Arg::No), ("keep-unique", Arg::Required), ("kill-at", Arg::No),
        ("large-address-aware", Arg::No), ("ld-generated-unwind-info", Arg::No),
        ("library", Arg::Required), ("library-path", Arg::Required),
        ("load-pass-plugin", Arg::Required), ("long-plt", Arg::No),
        ("major-image-version", Arg::Required), ("major-os-version", Arg::Required),
        ("major-subsystem-version", Arg::Required), ("map-whole-files", Arg::No),
        ("max-cache-size", Arg::Required), ("merge-exidx-entries", Arg::No),
        ("minor-image-version", Arg::Required), ("minor-os-version", Arg::Required),
        ("minor-subsystem-version", Arg::Required), ("mllvm", Arg::Required),
        ("mmap-output-file", Arg::No), ("mri-script", Arg::Required), ("nmagic", Arg::No),
        ("no-accept-unknown-input-arch", Arg::No), ("no-add-needed", Arg::No),
        ("no-allow-multiple-definition", Arg::No), ("no-allow-shlib-undefined", Arg::No),
        ("no-apply-dynamic-relocs", Arg::No), ("no-as-needed", Arg::No),
        ("no-check-sections", Arg::No), ("no-copy-dt-needed-entries", Arg::Required),
        ("no-cref", Arg::No), ("no-ctf-variables", Arg::No), ("no-ctors-in-init-array", Arg::No),
        ("no-define-common", Arg::No), ("no-demangle", Arg::No),
        ("no-detect-odr-violations", Arg::No), ("no-dynamic-linker", Arg::No),
        ("no-eh-frame-hdr", Arg::No), ("no-emit-stub-syms", Arg::No),
        ("no-enum-size-warning", Arg::No), ("no-export-dynamic", Arg::No),
        ("no-fatal-warnings", Arg::No), ("no-fix-arm1176", Arg::No),
        ("no-fix-cortex-a53-835769", Arg::No), ("no-fix-cortex-a53-843419", Arg::No),
        ("no-fix-cortex-a8", Arg::No), ("no-gc-sections", Arg::No), ("no-gdb-index", Arg::No),
        ("no-gnu-unique", Arg::No), ("no-incremental", Arg::No), ("no-keep-files-mapped", Arg::No),
        ("no-keep-memory", Arg::No), ("no-ld-generated-unwind-info", Arg::No),
        ("no-long-plt", Arg::No), ("no-map-whole-files", Arg::No),
        ("no-merge-exidx-entries", Arg::No), ("no-mmap-output-file", Arg::No),
        ("no-omagic", Arg::No), ("no-pic-executable", Arg::No), ("no-pie", Arg::No),
        ("no-pipeline-knowledge", Arg::No), ("no-plt-localentry", Arg::No),
        ("no-plt-static-chain", Arg::No), ("no-plt-thread-safe", Arg::No),
        ("no-posix-fallocate", Arg::No), ("no-power10-stubs", Arg::No),
        ("no-print-gc-sections", Arg::No), ("no-print-icf-sections", Arg::No),
        ("no-print-map-discarded", Arg::No), ("no-relax", Arg::No), ("no-rosegment", Arg::No),
        ("no-strip-discarded", Arg::No), ("no-stub-group-multi", Arg::No),
        ("no-text-reorder", Arg::No), ("no-threads", Arg::No),
        ("no-tls-get-addr-optimize", Arg::No), ("no-tls-optimize", Arg::No),
        ("no-toc-optimize", Arg::No), ("no-toc-sort", Arg::No), ("no-undefined", Arg::No),
        ("no-undefined-version", Arg::No), ("no-warn-common", Arg::No),
        ("no-warn-constructors", Arg::No), ("no-warn-drop-version", Arg::No),
        ("no-warn-execstack", Arg::No), ("no-warn-mismatch", Arg::No),
        ("no-warn-rwx-segments", Arg::No), ("no-warn-search-mismatch", Arg::No),
        ("no-warn-shared-textrel", Arg::No), ("no-warnings", Arg::No),
        ("no-wchar-size-warning", Arg::No), ("no-whole-archive", Arg::No),
        ("noinhibit-exec", Arg::No), ("non_shared", Arg::No), ("nostdlib", Arg::No),
        ("oformat", Arg::Required), ("omagic", Arg::No), ("optimize", Arg::Required),
        ("orphan-handling", Arg::Required), ("out-implib", Arg::Required),
        ("output", Arg::Required), ("output-def", Arg::Required),
        ("package-metadata", Arg::Optional), ("pic-executable", Arg::No), ("pic-veneer", Arg::No),
        ("pie", Arg::No), ("plt-align", Arg::Optional), ("plt-localentry", Arg::No),
        ("plt-static-chain", Arg::No), ("plt-thread-safe", Arg::No), ("plugin", Arg::Required),
        ("plugin-opt", Arg::Required), ("pop-state", Arg::No), ("posix-fallocate", Arg::No),
        ("power10-stubs", Arg::Optional), ("preread-archive-symbols", Arg::No),
        ("print-gc-sections", Arg::No), ("print-icf-sections", Arg::No), ("print-map", Arg::No),
        ("print-map-discarded", Arg::No), ("print-memory-usage", Arg::No),
        ("print-output-format", Arg::No), ("print-symbol-counts", Arg::Required),
        ("print-sysroot", Arg::No), ("push-state", Arg::No), ("qmagic", Arg::No),
        ("reduce-memory-overheads", Arg::No), ("relax", Arg::No), ("relocatable", Arg::No),
        ("require-defined", Arg::Required), ("retain-symbols-file", Arg::Required),
        ("rosegment", Arg::No), ("rosegment-gap", Arg::Required), ("rpath", Arg::Required),
        ("rpath-link", Arg::Required), ("run", Arg::No), ("script", Arg::Required),
        ("section-alignment", Arg::Required), ("section-ordering-file", Arg::Required),
        ("section-start", Arg::Required), ("secure-plt", Arg::No), ("shared", Arg::No),
        ("soname", Arg::Required), ("sort-common", Arg::Optional), ("sort-section", Arg::Required),
        ("spare-dynamic-tags", Arg::Required), ("split-by-file", Arg::Optional),
        ("split-by-reloc", Arg::Optional), ("split-stack-adjust-size", Arg::Required),
        ("stack", Arg::Required), ("start-group", Arg::No), ("start-lib", Arg::No),
        ("static", Arg::No), ("stats", Arg::No), ("strip-all", Arg::No), ("strip-debug", Arg::No),
        ("strip-debug-gdb", Arg::No), ("strip-debug-non-line", Arg::No),
        ("strip-discarded", Arg::No), ("strip-lto-sections", Arg::No),
        ("stub-group-multi", Arg::No), ("stub-group-size", Arg::Required),
        ("subsystem", Arg::Required), ("support-old-code", Arg::No), ("sysroot", Arg::Required),
        ("target-help", Arg::No), ("target1-abs", Arg::No), ("target1-rel", Arg::No),
        ("target2", Arg::Required), ("task-link", Arg::Required), ("text-reorder", Arg::No),
        ("thread-count", Arg::Required), ("thread-count-final", Arg::Required),
        ("thread-count-initial", Arg::Required), ("thread-count-middle", Arg::Required),
        ("threads", Arg::No), ("thumb-entry", Arg::Required), ("tls-get-addr-optimize", Arg::No),
        ("tls-optimize", Arg::No), ("toc-optimize", Arg::No), ("toc-sort", Arg::No),
        ("trace", Arg::No), ("trace-symbol", Arg::Required), ("traditional-format", Arg::No),
        ("undefined", Arg::Required), ("undefined-version", Arg::No), ("unique", Arg::Optional),
        ("unresolved-symbols", Arg::Required), ("verbose", Arg::Optional), ("version", Arg::No),
        ("version-exports-section", Arg::Required), ("version-script", Arg::Required),
        ("warn-alternate-em", Arg::No), ("warn-common", Arg::No), ("warn-constructors", Arg::No),
        ("warn-drop-version", Arg::No), ("warn-duplicate-exports", Arg::No),
        ("warn-execstack", Arg::No), ("warn-multiple-gp", Arg::No), ("warn-once", Arg::No),
        ("warn-rwx-segments", Arg::No), ("warn-search-mismatch", Arg::No),
        ("warn-section-align", Arg::No), ("warn-shared-textrel", Arg::No),
        ("warn-textrel", Arg::No), ("warn-unresolved-symbols", Arg::No),
        ("weak-unresolved-symbols", Arg::No), ("whole-archive", Arg::No), ("wrap", Arg::Required),
        // lld's everyday options that neither GNU linker has: optimisation levels, job
        // counts, colours and relocation packing, none of which names a file to load.
        ("lto-O0", Arg::No), ("lto-O1", Arg::No), ("lto-O2", Arg::No), ("lto-O3", Arg::No),
        ("thinlto-jobs", Arg::Required), ("color-diagnostics", Arg::Optional),
        ("no-color-diagnostics", Arg::No), ("pack-dyn-relocs", Arg::Required),
    ],
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: false,
};

/// The options that load a library or run a program.
const RUNS_OPTIONS: &[&str] = &[
    "plugin",
    "plugin-opt",
    "load-pass-plugin",
    "mllvm",
    "run",
    "error-handling-script",
];

/// The reason of every option that loads or runs something (the compiler drivers' too).
const RUNS: &str = "compiler plugin or external program option";

/// The options that read a linker script, by name and by short letter.
const SCRIPT_OPTIONS: &[&str] = &["script", "dT", "default-script", "mri-script"];
const SCRIPT_LETTERS: &[char] = &['T', 'c'];

/// The reason of a linker script (the compiler drivers' `-T` and `-Wl,-T` too).
pub const SCRIPT: &str = "linker script (a linker script names its output and inputs itself, \
     OUTPUT(), INPUT(), GROUP(), INCLUDE, SEARCH_DIR, so any path could be written or read)";

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const LD_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-Bstatic", "-o", "a", "a.o"],
        &["--gc-sections", "-o", "a", "a.o", "-lc"],
        &["-shared", "-soname", "libx.so.1", "-o", "libx.so.1", "x.o"],
        &[
            "-z",
            "relro",
            "-znow",
            "--as-needed",
            "-L/usr/lib",
            "-lm",
            "x.o",
        ],
        &[
            "-dynamic-linker",
            "/lib64/ld-linux-x86-64.so.2",
            "-pie",
            "crt1.o",
            "x.o",
        ],
        &["-Ttext=0x1000", "-Map=out.map", "--wrap=malloc", "x.o"],
        &[
            "--version-script=v.map",
            "--dynamic-list",
            "d.list",
            "-shared",
            "x.o",
        ],
        &[
            "--start-group",
            "a.a",
            "b.a",
            "--end-group",
            "-rpath",
            "/opt/lib",
        ],
        &["-r", "-o", "all.o", "a.o", "b.o"],
        &["--build-id", "--hash-style=gnu", "-m", "elf_x86_64", "x.o"],
        &["-o", "-plugin", "x.o"],
        &["--version"],
        &[
            "--lto-O3",
            "--thinlto-jobs=4",
            "--color-diagnostics",
            "-o",
            "p",
            "m.o",
        ],
    ],
    refuse: &[
        &["-plugin", "x.so", "a.o"],
        &["--plugin=x.so", "a.o"],
        &["--plug", "x.so", "a.o"],
        &["-plugin-opt=/tmp/lto-wrapper", "a.o"],
        &["--plugin-opt", "x", "a.o"],
        &["--load-pass-plugin=x.so"],
        &["-mllvm", "-load=x.so", "a.o"],
        &["@opts"],
        &["-o", "@opts", "a.o"],
        &["-run", "make"],
        &["--run", "sh", "-c", "id"],
        &["--error-handling-script=./x", "a.o"],
        &["--error-h", "./x", "a.o"],
        &["--some-future-option", "a.o"],
        &["-Zfuture", "a.o"],
        &["--print", "a.o"],
        &["--retain", "--plugin=x.so", "a.o"],
        &["-lc", "-K"],
        &["-T", "link.ld", "x.o"],
        &["-Tlink.ld", "x.o"],
        &["--script=link.ld", "x.o"],
        &["-scr", "link.ld", "x.o"],
        &["-dT", "link.ld", "x.o"],
        &["--default-script=link.ld", "x.o"],
        &["-c", "mri.txt"],
        &["-rc", "mri.txt"],
    ],
};

/// The linkers: no response file, none of `RUNS_OPTIONS` in any spelling, no linker script,
/// and only the options of the grammar.
pub fn check_ld(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a.starts_with('@')) {
        return Err(RUNS.to_string());
    }
    read_linker_args(args, true)
}

/// The arguments a compiler driver hands the linker (`-Wl,` items, `-Xlinker` values, `-T`),
/// read as the linker reads them: a linker script, or an option that runs or loads
/// something, is refused; an option the grammar does not have is left to the driver's rule.
pub fn check_linker_args(args: &[String]) -> Result<(), String> {
    read_linker_args(args, false)
}

/// Reads a linker's command line; `closed` refuses an option the grammar does not have.
fn read_linker_args(args: &[String], closed: bool) -> Result<(), String> {
    let unknown = |option: String| {
        if closed {
            Err(crate::policy::trusted::rules::not_known(&format!(
                "linker option {option}"
            )))
        } else {
            Ok(())
        }
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            continue;
        }
        let two = arg.starts_with("--");
        let body = &arg[if two { 2 } else { 1 }..];
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        // getopt_long_only reads a lone letter that is a short option as that letter.
        let lone_short =
            !two && body.chars().count() == 1 && LD.short.iter().any(|(c, _)| body.starts_with(*c));
        if !lone_short {
            let candidates = LD.candidates(name);
            if candidates.iter().any(|c| RUNS_OPTIONS.contains(c)) {
                return Err(RUNS.to_string());
            }
            if candidates.iter().any(|c| SCRIPT_OPTIONS.contains(c)) {
                return Err(SCRIPT.to_string());
            }
            if let [only] = candidates[..] {
                // An abbreviation takes its value only in GNU ld's reading: lld and mold read
                // the name exactly (perhaps as an option of theirs without a value), so the
                // next argument is judged as an option too.
                if only == name && value.is_none() && LD.long_arg(only) == Some(Arg::Required) {
                    i += 1;
                }
                continue;
            }
            // Ambiguous (GNU ld refuses it; lld or mold may have it exactly), or none.
            if two || !candidates.is_empty() {
                unknown(format!("{}{name}", if two { "--" } else { "-" }))?;
                continue;
            }
        }
        let mut items = Vec::new();
        i = LD.parse_cluster(body, args, i, &mut items);
        if items.iter().any(|item| item.short_is(SCRIPT_LETTERS)) {
            return Err(SCRIPT.to_string());
        }
        if let Some(option) = items.iter().find_map(|item| LD.unknown(item)) {
            unknown(option)?;
        }
    }
    Ok(())
}
