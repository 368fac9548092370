#!/usr/bin/env python3
"""Differential test: yieldshell against the Python servers it replaces.

The same calls go to mcp-yieldshell 1.1.2 and to yieldshell with YIELDSHELL_API=1.1, and to
mcp-shell-server 1.1.14 and to yieldshell in trusted mode; what a client of the original reads
is compared. A difference fails the run unless it is a listed departure (DEPARTURES below, the
same list as docs/drop-in.md), each with its reason.

Usage: driver.py --yieldshell BIN --python-bin DIR [--docs docs/drop-in.md] [--verbose]
    [--only yieldshell|shell]
(scripts/differential.sh installs the originals and builds the binary first.)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# ---------------------------------------------------------------------------------------
# Departures: differences kept on purpose. Each has an id, the reason, and where it applies.
# docs/drop-in.md lists the same ids in its table (--docs checks that both name the same).
# ---------------------------------------------------------------------------------------
DEPARTURES = {
    # shell_execute (mcp-shell-server 1.1.14)
    "exact-output": "Output is returned byte for byte; the original strips leading and "
    "trailing whitespace of a single command's output, which loses indentation and the "
    "final newline that tools such as diff and patch need.",
    "guidance": "A refusal keeps the original's words and adds, after them, what to do "
    "instead (the allowed names, the rule that refused, a safer form).",
    "empty-content": "A command that prints nothing answers with one empty text block; the "
    "original sends an empty content list, which some clients refuse.",
    "trailing-pipe": "A `|` with no command after it (or before it) is refused with a message "
    "saying so; the original silently drops a trailing `|` and runs what is left.",
    "empty-elements": "An empty element is passed to the program as an empty argument "
    "(`grep '' f` matches every line); the original drops empty elements.",
    "ampersand": "An element that is exactly `&` is refused (a caller who sends it wants the "
    "command in the background, which argv cannot do); the original passes it on as text.",
    "pipeline-streams": "Pipeline stages run at once, joined by real pipes, and the first "
    "stage's input is the call's stdin; the original runs them one after another, feeding "
    "each stage the whole output of the one before, which fails with `Connection lost` or "
    "`Broken pipe` (at random) when a stage does not read all its input and loses large or stdin-fed input. A failed stage is "
    "reported with the stderr of the pipeline (the stages share it) and a line naming the "
    "stage and its status.",
    "operator-in-pipeline": "An element containing `;`, `&&`, `||`, a backtick or a line "
    "break is refused in every stage of a pipeline; the original checks only the first "
    "element of each stage, so `grep 'a;b' | wc` ran there.",
    "command-name": "A command name with spaces around it is refused before anything runs; "
    "the original trims it for the allowlist and then fails to start the program.",
    "argument-errors": "Arguments that break the input schema are refused with "
    "`Input validation error:` as the original did, then the field, the value received "
    "and what is accepted in this server's words.",
    "lenient-arguments": "As for every tool here, an integer given as a numeric string is "
    "accepted and a timeout below 1 is raised to 1; the original's schema refuses both.",
    "closed-rules": "A program with argument rules refuses an option its rule does not know "
    "before anything runs (`… sort option --bogus is not known to the rule`); the original ran "
    "the program, which refused the option itself. Both are errors.",
    "cwd-policy": "Trusted mode refuses a working directory that holds a directory of the "
    "safe PATH (such as `/`): a call could write beneath it a program under an allowed name.",
    "bounded-results": "The answer holds at most the output budget "
    "(YIELDSHELL_MAX_OUTPUT_BYTES): the first and last part of a long output around a line "
    "that says how much was left out and how to read it; the original returns up to its "
    "1 MiB cap in one block.",
    "mode-by-allowlist": "Without ALLOW_COMMANDS, ALLOWED_COMMANDS or ALLOW_PATTERNS the "
    "server starts in shell mode (its shell tools, no shell_execute); the original lists "
    "shell_execute and refuses every call. YIELDSHELL_MODE=trusted gives the original's "
    "answer.",
    "json-rpc-codes": "A call to an unknown tool or with arguments that are not an object "
    "is a JSON-RPC error (-32602); the original answers a tool result with isError.",
    # YIELDSHELL_API=1.1 (mcp-yieldshell 1.1.2)
    "schema-errors": "A call whose arguments break the input schema is a tool result with "
    "isError true whose text names the field and what is accepted; 1.1.2's text is "
    "pydantic's report. Both are isError true.",
    "retention-timing": "Finished records beyond YIELDSHELL_MAX_RETAINED_PROCESSES are "
    "removed before each start, so the record an answer just named stays readable until "
    "the next command starts; 1.1.2 also removed them right after each answer, so `ps` "
    "there can list one record fewer.",
    "timeout-race": "A command stopped for its timeout is answered once its shell is reaped, "
    "with exit_code -15 and signal SIGTERM; 1.1.2 sometimes answers before it has reaped "
    "the shell, with both null.",
    "signal-name": "stop reports the signal it sent by its full name (`SIGINT`); 1.1.2 "
    "echoes the name as given (`int`).",
    "error-words": "An error text says what was wrong and what is accepted in this server's "
    "words (1.1's `error` fields; shell_execute's redirection and working-directory "
    "errors); clients show these texts and none parse them. The texts a client may match "
    "on are the originals' (`Unknown execution_id: ID`, `Maximum process limit (N) "
    "reached`, `Error executing command:`, `Unexpected shell operator:`).",
    "empty-stream-cursor": "A read of one stream that has printed nothing answers with "
    "the cursor at the end of the output; 1.1.2 answers 1 (the start) in that case.",
}


# Departures where the original's value may be null and ours set (a race on its side).
ORIGINAL_MAY_BE_NULL = {"timeout-race"}


class Server:
    """One MCP server over stdio."""

    def __init__(self, argv, env, cwd):
        full = dict(os.environ)
        for k in list(full):
            if k.startswith(("YIELDSHELL_", "MCP_", "ALLOW")):
                del full[k]
        full.update(env)
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=full,
            cwd=cwd,
        )
        self.next_id = 0
        self.call("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "differential", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout during {method}")
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg

    def tool(self, name, args):
        return self.call("tools/call", {"name": name, "arguments": args})

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------------------------
# What a client reads
# ---------------------------------------------------------------------------------------
def texts_view(msg):
    """mcp-shell-server's clients: isError and the text blocks."""
    if "error" in msg:
        return {"rpc_error": msg["error"]["code"], "message": msg["error"]["message"]}
    r = msg["result"]
    return {"isError": bool(r.get("isError")), "texts": [c.get("text") for c in r["content"]]}


