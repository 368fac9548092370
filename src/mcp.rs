//! The MCP layer: handshake, tool list, and `tools/call` arguments to typed calls.
//!
//! This is the serde boundary of the tools: arguments are checked here, leniently where
//! the Python servers were lenient (integers as numeric strings or integral floats,
//! booleans as "true"/"false", `null` for an optional field, unknown fields ignored), and
//! a broken argument becomes a tool result with `isError: true` that names the field, the
//! value received and what is accepted. Fields newer than the negotiated protocol version
//! (`title`, `outputSchema`, `structuredContent`, annotations) are left out.

use std::sync::Arc;

use regex_lite::Regex;
use serde_json::{json, Map, Value};

use crate::config::{SIDE_EFFECTS, TRANSPORT_CEILING_MS};
use crate::engine::{Call, Engine, ExecArgs, ReadArgs, Reply, ShellExecArgs};
use crate::ring::Streams;

/// Protocol versions we speak, newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The version answered when the client asks for one we do not know.
pub const LATEST: &str = "2025-11-25";

/// Picks the version to answer `initialize` with.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| VERSIONS.iter().copied().find(|v| *v == r))
        .unwrap_or(LATEST)
}

/// Whether `version` has the fields introduced in 2025-06-18 (title, outputSchema,
/// structuredContent).
pub fn has_structured(version: &str) -> bool {
    version >= "2025-06-18"
}

/// Whether `version` has tool annotations (2025-03-26).
pub fn has_annotations(version: &str) -> bool {
    version >= "2025-03-26"
}

/// The `initialize` result.
pub fn initialize_result(version: &str) -> Value {
    let mut info = json!({"name": "yieldshell", "version": env!("CARGO_PKG_VERSION")});
    if has_structured(version) {
        info["title"] = Value::from("yieldshell: shell with auto-yield");
    }
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": info,
        "instructions": "Run shell commands with exec. A command still running after yield_ms \
            keeps running in the background and exec returns its process_id: follow its output \
            with read (pass next_seq back as since_seq to get only new output), block with wait \
            (optionally until a regex matches), send input with write, and end it with stop. \
            ps lists processes; cleanup forgets finished ones.",
    })
}

