#!/usr/bin/env bash
# Prints the benchmark figures of the release build (see tests/bench/daemon.rs). Not part
# of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo build --release --locked --bin malo --bin malo-daemon --example bench
"$CARGO_TARGET_DIR/release/examples/bench" "$@"
