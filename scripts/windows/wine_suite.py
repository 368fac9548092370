#!/usr/bin/env python3
"""The Windows suite: yieldshell.exe under Wine, driven through its stdio as a client drives
it (JSON lines), and through its built-in client (`call`, `check`).

Usage: wine_suite.py PATH/TO/yieldshell.exe   (WINEPREFIX and friends from the environment;
scripts/windows/wine-test.sh sets them up). Exits 1 when a check fails.

Every check waits for an event (an answer, a `wait` that returns on `until` or on the
command's end, a process gone from /proc) with a deadline, never for a fixed time. Wine's
processes are Linux processes, so /proc shows whether a command's tree is gone. Under Wine
some Windows behaviours cannot be shown; each such check says so (SKIP lines, never a pass).
"""

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time

EXE = os.path.abspath(sys.argv[1])
FAILED = []
PASSED = []


class Server:
    """yieldshell.exe under Wine, spoken to in JSON lines."""

    def __init__(self, env=None, cwd=None):
        full = dict(os.environ)
        full.update(env or {})
        self.proc = subprocess.Popen(
            ["wine", EXE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=full,
            cwd=cwd,
        )
        self.answers = {}
        self.cond = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wine-suite", "version": "1"},
        }, timeout=60)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "id" in msg and ("result" in msg or "error" in msg):
                with self.cond:
                    self.answers[msg["id"]] = msg
                    self.cond.notify_all()
        with self.cond:
            self.answers["eof"] = True
            self.cond.notify_all()

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params, timeout=60):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self.cond:
            while rid not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0 or "eof" in self.answers:
                    raise AssertionError(f"no answer to {method} {params} in {timeout} s")
                self.cond.wait(left)
            return self.answers.pop(rid)

    def call(self, tool, args, timeout=60):
        msg = self.request("tools/call", {"name": tool, "arguments": args}, timeout)
        assert "result" in msg, f"{tool}: {msg}"
        return msg["result"].get("structuredContent", {}), msg["result"].get("isError", False)

    def exec(self, command, **extra):
        args = {"command": command, "side_effects": ["NONE"]}
        args.update(extra)
        return self.call("exec", args)[0]

    def close(self, timeout=60):
        self.proc.stdin.close()
        return self.proc.wait(timeout)


