//! TeX engines: shell escape is refused.

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const TEX_EXAMPLES: super::Examples = super::Examples {
    accept: &[&["doc.tex"], &["-interaction=nonstopmode", "doc.tex"]],
    refuse: &[
        &["-shell-escape", "doc.tex"],
        &["--shell-escape", "doc.tex"],
        &["-enable-write18", "doc.tex"],
        &["-cnf-line=shell_escape=t", "doc.tex"],
    ],
};

/// TeX engines: shell escape, and `-cnf-line`, which can turn it on.
pub fn check_tex(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        let a = a.trim_start_matches('-');
        a.starts_with("shell-escape")
            || a.starts_with("enable-write18")
            || a.starts_with("cnf-line")
    }) {
        return Err("TeX shell escape option".to_string());
    }
    Ok(())
}