def json_view(msg):
    """mcp-yieldshell 1.1.2's clients: isError and the one text block parsed as JSON."""
    if "error" in msg:
        return {"rpc_error": msg["error"]["code"], "message": msg["error"]["message"]}
    r = msg["result"]
    content = r.get("content") or []
    view = {"isError": bool(r.get("isError")), "blocks": len(content)}
    text = content[0].get("text", "") if content else ""
    try:
        obj = json.loads(text)
        view["object"] = obj if isinstance(obj, dict) else {"<not an object>": obj}
    except ValueError:
        view["text"] = text
    # A client that reads structuredContent must read the same object.
    if "structuredContent" in r and r["structuredContent"] != view.get("object"):
        view["structured differs from the text"] = True
    return view


HEX12 = re.compile(r"^[0-9a-f]{12}$")


class Ids:
    """Execution ids seen on one server, named by the order of first appearance."""

    def __init__(self):
        self.names = {}

    def name(self, value):
        if value not in self.names:
            self.names[value] = f"<id{len(self.names) + 1}>"
        return self.names[value]


def number_or(v, label):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return f"<{label}:number>"
    return f"<{label}:{type(v).__name__}>"


TIME_KEYS = {"started_at", "ended_at", "last_output_at"}
DURATION_KEYS = {"duration_ms", "waited_ms", "idle_ms"}


def normalise_object(obj, ids, workdir):
    if isinstance(obj.get("execution_id"), str):
        ids.name(obj["execution_id"])
    out = {}
    for k, v in obj.items():
        if k == "execution_id" and isinstance(v, str):
            form = "hex12" if HEX12.match(v) else "other"
            out[k] = f"{ids.name(v)}:{form}"
        elif k == "process_id":
            out[k] = number_or(v, "pid")
        elif k in TIME_KEYS:
            out[k] = number_or(v, "epoch")
        elif k in DURATION_KEYS:
            out[k] = number_or(v, "ms")
        elif k == "executions" and isinstance(v, list):
            out[k] = [normalise_object(e, ids, workdir) if isinstance(e, dict) else e for e in v]
        elif isinstance(v, str):
            s = v.replace(workdir, "<dir>")
            for raw, name in ids.names.items():
                s = s.replace(raw, name)
            out[k] = s
        else:
            out[k] = v
    return out


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------
class Tally:
    def __init__(self, verbose):
        self.verbose = verbose
        self.calls = 0
        self.equal = 0
        self.departed = {}
        self.failures = []

    def depart(self, dep, label):
        assert dep in DEPARTURES, dep
        self.departed.setdefault(dep, []).append(label)

    def fail(self, label, detail):
        self.failures.append((label, detail))


# ---------------------------------------------------------------------------------------
# mcp-yieldshell 1.1.2 against YIELDSHELL_API=1.1
# ---------------------------------------------------------------------------------------
def compare_json(tally, label, orig, ours, ids_o, ids_y, dir_o, dir_y, allow=()):
    tally.calls += 1
    if "rpc_error" in orig or "rpc_error" in ours:
        if orig.get("rpc_error") == ours.get("rpc_error"):
            tally.equal += 1
        elif "json-rpc-codes" in allow:
            tally.depart("json-rpc-codes", label)
        else:
            tally.fail(label, f"orig {orig} / ours {ours}")
        return
    problems = []
    if ours.get("structured differs from the text"):
        problems.append("structuredContent is not the object of the text")
    if orig["isError"] != ours["isError"]:
        problems.append(f"isError {orig['isError']} vs {ours['isError']}")
    if ours["blocks"] != 1:
        problems.append(f"{ours['blocks']} content blocks")
    if "object" not in orig:
        # 1.1.2 reports a schema error as plain text (pydantic's words).
        if problems or not orig["isError"]:
            tally.fail(label, "; ".join(problems) or f"1.1.2 text {orig.get('text')!r}")
        else:
            tally.depart("schema-errors", label)
        return
    if "object" not in ours:
        problems.append(f"text is not a JSON object: {ours.get('text', '')[:200]!r}")
        tally.fail(label, "; ".join(problems))
        return
    o = normalise_object(orig["object"], ids_o, dir_o)
    y = normalise_object(ours["object"], ids_y, dir_y)
    departed = set()
    allow = tuple(allow) + (("error-words", {"error"}),)

    def walk(ov, yv, path):
        if isinstance(ov, dict) and isinstance(yv, dict):
            for k, v in ov.items():
                if k not in yv:
                    problems.append(f"{path}{k}: missing (1.1.2: {v!r})")
                else:
                    walk(v, yv[k], f"{path}{k}.")
            return
        if isinstance(ov, list) and isinstance(yv, list) and len(ov) == len(yv):
            for i, (a, b) in enumerate(zip(ov, yv)):
                walk(a, b, f"{path}{i}.")
            return
        if ov == yv:
            return
        key = path.rstrip(".").split(".")[-1]
        dep = next((d for d, keys in allow if key in keys), None)
        same_type = (type(ov) is type(yv) and ov is not None) or (
            dep in ORIGINAL_MAY_BE_NULL and ov is None)
        if dep and same_type:
            departed.add(dep)
        else:
            problems.append(f"{path.rstrip('.')}: 1.1.2 {ov!r}, ours {yv!r}")

    walk(o, y, "")
    if problems:
        tally.fail(label, "; ".join(problems))
    elif departed:
        for d in departed:
            tally.depart(d, label)
    else:
        tally.equal += 1


