//! Rules for everyday applications with an option or a file name that runs a program: pandoc
//! (filters, PDF engines, Lua readers) and bat (pagers), closed grammars; and the deny-lists
//! of ImageMagick and GraphicsMagick (`|cmd` file names, MSL scripts) and of rclone, restic
//! and borg (password commands, backend programs, `--rsh`). Those programs cannot be closed
//! (`reviewed::NOT_CLOSED` says why): they are refused as unreviewed, and their deny-lists
//! still refuse the known forms when the operator accepts them.

use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

/// pandoc 3's options (`pandoc --help`), read with Haskell's GetOpt as pandoc does: short
/// options clustered, a required value attached or the next argument, an optional one
/// (`--toc[=true|false]`) only attached, long options by any unambiguous prefix.
#[rustfmt::skip]
pub(crate) const PANDOC: Grammar = Grammar {
    short: &[
        ('f', Arg::Required), ('r', Arg::Required), ('t', Arg::Required), ('w', Arg::Required),
        ('o', Arg::Required), ('M', Arg::Required), ('d', Arg::Required), ('s', Arg::No),
        ('V', Arg::Required), ('N', Arg::No), ('H', Arg::Required), ('B', Arg::Required),
        ('A', Arg::Required), ('p', Arg::No), ('F', Arg::Required), ('L', Arg::Required),
        ('i', Arg::No), ('T', Arg::Required), ('c', Arg::Required), ('C', Arg::No),
        ('D', Arg::Required), ('v', Arg::No), ('h', Arg::No),
    ],
    long: Longs::words(
        "from= read= to= write= output= data-dir= metadata= metadata-file= defaults= file-scope?
         sandbox? standalone? template= variable= variable-json= wrap= ascii? toc?
         table-of-contents? toc-depth= lof? list-of-figures? lot? list-of-tables?
         number-sections? number-offset= top-level-division= extract-media= resource-path=
         include-in-header= include-before-body= include-after-body= no-highlight
         highlight-style= syntax-highlighting= syntax-definition= dpi= eol= columns=
         preserve-tabs? tab-stop= pdf-engine= pdf-engine-opt= reference-doc= self-contained?
         embed-resources? link-images? request-header= no-check-certificate? abbreviations=
         indented-code-classes= default-image-extension= filter= lua-filter=
         shift-heading-level-by= base-header-level= track-changes= strip-comments?
         reference-links? reference-location= figure-caption-position= table-caption-position=
         markdown-headings= list-tables? listings? incremental? slide-level= section-divs?
         html-q-tags? email-obfuscation= id-prefix= title-prefix= css= epub-subdirectory=
         epub-cover-image= epub-title-page? epub-metadata= epub-embed-font= split-level=
         chunk-template= epub-chapter-level= ipynb-output= citeproc bibliography= csl=
         citation-abbreviations= natbib biblatex mathml webtex? mathjax? katex? gladtex trace?
         dump-args? ignore-args? verbose quiet fail-if-warnings? log= bash-completion
         list-input-formats list-output-formats list-extensions? list-highlight-languages
         list-highlight-styles print-default-template= print-default-data-file=
         print-highlight-style= version help",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Options that run programs or code: filters, Lua filters, defaults files (which name
/// filters and engines), PDF engines and their options, and data directories (whose
/// `init.lua` and filters pandoc loads).
const PANDOC_RUNS: &[&str] = &[
    "filter",
    "lua-filter",
    "defaults",
    "pdf-engine",
    "pdf-engine-opt",
    "data-dir",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const PANDOC_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["in.md", "-o", "out.html"],
        &["-f", "markdown", "-t", "html", "in.md"],
        &["-s", "--toc", "--toc-depth", "2", "-M", "title=x", "in.md"],
        &[
            "--standalone=true",
            "--embed-resources",
            "-c",
            "s.css",
            "in.md",
        ],
        &["--list-output-formats"],
        &["-sNo", "out.html", "in.md"],
        &[
            "--citeproc",
            "--bibliography=refs.bib",
            "--csl",
            "x.csl",
            "in.md",
        ],
        &["--fro", "gfm", "in.md"],
    ],
    refuse: &[
        &["--filter", "sh", "in.md"],
        &["-F", "x", "in.md"],
        &["-sFx", "in.md"],
        &["--lua-filter=x.lua", "in.md"],
        &["-L", "x", "in.md"],
        &["--pdf-engine=sh", "in.md"],
        &["--pdf", "sh", "in.md"],
        &["--pdf-engine-opt=-shell-escape", "in.md"],
        &["-t", "writer.lua", "in.md"],
        &["-t", "x.lua+smart", "in.md"],
        &["in.md", "-o", "out.pdf"],
        &["--defaults", "d.yaml"],
        &["-dd.yaml"],
        &["--data-dir", "d", "in.md"],
        &["--fil=x", "in.md"],
        &["--future-option", "in.md"],
        &["-Z", "in.md"],
    ],
};

const PANDOC_PDF: &str = "pandoc PDF output (pandoc runs a PDF engine on the document, \
     pdflatex by default and without -no-shell-escape, so the document's \\write18 runs \
     commands)";

/// pandoc: the options in `PANDOC_RUNS` in any spelling, custom Lua readers and writers (any
/// argument ending in `.lua`, and a format naming a `.lua` file before its extensions:
/// pandoc splits `+ext`/`-ext` off a format at the first `+` or `-` before it looks for a
/// Lua file, so `-t x.lua+smart` runs `x.lua`), PDF output (`-o x.pdf`, `-t pdf`: it runs
/// the PDF engine), and any option pandoc 3 does not have.
pub fn check_pandoc(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a.ends_with(".lua")) {
        return Err("pandoc filter, engine or Lua option".to_string());
    }
    for items in PANDOC.readings(args) {
        for item in &items {
            if let Some(option) = PANDOC.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "pandoc option {option}"
                )));
            }
            if item.long_is(PANDOC_RUNS) || item.short_is(&['F', 'L', 'd']) {
                return Err("pandoc filter, engine or Lua option".to_string());
            }
            let value = item.value().unwrap_or("").to_ascii_lowercase();
            let format = item.short_is(&['f', 'r', 't', 'w'])
                || item.long_is(&["from", "read", "to", "write"]);
            if format && names_lua_file(&value) {
                return Err("pandoc filter, engine or Lua option".to_string());
            }
            let output = item.short_is(&['o']) || item.long_is(&["output"]);
            let writer = item.short_is(&['t', 'w']) || item.long_is(&["to", "write"]);
            let format_name = value.split(['+', '-']).next().unwrap_or("");
            if (output && value.ends_with(".pdf")) || (writer && format_name == "pdf") {
                return Err(PANDOC_PDF.to_string());
            }
        }
    }
    Ok(())
}

