#!/usr/bin/env bash
# Builds the release binaries to hand to other hosts (the `dist` profile: release, optimised
# for size): stripped, static (musl), for x86_64 and aarch64, linked with rust-lld (the musl
# targets are self-contained: crt objects and libc come with the target, so no cross
# toolchain is needed), and yieldshell.exe for
# Windows (x86_64-pc-windows-gnu, linked by mingw-w64's x86_64-w64-mingw32-gcc; the
# Rust runtime is linked in, and the exe imports only Windows' own DLLs). Prints each
# binary's size (each must be at most 2.5 MiB) and its SHA-256 sum, and copies it to
# target/dist/yieldshell-VERSION-ARCH-linux-musl or yieldshell-VERSION-x86_64-windows.exe.
#
# Usage: scripts/build-release.sh [TRIPLE...]
#   default: x86_64-unknown-linux-musl aarch64-unknown-linux-musl, and
#   x86_64-pc-windows-gnu when x86_64-w64-mingw32-gcc is installed (said when it is not)
# A target that is not installed is added with `rustup target add`; when that fails (no
# rustup, no network), the script says so and stops without building anything.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=$((5 * 1024 * 1024 / 2))
targets=("$@")
if ((${#targets[@]} == 0)); then
    targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
    if command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
        targets+=(x86_64-pc-windows-gnu)
    else
        echo "build-release: no x86_64-w64-mingw32-gcc, so no Windows binary" \
            "(apt-get install gcc-mingw-w64-x86-64)" >&2
    fi
fi

# Every target first, so that a missing one stops the script before any build.
for triple in "${targets[@]}"; do
    if command -v rustup >/dev/null 2>&1 \
        && rustup target list --installed 2>/dev/null | grep -qx "$triple"; then
        continue
    fi
    if ! command -v rustup >/dev/null 2>&1; then
        echo "build-release: target $triple is not available and rustup is not installed;" \
            "install rustup (https://rustup.rs) or the target's standard library, then rerun" >&2
        exit 1
    fi
    echo "== rustup target add $triple"
    if ! rustup target add "$triple"; then
        echo "build-release: cannot add target $triple here (see above); stopping" >&2
        exit 1
    fi
done

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
target_dir="${CARGO_TARGET_DIR:-target}"
dist="$target_dir/dist"
mkdir -p "$dist"
fail=0
built=()
for triple in "${targets[@]}"; do
    arch=${triple%%-*}
    if [[ $triple == *-windows-gnu ]]; then
        echo "== cargo build --profile dist --locked --target $triple"
        cargo build --profile dist --locked --target "$triple"
        out="$dist/yieldshell-$version-$arch-windows.exe"
        cp "$target_dir/$triple/dist/yieldshell.exe" "$out"
        built+=("$out")
        continue
    fi
    # CARGO_TARGET_<TRIPLE>_LINKER: rustc finds rust-lld in its own sysroot.
    var="CARGO_TARGET_$(echo "$triple" | tr 'a-z-' 'A-Z_')_LINKER"
    echo "== $var=rust-lld cargo build --profile dist --locked --target $triple"
    env "$var=rust-lld" cargo build --profile dist --locked --target "$triple"
    bin="$target_dir/$triple/dist/yieldshell"
    out="$dist/yieldshell-$version-$arch-linux-musl"
    cp "$bin" "$out"
    built+=("$out")
done

echo
echo "== release binaries (limit $LIMIT bytes each)"
for out in "${built[@]}"; do
    size=$(stat -c %s "$out")
    verdict=ok
    if ((size > LIMIT)); then
        verdict="OVER THE LIMIT"
        fail=1
    fi
    if [[ $out == *.exe ]]; then
        # Static in Windows' sense: only the system's own DLLs are imported.
        if command -v x86_64-w64-mingw32-objdump >/dev/null 2>&1 \
            && x86_64-w64-mingw32-objdump -p "$out" | sed -n 's/.*DLL Name: //p' \
            | grep -viqE '^(kernel32|ntdll|advapi32|bcryptprimitives|ws2_32|userenv|msvcrt|api-ms-win-.*)\.dll$'; then
            verdict="$verdict, IMPORTS A NON-SYSTEM DLL"
            fail=1
        fi
    elif command -v readelf >/dev/null 2>&1 \
        && { readelf -lW "$out" | grep -q INTERP || readelf -dW "$out" 2>/dev/null | grep -q '(NEEDED)'; }; then
        verdict="$verdict, NOT STATIC"
        fail=1
    fi
    printf '%-60s %9d bytes (%s MiB) %s\n' "$out" "$size" \
        "$(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }')" "$verdict"
done
echo
echo "== SHA-256"
(cd "$dist" && for out in "${built[@]}"; do sha256sum "$(basename "$out")"; done) \
    | tee "$dist/SHA256SUMS"
exit "$fail"
