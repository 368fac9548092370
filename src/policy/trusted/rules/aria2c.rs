//! aria2c: hooks, input files and configuration files are refused.

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const ARIA2C_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["https://example.com/f"],
        &["-x", "4", "https://example.com/f"],
    ],
    refuse: &[
        &["--on-download-complete=sh", "https://example.com/f"],
        &["-i", "list"],
        &["--conf-path=c"],
        &["--input-file=list"],
    ],
};

/// aria2c: `--on-download-*` and `--on-bt-*` run hooks; an input file (`-i`) and a
/// configuration file can set them.
pub fn check_aria2c(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| {
        a.starts_with("--on-")
            || a.starts_with("--conf-path")
            || a.starts_with("--input-file")
            || a.starts_with("-i")
    }) {
        return Err("aria2c hook or input file option".to_string());
    }
    Ok(())
}