struct ToolDef {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "shell_execute",
        title: "Run an allowed command",
        description: "Run an allowlisted command without a shell and return its output when it \
            finishes. command is an argv array such as [\"ls\", \"-l\"]; elements that are exactly \
            \"|\", \"<\", \">\" or \">>\" build a pipeline and redirections relative to directory \
            (e.g. [\"grep\", \"x\", \"in.txt\", \"|\", \"wc\", \"-l\"]). No shell syntax, globbing or \
            variables. Every stage must be allowlisted; dangerous options are refused. A non-zero \
            exit, a timeout or too much output is an error that still returns the output so far.",
        input: shell_execute_input,
        output: shell_execute_output,
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
    ToolDef {
        name: "exec",
        title: "Run a shell command",
        description: "Run a shell command and return its output. Fast commands return \
            status \"completed\" with exit_code, stdout and stderr. A command still running after \
            yield_ms (default 30000) returns status \"backgrounded\" with a process_id and keeps \
            running: use read, wait, write and stop with that id. A shell that exits while \
            something it started keeps running (e.g. `server &`) also returns \"backgrounded\". \
            Output beyond max_output_bytes is kept in a buffer: capped=true means more is \
            available via read from next_seq. side_effects is required: declare every plausible \
            category, or [\"NONE\"] for read-only commands; calls declaring a blocked category are \
            refused before anything runs (status failed_to_start). tty=true runs the command on a \
            terminal (REPLs, tools that need one; stderr joins stdout, escapes are removed unless \
            raw). A command that stops to ask for input returns at once with awaiting_input=true \
            and its prompt: answer with write.",
        input: exec_input,
        output: exec_output,
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
    ToolDef {
        name: "read",
        title: "Read process output",
        description: "Read the output of a process started by exec. Every byte of stdout and \
            stderr has a position; pass the returned next_seq as since_seq next time to get only \
            new output, with no gap and no repeat. Without since_seq it returns the oldest output \
            still buffered; tail_lines returns only the newest lines. truncated=true means older \
            output was dropped from the buffer; capped=true means more output is available now. \
            The first output is kept anyway: a read from the start returns it, then gap_from and \
            gap_to name the positions that were dropped. awaiting_input=true (with prompt) means \
            the process is blocked reading its input.",
        input: read_input,
        output: read_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    ToolDef {
        name: "write",
        title: "Write to process stdin",
        description: "Write text to the stdin of a running process (start it with exec \
            close_stdin=false, or tty=true). newline=true appends a newline; close_stdin=true sends \
            end of file after the text. On a tty the text is typed as is: \"\\u0003\" is Ctrl-C, \
            \"\\u0004\" (or close_stdin) ends the input.",
        input: write_input,
        output: write_output,
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    ToolDef {
        name: "wait",
        title: "Wait for a process",
        description:
            "Block until a process exits, until its new output matches the regex \
            `until`, until it waits for input (until_input=true), or until timeout_ms (at most \
            55000) passes; wait_result says which (exited, matched, awaiting_input, \
            deadline_reached). process_ids waits for the first of several and names it \
            (process_id; statuses lists all). Never stops the process. Returns output like read.",
        input: wait_input,
        output: wait_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    ToolDef {
        name: "stop",
        title: "Stop a process",
        description: "Stop a process and everything it started: sends signal (default SIGTERM) \
            to its whole process group, sends SIGKILL after force_after_ms (default 10000) if \
            anything is left, and returns once all of it is gone.",
        input: stop_input,
        output: stop_output,
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: true,
    },
    ToolDef {
        name: "ps",
        title: "List processes",
        description: "List the processes started by exec, newest first, with status, exit \
            code, output sizes and idle time.",
        input: ps_input,
        output: ps_output,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    ToolDef {
        name: "cleanup",
        title: "Forget finished processes",
        description: "Remove records of finished processes older than the given ages (default \
            one hour) to free memory. Running processes are never removed.",
        input: cleanup_input,
        output: cleanup_output,
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
];

fn int_prop(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

fn exec_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command line, run as <shell> -c <command>."},
            "side_effects": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": {"type": "string", "enum": SIDE_EFFECTS},
                "description": "Every side effect the command may plausibly have; [\"NONE\"] alone for none."
            },
            "cwd": {"type": "string", "description": "Working directory (relative paths resolve against the default)."},
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Variables added to the environment."},
            "shell": {"type": "string", "description": "Shell to run the command with (default /bin/sh)."},
            "stdin": {"type": "string", "description": "Text written to stdin right after start."},
            "close_stdin": {"type": "boolean", "default": true, "description": "Close stdin after `stdin`; false keeps it open for write."},
            "name": {"type": "string", "description": "Label shown by ps."},
            "yield_ms": int_prop("How long to wait before returning with the command still running (default 30000, at most 55000)."),
            "timeout_ms": int_prop("Total runtime limit; then the process group is stopped. 0 = unlimited (default 3600000)."),
            "max_output_bytes": int_prop("Most bytes of output in this response, both streams together (default 20000)."),
            "tail_lines": int_prop("Return only the newest N lines of each stream."),
            "tty": {"type": "boolean", "default": false, "description": "Run on a pseudo-terminal (shell mode): for REPLs and tools that need a terminal. stderr joins stdout; stdin stays open for write."},
            "rows": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 40, "description": "Terminal rows (with tty)."},
            "cols": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200, "description": "Terminal columns (with tty)."},
            "raw": {"type": "boolean", "default": false, "description": "Keep terminal escape sequences in the output (tty)."}
        },
        "required": ["command", "side_effects"]
    })
}

fn shell_execute_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Program and arguments; \"|\", \"<\", \">\", \">>\" elements are operators."},
            "stdin": {"type": "string", "description": "Input for the first stage."},
            "directory": {"type": "string", "description": "Working directory (relative to the server's)."},
            "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is killed (default 30, at most 300)."}
        },
        "required": ["command"]
    })
}

fn shell_execute_output() -> Value {
    json!({"type": "object", "properties": {
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "status": {"type": "integer"},
        "execution_time": {"type": "number"},
        "stage_status": {"type": "array", "items": {"type": ["integer", "null"]}},
        "error": {"type": "string"},
        "capped": {"type": "boolean", "description": "The output limit was hit: stdout and stderr are each stream's first bytes, up to the limit."}
    }, "required": ["stdout", "stderr", "status", "execution_time"]})
}

