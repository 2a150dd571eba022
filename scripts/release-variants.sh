#!/usr/bin/env bash
# What each release-profile setting buys: builds the release binary once per variant, each
# changing one setting of Cargo.toml's [profile.release] (through cargo's
# CARGO_PROFILE_RELEASE_* variables, in a target directory of its own so the variants do
# not rebuild each other), then prints its build time and binary size (and that size
# stripped: `no-lto` keeps its symbols, so it tells what `strip` buys) and runs the
# benchmark (`bench startup`: start-up, observe, snapshot, click, fill, MCP) against it.
# Each variant is a full build (about 12 minutes on 2 cores). Not part of the test suite.
#
#   scripts/release-variants.sh [variant ...]   (default: all; names below)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

declare -A settings=(
  [shipped]=""
  [no-lto]="CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_STRIP=none"
  [fat-lto-1cgu]="CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1"
  [one-cgu]="CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1"
  [panic-abort]="CARGO_PROFILE_RELEASE_PANIC=abort"
)
variants=("$@")
[ "${#variants[@]}" -gt 0 ] || variants=(shipped no-lto one-cgu panic-abort)

base="$CARGO_TARGET_DIR"
for variant in "${variants[@]}"; do
  [ -n "${settings[$variant]+set}" ] || { echo "release-variants: no variant $variant (${!settings[*]})" >&2; exit 2; }
  # The shipped profile is the one the other scripts build; the others get their own folder.
  target="$base"
  [ "$variant" = shipped ] || target="$base/variants/$variant"
  begun=$(date +%s)
  env ${settings[$variant]} CARGO_TARGET_DIR="$target" cargo build --release --locked --bin malo --bin malo-daemon --example bench >&2
  built=$(($(date +%s) - begun))
  binary="$target/release/malo-daemon"
  size=$(stat -c %s "$binary")
  # What stripping buys: no-lto keeps its symbols, and is measured both ways here.
  strip -o "$target/malo.stripped" "$binary"
  stripped=$(stat -c %s "$target/malo.stripped")
  rm -f "$target/malo.stripped"
  echo "== $variant (${settings[$variant]:-Cargo.toml as it is}): build ${built} s (0 if it was up to date)," \
    "binary $((size / 1024)) KiB, $((stripped / 1024)) KiB stripped"
  "$target/release/examples/bench" startup
done
