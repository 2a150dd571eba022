#!/usr/bin/env bash
# The whole test suite: unit tests, and end-to-end tests that run the real daemon in real
# WebKit under a private Xvfb they start themselves (no display needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo test --workspace --locked "$@"