def make_dirs(prefix):
    """Two identical working directories, one per server (redirections write there)."""
    base = tempfile.mkdtemp(prefix=prefix)
    dirs = {}
    for who in ("orig", "ours"):
        d = os.path.join(base, who)
        os.makedirs(os.path.join(d, "sub"))
        with open(os.path.join(d, "f.txt"), "w") as f:
            f.write("one\ntwo\nthree\n")
        dirs[who] = os.path.realpath(d)
    return base, dirs


class Pair:
    """mcp-yieldshell 1.1.2 and yieldshell with YIELDSHELL_API=1.1, same environment.

    `env` values may hold `{dir}`, replaced by each server's own working directory."""

    def __init__(self, args, tally, env):
        self.args, self.tally = args, tally
        self.base, self.dirs = make_dirs("ys-diff-")
        self.servers = {}
        for who, argv in (("orig", [os.path.join(args.python_bin, "mcp-yieldshell")]),
                          ("ours", [args.yieldshell])):
            e = {k: v.replace("{dir}", self.dirs[who]) for k, v in env.items()}
            if who == "ours":
                e["YIELDSHELL_API"] = "1.1"
            self.servers[who] = Server(argv, e, self.dirs[who])
        self.ids = {"orig": Ids(), "ours": Ids()}
        self.bound = {"orig": {}, "ours": {}}

    def step(self, label, tool, arguments, bind=None, allow=()):
        views = {}
        for who in ("orig", "ours"):
            a = json.loads(json.dumps(arguments).replace("{dir}", self.dirs[who]))
            for k, v in list(a.items()):
                if isinstance(v, str) and v.startswith("@"):
                    a[k] = self.bound[who].get(v[1:], v[1:])
            msg = self.servers[who].tool(tool, a)
            views[who] = json_view(msg)
            obj = views[who].get("object") or {}
            if bind and "execution_id" in obj:
                self.bound[who][bind] = obj["execution_id"]
            if self.args.verbose:
                print(f"  [{who}] {label}: {json.dumps(views[who])[:400]}")
        compare_json(self.tally, label, views["orig"], views["ours"], self.ids["orig"],
                     self.ids["ours"], self.dirs["orig"], self.dirs["ours"], allow)
        return views

    def close(self):
        for s in self.servers.values():
            s.close()
        shutil.rmtree(self.base, ignore_errors=True)


