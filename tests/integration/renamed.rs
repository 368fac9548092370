//! A fixture shared by the sandbox tests: harmless programs copied under names the hardening
//! table does not know, accepted without rules by the operator's setting (so that the kernel,
//! not the table, is seen doing the refusing), in a
//! private tree: `bin` (the copies, first in the safe `PATH`), `work` (the cwd) and
//! `outside`. Removed when dropped.

use std::path::{Path, PathBuf};

use crate::support::{path_str, unique_marker, Server};

pub struct Renamed {
    pub root: PathBuf,
    pub bin: PathBuf,
    pub work: PathBuf,
    pub outside: PathBuf,
}

impl Renamed {
    /// Copies each `(name, source)` that exists into `bin` under `name`.
    pub fn new(label: &str, programs: &[(&str, &str)]) -> Renamed {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique_marker(label));
        for d in ["bin", "work", "outside"] {
            std::fs::create_dir_all(root.join(d)).expect("create a fixture directory");
        }
        let root = root.canonicalize().expect("canonical root");
        let (bin, work, outside) = (root.join("bin"), root.join("work"), root.join("outside"));
        for (name, source) in programs {
            if Path::new(source).exists() {
                std::fs::copy(source, bin.join(name)).expect("copy a program");
            }
        }
        Renamed {
            root,
            bin,
            work,
            outside,
        }
    }

    pub fn safe_path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.bin.display())
    }

    /// A trusted-mode server allowing `allow`, finding programs in `bin` first, working in
    /// `work`. The renamed programs have no argument rules: the server accepts every allowed
    /// name without them (`YIELDSHELL_UNREVIEWED_COMMANDS`, unless `extra` sets it), so that
    /// only the kernel layer confines them.
    pub fn trusted(&self, allow: &str, extra: &[(&str, &str)]) -> Server {
        let path = self.safe_path();
        let mut env: Vec<(&str, &str)> = vec![
            ("ALLOW_COMMANDS", allow),
            ("MCP_SHELL_SAFE_PATH", &path),
            ("YIELDSHELL_DEFAULT_CWD", path_str(&self.work)),
        ];
        if !extra
            .iter()
            .any(|(k, _)| *k == "YIELDSHELL_UNREVIEWED_COMMANDS")
        {
            env.push(("YIELDSHELL_UNREVIEWED_COMMANDS", allow));
        }
        env.extend_from_slice(extra);
        Server::ready_with_env(&env)
    }

    /// A shell-mode server working in `work`.
    pub fn shell(&self, extra: &[(&str, &str)]) -> Server {
        let mut env: Vec<(&str, &str)> = vec![("YIELDSHELL_DEFAULT_CWD", path_str(&self.work))];
        env.extend_from_slice(extra);
        Server::ready_with_env(&env)
    }

    /// The path of `name` in `outside`.
    pub fn out(&self, name: &str) -> String {
        path_str(&self.outside.join(name)).to_string()
    }
}

impl Drop for Renamed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
