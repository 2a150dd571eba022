# Sourced by the scripts: cargo on PATH, and one build cache outside the checkout so that
# fresh clones (CI) reuse it instead of rebuilding Tauri and WebKit bindings from scratch.
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/malo-browser/target}"
export MALO_PYTHON="${MALO_PYTHON:-$HOME/.cache/malo-browser/venv/bin/python}"