fn process_output_props() -> Map<String, Value> {
    let props = json!({
        "process_id": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "signal": {"type": ["string", "null"]},
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "start_seq": {"type": "integer"},
        "next_seq": {"type": "integer"},
        "latest_seq": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "capped": {"type": "boolean"},
        "stdin_error": {"type": ["string", "null"]},
        "error": {"type": "string"},
        "awaiting_input": {"type": "boolean", "description": "A process of the command is blocked reading its input and printed nothing for 300 ms."},
        "prompt": {"type": "string", "description": "The last partial line of output, when awaiting_input."},
        "gap_from": {"type": "integer", "description": "First position dropped from the buffer inside this read's range."},
        "gap_to": {"type": "integer", "description": "Last position dropped (inclusive); the read continues after it."}
    });
    match props {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn object_schema(props: Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn exec_output() -> Value {
    let mut p = process_output_props();
    p.insert("pid".into(), json!({"type": "integer"}));
    p.insert("duration_ms".into(), json!({"type": "integer"}));
    p.insert("message".into(), json!({"type": "string"}));
    p.insert(
        "status".into(),
        json!({"type": "string", "enum": ["completed", "backgrounded", "timed_out", "stopped", "failed", "failed_to_start"]}),
    );
    object_schema(p, &["status"])
}

fn id_prop() -> Value {
    json!({"type": "string", "description": "The process_id returned by exec."})
}

fn read_props() -> Value {
    json!({
        "process_id": id_prop(),
        "since_seq": int_prop("Continue from this position (the next_seq of the previous read)."),
        "max_output_bytes": int_prop("Most bytes to return, both streams together."),
        "streams": {"type": "string", "enum": ["both", "stdout", "stderr"], "default": "both"},
        "tail_lines": int_prop("Return only the newest N lines of each stream."),
        "raw": {"type": "boolean", "default": false, "description": "Keep terminal escape sequences (tty processes)."}
    })
}

fn read_input() -> Value {
    json!({"type": "object", "properties": read_props(), "required": ["process_id"]})
}

fn read_output() -> Value {
    object_schema(process_output_props(), &[])
}

fn write_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "process_id": id_prop(),
            "input": {"type": "string", "description": "Text to write."},
            "newline": {"type": "boolean", "default": false, "description": "Append a newline."},
            "close_stdin": {"type": "boolean", "default": false, "description": "Close stdin after writing (end of file)."}
        },
        "required": ["process_id", "input"]
    })
}

fn write_output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"}, "ok": {"type": "boolean"}, "error": {"type": "string"}
    }, "required": []})
}

fn wait_input() -> Value {
    let mut props = read_props();
    props["timeout_ms"] = int_prop("Longest wait (default and maximum 55000).");
    props["until"] = json!({"type": "string", "description": "Also return as soon as new output (after since_seq) matches this regex."});
    props["until_input"] = json!({"type": "boolean", "default": false, "description": "Also return as soon as the process waits for input (wait_result awaiting_input)."});
    props["process_ids"] = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 64, "description": "Wait for the first of these processes instead of process_id."});
    json!({"type": "object", "properties": props, "required": []})
}

fn wait_output() -> Value {
    let mut p = process_output_props();
    p.insert(
        "wait_result".into(),
        json!({"type": "string", "enum": ["exited", "matched", "awaiting_input", "deadline_reached"]}),
    );
    p.insert("waited_ms".into(), json!({"type": "integer"}));
    p.insert(
        "statuses".into(),
        json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "With process_ids: the status of each."}),
    );
    object_schema(p, &[])
}

fn stop_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "process_id": id_prop(),
            "signal": {"type": "string", "default": "SIGTERM", "description": "Signal name such as SIGTERM, SIGINT, SIGKILL (case-insensitive, SIG optional)."},
            "force_after_ms": int_prop("Grace before SIGKILL (default 10000, at most 50000).")
        },
        "required": ["process_id"]
    })
}

fn stop_output() -> Value {
    json!({"type": "object", "properties": {
        "process_id": {"type": "string"},
        "stopped": {"type": "boolean"},
        "signal": {"type": "string"},
        "status": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]},
        "exit_signal": {"type": ["string", "null"]},
        "error": {"type": ["string", "null"]}
    }, "required": []})
}

fn ps_input() -> Value {
    json!({"type": "object", "properties": {
        "include_completed": {"type": "boolean", "default": true, "description": "Include finished processes."},
        "limit": int_prop("Most entries to return (default 50).")
    }})
}

