//! The tools by name: one enum value per tool, and the API whose names they speak; the names
//! are made and read back here, so that no other module compares a tool's name as text.

/// Which names the tools speak (`YIELDSHELL_API`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// This server's names.
    Current,
    /// mcp-yieldshell 1.1.2's names: tool `execute`, `execution_id`, OS pid as `process_id`,
    /// `evicted`, `executions`, `hint`; and its lenient environment values.
    V1_1,
}

/// A tool of the server, in listing order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Tool {
    ShellExecute,
    Exec,
    Read,
    Write,
    Wait,
    Stop,
    Ps,
    Cleanup,
}

impl Tool {
    /// Every tool, in listing order.
    pub const ALL: [Tool; 8] = [
        Tool::ShellExecute,
        Tool::Exec,
        Tool::Read,
        Tool::Write,
        Tool::Wait,
        Tool::Stop,
        Tool::Ps,
        Tool::Cleanup,
    ];

    /// The tool's own name (the current API's, the audit log's, `--tools`').
    pub const fn name(self) -> &'static str {
        match self {
            Tool::ShellExecute => "shell_execute",
            Tool::Exec => "exec",
            Tool::Read => "read",
            Tool::Write => "write",
            Tool::Wait => "wait",
            Tool::Stop => "stop",
            Tool::Ps => "ps",
            Tool::Cleanup => "cleanup",
        }
    }

    /// The tool named `name` (its own name), if there is one.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The name the client sees under `api`: 1.1 calls `exec` `execute`.
    pub const fn wire_name(self, api: Api) -> &'static str {
        match (self, api) {
            (Tool::Exec, Api::V1_1) => "execute",
            _ => self.name(),
        }
    }

    /// The tool a client calls `wire` under `api` (1.1 has no `exec`).
    pub fn from_wire(wire: &str, api: Api) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.wire_name(api) == wire)
    }

    /// The names of `tools` under `api`, joined by `separator`.
    pub fn joined(tools: &[Tool], api: Api, separator: &str) -> String {
        let names: Vec<&str> = tools.iter().map(|t| t.wire_name(api)).collect();
        names.join(separator)
    }

    /// The tool runs a command the client gave: a malformed call is still an attempt, audited.
    pub const fn runs_a_command(self) -> bool {
        matches!(self, Tool::Exec | Tool::ShellExecute)
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_to_their_tool_under_each_api() {
        for tool in Tool::ALL {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
            for api in [Api::Current, Api::V1_1] {
                assert_eq!(Tool::from_wire(tool.wire_name(api), api), Some(tool));
            }
        }
        assert_eq!(Tool::from_wire("execute", Api::V1_1), Some(Tool::Exec));
        assert_eq!(Tool::from_wire("exec", Api::V1_1), None);
        assert_eq!(Tool::from_wire("execute", Api::Current), None);
        assert_eq!(Tool::from_name("nope"), None);
    }
}
