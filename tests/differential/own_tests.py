#!/usr/bin/env python3
"""mcp-yieldshell 1.1.2's own end-to-end tests (its stdio tests) against yieldshell.

The tests come from the released source distribution (downloaded by
scripts/differential.sh); they start `python -m mcp_yieldshell` over stdio. This copies
them with only the server command changed (yieldshell with YIELDSHELL_API=1.1) and runs
them with pytest. mcp-yieldshell's other tests and all of mcp-shell-server's call the
Python classes in-process, so they have nothing to say about another server.

Usage: own_tests.py --yieldshell BIN --sdist DIR --python PYTHON
"""

import argparse
import os
import subprocess
import sys
import tempfile

ORIGINAL = '''        command=sys.executable,
        args=["-m", "mcp_yieldshell"],'''
REPLACED = '''        command=os.environ["YIELDSHELL_BIN"],
        args=[],
        env={"YIELDSHELL_API": "1.1", "PATH": os.environ["PATH"]},'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yieldshell", required=True)
    ap.add_argument("--sdist", required=True, help="the unpacked mcp_yieldshell-1.1.2 directory")
    ap.add_argument("--python", required=True, help="the venv's python, with pytest")
    args = ap.parse_args()
    source = open(os.path.join(args.sdist, "tests", "test_protocol.py")).read()
    count = source.count(ORIGINAL)
    if count == 0:
        sys.exit("test_protocol.py no longer starts the server as expected; adapt own_tests.py")
    adapted = source.replace(ORIGINAL, REPLACED).replace("import json\n", "import json\nimport os\n", 1)
    with tempfile.TemporaryDirectory(prefix="ys-own-tests-") as tmp:
        path = os.path.join(tmp, "test_protocol_against_yieldshell.py")
        with open(path, "w") as f:
            f.write(adapted)
        env = dict(os.environ, YIELDSHELL_BIN=args.yieldshell)
        run = subprocess.run(
            [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-o", "asyncio_default_fixture_loop_scope=function", path],
            env=env, cwd=tmp,
        )
    print(f"mcp-yieldshell 1.1.2's stdio tests ({count}) against yieldshell: "
          f"{'passed' if run.returncode == 0 else 'FAILED'}")
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