fn ps_output() -> Value {
    json!({"type": "object", "properties": {"processes": {"type": "array", "items": {"type": "object"}}, "error": {"type": "string"}}})
}

fn cleanup_input() -> Value {
    json!({"type": "object", "properties": {
        "completed_older_than_ms": int_prop("Remove completed records that ended longer ago than this (default 3600000)."),
        "stopped_older_than_ms": int_prop("Remove stopped, timed-out and failed records that ended longer ago than this (default 3600000).")
    }})
}

fn cleanup_output() -> Value {
    json!({"type": "object", "properties": {"removed": {"type": "integer"}, "error": {"type": "string"}}})
}

/// The `tools/list` result for the enabled tools and the negotiated version.
pub fn tools_list(enabled: &[&str], version: &str) -> Value {
    let mut tools = Vec::new();
    for def in TOOLS.iter().filter(|d| enabled.contains(&d.name)) {
        let mut t = Map::new();
        t.insert("name".into(), Value::from(def.name));
        t.insert("description".into(), Value::from(def.description));
        t.insert("inputSchema".into(), (def.input)());
        if has_structured(version) {
            t.insert("title".into(), Value::from(def.title));
            t.insert("outputSchema".into(), (def.output)());
        }
        if has_annotations(version) {
            t.insert(
                "annotations".into(),
                json!({
                    "title": def.title,
                    "readOnlyHint": def.read_only,
                    "destructiveHint": def.destructive,
                    "idempotentHint": def.idempotent,
                    "openWorldHint": def.open_world,
                }),
            );
        }
        tools.push(Value::Object(t));
    }
    json!({ "tools": tools })
}

/// Whether `name` is a tool this build implements.
pub fn is_known_tool(name: &str) -> bool {
    TOOLS.iter().any(|d| d.name == name)
}

/// Wraps a tool reply as a `CallToolResult`.
pub fn call_result(reply: Reply, version: &str) -> Value {
    let object = Value::Object(reply.value);
    let content: Vec<Value> = match reply.texts {
        Some(texts) => texts
            .into_iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect(),
        None => vec![
            json!({"type": "text", "text": serde_json::to_string(&object).unwrap_or_default()}),
        ],
    };
    let mut r = Map::new();
    r.insert("content".into(), Value::Array(content));
    if has_structured(version) {
        r.insert("structuredContent".into(), object);
    }
    r.insert("isError".into(), Value::Bool(reply.is_error));
    Value::Object(r)
}

/// The whole response line of a `tools/call` (without the newline), built directly: the
/// result object is serialised once, and that text escaped once more for the text block,
/// instead of building and serialising a tree that holds the output three times.
pub fn call_response_line(id: &Value, reply: Reply, version: &str) -> Vec<u8> {
    use crate::jsonrpc::{json_len_estimate, write_str, write_value, write_value_in_string};
    let object = Value::Object(reply.value);
    let size = json_len_estimate(&object);
    let texts_size: usize = reply
        .texts
        .iter()
        .flatten()
        .map(|t| t.len() + t.len() / 8 + 40)
        .sum();
    let mut line = Vec::with_capacity(size * 2 + size / 4 + texts_size + 200);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_value(&mut line, id);
    line.extend_from_slice(b",\"result\":{");
    // The structured object first (key order is free in JSON), then the text block that
    // holds the same object as JSON text, escaped straight from the tree.
    if has_structured(version) {
        line.extend_from_slice(b"\"structuredContent\":");
        write_value(&mut line, &object);
        line.push(b',');
    }
    line.extend_from_slice(b"\"content\":[");
    match &reply.texts {
        Some(texts) => {
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                write_str(&mut line, t);
                line.push(b'}');
            }
        }
        None => {
            line.extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
            write_value_in_string(&mut line, &object);
            line.extend_from_slice(b"\"}");
        }
    }
    line.push(b']');
    line.extend_from_slice(if reply.is_error {
        b",\"isError\":true}}"
    } else {
        b",\"isError\":false}}"
    });
    line
}

