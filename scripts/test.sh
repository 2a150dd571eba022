#!/usr/bin/env bash
# The whole test suite, in tiers that fail fast:
#   1. style: rustfmt and clippy (warnings are errors);
#   2. fast: unit tests and the HTTP routers over a fake engine (seconds);
#   3. end to end: the real daemon in real WebKit, under a private Xvfb, D-Bus, keyring
#      and window manager that the tests start themselves (no display needed).
# Arguments are test-name filters, passed to both test tiers (`scripts/test.sh tabs::`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

echo "== style" >&2
cargo fmt --all --check
rustfmt --edition 2021 --check src-tauri/web-process/extension.rs
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== fast tier" >&2
cargo test --workspace --locked --lib "$@"

echo "== end-to-end tier" >&2
cargo test --workspace --locked --test e2e "$@"