def yieldshell_scenario(args, tally):
    """One session on each server: every tool, success and error paths."""
    pair = Pair(args, tally, {
        "YIELDSHELL_MAX_BUFFER_BYTES": "65536",
        "YIELDSHELL_DENY_COMMAND_REGEX": "forbidden_word",
    })
    servers, step = pair.servers, pair.step

    # tools/list: names, and each input schema's properties and `required`.
    lists = {w: s.call("tools/list", {})["result"]["tools"] for w, s in servers.items()}
    tally.calls += 1
    o_tools = {t["name"]: t for t in lists["orig"]}
    y_tools = {t["name"]: t for t in lists["ours"]}
    problems = []
    for name, t in o_tools.items():
        if name not in y_tools:
            problems.append(f"tool {name} missing")
            continue
        oi, yi = t["inputSchema"], y_tools[name]["inputSchema"]
        if sorted(oi.get("required", [])) != sorted(yi.get("required", [])):
            problems.append(f"{name} required {oi.get('required')} vs {yi.get('required')}")
        for p in oi.get("properties", {}):
            if p not in yi.get("properties", {}):
                problems.append(f"{name} lacks property {p}")
    if problems:
        tally.fail("tools/list", "; ".join(problems))
    else:
        tally.equal += 1

    N = ["NONE"]
    step("execute printf", "execute", {"command": "printf abc", "side_effects": N}, bind="a")
    step("execute both streams, exit 3", "execute",
         {"command": "echo out; echo err >&2; exit 3", "side_effects": N})
    step("execute env overlay", "execute",
         {"command": "echo $DIFF_X", "side_effects": N, "env": {"DIFF_X": "value"}})
    step("execute relative cwd", "execute", {"command": "pwd", "side_effects": N, "cwd": "sub"})
    step("execute missing cwd", "execute", {"command": "pwd", "side_effects": N, "cwd": "nope"})
    step("execute cwd is a file", "execute",
         {"command": "pwd", "side_effects": N, "cwd": "f.txt"})
    step("execute empty side_effects", "execute", {"command": "true", "side_effects": []})
    step("execute blocked side effect", "execute",
         {"command": "python3 -c 1", "side_effects": ["RUNS_INLINE_CODE"]})
    step("execute two blocked", "execute",
         {"command": "true", "side_effects": ["MODIFIES_OS_SETTINGS", "KILLS_AGENT_PROCESS"]})
    step("execute NONE with another", "execute",
         {"command": "true", "side_effects": ["NONE", "OTHER"]})
    step("execute unknown category", "execute", {"command": "true", "side_effects": ["FOO"]})
    step("execute without side_effects", "execute", {"command": "true"})
    step("execute without command", "execute", {"side_effects": N})
    step("execute denied by regex", "execute",
         {"command": "echo forbidden_word", "side_effects": N})
    step("execute shell denied", "execute",
         {"command": "true", "side_effects": N, "shell": "/bin/forbidden_word"})
    step("execute empty shell", "execute", {"command": "true", "side_effects": N, "shell": " "})
    step("execute other shell", "execute",
         {"command": "echo $0", "side_effects": N, "shell": "/bin/bash"})
    step("execute missing shell", "execute",
         {"command": "true", "side_effects": N, "shell": "/nonexistent/sh"})
    step("execute stdin", "execute", {"command": "cat", "side_effects": N, "stdin": "hello"})
    step("execute name", "execute", {"command": "true", "side_effects": N, "name": "job"})
    step("execute numeric string", "execute",
         {"command": "true", "side_effects": N, "yield_ms": "5000"})
    step("execute exit by signal", "execute",
         {"command": "kill -TERM $$", "side_effects": N})
    step("execute timeout", "execute",
         {"command": "sleep 5", "side_effects": N, "timeout_ms": 300}, bind="timed",
         allow=(("timeout-race", {"exit_code", "signal"}),))
    step("read timed out", "read", {"execution_id": "@timed"},
         allow=(("timeout-race", {"exit_code", "signal"}),))
    # Background, stdin kept open, write, wait.
    step("execute cat kept open", "execute",
         {"command": "cat", "side_effects": N, "close_stdin": False, "yield_ms": 200},
         bind="cat")
    step("write to cat", "write", {"execution_id": "@cat", "input": "line1", "newline": True})
    step("wait deadline", "wait", {"execution_id": "@cat", "timeout_ms": 800})
    step("write and close", "write",
         {"execution_id": "@cat", "input": "line2\n", "close_stdin": True})
    step("wait exited", "wait", {"execution_id": "@cat", "timeout_ms": 5000})
    step("write to ended", "write", {"execution_id": "@cat", "input": "x"})
    step("read resumes at end", "read", {"execution_id": "@cat"})
    step("read since_seq 1", "read", {"execution_id": "@cat", "since_seq": 1})
    step("read since_seq 4", "read", {"execution_id": "@cat", "since_seq": 4})
    step("read tail_lines 1", "read", {"execution_id": "@cat", "tail_lines": 1})
    step("read stdout only", "read", {"execution_id": "@cat", "streams": "stdout",
                                      "since_seq": 1})
    step("read stderr only", "read", {"execution_id": "@cat", "streams": "stderr"},
         allow=(("empty-stream-cursor", {"start_seq", "next_seq"}),))
    step("read bad streams", "read", {"execution_id": "@cat", "streams": "all"})
    step("read since and tail", "read",
         {"execution_id": "@cat", "since_seq": 1, "tail_lines": 1})
    step("read tail 0", "read", {"execution_id": "@cat", "tail_lines": 0})
    step("wait tail 0", "wait", {"execution_id": "@cat", "tail_lines": 0})
    step("wait capped at 55000", "wait", {"execution_id": "@cat", "timeout_ms": 999999})
    step("write stdin closed", "write", {"execution_id": "@a", "input": "x"})
    # Paging: a capped execute, then reads that page on.
    step("execute capped", "execute",
         {"command": "seq 1 200", "side_effects": N, "max_output_bytes": 100}, bind="seq")
    for i in range(6):
        step(f"read page {i + 1}", "read", {"execution_id": "@seq", "max_output_bytes": 150})
    step("read page from 50", "read",
         {"execution_id": "@seq", "since_seq": 50, "max_output_bytes": 20})
    step("read tail capped", "read",
         {"execution_id": "@seq", "tail_lines": 50, "max_output_bytes": 20})
    step("wait with since_seq", "wait",
         {"execution_id": "@seq", "since_seq": 690, "max_output_bytes": 10})
    # Eviction: more than the 64 KiB buffer.
    step("execute evicting", "execute",
         {"command": "seq 1 30000", "side_effects": N, "max_output_bytes": 50}, bind="big")
    step("read evicted", "read", {"execution_id": "@big", "since_seq": 1,
                                  "max_output_bytes": 30})
    step("read after eviction", "read", {"execution_id": "@big", "since_seq": 100000,
                                         "max_output_bytes": 30})
    step("read cursor past eviction", "read", {"execution_id": "@big", "max_output_bytes": 30})
    step("read stderr of evicted", "read", {"execution_id": "@big", "streams": "stderr"},
         allow=(("empty-stream-cursor", {"start_seq", "next_seq"}),))
    # Stop.
    step("execute sleeper", "execute",
         {"command": "sleep 30", "side_effects": N, "yield_ms": 100}, bind="sleep")
    step("stop bad signal", "stop", {"execution_id": "@sleep", "signal": "BOGUS"})
    step("ps running only", "ps", {"include_completed": False})
    step("stop sleeper", "stop", {"execution_id": "@sleep"})
    step("stop again", "stop", {"execution_id": "@sleep"})
    step("read stopped", "read", {"execution_id": "@sleep"})
    step("wait stopped", "wait", {"execution_id": "@sleep", "timeout_ms": 100})
    step("execute sleeper 2", "execute",
         {"command": "sleep 30", "side_effects": N, "yield_ms": 100}, bind="sleep2")
    step("stop with sigint lowercase", "stop", {"execution_id": "@sleep2", "signal": "int"},
         allow=(("signal-name", {"signal"}),))
    step("read sigint", "read", {"execution_id": "@sleep2"})
    step("execute trap term", "execute",
         {"command": "trap '' TERM; echo ready; sleep 30", "side_effects": N,
          "yield_ms": 1000}, bind="stubborn")
    step("stop with force", "stop", {"execution_id": "@stubborn", "force_after_ms": 200})
    step("read killed", "read", {"execution_id": "@stubborn"})
    # Unknown ids.
    for tool, extra in (("read", {}), ("wait", {"timeout_ms": 10}), ("stop", {}),
                        ("write", {"input": "x"})):
        step(f"{tool} unknown id", tool, dict({"execution_id": "0123456789ab"}, **extra))
    step("read without id", "read", {})
    step("wait without id", "wait", {})
    # Out-of-range numbers 1.1.2's schema lets through.
    step("execute negative timeout", "execute",
         {"command": "echo t", "side_effects": N, "timeout_ms": -5})
    step("execute negative yield", "execute",
         {"command": "sleep 1; echo y", "side_effects": N, "yield_ms": -1})
    step("execute zero output bytes", "execute",
         {"command": "echo z", "side_effects": N, "max_output_bytes": 0})
    step("execute negative output bytes", "execute",
         {"command": "echo n", "side_effects": N, "max_output_bytes": -3})
    step("read since_seq 0", "read", {"execution_id": "@a", "since_seq": 0})
    step("read since_seq negative", "read", {"execution_id": "@a", "since_seq": -4})
    step("wait negative timeout", "wait", {"execution_id": "@a", "timeout_ms": -10})
    step("ps negative limit", "ps", {"limit": -1})
    # ps and cleanup.
    step("ps all", "ps", {})
    step("ps limit 2", "ps", {"limit": 2})
    step("ps limit 0", "ps", {"limit": 0})
    step("cleanup negative", "cleanup", {"completed_older_than_ms": -1})
    step("cleanup nothing old", "cleanup", {})
    step("cleanup stopped", "cleanup", {"completed_older_than_ms": 3600000,
                                        "stopped_older_than_ms": 0})
    step("cleanup all", "cleanup", {"completed_older_than_ms": 0})
    step("read cleaned up", "read", {"execution_id": "@a"})
    step("ps after cleanup", "ps", {})
    pair.close()


