//! The `yieldshell` binary: reads the configuration and runs the server.
fn main() -> std::process::ExitCode {
    yieldshell::main()
}