/// True when a format (lowercased) names a Lua file: `.lua` at its end or before a `+` or
/// `-` (the extensions pandoc splits off; a `+` or `-` in a directory's name only makes more
/// of the text be read as a name, which refuses more).
fn names_lua_file(format: &str) -> bool {
    format
        .match_indices(".lua")
        .any(|(at, _)| matches!(format[at + 4..].chars().next(), None | Some('+' | '-')))
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const MAGICK_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["in.png", "-resize", "50%", "out.png"],
        &["in.jpg", "out.png"],
    ],
    refuse: &[
        &["|id", "out.png"],
        &["@list", "out.png"],
        &["msl:x.msl"],
        &["ephemeral:x", "out.png"],
        &["in.png", "-script", "s"],
    ],
};

/// ImageMagick and GraphicsMagick: a file name starting with `|` is a command, `@file` reads
/// names from a file, MSL and `ephemeral:` coders and `-script` run scripts.
pub fn check_magick(args: &[String]) -> Result<(), String> {
    for arg in args {
        let lower = arg.to_ascii_lowercase();
        if arg.starts_with('|')
            || arg.starts_with('@')
            || lower.contains(":|")
            || lower.starts_with("msl:")
            || lower.starts_with("ephemeral:")
            || lower.starts_with("mvg:")
            || lower == "-script"
            || lower == "-process"
        {
            return Err("image tool command file name or script".to_string());
        }
    }
    Ok(())
}

