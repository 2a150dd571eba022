#!/usr/bin/env bash
# Builds the container image of docs/DEPLOY.md with podman: the release binaries (built
# here, or MALO_BINARY=<path of malo>, with malo-daemon beside it) on a slim Debian with
# WebKitGTK's runtime and Xvfb (src-tauri/packaging/container/Containerfile). Prints the
# image's name.
#
# Without a registry to pull debian:bookworm-slim from, make the base from a debootstrap
# tree: sudo debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian, then
# MALO_BASE_ROOTFS=DIR scripts/container.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)
image="${MALO_IMAGE:-localhost/malo-browser:$version}"
binary="${MALO_BINARY:-}"
if [ -z "$binary" ]; then
    cargo build --release --locked --bin malo --bin malo-daemon
    binary="$CARGO_TARGET_DIR/release/malo"
fi

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$binary" "$context/malo"
cp "$(dirname "$binary")/malo-daemon" "$context/malo-daemon"

base=()
if [ -n "${MALO_BASE_ROOTFS:-}" ]; then
    tar -C "$MALO_BASE_ROOTFS" -c . | podman import - localhost/malo-base:bookworm >/dev/null
    base=(--build-arg BASE=localhost/malo-base:bookworm)
fi
podman build "${base[@]}" ${MALO_BUILD_ARGS:-} -f src-tauri/packaging/container/Containerfile -t "$image" "$context" >&2
echo "$image"
