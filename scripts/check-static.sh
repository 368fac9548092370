#!/usr/bin/env bash
# Builds the static release binary and fails if it is dynamically linked or over 2.5 MiB.
#
# Usage: scripts/check-static.sh [musl|gnu]
#   musl (default when the target is installed): cargo build --profile dist --target x86_64-unknown-linux-musl
#   gnu:  RUSTFLAGS="-C target-feature=+crt-static" cargo build --profile dist --target x86_64-unknown-linux-gnu
# Without an argument, musl is used when `rustup target list --installed` has it (or
# `rustup target add` can fetch it), glibc with crt-static otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=$((5 * 1024 * 1024 / 2))
kind="${1:-}"
if [[ -z "$kind" ]]; then
    kind=gnu
    if command -v rustup >/dev/null 2>&1; then
        if rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl \
            || rustup target add x86_64-unknown-linux-musl >/dev/null 2>&1; then
            kind=musl
        fi
    fi
fi

target_dir="${CARGO_TARGET_DIR:-target}"
case "$kind" in
    musl)
        triple=x86_64-unknown-linux-musl
        echo "== cargo build --profile dist --target $triple"
        cargo build --profile dist --locked --target "$triple"
        ;;
    gnu)
        triple=x86_64-unknown-linux-gnu
        echo "== RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --profile dist --target $triple"
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --profile dist --locked --target "$triple"
        ;;
    *)
        echo "usage: $0 [musl|gnu]" >&2
        exit 2
        ;;
esac

bin="$target_dir/$triple/dist/yieldshell"
[[ -f "$bin" ]] || { echo "FAIL: $bin was not built" >&2; exit 1; }

size=$(stat -c %s "$bin")
fail=0
# Dynamic means a program interpreter (PT_INTERP) or a needed shared library (DT_NEEDED).
if command -v readelf >/dev/null 2>&1; then
    if readelf -lW "$bin" | grep -q 'INTERP'; then
        echo "FAIL: $bin has a program interpreter (dynamically linked)" >&2
        fail=1
    fi
    if readelf -dW "$bin" 2>/dev/null | grep -q '(NEEDED)'; then
        echo "FAIL: $bin needs shared libraries:" >&2
        readelf -dW "$bin" | grep '(NEEDED)' >&2
        fail=1
    fi
else
    out=$(ldd "$bin" 2>&1 || true)
    case "$out" in
        *"not a dynamic executable"* | *"statically linked"*) ;;
        *)
            echo "FAIL: ldd lists dependencies of $bin:" >&2
            echo "$out" >&2
            fail=1
            ;;
    esac
fi
if ((size > LIMIT)); then
    echo "FAIL: $bin is $size bytes, over the limit of $LIMIT (2.5 MiB)" >&2
    fail=1
fi
if ((fail)); then
    exit 1
fi
echo "OK: $bin is static and $size bytes (limit $LIMIT)"