def yieldshell_environment(args, tally):
    """The variables mcp-yieldshell 1.1.2 reads, each with a call that shows it in force."""
    N = ["NONE"]
    pair = Pair(args, tally, {"YIELDSHELL_MAX_OUTPUT_BYTES": "40",
                              "YIELDSHELL_DEFAULT_YIELD_MS": "300",
                              "YIELDSHELL_DEFAULT_TIMEOUT_MS": "1000",
                              "YIELDSHELL_MAX_BUFFER_BYTES": "100"})
    pair.step("env: output cap", "execute", {"command": "seq 1 30", "side_effects": N})
    pair.step("env: default yield", "execute",
              {"command": "sleep 0.8; echo done", "side_effects": N}, bind="late")
    pair.step("env: default timeout", "execute",
              {"command": "sleep 5", "side_effects": N, "yield_ms": 4000},
              allow=(("timeout-race", {"exit_code", "signal"}),))
    pair.step("env: buffer size", "execute",
              {"command": "seq 1 100", "side_effects": N, "yield_ms": 4000}, bind="buf")
    pair.step("env: buffer evicted", "read", {"execution_id": "@buf", "since_seq": 1})
    pair.close()
    pair = Pair(args, tally, {"YIELDSHELL_ALLOWED_CWDS": "{dir}/sub",
                              "YIELDSHELL_DEFAULT_CWD": "{dir}/sub",
                              "YIELDSHELL_MAX_YIELD_MS": "100"})
    pair.step("env: default cwd", "execute", {"command": "pwd", "side_effects": N})
    pair.step("env: cwd outside the allowed", "execute",
              {"command": "pwd", "side_effects": N, "cwd": "{dir}"})
    pair.step("env: max yield", "execute",
              {"command": "sleep 1", "side_effects": N, "yield_ms": 5000})
    pair.close()
    pair = Pair(args, tally, {"YIELDSHELL_REDACT_ENV_REGEX": "TOKEN",
                              "DIFF_TOKEN": "supersecretvalue",
                              "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS": "DELETES_FILES",
                              "YIELDSHELL_MAX_PROCESSES": "1",
                              "YIELDSHELL_ALLOW_COMMAND_REGEX": "^(echo|sleep|true)"})
    pair.step("env: redaction", "execute", {"command": "echo $DIFF_TOKEN", "side_effects": N})
    pair.step("env: redaction of the overlay", "execute",
              {"command": "echo $MY_TOKEN", "side_effects": N,
               "env": {"MY_TOKEN": "anothersecret1"}})
    pair.step("env: blocked list replaced", "execute",
              {"command": "true", "side_effects": ["DELETES_FILES"]})
    pair.step("env: default list no longer blocked", "execute",
              {"command": "true", "side_effects": ["RUNS_INLINE_CODE"]})
    pair.step("env: allow regex", "execute", {"command": "ls", "side_effects": N})
    pair.step("env: one process", "execute",
              {"command": "sleep 30", "side_effects": N, "yield_ms": 0}, bind="one")
    pair.step("env: process limit", "execute", {"command": "true", "side_effects": N})
    pair.step("env: stop the one", "stop", {"execution_id": "@one"})
    pair.step("env: ps redacted", "ps", {})
    pair.close()
    pair = Pair(args, tally, {"YIELDSHELL_MAX_RETAINED_PROCESSES": "1",
                              "YIELDSHELL_PROCESS_RETENTION_MS": "3600000"})
    for i in range(3):
        pair.step(f"env: retained {i + 1}", "execute", {"command": f"echo {i}",
                                                        "side_effects": N})
    pair.step("env: only the newest retained", "ps", {},
              allow=(("retention-timing", {"executions"}),))
    pair.close()


# ---------------------------------------------------------------------------------------
# mcp-shell-server 1.1.14 against trusted mode
# ---------------------------------------------------------------------------------------
ALLOWED = "echo,printf,cat,ls,sort,wc,head,tail,grep,false,true,seq,tr,uniq,cut,sleep,find,awk,git,tar,sed"


