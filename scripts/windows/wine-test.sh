#!/usr/bin/env bash
# The Windows suite: builds yieldshell.exe for x86_64-pc-windows-gnu (mingw-w64) and runs
# scripts/windows/wine_suite.py against it under Wine. Installs what is missing: Wine and
# mingw-w64 (apt-get), the Rust target (rustup), a Wine prefix under target/, and the
# ProcessPrng shim DLL (scripts/windows/processprng.c), which Wine 8 lacks and Rust's std
# for windows-gnu imports (without it the exe exits at once with status c0000135).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

missing=()
command -v wine >/dev/null 2>&1 || missing+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "== apt-get install -y ${missing[*]}"
    $sudo apt-get install -y "${missing[@]}" || { $sudo apt-get update && $sudo apt-get install -y "${missing[@]}"; }
fi
rustup target list --installed | grep -qx x86_64-pc-windows-gnu ||
    rustup target add x86_64-pc-windows-gnu

export WINEPREFIX="$root/target/wine-prefix"
export WINEDEBUG=-all
# No Mono or Gecko install prompts; the shim before any built-in of the same name.
export WINEDLLOVERRIDES="mscoree,mshtml=;bcryptprimitives=n"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "== wineboot (a new Wine prefix in target/wine-prefix)"
    mkdir -p "$WINEPREFIX"
    wineboot -i >/dev/null 2>&1
fi
shim="$root/target/wine-shim/bcryptprimitives.dll"
if [ ! -f "$shim" ] || [ scripts/windows/processprng.c -nt "$shim" ]; then
    mkdir -p "$(dirname "$shim")"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" scripts/windows/processprng.c -ladvapi32
fi
cmp -s "$shim" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ||
    cp "$shim" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

echo "== cargo build --target x86_64-pc-windows-gnu"
cargo build --locked --target x86_64-pc-windows-gnu
echo "== scripts/windows/wine_suite.py (yieldshell.exe under Wine)"
python3 scripts/windows/wine_suite.py target/x86_64-pc-windows-gnu/debug/yieldshell.exe