/// Runs a tool; its answer goes through `call` (now, or later for a tool that waits).
pub fn call_tool(engine: &Arc<Engine>, name: &str, args: &Map<String, Value>, call: Call) {
    let a = Args { map: args };
    let parsed = match name {
        "exec" => exec(&a),
        "shell_execute" => shell_execute(&a),
        "read" => read(&a),
        "write" => write(&a),
        "wait" => wait(&a),
        "stop" => stop(&a),
        "ps" => ps(&a),
        "cleanup" => cleanup(&a),
        other => Err(format!("unknown tool {other:?}")),
    };
    match parsed {
        Ok(run) => run(engine, call),
        Err(message) => {
            let mut reply = Reply::error(message);
            if name == "exec" {
                // No process was created: the same shape as any refusal of exec.
                reply
                    .value
                    .insert("status".into(), Value::from("failed_to_start"));
            }
            if let Some(Value::String(id)) = args.get("process_id") {
                reply
                    .value
                    .insert("process_id".into(), Value::from(id.clone()));
            }
            call.respond.send(Some(reply));
        }
    }
}

/// A tool call with valid arguments, ready to run.
type Run = Box<dyn FnOnce(&Arc<Engine>, Call)>;

type Parsed = Result<Run, String>;

/// A tool that answers at once.
fn now(f: impl FnOnce(&Engine) -> Reply + 'static) -> Parsed {
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        call.respond.send(Some(f(engine)))
    }))
}

fn exec(a: &Args<'_>) -> Parsed {
    let args = ExecArgs {
        command: a
            .string("command")?
            .ok_or_else(|| missing("command", "a shell command line"))?,
        side_effects: a.side_effects()?,
        cwd: a.string("cwd")?,
        env: a.string_map("env")?,
        shell: a.string("shell")?,
        stdin: a.string("stdin")?,
        close_stdin: a.boolean("close_stdin")?.unwrap_or(true),
        name: a.string("name")?,
        yield_ms: a.uint("yield_ms")?,
        timeout_ms: a.uint("timeout_ms")?,
        max_output_bytes: a.uint("max_output_bytes")?,
        tail_lines: a.uint("tail_lines")?,
        agent: crate::agents::ExecExtras {
            tty: a.boolean("tty")?.unwrap_or(false),
            rows: a.uint("rows")?,
            cols: a.uint("cols")?,
            raw: a.boolean("raw")?.unwrap_or(false),
        },
    };
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.exec(args, call)
    }))
}

fn shell_execute(a: &Args<'_>) -> Parsed {
    let command = match a.get("command") {
        Some(Value::Array(items)) => {
            let mut argv = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => argv.push(s.clone()),
                    other => return Err(format!("invalid argument command: every element must be a string, got {}", show(other))),
                }
            }
            argv
        }
        Some(other) => return Err(format!("invalid argument command: expected an array of strings such as [\"ls\", \"-l\"], got {}", show(other))),
        None => return Err(missing("command", "an array of strings such as [\"ls\", \"-l\"]")),
    };
    let timeout = a.uint("timeout")?;
    let args = ShellExecArgs {
        command,
        stdin: a.string("stdin")?,
        directory: a.string("directory")?,
        timeout,
    };
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.shell_execute(args, call)
    }))
}

fn read_args(a: &Args<'_>) -> Result<ReadArgs, String> {
    let streams = match a.string("streams")?.as_deref() {
        None | Some("both") => Streams::Both,
        Some("stdout") => Streams::Stdout,
        Some("stderr") => Streams::Stderr,
        Some(other) => {
            return Err(format!(
            "invalid argument streams: got {other:?}; expected \"both\", \"stdout\" or \"stderr\""
        ))
        }
    };
    Ok(ReadArgs {
        since_seq: a.uint("since_seq")?,
        max_output_bytes: a.uint("max_output_bytes")?,
        streams,
        tail_lines: a.uint("tail_lines")?,
        raw: a.boolean("raw")?.unwrap_or(false),
    })
}

fn process_id(a: &Args<'_>) -> Result<String, String> {
    a.string("process_id")?.ok_or_else(|| {
        missing(
            "process_id",
            "the process_id returned by exec, such as proc_0123456789ab",
        )
    })
}

fn read(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let args = read_args(a)?;
    if args.since_seq.is_some() && args.tail_lines.is_some() {
        return Err("since_seq and tail_lines cannot be combined: give since_seq to continue a read, or tail_lines for the newest lines".into());
    }
    now(move |engine| engine.read(&id, args))
}

fn write(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let input = a
        .string("input")?
        .ok_or_else(|| missing("input", "the text to write"))?;
    let newline = a.boolean("newline")?.unwrap_or(false);
    let close = a.boolean("close_stdin")?.unwrap_or(false);
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.write(&id, &input, newline, close, call)
    }))
}