def shell_cases():
    """A few hundred argv of both verdicts."""
    cases = []

    def add(command, **extra):
        cases.append(dict({"command": command}, **extra))

    simple = [
        ["echo", "hello"], ["echo", "a", "b"], ["echo", "  padded  "], ["printf", "%s\\n", "x"],
        ["printf", "no newline"], ["cat", "f.txt"], ["cat", "missing.txt"], ["ls", "missing"],
        ["ls", "sub"], ["wc", "-l", "f.txt"], ["sort", "f.txt"], ["sort", "-r", "f.txt"],
        ["head", "-n", "1", "f.txt"], ["tail", "-n", "1", "f.txt"], ["grep", "two", "f.txt"],
        ["grep", "zzz", "f.txt"], ["grep", "-c", "o", "f.txt"], ["false"], ["true"],
        ["seq", "1", "5"], ["seq", "3"], ["head", "-n", "x", "f.txt"], ["sort", "--bogus"],
        ["wc", "missing"], ["cat", "sub"], ["echo"], ["echo", ""], ["echo", "a", "", "b"],
        ["echo", "$HOME"], ["echo", "*"], ["echo", "~"], ["echo", "a&b"], ["echo", "a|b"],
        ["echo", "a>b"], ["echo", "a<b"], ["echo", "(x)"], ["echo", "#x"], ["echo", "a&"],
        ["echo", "ünïcödé"], ["tr", "a-z", "A-Z"], ["uniq", "f.txt"], ["cut", "-c1", "f.txt"],
        ["ls", "-d", "sub"], ["seq", "1", "3", "|"], ["sed", "-n", "1p", "f.txt"],
        ["find", ".", "-name", "f.txt"], ["awk", "{print $1}", "f.txt"],
        ["grep", "-e", "one", "-e", "two", "f.txt"],
    ]
    for c in simple:
        add(c)
    for c in (["rm", "f.txt"], ["touch", "x"], ["python3", "-c", "1"], ["mkdir", "d"],
              ["cp", "f.txt", "g"], ["curl", "x"], ["/bin/echo", "hi"], ["./f.txt"],
              ["ECHO", "x"], [" echo", "x"], ["echo ", "x"], ["ec ho"], ["e;cho"]):
        add(c)
    hardened = [
        ["sh", "-c", "echo x"], ["bash"], ["env"], ["env", "echo", "x"], ["xargs", "echo"],
        ["find", ".", "-exec", "echo", "{}", ";"], ["find", ".", "-name", "nothing", "-delete"],
        ["awk", "BEGIN{system(\"id\")}"], ["sort", "-o", "out", "f.txt"],
        ["sort", "--compress-program=gzip", "f.txt"], ["git", "-c", "x=y", "status"],
        ["git", "config", "user.name"], ["tar", "--checkpoint-action=exec=id", "-cf", "t", "f.txt"],
        ["timeout", "1", "echo"], ["nice", "echo"], ["nohup", "echo"], ["vi"], ["less", "f.txt"],
        ["sed", "-i", "s/a/b/", "f.txt"], ["sed", "e"], ["python3"], ["perl", "-e", "1"],
        ["find", ".", "-fprint", "x"], ["awk", "-f", "prog.awk"], ["gawk", "1"],
    ]
    for c in hardened:
        add(c)
    operators = [";", "&&", "||", "`", "\n", "\r", "&", "$(", ">", "<", ">>", "|"]
    for op in operators:
        add(["echo", "a" + op + "b"])
        add(["echo", op])
        add(["echo", "x", op])
        add([op, "echo"])
        add(["echo", op + "x"])
    for op in (";", "&&", "||", "`"):
        add(["echo", "x", op, "echo", "y"])
        add(["cat", "f.txt", "|", "grep", "a" + op + "b"])
        add(["echo", "a" + op, "|", "cat"])
    stages = [
        ["echo", "hello"], ["cat", "f.txt"], ["ls", "missing"], ["false"], ["sort"],
        ["wc", "-l"], ["grep", "zzz"], ["head", "-n", "1"], ["grep", "t"], ["rm", "x"],
        ["sh", "-c", "x"],
    ]
    for a in stages:
        for b in stages:
            add(a + ["|"] + b)
    for a, b, c in ((["cat", "f.txt"], ["sort"], ["head", "-n", "2"]),
                    (["seq", "1", "10"], ["grep", "1"], ["wc", "-l"]),
                    (["ls", "missing"], ["sort"], ["wc", "-l"]),
                    (["echo", "x"], ["false"], ["cat"]),
                    (["echo", "x"], ["cat"], ["grep", "nope"])):
        add(a + ["|"] + b + ["|"] + c)
    add(["echo", "x", "|", "|", "cat"])
    add(["|"])
    add(["echo", "x", "|"])
    redirs = [
        ["cat", "<", "f.txt"], ["cat", "<", "missing.txt"], ["echo", "x", ">", "o1.txt"],
        ["cat", "o1.txt"], ["echo", "y", ">>", "o1.txt"], ["cat", "o1.txt"],
        ["echo", ">"], ["echo", "x", ">"], ["cat", "<"], [">", "o2.txt"],
        ["echo", "x", ">", ">", "o3.txt"], ["echo", "x", ">", "<"],
        ["cat", "<", "f.txt", ">", "o4.txt"], ["cat", "o4.txt"],
        ["cat", "<", "/etc/hostname"], ["echo", "x", ">", "/tmp/ys-diff-abs.txt"],
        ["echo", "x", ">", "sub/../o5.txt"], ["echo", "x", ">", "sub/o6.txt"],
        ["cat", "sub/o6.txt"], ["echo", "x", ">", "nodir/o7.txt"],
        ["sort", "<", "f.txt", "|", "head", "-n", "1"], ["cat", "f.txt", "|", "wc", "-l", ">", "o8.txt"],
        ["cat", "o8.txt"], ["ls", "missing", ">", "o9.txt"], ["cat", "o9.txt"],
        ["echo", "x", "2>", "o10.txt"], ["echo", "x", ">&2"],
    ]
    for c in redirs:
        add(c)
    add(["cat"], stdin="from stdin\n")
    add(["wc", "-c"], stdin="abc")
    add(["sort"], stdin="b\na\n")
    add(["cat", "|", "sort"], stdin="b\na\n")
    add(["pwd"])
    add(["ls"], directory="sub")
    add(["ls"], directory="missing")
    add(["ls"], directory="f.txt")
    add(["ls"], directory="")
    add(["ls"], directory="/")
    add(["sleep", "3"], timeout=1)
    add(["echo", "x"], timeout=0)
    add(["echo", "x"], timeout="5")
    add(["echo", "x"], timeout=1.5)
    add([])
    add("echo x")
    add(["echo", 5])
    add(["", "echo", "x"])
    add(["seq", "1", "100000"])
    add(["seq", "1", "100000", "|", "head", "-n", "2"])
    add(["seq", "1", "100000", "|", "grep", "-m", "1", "5"])
    return cases


