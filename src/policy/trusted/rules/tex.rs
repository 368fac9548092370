//! TeX engines (web2c's tex, etex, pdftex, xetex, ptex, uptex and their LaTeX names): a
//! closed rule. The options are web2c's (`texmfmp.c`'s `long_options`, TeX Live 2023), read
//! with getopt_long_only as the engines read them: one or two dashes, long options only, by
//! any unambiguous prefix, a value attached with `=` or the next argument.
//!
//! The input is the caller's (a redirection can write any `.tex` file), so what the input
//! can do decides: `\write18`, `\input|"cmd"` and `\openin` of a pipe run commands whenever
//! shell escape is on, and TeX Live turns it on in restricted form by default
//! (`shell_escape = p` in texmf.cnf: a list of programs, with their arguments the input's).
//! So a call is accepted only when it turns shell escape off on its command line
//! (`-no-shell-escape` or `-disable-write18`; the command line wins over texmf.cnf), and
//! turns off kpathsea's font generation for PK and TFM fonts (`-no-mktex=pk`,
//! `-no-mktex=tfm`): for a font the input names and no installed font provides, kpathsea runs
//! `mktexpk`/`mktextfm`, which read map files from the working directory (which is on the
//! font map path) and may start Ghostscript or Metafont on files the caller wrote.
//!
//! Refused in any spelling: `-shell-escape`, `-enable-write18`, `-shell-restricted` (they turn
//! it on), `-cnf-line` (sets texmf.cnf variables, `openout_any` among them), `-ipc` and
//! `-ipc-start` (the latter runs a viewer), `-mktex` (turns generation on), `-fmt`, `-efmt`,
//! a first operand starting with `&` and `-progname` (another format or program name, whose
//! missing format kpathsea builds with `mktexfmt`), and XeTeX's `-output-driver` (the
//! program XeTeX runs on its output). XeTeX runs its output driver (`xdvipdfmx`) even with
//! shell escape off, and the driver reads `dvipdfmx.cfg` from the working directory (its `D`
//! line is the command it runs to convert PostScript): xetex and xelatex are accepted only
//! with `-no-pdf`. Any option web2c does not have is refused.

use crate::policy::trusted::getopt::{Arg, Longs};

/// web2c's options and whether each takes a value (`src-specials`' value is optional:
/// only attached).
#[rustfmt::skip]
pub(crate) const OPTIONS: Longs = Longs::words(
    "fmt= efmt= help ini interaction= halt-on-error progname= version recorder ipc ipc-start
     mltex enc etex output-comment= draftmode output-format= shell-escape no-shell-escape
     enable-write18 disable-write18 shell-restricted debug-format src-specials? synctex=
     file-line-error-style no-file-line-error-style file-line-error no-file-line-error jobname=
     output-directory= parse-first-line no-parse-first-line translate-file=
     default-translate-file= 8bit no-pdf output-driver= papersize= mktex= no-mktex= sjis-terminal
     guess-input-enc no-guess-input-enc kanji= kanji-internal= cnf-line= kpathsea-debug=",
);

/// Options that turn shell escape on.
const SHELL_ESCAPE: &[&str] = &["shell-escape", "enable-write18", "shell-restricted"];

/// Options that change the configuration, the format or the program name, or run a program.
const REFUSED: &[&str] = &[
    "cnf-line",
    "ipc",
    "ipc-start",
    "mktex",
    "fmt",
    "efmt",
    "progname",
    "output-driver",
];

const NEEDED: &str = "TeX runs programs its input names unless the command line says \
                      -no-shell-escape -no-mktex=pk -no-mktex=tfm";