def check(name):
    def wrap(fn):
        try:
            fn()
            PASSED.append(name)
            print(f"ok   {name}", flush=True)
        except AssertionError as e:
            FAILED.append(name)
            print(f"FAIL {name}: {e}", flush=True)
        except Exception as e:  # a crash of the check is a failure too
            FAILED.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        return fn
    return wrap


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def live(marker):
    """Linux pids of live processes whose command line contains `marker`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state not in ("Z", "X"):
            pids.append(int(entry))
    return pids


def until_gone(marker, timeout=30):
    deadline = time.monotonic() + timeout
    while live(marker):
        if time.monotonic() > deadline:
            raise AssertionError(f"still running after {timeout} s: {marker!r} {live(marker)}")
        time.sleep(0.1)


def until_present(marker, timeout=30):
    """Waits for a process with `marker` in its command line, other than the `cmd.exe` whose
    command line names it."""
    deadline = time.monotonic() + timeout
    while not [p for p in live(marker) if "cmd.exe" not in cmdline(p)]:
        if time.monotonic() > deadline:
            raise AssertionError(f"never started: {marker!r}")
        time.sleep(0.1)


# A long-running program under Wine: its ping waits a second between echoes; the count is
# the marker that finds it in /proc.
def pinger(count):
    return f"ping -n {count} 127.0.0.1 > nul"


srv = Server()


@check("fast command: completed with stdout, stderr and exit code 0")
def _():
    r = srv.exec("echo hello & echo oops 1>&2")
    assert r["status"] == "completed", r
    assert r["exit_code"] == 0, r
    assert r.get("stdout", "").strip() == "hello", r
    assert r.get("stderr", "").strip() == "oops", r


@check("the working directory is a plain drive path (no \\\\?\\ prefix), for cmd.exe and in ps")
def _():
    r = srv.exec("cd")
    cwd = r.get("stdout", "").strip()
    assert len(cwd) > 3 and cwd[1:3] == ":\\", r
    ps, _ = srv.call("ps", {})
    entry = [p for p in ps["processes"] if p["process_id"] == r["process_id"]][0]
    assert entry["cwd"] == cwd, (entry, cwd)


@check("exit codes: exit /b 7 is exit_code 7")
def _():
    r = srv.exec("exit /b 7")
    assert r["status"] == "completed" and r["exit_code"] == 7, r


@check("cmd.exe keeps the command line as written (quotes, &&, %VAR%)")
def _():
    r = srv.exec('echo "a  b" && echo %COMSPEC%')
    lines = [line.strip() for line in r.get("stdout", "").splitlines()]
    assert lines[0] == '"a  b"' and lines[1].lower().endswith("cmd.exe"), r


@check("backgrounded command, cursors and wait until")
def _():
    r = srv.exec(f"echo first & {pinger(3)} & echo second", yield_ms=300)
    assert r["status"] == "backgrounded", r
    pid = r["process_id"]
    w, _ = srv.call("wait", {"process_id": pid, "until": "second", "timeout_ms": 30000})
    assert "second" in w.get("stdout", ""), w
    w2, _ = srv.call("wait", {"process_id": pid, "timeout_ms": 30000})
    assert w2["status"] == "completed" and w2["exit_code"] == 0, w2
    rd, _ = srv.call("read", {"process_id": pid, "since_seq": 1})
    assert [x.strip() for x in rd.get("stdout", "").splitlines()] == ["first", "second"], rd
    rd2, _ = srv.call("read", {"process_id": pid, "since_seq": w2["next_seq"]})
    assert rd2.get("stdout", "") == "", rd2


@check("write to stdin")
def _():
    r = srv.exec("set /p LINE= & echo got %LINE%", yield_ms=300, close_stdin=False)
    pid = r["process_id"]
    if r["status"] == "backgrounded":
        srv.call("write", {"process_id": pid, "input": "hello\r\n", "close": True})
        r, _ = srv.call("wait", {"process_id": pid, "timeout_ms": 30000})
    assert "got hello" in r.get("stdout", ""), r


@check("stop ends a tree with a start /b grandchild; ps counts the job's processes")
def _():
    r = srv.exec(f"start /b {pinger(311)} & {pinger(312)}", yield_ms=300)
    assert r["status"] == "backgrounded", r
    until_present("-n 311")
    until_present("-n 312")
    ps, _ = srv.call("ps", {})
    entry = [p for p in ps["processes"] if p["process_id"] == r["process_id"]][0]
    assert entry["processes"] >= 3, entry
    s, _ = srv.call("stop", {"process_id": r["process_id"]})
    assert s["status"] == "stopped", s
    until_gone("-n 311")
    until_gone("-n 312")


@check("timeout_ms ends the command's tree")
def _():
    r = srv.exec(f"start /b {pinger(321)} & {pinger(322)}", yield_ms=300, timeout_ms=1500)
    w, _ = srv.call("wait", {"process_id": r["process_id"], "timeout_ms": 30000})
    assert w["status"] == "timed_out", w
    until_gone("-n 321")
    until_gone("-n 322")


@check("redaction of a call's secret and the output budget (head, marker, tail)")
def _():
    s = Server({"YIELDSHELL_REDACT_ENV_REGEX": "TOKEN"})
    r = s.exec("echo token=%API_TOKEN% & for /l %i in (1,1,3000) do @echo line %i",
               env={"API_TOKEN": "hunter2hunter2xyz"}, max_output_bytes=2000)
    s.close()
    out = r.get("stdout", "")
    assert "hunter2hunter2xyz" not in out and "[REDACTED:API_TOKEN]" in out, out[:200]
    assert len(out.encode()) <= 2200 and "line 3000" in out and r.get("omitted"), r


@check("cleanup forgets finished records")
def _():
    srv.exec("echo done")
    c, _ = srv.call("cleanup", {"completed_older_than_ms": 0, "stopped_older_than_ms": 0})
    ps, _ = srv.call("ps", {})
    assert all(p["status"] == "running" for p in ps["processes"]), (c, ps)


@check("tty: true is refused with a reason")
def _():
    r, err = srv.call("exec", {"command": "echo x", "side_effects": ["NONE"], "tty": True})
    text = json.dumps(r)
    assert err and "ConPTY" in text, r


@check("stdin EOF shuts the server down and ends what it started")
def _():
    s = Server()
    r = s.exec(f"start /b {pinger(331)} & {pinger(332)}", yield_ms=300)
    assert r["status"] == "backgrounded", r
    until_present("-n 331")
    code = s.close()
    assert code == 0, f"the server exited with status {code:#x}"
    until_gone("-n 331")
    until_gone("-n 332")


@check("the server killed from outside (SIGKILL) leaves nothing running")
def _():
    s = Server()
    r = s.exec(f"start /b {pinger(341)} & {pinger(342)}", yield_ms=300)
    assert r["status"] == "backgrounded", r
    until_present("-n 341")
    # The `wine` launcher executes the exe in its own process: that pid is the server's.
    assert s.proc.pid in live(os.path.basename(EXE)), "the server's process was not found"
    os.kill(s.proc.pid, signal.SIGKILL)
    until_gone("-n 341")
    until_gone("-n 342")
    s.proc.wait()


srv.close()


def cli(args, env=None, cwd=None):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(["wine", EXE] + args, capture_output=True, env=full, cwd=cwd,
                          timeout=120)


@check("yieldshell call exec")
def _():
    p = cli(["call", "exec", '{"command":"echo from call","side_effects":["NONE"]}'])
    assert p.returncode == 0, p
    assert json.loads(p.stdout)["stdout"].strip() == "from call", p.stdout


# Windows' own programs have no argument rules: the operator accepts each by name.
TRUSTED = {
    "ALLOW_COMMANDS": "hostname,whoami,find",
    "YIELDSHELL_UNREVIEWED_COMMANDS": "hostname,whoami,find",
}


@check("trusted shell_execute: an allowlisted program without rules is refused unless accepted")
def _():
    s = Server({"ALLOW_COMMANDS": "hostname"}, cwd=tempfile.gettempdir())
    r, err = s.call("shell_execute", {"command": ["hostname"]})
    s.close()
    assert err and "YIELDSHELL_UNREVIEWED_COMMANDS" in r.get("error", ""), r


@check("yieldshell check: allowed, refused, and no kernel sandbox said")
def _():
    p = cli(["check", "hostname"], TRUSTED)
    out = p.stdout.decode()
    assert p.returncode == 0 and "allowed" in out, out
    assert "no kernel sandbox on Windows" in out, out
    p = cli(["check", "reg query HKLM"], TRUSTED)
    assert p.returncode != 0 and "reg" in p.stdout.decode() + p.stderr.decode(), p


work = tempfile.mkdtemp(prefix="yieldshell-wine-")


@check("trusted mode's tool descriptions say there is no kernel sandbox")
def _():
    s = Server(TRUSTED, cwd=work)
    tools = s.request("tools/list", {})["result"]["tools"]
    s.close()
    text = [t["description"] for t in tools if t["name"] == "shell_execute"][0]
    assert "No kernel sandbox on Windows" in text, text


@check("trusted shell_execute: an allowlisted program runs")
def _():
    s = Server(TRUSTED, cwd=work)
    r, err = s.call("shell_execute", {"command": ["hostname"]})
    s.close()
    assert not err and r["status"] == 0 and r.get("stdout", "").strip(), r


@check("trusted shell_execute: an argument with a space reaches the program whole (MSVCRT quoting)")
def _():
    with open(os.path.join(work, "t.txt"), "w") as f:
        f.write("a b\r\nab\r\nx a b y\r\n")
    s = Server(TRUSTED, cwd=work)
    r, err = s.call("shell_execute", {"command": ["find", "a b", "t.txt"]})
    s.close()
    lines = [x.strip() for x in r.get("stdout", "").splitlines()]
    assert not err and "a b" in lines and "x a b y" in lines and "ab" not in lines, r


@check("trusted shell_execute: a program off the allowlist is refused")
def _():
    s = Server(TRUSTED, cwd=work)
    r, err = s.call("shell_execute", {"command": ["reg", "query", "HKLM"]})
    s.close()
    assert err and "reg" in json.dumps(r), r


@check("trusted shell_execute: .bat and .cmd are refused, even allowlisted")
def _():
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    for name in ["x.bat", "y.cmd"]:
        with open(os.path.join(bindir, name), "w") as f:
            f.write("@echo hi\r\n")
    env = {
        "ALLOW_COMMANDS": "x.bat,y.cmd",
        "MCP_SHELL_SAFE_PATH": "C:\\windows\\system32;Z:" + bindir.replace("/", "\\"),
    }
    s = Server(env, cwd=work)
    for name, ext in [("x.bat", ".bat file"), ("y.cmd", ".cmd file")]:
        r, err = s.call("shell_execute", {"command": [name]})
        assert err and ext in r.get("error", ""), r
    s.close()


@check("trusted shell_execute: a redirection is contained in the directory")
def _():
    s = Server(TRUSTED, cwd=work)
    r, err = s.call("shell_execute", {"command": ["hostname", ">", "out.txt"]})
    assert not err and r["status"] == 0, r
    with open(os.path.join(work, "out.txt")) as f:
        assert f.read().strip(), "out.txt is empty"
    for target in ["..\\escape.txt", "C:\\escape.txt", "NUL", "out.txt:stream"]:
        r, err = s.call("shell_execute", {"command": ["hostname", ">", target]})
        assert err, (target, r)
    s.close()
    assert not os.path.exists(os.path.join(os.path.dirname(work), "escape.txt"))


# What Windows has and this suite cannot show under Wine (or what is not built): said here,
# never counted as passed. docs/windows.md lists the same.
NOT_SHOWN = [
    ("stop's grace: CTRL_BREAK_EVENT to the command's group before TerminateJobObject",
     "the server runs without a console here (GetConsoleWindow is null under Wine with "
     "pipes), so the SIGTERM step ends the job at once; the grace needs a console host"),
    ("YIELDSHELL_SHELL=powershell.exe or pwsh", "Wine has no PowerShell"),
    ("a redirection refused through a symbolic link or junction",
     "Wine shows a Linux symbolic link as what it points to, never as a reparse point"),
    ("tty: true through ConPTY", "not built: refused on Windows (checked above)"),
    ("YIELDSHELL_LIMITS pids as the job's active-process limit",
     "the limit is set on each job, but Wine does not enforce it (a third process starts "
     "under pids=2)"),
]
for name, why in NOT_SHOWN:
    print(f"skip {name}: {why}")
print(f"{len(PASSED)} passed, {len(FAILED)} failed, {len(NOT_SHOWN)} not shown under Wine")
for name in FAILED:
    print(f"  failed: {name}")
sys.exit(1 if FAILED else 0)