def shell_scenario(args, tally):
    base = tempfile.mkdtemp(prefix="se-diff-")
    dirs = {}
    env = {"ALLOW_COMMANDS": ALLOWED}
    servers = {}
    for who in ("orig", "ours"):
        d = os.path.join(base, who)
        os.makedirs(os.path.join(d, "sub"))
        with open(os.path.join(d, "f.txt"), "w") as f:
            f.write("one\ntwo\nthree\n")
        dirs[who] = os.path.realpath(d)
    servers["orig"] = Server([os.path.join(args.python_bin, "mcp-shell-server")], env,
                             dirs["orig"])
    servers["ours"] = Server([args.yieldshell], env, dirs["ours"])

    for case in shell_cases():
        label = "shell_execute " + json.dumps(case)
        views = {}
        for who in ("orig", "ours"):
            msg = servers[who].tool("shell_execute", case)
            v = texts_view(msg)
            if "texts" in v:
                v["texts"] = [t.replace(dirs[who], "<dir>") if isinstance(t, str) else t
                              for t in v["texts"]]
            views[who] = v
        tally.calls += 1
        verdict = compare_texts(views["orig"], views["ours"], case)
        if verdict[0] == "equal":
            tally.equal += 1
        elif verdict[0] == "departure":
            tally.depart(verdict[1], label)
        else:
            tally.fail(label, f"\n    orig {json.dumps(views['orig'])[:600]}"
                              f"\n    ours {json.dumps(views['ours'])[:600]}")
        if args.verbose:
            print(f"  {label}: {verdict[0]} {verdict[1] if len(verdict) > 1 else ''}")
    # Calls that are not a shell_execute call: an unknown tool, arguments not an object.
    for label, params in (("unknown tool", {"name": "nope", "arguments": {}}),
                          ("arguments not an object",
                           {"name": "shell_execute", "arguments": ["ls"]})):
        views = {w: texts_view(servers[w].call("tools/call", params)) for w in servers}
        tally.calls += 1
        verdict = compare_texts(views["orig"], views["ours"], {})
        if verdict[0] == "equal":
            tally.equal += 1
        elif verdict[0] == "departure":
            tally.depart(verdict[1], label)
        else:
            tally.fail(label, f"orig {views['orig']} / ours {views['ours']}")
    for s in servers.values():
        s.close()
    shutil.rmtree(base, ignore_errors=True)


def shell_environment(args, tally):
    """The variables mcp-shell-server 1.1.14 reads, each with calls that show it in force."""
    settings = [
        ({"ALLOW_COMMANDS": "echo,sleep", "MCP_SHELL_DEFAULT_TIMEOUT_SECONDS": "1"},
         [{"command": ["sleep", "3"]}]),
        ({"ALLOW_COMMANDS": "echo,sleep", "MCP_SHELL_MAX_TIMEOUT_SECONDS": "1"},
         [{"command": ["sleep", "3"], "timeout": 10}]),
        ({"ALLOW_COMMANDS": "seq", "MCP_SHELL_OUTPUT_LIMIT_BYTES": "100"},
         [{"command": ["seq", "1", "1000"]}, {"command": ["seq", "1", "10"]}]),
        ({"ALLOWED_COMMANDS": "ls", "ALLOW_PATTERNS": "^ec.*,pr[a-z]+"},
         [{"command": ["echo", "pattern"]}, {"command": ["ls", "sub"]},
          {"command": ["printf", "x"]}, {"command": ["cat", "f.txt"]},
          {"command": ["xecho"]}]),
        ({"ALLOW_COMMANDS": "printenv", "MCP_SHELL_CHILD_ENV_ALLOWLIST": "DIFF_VAR",
          "DIFF_VAR": "passed", "DIFF_OTHER": "kept back"},
         [{"command": ["printenv", "DIFF_VAR"]}, {"command": ["printenv", "DIFF_OTHER"]},
          {"command": ["printenv", "PATH"]}]),
        ({"ALLOW_COMMANDS": "printenv,ls", "MCP_SHELL_SAFE_PATH": "/usr/bin:/bin"},
         [{"command": ["printenv", "PATH"]}]),
        ({}, [{"command": ["echo", "x"]}]),
        ({"YIELDSHELL_MODE": "trusted"}, [{"command": ["echo", "x"]}]),
    ]
    for env, cases in settings:
        base, dirs = make_dirs("se-env-")
        servers = {
            "orig": Server([os.path.join(args.python_bin, "mcp-shell-server")], env,
                           dirs["orig"]),
            "ours": Server([args.yieldshell], env, dirs["ours"]),
        }
        for case in cases:
            label = f"shell_execute {json.dumps(case)} with {json.dumps(env)}"
            views = {w: texts_view(servers[w].tool("shell_execute", case)) for w in servers}
            tally.calls += 1
            verdict = compare_texts(views["orig"], views["ours"], case)
            if args.verbose:
                print(f"  {label}: {verdict} {json.dumps(views)[:300]}")
            if verdict[0] == "equal":
                tally.equal += 1
            elif verdict[0] == "departure":
                tally.depart(verdict[1], label)
            else:
                tally.fail(label, f"\n    orig {json.dumps(views['orig'])[:600]}"
                                  f"\n    ours {json.dumps(views['ours'])[:600]}")
        for srv in servers.values():
            srv.close()
        shutil.rmtree(base, ignore_errors=True)


ERROR_PREFIX = "Error executing command: "
FRAGMENTS = (";", "&&", "||", "`", "\n", "\r")


def _argv(case):
    c = case.get("command")
    return c if isinstance(c, list) else []


def _first(view):
    texts = view.get("texts") or [""]
    return (texts[0] or "").split("\n")[0]


def _is_pipeline(case):
    return "|" in _argv(case)


