#!/usr/bin/env bash
# Copies the static yieldshell binary to another host over ssh and checks it there.
#
# Usage: scripts/install-remote.sh HOST [PATH]
#   HOST  anything ssh accepts: host, user@host, an alias from ~/.ssh/config
#   PATH  where to put the binary on HOST (default: .local/bin/yieldshell, relative to the
#         remote home directory)
#
# The binary is the one scripts/build-release.sh made for the remote machine's
# architecture (`uname -m` on HOST: x86_64 or aarch64), or the file named by
# YIELDSHELL_BINARY. The copy goes through ssh's stdin (no scp or sftp needed on HOST),
# into a temporary file that is renamed into place, so a running copy is never
# overwritten mid-file. Then `PATH --version` runs on HOST and must print this version.
#
# Environment: SSH (default "ssh") is the command used, e.g. SSH="ssh -p 2222".
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# < 1 || $# > 2)); then
    echo "usage: $0 HOST [PATH]" >&2
    exit 2
fi
host=$1
dest=${2:-.local/bin/yieldshell}
read -r -a ssh <<<"${SSH:-ssh}"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
if [[ -n "${YIELDSHELL_BINARY:-}" ]]; then
    bin=$YIELDSHELL_BINARY
else
    arch=$("${ssh[@]}" "$host" uname -m) || {
        echo "install-remote: cannot run uname -m on $host over ssh" >&2
        exit 1
    }
    case "$arch" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *)
            echo "install-remote: $host is $arch; release binaries exist for x86_64 and aarch64" >&2
            exit 1
            ;;
    esac
    bin="${CARGO_TARGET_DIR:-target}/dist/yieldshell-$version-$arch-linux-musl"
fi
if [[ ! -f "$bin" ]]; then
    echo "install-remote: $bin not found: run scripts/build-release.sh first" \
        "(or set YIELDSHELL_BINARY)" >&2
    exit 1
fi

# The remote side runs under the user's login shell: quote the path for it.
q=$(printf '%q' "$dest")
echo "== copying $bin ($(stat -c %s "$bin") bytes) to $host:$dest"
"${ssh[@]}" "$host" "set -e; mkdir -p \"\$(dirname $q)\"; cat > $q.new; chmod 755 $q.new; mv -f $q.new $q" <"$bin"

echo "== $host: $dest --version"
remote=$("${ssh[@]}" "$host" "$q --version" </dev/null) || {
    echo "install-remote: $dest --version failed on $host" >&2
    exit 1
}
echo "$remote"
if [[ "$remote" != "yieldshell $version" ]]; then
    echo "install-remote: expected \"yieldshell $version\" from $host, got \"$remote\"" >&2
    exit 1
fi
echo "OK: $host:$dest is yieldshell $version"
# Clients then start it with: ssh -T $host $dest
