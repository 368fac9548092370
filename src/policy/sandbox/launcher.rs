//! The launcher: our own binary, re-executed through `/proc/self/exe` with
//! [`MARKER`] as its first argument and a plan (see `plan` for the encoding). It applies the
//! plan to itself (rlimits, cgroup, `no_new_privs` and the Landlock domain) and then
//! executes the target program in its place, with the same pid, descriptors and environment.
//!
//! `main` recognises the marker before anything else (no option parsing, no thread), so the
//! launcher's own cost is the `exec` of our binary. A failure is reported on the target's
//! stderr as one line naming what failed, and the launcher exits with 127 (126 when the
//! target could not be executed); the server checks beforehand everything that would make
//! the `exec` fail (the program resolves, is allowed, and a script's interpreter is allowed).

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use super::plan::Plan;
use crate::base::sys;
use crate::policy::trusted::Stage;

/// The first argument that makes `yieldshell` a launcher.
pub const MARKER: &str = "--yieldshell-sandbox-launcher-v1";

/// What the server executes to run the launcher (Linux).
#[cfg(target_os = "linux")]
pub const SELF_EXE: &str = "/proc/self/exe";

/// The path of our own binary for the launcher: [`SELF_EXE`] on Linux (valid even after the
/// file was replaced); elsewhere (no `/proc`) the path the system reports at startup.
fn self_exe() -> String {
    #[cfg(target_os = "linux")]
    return SELF_EXE.into();
    #[cfg(not(target_os = "linux"))]
    {
        static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        PATH.get_or_init(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.into_os_string().into_string().ok())
                .unwrap_or_else(|| "yieldshell".into())
        })
        .clone()
    }
}

/// The stage that runs `stage` through the launcher under `plan`.
pub fn wrap(plan: &Plan, stage: &Stage) -> Stage {
    let mut args = vec![MARKER.to_string()];
    args.extend(plan.encode(&stage.program, &stage.arg0, &stage.args));
    Stage {
        program: self_exe(),
        arg0: "yieldshell".into(),
        args,
    }
}

/// Runs the launcher when this process was started as one; `None` otherwise. Call first
/// thing in `main`.
pub fn main_if_launcher() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    args.next();
    if args.next()? != MARKER {
        return None;
    }
    let rest: Vec<OsString> = args.collect();
    Some(run(&rest))
}

fn run(args: &[OsString]) -> ExitCode {
    let fail = |code: u8, message: String| {
        let _ = writeln!(
            std::io::stderr().lock(),
            "yieldshell sandbox launcher: {message}"
        );
        ExitCode::from(code)
    };
    let (plan, program, argv) = match Plan::decode(args) {
        Ok(p) => p,
        Err(e) => return fail(127, e),
    };
    if let Err(e) = plan.apply() {
        return fail(127, format!("cannot apply the sandbox: {e}"));
    }
    sys::default_sigpipe();
    let e = sys::exec_replace(&program, &argv);
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    fail(
        code,
        format!(
            "cannot execute {}: {}",
            program.to_string_lossy(),
            crate::base::config::plain_io(&e)
        ),
    )
}
