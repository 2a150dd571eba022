#!/usr/bin/env bash
# Soak: scripts/soak.sh [agents] [sessions] [minutes] (default 8 4 8); see
# tests/bench/soak.rs. Prints calls, errors, p50/p99 per tool, memory, main-thread
# figures and leftovers; exits non-zero on any error or leftover. Not part of the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo build --release --locked --bin malo --bin malo-daemon --example soak
"$CARGO_TARGET_DIR/release/examples/soak" "$@"
