//! Rules for everyday applications with an option or a file name that runs a program: pandoc
//! (filters, PDF engines, Lua readers), ImageMagick and GraphicsMagick (`|cmd` file names, MSL
//! scripts), bat (pagers), rclone and restic (password commands, backend programs) and borg
//! (`--rsh`).

use crate::policy::trusted::getopt::{Arg, Grammar};

/// pandoc 3's options (`pandoc --help`), read with Haskell's GetOpt as pandoc does: short
/// options clustered, a required value attached or the next argument, an optional one
/// (`--toc[=true|false]`) only attached, long options by any unambiguous prefix.
#[rustfmt::skip]
const PANDOC: Grammar = Grammar {
    short: &[
        ('f', Arg::Required), ('r', Arg::Required), ('t', Arg::Required), ('w', Arg::Required),
        ('o', Arg::Required), ('M', Arg::Required), ('d', Arg::Required), ('s', Arg::No),
        ('V', Arg::Required), ('N', Arg::No), ('H', Arg::Required), ('B', Arg::Required),
        ('A', Arg::Required), ('p', Arg::No), ('F', Arg::Required), ('L', Arg::Required),
        ('i', Arg::No), ('T', Arg::Required), ('c', Arg::Required), ('C', Arg::No),
        ('D', Arg::Required), ('v', Arg::No), ('h', Arg::No),
    ],
    long: &[
        ("from", Arg::Required), ("read", Arg::Required), ("to", Arg::Required),
        ("write", Arg::Required), ("output", Arg::Required), ("data-dir", Arg::Required),
        ("metadata", Arg::Required), ("metadata-file", Arg::Required),
        ("defaults", Arg::Required), ("file-scope", Arg::Optional), ("sandbox", Arg::Optional),
        ("standalone", Arg::Optional), ("template", Arg::Required), ("variable", Arg::Required),
        ("variable-json", Arg::Required), ("wrap", Arg::Required), ("ascii", Arg::Optional),
        ("toc", Arg::Optional), ("table-of-contents", Arg::Optional),
        ("toc-depth", Arg::Required), ("lof", Arg::Optional), ("list-of-figures", Arg::Optional),
        ("lot", Arg::Optional), ("list-of-tables", Arg::Optional),
        ("number-sections", Arg::Optional), ("number-offset", Arg::Required),
        ("top-level-division", Arg::Required), ("extract-media", Arg::Required),
        ("resource-path", Arg::Required), ("include-in-header", Arg::Required),
        ("include-before-body", Arg::Required), ("include-after-body", Arg::Required),
        ("no-highlight", Arg::No), ("highlight-style", Arg::Required),
        ("syntax-highlighting", Arg::Required), ("syntax-definition", Arg::Required),
        ("dpi", Arg::Required), ("eol", Arg::Required), ("columns", Arg::Required),
        ("preserve-tabs", Arg::Optional), ("tab-stop", Arg::Required),
        ("pdf-engine", Arg::Required), ("pdf-engine-opt", Arg::Required),
        ("reference-doc", Arg::Required), ("self-contained", Arg::Optional),
        ("embed-resources", Arg::Optional), ("link-images", Arg::Optional),
        ("request-header", Arg::Required), ("no-check-certificate", Arg::Optional),
        ("abbreviations", Arg::Required), ("indented-code-classes", Arg::Required),
        ("default-image-extension", Arg::Required), ("filter", Arg::Required),
        ("lua-filter", Arg::Required), ("shift-heading-level-by", Arg::Required),
        ("base-header-level", Arg::Required), ("track-changes", Arg::Required),
        ("strip-comments", Arg::Optional), ("reference-links", Arg::Optional),
        ("reference-location", Arg::Required), ("figure-caption-position", Arg::Required),
        ("table-caption-position", Arg::Required), ("markdown-headings", Arg::Required),
        ("list-tables", Arg::Optional), ("listings", Arg::Optional),
        ("incremental", Arg::Optional), ("slide-level", Arg::Required),
        ("section-divs", Arg::Optional), ("html-q-tags", Arg::Optional),
        ("email-obfuscation", Arg::Required), ("id-prefix", Arg::Required),
        ("title-prefix", Arg::Required), ("css", Arg::Required),
        ("epub-subdirectory", Arg::Required), ("epub-cover-image", Arg::Required),
        ("epub-title-page", Arg::Optional), ("epub-metadata", Arg::Required),
        ("epub-embed-font", Arg::Required), ("split-level", Arg::Required),
        ("chunk-template", Arg::Required), ("epub-chapter-level", Arg::Required),
        ("ipynb-output", Arg::Required), ("citeproc", Arg::No), ("bibliography", Arg::Required),
        ("csl", Arg::Required), ("citation-abbreviations", Arg::Required), ("natbib", Arg::No),
        ("biblatex", Arg::No), ("mathml", Arg::No), ("webtex", Arg::Optional),
        ("mathjax", Arg::Optional), ("katex", Arg::Optional), ("gladtex", Arg::No),
        ("trace", Arg::Optional), ("dump-args", Arg::Optional), ("ignore-args", Arg::Optional),
        ("verbose", Arg::No), ("quiet", Arg::No), ("fail-if-warnings", Arg::Optional),
        ("log", Arg::Required), ("bash-completion", Arg::No),
        ("list-input-formats", Arg::No), ("list-output-formats", Arg::No),
        ("list-extensions", Arg::Optional), ("list-highlight-languages", Arg::No),
        ("list-highlight-styles", Arg::No), ("print-default-template", Arg::Required),
        ("print-default-data-file", Arg::Required), ("print-highlight-style", Arg::Required),
        ("version", Arg::No), ("help", Arg::No),
    ],
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
        &["--defaults", "d.yaml"],
        &["-dd.yaml"],
        &["--data-dir", "d", "in.md"],
        &["--fil=x", "in.md"],
        &["--future-option", "in.md"],
        &["-Z", "in.md"],
    ],
};

/// pandoc: the options in `PANDOC_RUNS` in any spelling, custom Lua readers and writers (any
/// argument ending in `.lua`), and any option pandoc 3 does not have.
pub fn check_pandoc(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a.ends_with(".lua")) {
        return Err("pandoc filter, engine or Lua option".to_string());
    }
    for items in PANDOC.readings(args) {
        for item in &items {
            if let Some(option) = PANDOC.unknown(item) {
                return Err(format!("pandoc option {option} is not known to the rule"));
            }
            if item.long_is(PANDOC_RUNS) || item.short_is(&['F', 'L', 'd']) {
                return Err("pandoc filter, engine or Lua option".to_string());
            }
        }
    }
    Ok(())
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

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const BAT_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["f.rs"], &["--paging=never", "f.rs"], &["-n", "f.rs"]],
    refuse: &[
        &["--pager", "sh", "f.rs"],
        &["--pager=sh", "f.rs"],
        &["--paging=always", "f.rs"],
    ],
};

/// bat: `--pager` names a program, and `--paging=always` runs it without a terminal.
pub fn check_bat(args: &[String]) -> Result<(), String> {
    if args
        .iter()
        .any(|a| a.starts_with("--pager") || a.starts_with("--paging=always") || a == "-P")
    {
        return Err("bat pager option".to_string());
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
