//! `--help`: the usage and every option of the table, with its variable and default.

use super::OPTIONS;

pub(super) fn help() -> String {
    let mut s = format!(
        "yieldshell {}: an MCP shell server over stdio\n\n\
         Usage:\n  yieldshell [OPTIONS]                      serve MCP on stdin and stdout\n  \
         yieldshell [OPTIONS] call TOOL ['JSON']    run one tool call, print its result\n  \
         yieldshell [OPTIONS] tools [--json]        list the tools of this configuration\n  \
         yieldshell [OPTIONS] check COMMAND...      say whether a command would be allowed\n\n\
         Examples:\n  \
         yieldshell call exec '{{\"command\":\"ls -l\",\"side_effects\":[\"NONE\"]}}'\n  \
         yieldshell call exec '{{\"command\":\"make test\"}}'   (side_effects defaults to [\"UNKNOWN\"])\n  \
         yieldshell call ps\n  \
         ALLOW_COMMANDS=git,ls yieldshell tools --json\n  \
         ALLOW_COMMANDS=git,ls yieldshell check git log --oneline\n  \
         ALLOW_COMMANDS=git,ls yieldshell check 'ls -l | wc -l'\n\n\
         `call` exits 0, 1 when the result is an error, 2 for bad usage; `check` runs nothing\n\
         and exits 0 when the command is allowed, 1 when it is refused.\n\n\
         Every option can also be set by its environment variable; a flag wins.\n\nOptions:\n",
        env!("CARGO_PKG_VERSION")
    );
    for o in OPTIONS {
        let default = if o.default.is_empty() {
            String::new()
        } else {
            format!(" [default: {}]", o.default)
        };
        s.push_str(&format!(
            "  {} <VALUE>  (env {})\n      {}{}\n",
            o.flag, o.env, o.help, default
        ));
    }
    s.push_str("  -h, --help     print this help\n  -V, --version  print the version\n");
    s
}