fn wait(a: &Args<'_>) -> Parsed {
    let ids = crate::agents::wait_ids(a.get("process_id"), a.get("process_ids"))?;
    let until_input = a.boolean("until_input")?.unwrap_or(false);
    let args = read_args(a)?;
    let timeout = a.uint("timeout_ms")?;
    let until = match a.string("until")? {
        Some(pattern) => Some(Regex::new(&pattern).map_err(|e| {
            format!(
                "invalid argument until: {pattern:?} is not a valid regex ({}); use Rust regex syntax, e.g. \"ready|listening on\"",
                e.to_string().lines().last().unwrap_or("").trim()
            )
        })?),
        None => None,
    };
    let timeout = timeout.map(|t| t.min(TRANSPORT_CEILING_MS));
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.wait(&ids, timeout, until, until_input, args, call)
    }))
}

fn stop(a: &Args<'_>) -> Parsed {
    let id = process_id(a)?;
    let signal = a.string("signal")?;
    let force = a.uint("force_after_ms")?;
    Ok(Box::new(move |engine: &Arc<Engine>, call: Call| {
        engine.stop(&id, signal.as_deref(), force, call)
    }))
}

fn ps(a: &Args<'_>) -> Parsed {
    let include = a.boolean("include_completed")?.unwrap_or(true);
    let limit = a.uint("limit")?.unwrap_or(50);
    now(move |engine| engine.ps(include, limit.min(usize::MAX as u64) as usize))
}

fn cleanup(a: &Args<'_>) -> Parsed {
    let completed = a.int("completed_older_than_ms")?.unwrap_or(3_600_000);
    let stopped = a.int("stopped_older_than_ms")?.unwrap_or(3_600_000);
    if completed < 0 || stopped < 0 {
        let mut reply = Reply::error(format!(
            "thresholds must be non-negative milliseconds (got completed_older_than_ms={completed}, stopped_older_than_ms={stopped}); nothing was removed"
        ));
        reply.value.insert("removed".into(), Value::from(0));
        return now(move |_| reply);
    }
    now(move |engine| engine.cleanup(completed as u64, stopped as u64))
}

fn missing(field: &str, what: &str) -> String {
    format!("missing required argument {field}: expected {what}")
}

/// Lenient typed access to a tool's arguments.
struct Args<'a> {
    map: &'a Map<String, Value>,
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

