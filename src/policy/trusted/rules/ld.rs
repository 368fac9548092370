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

use crate::policy::trusted::getopt::{Arg, Grammar, Longs};

/// GNU ld's and gold's options (see the module's comment).
#[rustfmt::skip]
pub(crate) const LD: Grammar = Grammar {
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
    long: Longs::words(concat!(
        "Bdynamic Bgroup Bno-symbolic Bshareable Bstatic Bsymbolic Bsymbolic-functions EB EL Map=
         Qy Tbss= Tdata= Tldata-segment= Trodata-segment= Ttext= Ttext-segment= Ur
         accept-unknown-input-arch= add-needed add-stdcall-alias allow-multiple-definition=
         allow-shlib-undefined apply-dynamic-relocs architecture= as-needed assert= audit=
         auxiliary= base_file= be8 build-id? build-id-chunk-size-for-treehash=
         build-id-min-file-size-for-treehash= call_shared check-sections compat-implib
         compress-debug-sections= copy-dt-needed-entries cref ctf-share-types= ctf-variables
         ctors-in-init-array dT dc debug= default-imported-symver default-script= default-symver
         define-common defsym= demangle? depaudit= dependency-file= detect-odr-violations
         disable-auto-image-base disable-auto-import disable-large-address-aware
         disable-long-section-names disable-multiple-abs-defs= disable-new-dtags
         disable-reloc-section disable-runtime-pseudo-reloc disable-stdcall-fixup discard-all
         discard-locals discard-none dll dll-search-prefix= dn dp dy dynamic-linker=
         dynamic-list= dynamic-list-cpp-new dynamic-list-cpp-typeinfo= dynamic-list-data
         eh-frame-hdr embedded-relocs emit-relocs emit-stub-syms enable-auto-image-base?
         enable-auto-import enable-extra-pe-debug enable-extra-pep-debug
         enable-long-section-names enable-new-dtags enable-non-contiguous-regions
         enable-non-contiguous-regions-warnings enable-reloc-section enable-runtime-pseudo-reloc
         enable-stdcall-fixup end-group end-lib entry= error-handling-script=
         error-unresolved-symbols exclude-all-symbols exclude-libs= exclude-modules-for-implib=
         exclude-symbols= export-all-symbols export-dynamic export-dynamic-symbol=
         export-dynamic-symbol-list= fatal-warnings file-alignment= filter= fini= fix-arm1176
         fix-cortex-a53-835769 fix-cortex-a53-843419 fix-cortex-a8 fix-v4bx fix-v4bx-interworking
         flto flto-partition= force-exe-suffix force-group-allocation format= fuse-ld=
         gc-keep-exported gc-sections gdb-index gnu-unique gpsize= hash-bucket-empty-fraction=
         hash-size= hash-style= heap= help icf= icf-iterations= ignore-unresolved-symbol=
         image-base= incremental incremental-base= incremental-changed incremental-full
         incremental-patch= incremental-startup-unchanged incremental-unchanged
         incremental-unknown incremental-update init= just-symbols= keep-files-mapped
         keep-unique= kill-at large-address-aware ld-generated-unwind-info library= library-path=
         load-pass-plugin= long-plt major-image-version= major-os-version=
         major-subsystem-version= map-whole-files max-cache-size= merge-exidx-entries
         minor-image-version= minor-os-version= minor-subsystem-version= mllvm= mmap-output-file
         mri-script= nmagic no-accept-unknown-input-arch no-add-needed
         no-allow-multiple-definition no-allow-shlib-undefined no-apply-dynamic-relocs
         no-as-needed no-check-sections no-copy-dt-needed-entries= no-cref no-ctf-variables
         no-ctors-in-init-array no-define-common no-demangle no-detect-odr-violations
         no-dynamic-linker no-eh-frame-hdr no-emit-stub-syms no-enum-size-warning
         no-export-dynamic no-fatal-warnings no-fix-arm1176 no-fix-cortex-a53-835769
         no-fix-cortex-a53-843419 no-fix-cortex-a8 no-gc-sections no-gdb-index no-gnu-unique
         no-incremental no-keep-files-mapped no-keep-memory no-ld-generated-unwind-info
         no-long-plt no-map-whole-files no-merge-exidx-entries no-mmap-output-file no-omagic
         no-pic-executable no-pie no-pipeline-knowledge no-plt-localentry no-plt-static-chain
         no-plt-thread-safe no-posix-fallocate no-power10-stubs no-print-gc-sections
         no-print-icf-sections no-print-map-discarded no-relax no-rosegment no-strip-discarded
         no-stub-group-multi no-text-reorder no-threads no-tls-get-addr-optimize no-tls-optimize
         no-toc-optimize no-toc-sort no-undefined no-undefined-version no-warn-common
         no-warn-constructors no-warn-drop-version no-warn-execstack no-warn-mismatch
         no-warn-rwx-segments no-warn-search-mismatch no-warn-shared-textrel no-warnings
         no-wchar-size-warning no-whole-archive noinhibit-exec non_shared nostdlib oformat=
         omagic optimize= orphan-handling= out-implib= output= output-def= package-metadata?
         pic-executable pic-veneer pie plt-align? plt-localentry plt-static-chain plt-thread-safe
         plugin= plugin-opt= pop-state posix-fallocate power10-stubs? preread-archive-symbols
         print-gc-sections print-icf-sections print-map print-map-discarded print-memory-usage
         print-output-format print-symbol-counts= print-sysroot push-state qmagic
         reduce-memory-overheads relax relocatable require-defined= retain-symbols-file=
         rosegment rosegment-gap= rpath= rpath-link= run script= section-alignment=
         section-ordering-file= section-start= secure-plt shared soname= sort-common?
         sort-section= spare-dynamic-tags= split-by-file? split-by-reloc?
         split-stack-adjust-size= stack= start-group start-lib static stats strip-all strip-debug
         strip-debug-gdb strip-debug-non-line strip-discarded strip-lto-sections stub-group-multi
         stub-group-size= subsystem= support-old-code sysroot= target-help target1-abs
         target1-rel target2= task-link= text-reorder thread-count= thread-count-final=
         thread-count-initial= thread-count-middle= threads thumb-entry= tls-get-addr-optimize
         tls-optimize toc-optimize toc-sort trace trace-symbol= traditional-format undefined=
         undefined-version unique? unresolved-symbols= verbose? version version-exports-section=
         version-script= warn-alternate-em warn-common warn-constructors warn-drop-version
         warn-duplicate-exports warn-execstack warn-multiple-gp warn-once warn-rwx-segments
         warn-search-mismatch warn-section-align warn-shared-textrel warn-textrel
         warn-unresolved-symbols weak-unresolved-symbols whole-archive wrap=",
        // lld's everyday options that neither GNU linker has: optimisation levels, job
        // counts, colours and relocation packing, none of which names a file to load.
        " lto-O0 lto-O1 lto-O2 lto-O3 thinlto-jobs= color-diagnostics? no-color-diagnostics
         pack-dyn-relocs=",
    )),
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
