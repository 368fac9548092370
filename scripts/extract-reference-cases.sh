#!/bin/sh
# Regenerates tests/data/reference_cases.jsonl from MCP Shell Server 1.1.14's own test suite:
# every argv its default argument policy judges while its tests run, with the verdict.
# Cases its tests send to one tar dialect directly are kept as `bsdtar` (BSD) or, for GNU,
# re-judged by its whole policy under the name `gtar`. Needs network access to PyPI.
set -eu
work=${TMPDIR:-/tmp}/refcases
rm -rf "$work" && mkdir -p "$work/hook"
pip download mcp-shell-server==1.1.14 --no-binary :all: --no-deps -d "$work" >/dev/null
tar xzf "$work"/mcp_shell_server-1.1.14.tar.gz -C "$work"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -e "$work/mcp_shell_server-1.1.14[test]"
cat > "$work/hook/refhook.py" <<'PY'
import json, os
from mcp_shell_server import command_validator as cv
OUT = os.environ["REFHOOK_OUT"]
depth = [0]
def record(argv, verdict, via):
    with open(OUT, "a") as f:
        f.write(json.dumps({"verdict": verdict, "via": via, "argv": list(argv)}, ensure_ascii=False) + "\n")
policy = cv.CommandValidator._validate_default_argument_policy
def hooked_policy(self, command):
    depth[0] += 1
    try:
        policy(self, command)
    except ValueError:
        record(command, "refused", "policy"); raise
    finally:
        depth[0] -= 1
    record(command, "accepted", "policy")
cv.CommandValidator._validate_default_argument_policy = hooked_policy
dialect = cv.CommandValidator._validate_tar_arguments
def hooked_dialect(self, args, d):
    if depth[0]:
        return dialect(self, args, d)
    if d is cv.BSD_TAR_DIALECT:
        try:
            dialect(self, args, d)
        except ValueError:
            record(["bsdtar", *args], "refused", "dialect"); raise
        record(["bsdtar", *args], "accepted", "dialect")
        return
    try:
        policy(self, ["gtar", *args]); verdict = "accepted"
    except ValueError:
        verdict = "refused"
    record(["gtar", *args], verdict, "dialect-rejudged")
    return dialect(self, args, d)
cv.CommandValidator._validate_tar_arguments = hooked_dialect
PY
out="$work/raw.jsonl"
(cd "$work/mcp_shell_server-1.1.14" && REFHOOK_OUT="$out" PYTHONPATH="$work/hook" \
    "$work/venv/bin/python" -m pytest -p refhook -q -p no:cacheprovider >/dev/null)
python3 - "$out" "$(dirname "$0")/../tests/data/reference_cases.jsonl" <<'PY'
import json, sys
seen = set()
with open(sys.argv[2], "w") as f:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        key = tuple(r["argv"])
        if key not in seen:
            seen.add(key)
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