/// Accepted and refused examples, walked by `harden`'s tests (by every engine name).
#[cfg(test)]
pub const TEX_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "-no-pdf",
            "doc.tex",
        ],
        &[
            "--no-shell-escape",
            "-no-mktex",
            "pk",
            "--no-mktex=tfm",
            "-no-pdf",
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-output-directory",
            "out",
            "doc.tex",
        ],
        &[
            "-disable-write18",
            "-no-mktex=tfm",
            "-no-mktex=pk",
            "-no-pdf",
            "-jobname=x",
            "-synctex=1",
            "-file-line-error",
            "\\input doc",
        ],
        &["-no-shell", "-no-mk=pk", "-no-mk=tfm", "-no-pdf", "doc.tex"],
        &["-version"],
        &["--help"],
    ],
    refuse: &[
        &["doc.tex"],
        &["-interaction=nonstopmode", "doc.tex"],
        &["-no-shell-escape", "doc.tex"],
        &["-no-mktex=pk", "-no-mktex=tfm", "-no-pdf", "doc.tex"],
        &[
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "-no-pdf",
            "-shell-escape",
            "doc.tex",
        ],
        &["-shell-escape", "doc.tex"],
        &["--shell-escape", "doc.tex"],
        &["-shell-e", "doc.tex"],
        &["-enable-write18", "doc.tex"],
        &["-shell-restricted", "doc.tex"],
        &["-shell", "doc.tex"],
        &["-cnf-line=shell_escape=t", "doc.tex"],
        &["-cnf-line", "openout_any=a", "doc.tex"],
        &["-ipc-start", "doc.tex"],
        &["-mktex=fmt", "doc.tex"],
        &["-fmt=x", "doc.tex"],
        &["&x", "doc.tex"],
        &["-progname=x", "doc.tex"],
        &["-output-driver=sh", "doc.tex"],
        &["-future-option", "doc.tex"],
        &[
            "doc.tex",
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "-no-pdf",
        ],
        &[
            "--",
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "-no-pdf",
            "doc.tex",
        ],
    ],
};

/// Accepted and refused examples of xetex and xelatex, walked by `harden`'s tests.
#[cfg(test)]
pub const XETEX_EXAMPLES: super::Examples = super::Examples {
    accept: &[&[
        "-no-shell-escape",
        "-no-mktex=pk",
        "-no-mktex=tfm",
        "-no-pdf",
        "doc.tex",
    ]],
    refuse: &[
        &[
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "doc.tex",
        ],
        &[
            "-no-shell-escape",
            "-no-mktex=pk",
            "-no-mktex=tfm",
            "-output-driver=x",
            "doc.tex",
        ],
    ],
};

/// Checks a TeX engine's arguments (tex, etex, pdftex, latex, pdflatex, ptex, uptex,
/// platex, uplatex).
pub fn check_tex(args: &[String]) -> Result<(), String> {
    check(args, false)
}

/// Checks xetex's and xelatex's arguments: as [`check_tex`], and `-no-pdf` is needed.
pub fn check_xetex(args: &[String]) -> Result<(), String> {
    check(args, true)
}

fn check(args: &[String], xetex: bool) -> Result<(), String> {
    let mut shell_off = false;
    let mut no_mktex: Vec<&str> = Vec::new();
    let mut no_pdf = false;
    let mut informational = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            break;
        }
        // The options end at the first operand (web2c's optstring is "+"): what follows is
        // the first line of TeX's input, where `-no-shell-escape` turns nothing off.
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|b| !b.is_empty())
        else {
            if arg.starts_with('&') {
                return Err("TeX format option (kpathsea builds a missing format)".into());
            }
            break;
        };
        let (written, attached) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (body, None),
        };
        let candidates: Vec<(&str, Arg)> = match OPTIONS.get(written) {
            Some(exact) => vec![exact],
            None => OPTIONS.with_prefix(written).collect(),
        };
        if candidates
            .iter()
            .any(|(name, _)| SHELL_ESCAPE.contains(name))
        {
            return Err("TeX shell escape option".into());
        }
        let [(name, kind)] = candidates[..] else {
            return Err(crate::policy::trusted::rules::not_known(&format!(
                "TeX option {arg}"
            )));
        };
        let value = match (kind, attached) {
            (Arg::Required, None) => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            _ => attached,
        };
        if name == "cnf-line" {
            return Err(
                "TeX shell escape option -cnf-line (it sets texmf.cnf variables, \
                        shell_escape and openout_any among them)"
                    .into(),
            );
        }
        if REFUSED.contains(&name) {
            return Err(format!(
                "TeX option -{name} (it changes the configuration, the format or the \
                 program name, or runs a program)"
            ));
        }
        match name {
            "no-shell-escape" | "disable-write18" => shell_off = true,
            "no-mktex" => no_mktex.extend(value),
            "no-pdf" => no_pdf = true,
            "help" | "version" => informational = true,
            _ => (),
        }
    }
    if informational {
        return Ok(());
    }
    if !shell_off || !no_mktex.contains(&"pk") || !no_mktex.contains(&"tfm") {
        return Err(NEEDED.to_string());
    }
    if xetex && !no_pdf {
        return Err(
            "xetex runs its output driver, which reads dvipdfmx.cfg from the working \
                    directory: add -no-pdf"
                .to_string(),
        );
    }
    Ok(())
}