# Where each shell_execute departure applies: a predicate on the case and both views, so
# that a departure never hides a difference of another kind.
SHELL_RULES = {
    "empty-elements": lambda case, o, y: "" in _argv(case),
    "trailing-pipe": lambda case, o, y: (_argv(case)[:1] == ["|"] or _argv(case)[-1:] == ["|"])
    and "pipe operator" in _first(y),
    "ampersand": lambda case, o, y: "&" in _argv(case)
    and _first(y).startswith(ERROR_PREFIX + "Unexpected shell operator: &"),
    "operator-in-pipeline": lambda case, o, y: _is_pipeline(case)
    and any(f in a for a in _argv(case) for f in FRAGMENTS)
    and _first(y).startswith(ERROR_PREFIX + "Unexpected shell operator:"),
    "pipeline-streams": lambda case, o, y: _is_pipeline(case)
    and (any(w in _first(o) for w in ("Connection lost", "Broken pipe"))
         or (not o["isError"] and o["texts"] == [])
         or (o["isError"] and y["isError"] and " of " in y["texts"][0]
             and "stage " in y["texts"][0])),
    "command-name": lambda case, o, y: _argv(case)[:1] != [] and isinstance(_argv(case)[0], str)
    and _argv(case)[0] != _argv(case)[0].strip()
    and _first(y).startswith(ERROR_PREFIX + "Unsafe command name"),
    "error-words": lambda case, o, y: o["isError"] and y["isError"]
    and _first(o).startswith(tuple(ERROR_PREFIX + w for w in (
        "Failed to open", "Redirection target", "Directory", "Not a directory")))
    and _first(y).startswith(ERROR_PREFIX),
    "argument-errors": lambda case, o, y: o["isError"] and y["isError"]
    and _first(o).startswith("Input validation error: ")
    and _first(y).startswith("Input validation error: "),
    "lenient-arguments": lambda case, o, y: _first(o).startswith("Input validation error: ")
    and not y["isError"] and "timeout" in case,
    "cwd-policy": lambda case, o, y: y["isError"] and "MCP_SHELL_SAFE_PATH" in _first(y),
    "closed-rules": lambda case, o, y: o["isError"] and y["isError"]
    and _first(y).startswith(ERROR_PREFIX + "Command rejected by default security policy: ")
    and "is not known to the rule" in _first(y),
    "bounded-results": lambda case, o, y: not o["isError"] and not y["isError"]
    and any("bytes omitted" in t for t in y["texts"]),
}


def compare_texts(orig, ours, case):
    """('equal',) | ('departure', id) | ('fail',)."""
    if orig == ours:
        return ("equal",)
    if "rpc_error" in ours and ours["rpc_error"] == orig.get("rpc_error"):
        return ("equal",)
    if "Unknown tool: shell_execute" in ours.get("message", "") and "rpc_error" not in orig:
        return ("departure", "mode-by-allowlist")
    if "rpc_error" in ours:
        return ("departure", "json-rpc-codes") if orig.get("isError") else ("fail",)
    if "rpc_error" in orig:
        return ("fail",)
    o_texts, y_texts = orig["texts"], ours["texts"]
    if orig["isError"] == ours["isError"] and not orig["isError"]:
        if not o_texts and y_texts == [""]:
            return ("departure", "empty-content")
        if [t.strip() for t in y_texts if t.strip()] == o_texts:
            return ("departure", "exact-output")
    if orig["isError"] and ours["isError"] and len(y_texts) == 1 and len(o_texts) == 1:
        # Both failed: one block each, the original's words first.
        o, y = o_texts[0], y_texts[0]
        if y.startswith(o) or y.startswith(o.rstrip()):
            return ("departure", "guidance")
        # The captured output laid out as the original lays it out, but exact.
        if strip_sections(y) == o:
            return ("departure", "exact-output")
    for dep, applies in SHELL_RULES.items():
        if applies(case, orig, ours):
            return ("departure", dep)
    return ("fail",)


def strip_sections(text):
    """`stdout:\\n…` and `stderr:\\n…` sections with their text stripped, as the original."""
    parts = re.split(r"(\n(?:stdout|stderr):\n)", text)
    out = [parts[0]]
    for i in range(1, len(parts), 2):
        out.append(parts[i])
        out.append(parts[i + 1].strip() if i + 1 < len(parts) else "")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yieldshell", required=True)
    ap.add_argument("--python-bin", required=True)
    ap.add_argument("--docs", help="docs/drop-in.md: must name every departure id")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--only", choices=("yieldshell", "shell"))
    args = ap.parse_args()
    tally = Tally(args.verbose)
    started = time.monotonic()
    if args.only in (None, "yieldshell"):
        yieldshell_scenario(args, tally)
        yieldshell_environment(args, tally)
    if args.only in (None, "shell"):
        shell_scenario(args, tally)
        shell_environment(args, tally)
    for label, detail in tally.failures:
        print(f"DIFFERENT  {label}: {detail}")
    departed_calls = sum(len(v) for v in tally.departed.values())
    print(f"calls compared: {tally.calls}; equal: {tally.equal}; "
          f"listed departures used: {departed_calls} calls over "
          f"{len(tally.departed)} of {len(DEPARTURES)} departures; "
          f"differences: {len(tally.failures)}; {time.monotonic() - started:.1f} s")
    for dep, labels in sorted(tally.departed.items()):
        print(f"  departure {dep}: {len(labels)} calls, e.g. {labels[0][:120]}")
    if args.docs:
        # The document's table and this list name the same departures.
        listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", open(args.docs).read(), re.M))
        if listed != set(DEPARTURES):
            print(f"{args.docs} and DEPARTURES differ: only in the document "
                  f"{sorted(listed - set(DEPARTURES))}, only here {sorted(set(DEPARTURES) - listed)}")
            sys.exit(1)
        print(f"{len(listed)} departures, listed in {args.docs} and here")
    sys.exit(1 if tally.failures else 0)


if __name__ == "__main__":
    main()
