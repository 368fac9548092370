#!/usr/bin/env bash
# The Python servers yieldshell replaces, as oracles: installs mcp-yieldshell 1.1.2 and
# mcp-shell-server 1.1.14 into a throwaway virtual environment under target/ (once; later
# runs reuse it), builds yieldshell, sends the same calls to both and compares what their
# clients read (tests/differential/driver.py), then runs mcp-yieldshell's own stdio tests
# against yieldshell (tests/differential/own_tests.py). Needs python3 (3.11 or newer) and
# network access the first time. Differences that are kept on purpose are listed, with
# their reasons, in docs/drop-in.md and in the driver.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$PWD/target/differential"
venv="$work/venv"
sdist="$work/sdist"
# mcp is pinned too: the originals' wire format comes from it.
pins=(mcp-yieldshell==1.1.2 mcp-shell-server==1.1.14 mcp==1.30.0 pytest pytest-asyncio)

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "differential test: needs Python 3.11 or newer as python3 (or set PYTHON)" >&2
    exit 1
fi

stamp="$venv/.installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${pins[*]}" ]; then
    echo "== installing ${pins[*]} into $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
    echo "${pins[*]}" >"$stamp"
fi
if [ ! -d "$sdist/mcp_yieldshell-1.1.2/tests" ]; then
    mkdir -p "$sdist"
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
        --no-binary :all: --dest "$sdist" mcp-yieldshell==1.1.2
    tar -xzf "$sdist/mcp_yieldshell-1.1.2.tar.gz" -C "$sdist"
fi

echo "== cargo build"
cargo build --locked --quiet
bin="$PWD/target/debug/yieldshell"

echo "== the same calls to the originals and to yieldshell"
"$venv/bin/python" tests/differential/driver.py --yieldshell "$bin" \
    --python-bin "$venv/bin" --docs docs/drop-in.md
echo "== mcp-yieldshell 1.1.2's own stdio tests against yieldshell"
"$venv/bin/python" tests/differential/own_tests.py --yieldshell "$bin" \
    --sdist "$sdist/mcp_yieldshell-1.1.2" --python "$venv/bin/python"
