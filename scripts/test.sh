#!/usr/bin/env bash
# The whole test suite, in tiers that fail fast:
#   1. style: rustfmt and clippy (warnings are errors);
#   2. fast: unit tests and the HTTP routers over a fake engine (seconds);
#   3. end to end: the real daemon in real WebKit, under a private Xvfb, D-Bus, keyring
#      and window manager that the tests start themselves (no display needed);
#   4. the end-to-end core again under a private weston (Wayland with XWayland).
# Arguments are test-name filters, passed to both test tiers (`scripts/test.sh tabs::`);
# with filters, tier 4 is skipped.
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

# The core again on a Wayland desktop with XWayland (a private weston): sessions, page
# tools and tabs. The takeover and focus tests stay on X11, whose tools read focus;
# tests/e2e/wayland.rs covers the takeover window and Wayland alone, without a seat
# (weston) and with one (sway).
if [ "$#" -eq 0 ]; then
  echo "== end-to-end core on Wayland (weston, XWayland)" >&2
  MALO_TEST_BACKEND=wayland cargo test --workspace --locked --test e2e -- sessions:: tools:: tabs:: --skip devtools::
fi