impl Args<'_> {
    /// The value, with `null` meaning absent.
    fn get(&self, name: &str) -> Option<&Value> {
        match self.map.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "invalid argument {name}: expected a string, got {}",
                show(other)
            )),
        }
    }

    fn int(&self, name: &str) -> Result<Option<i64>, String> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let parsed = match v {
            Value::Number(n) => n.as_i64().or_else(|| {
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
            }),
            Value::String(s) => {
                let t = s.trim();
                t.parse::<i64>().ok().or_else(|| {
                    let f: f64 = t.parse().ok()?;
                    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
                })
            }
            _ => None,
        };
        parsed.map(Some).ok_or_else(|| {
            format!(
                "invalid argument {name}: expected an integer, got {}",
                show(v)
            )
        })
    }

    fn uint(&self, name: &str) -> Result<Option<u64>, String> {
        match self.int(name) {
            Ok(Some(n)) if n < 0 => Err(format!(
                "invalid argument {name}: expected a non-negative integer, got {n}"
            )),
            Ok(n) => Ok(n.map(|n| n as u64)),
            Err(_) => {
                let shown = self.get(name).map(show).unwrap_or_default();
                // Huge integers are clamped rather than refused: they mean "as much as allowed".
                if let Some(Value::Number(n)) = self.get(name) {
                    if n.as_u64().is_some() {
                        return Ok(n.as_u64());
                    }
                    if n.as_f64().is_some_and(|f| f >= 9.0e15 && f.is_finite()) {
                        return Ok(Some(u64::MAX / 4));
                    }
                }
                Err(format!(
                    "invalid argument {name}: expected a non-negative integer, got {shown}"
                ))
            }
        }
    }

    fn boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(other) => Err(format!(
                "invalid argument {name}: expected true or false, got {}",
                show(other)
            )),
        }
    }

    fn string_map(&self, name: &str) -> Result<Vec<(String, String)>, String> {
        let Some(v) = self.get(name) else {
            return Ok(Vec::new());
        };
        let Value::Object(m) = v else {
            return Err(format!(
                "invalid argument {name}: expected an object of strings, got {}",
                show(v)
            ));
        };
        let mut out = Vec::new();
        for (k, v) in m {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(format!(
                    "invalid argument {name}: {k:?} is not a valid variable name"
                ));
            }
            let value = match v {
                Value::String(s) => s.clone(),
                other => {
                    return Err(format!(
                        "invalid argument {name}.{k}: expected a string, got {}",
                        show(other)
                    ))
                }
            };
            if value.contains('\0') {
                return Err(format!(
                    "invalid argument {name}.{k}: a value cannot contain a NUL character"
                ));
            }
            out.push((k.clone(), value));
        }
        Ok(out)
    }

    fn side_effects(&self) -> Result<Vec<String>, String> {
        let name = "side_effects";
        let items: Vec<Value> = match self.get(name) {
            None => {
                return Err(format!(
                    "missing required argument side_effects: expected a non-empty array of categories such as [\"NONE\"]; one or more of {}",
                    SIDE_EFFECTS.join(", ")
                ))
            }
            Some(Value::Array(a)) => a.clone(),
            Some(other) => return Err(format!("invalid argument side_effects: expected an array of strings, got {}", show(other))),
        };
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let Value::String(s) = &item else {
                return Err(format!(
                    "invalid argument side_effects: expected strings, got {}",
                    show(&item)
                ));
            };
            if !SIDE_EFFECTS.contains(&s.as_str()) {
                return Err(format!(
                    "invalid argument side_effects: unknown category {s:?}; expected one or more of {}",
                    SIDE_EFFECTS.join(", ")
                ));
            }
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2099-01-01")), LATEST);
        assert_eq!(negotiate(None), LATEST);
    }

    #[test]
    fn lenient_numbers_and_booleans() {
        let m =
            json!({"a": "100", "b": 100.0, "c": -1, "d": "x", "e": "true", "f": null, "g": 1.5});
        let Value::Object(m) = m else { unreachable!() };
        let a = Args { map: &m };
        assert_eq!(a.uint("a").unwrap(), Some(100));
        assert_eq!(a.uint("b").unwrap(), Some(100));
        assert!(a.uint("c").unwrap_err().contains("got -1"));
        assert!(a.uint("d").unwrap_err().contains("\"x\""));
        assert_eq!(a.boolean("e").unwrap(), Some(true));
        assert_eq!(a.uint("f").unwrap(), None);
        assert!(a.uint("g").is_err());
        assert_eq!(a.uint("missing").unwrap(), None);
    }

    #[test]
    fn response_line_equals_the_tree_form() {
        let mut value = Map::new();
        value.insert("stdout".into(), Value::from("a\"b\n\u{1}é"));
        value.insert("status".into(), Value::from("completed"));
        for version in VERSIONS {
            for texts in [None, Some(vec!["one".to_string(), "two\n".to_string()])] {
                let reply = || Reply {
                    value: value.clone(),
                    is_error: texts.is_some(),
                    texts: texts.clone(),
                };
                let id = json!("x1");
                let line = call_response_line(&id, reply(), version);
                let parsed: Value = serde_json::from_slice(&line).unwrap();
                let tree = crate::jsonrpc::response(&id, call_result(reply(), version));
                assert_eq!(parsed, tree, "{version}");
                assert!(!line.contains(&b'\n'));
            }
        }
    }

    #[test]
    fn tool_fields_follow_the_version() {
        let all = ["exec", "read", "write", "wait", "stop", "ps", "cleanup"];
        let old = tools_list(&all, "2024-11-05");
        assert!(old["tools"][0].get("annotations").is_none());
        assert!(old["tools"][0].get("title").is_none());
        let mid = tools_list(&all, "2025-03-26");
        assert!(mid["tools"][0].get("annotations").is_some());
        assert!(mid["tools"][0].get("outputSchema").is_none());
        let new = tools_list(&all, "2025-11-25");
        assert_eq!(new["tools"].as_array().map(Vec::len), Some(7));
        assert!(new["tools"][0].get("outputSchema").is_some());
        assert_eq!(new["tools"][4]["annotations"]["destructiveHint"], true);
        assert_eq!(new["tools"][1]["annotations"]["readOnlyHint"], true);
    }
}