/// bat's options (its clap definition, `src/bin/bat/clap_app.rs` of bat 0.25, with the `git`
/// and `lessopen` features): long options by their exact names and aliases (clap infers no
/// prefixes, so the grammar's prefix reading only refuses more), short options clustered, a
/// value attached or the next argument. bat reads more options from its configuration file
/// (`BAT_CONFIG_PATH` or the user's configuration directory, not the working directory) and
/// `BAT_OPTS`, which the environment rules refuse.
#[rustfmt::skip]
pub(crate) const BAT: Grammar = Grammar {
    short: &[
        ('A', Arg::No), ('p', Arg::No), ('l', Arg::Required), ('H', Arg::Required),
        ('d', Arg::No), ('S', Arg::No), ('n', Arg::No), ('f', Arg::No), ('P', Arg::No),
        ('m', Arg::Required), ('s', Arg::No), ('r', Arg::Required), ('L', Arg::No),
        ('u', Arg::No), ('h', Arg::No), ('V', Arg::No),
    ],
    long: Longs::words(
        "show-all show-nonprintable nonprintable-notation= binary= plain language=
         highlight-line= file-name= diff diff-context= gitsigns= tabs= wrap= chop-long-lines
         terminal-width= number color= italic-text= decorations= force-colorization paging=
         no-paging no-pager pager= map-syntax= ignored-suffix= theme= theme-light= theme-dark=
         list-themes squeeze-blank squeeze-limit= strip-ansi= style= line-range= list-languages
         unbuffered no-config no-custom-assets completion= lessopen no-lessopen config-file
         generate-config-file config-dir cache-dir diagnostic diagnostics acknowledgements
         set-terminal-title help version",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// bat options that run a program: `--pager` names one, `--paging` other than `never` or
/// `auto` (`always`) runs it without a terminal, `--lessopen` runs the `LESSOPEN`
/// preprocessor, `--diagnostic` runs the pager to read its version; and
/// `--generate-config-file`, which writes outside the working directory.
const BAT_RUNS: &[&str] = &[
    "pager",
    "lessopen",
    "diagnostic",
    "diagnostics",
    "generate-config-file",
];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BAT_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["f.rs"],
        &["--paging=never", "f.rs"],
        &["--paging", "auto", "f.rs"],
        &["-n", "f.rs"],
        &["-pp", "f.rs"],
        &["-P", "-l", "rust", "f"],
        &["-lrust", "-r", "10:20", "f"],
        &["--style=numbers,changes", "--color=always", "f.rs"],
        &["--no-pager", "-A", "f"],
        &["--list-languages"],
        &["-d", "--diff-context", "3", "f.rs"],
        &["./cache"],
        &["--", "--pager"],
    ],
    refuse: &[
        &["--pager", "sh", "f.rs"],
        &["--pager=sh", "f.rs"],
        &["--pag=sh", "f.rs"],
        &["--paging=always", "f.rs"],
        &["--paging", "always", "f.rs"],
        &["f.rs", "--paging=always"],
        &["--lessopen", "f.rs"],
        &["--diagnostic"],
        &["--generate-config-file"],
        &["cache", "--build"],
        &["--future-option", "f"],
        &["-Z", "f"],
    ],
};

/// bat: the options in `BAT_RUNS` in any spelling, `--paging` other than `never`/`auto`, the
/// `cache` subcommand (it rebuilds bat's assets outside the working directory; a file named
/// `cache` is read as `./cache`) and any option bat does not have.
pub fn check_bat(args: &[String]) -> Result<(), String> {
    for items in BAT.readings(args) {
        for item in &items {
            if let Some(option) = BAT.unknown(item) {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "bat option {option}"
                )));
            }
            let paging_runs = item.long_is(&["paging"])
                && !item.value().is_some_and(|v| v == "never" || v == "auto");
            if item.long_is(BAT_RUNS) || paging_runs {
                return Err("bat pager option (it runs a program)".to_string());
            }
        }
        if items.iter().find(|i| matches!(i, Item::Operand(_))) == Some(&Item::Operand("cache")) {
            return Err(
                "bat cache (it rebuilds bat's assets outside the working directory; \
                 a file named cache is read as ./cache)"
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BACKUP_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["snapshots"], &["ls", "remote:"]],
    refuse: &[
        &["--password-command=sh", "snapshots"],
        &["--config", "c", "ls"],
        &["--rsh", "sh", "list"],
        &["-o", "sftp.command=sh", "snapshots"],
    ],
};

/// rclone, restic and borg: password commands, backend options (`-o sftp.command=`,
/// `rclone.program`), remote shells and configuration files run programs.
pub fn check_backup(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        a.starts_with("--password-command")
            || a.starts_with("--config")
            || a.starts_with("--option")
            || a == "-o"
            || a.starts_with("-o")
            || a.starts_with("--rsh")
            || a.starts_with("--remote-path")
            || a.starts_with("--sftp-command")
    }) {
        return Err("backup tool command or configuration option".to_string());
    }
    Ok(())
}
