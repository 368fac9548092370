//! gpg: viewers and helpers it runs, modules it loads, option files and home directories
//! holding them. Every argument is examined as a possible option, values included: the rule
//! can only refuse more than the program would do, never less.

/// The arguments before a separate `--`.
fn before_double_dash(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// gpg: viewers and helpers it runs, modules it loads, option files and home directories
/// (which hold `gpg.conf`) that set them, and the interactive editors whose commands come
/// from a descriptor. Long options may be abbreviated.
pub fn check_gpg(args: &[String]) -> Result<(), String> {
    const PROHIBITED: &[&str] = &[
        "photo-viewer",
        "exec-path",
        "load-extension",
        "options",
        "homedir",
        "list-options",
        "verify-options",
        "keyserver-options",
        "agent-program",
        "dirmngr-program",
        // Interactive key and card editing reads commands from the command descriptor or
        // file (stdin is the caller's): `showphoto` runs the photo viewer.
        "edit-key",
        "edit-card",
        "card-edit",
        "command-fd",
        "command-file",
    ];
    for arg in before_double_dash(args) {
        if let Some(body) = arg.strip_prefix("--") {
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            // Exact options that are prefixes of prohibited ones.
            let exact = ["verify", "keyserver"].contains(&name);
            if !exact && name.len() >= 3 && PROHIBITED.iter().any(|o| o.starts_with(name)) {
                return Err("gpg external program or option file".to_string());
            }
        }
    }
    Ok(())
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const GPG_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["--verify", "x.sig", "x"],
        &["--list-keys"],
        &["--batch", "--decrypt", "x.gpg"],
    ],
    refuse: &[
        &["--photo-viewer", "x", "--list-keys"],
        &["--load-extension", "/abs/x.so"],
        &["--homedir", "h", "--list-keys"],
        &["--edit-key", "k", "--command-fd", "0"],
        &["--batch", "--command-f", "cmds", "--edit", "k"],
        &["--exec-p", "/abs"],
    ],
};
