#!/usr/bin/env bash
# Installs what is needed, builds malo and starts the daemon with the default settings
# (broker on 127.0.0.1:7410, leases on 7411-7499, state in ~/.malo-browser). Without a
# display it starts a private Xvfb first. Extra arguments go to `malo daemon`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo build --bin malo
malo="$CARGO_TARGET_DIR/debug/malo"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  for number in $(seq 99 140); do
    [ -e "/tmp/.X${number}-lock" ] && continue
    Xvfb ":${number}" -screen 0 1920x1080x24 -nolisten tcp >/dev/null 2>&1 &
    xvfb_pid=$!
    export DISPLAY=":${number}"
    trap 'kill $xvfb_pid 2>/dev/null' EXIT
    for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X${number}" ] && break; sleep 0.1; done
    echo "start: no display; running under Xvfb $DISPLAY" >&2
    break
  done
fi
"$malo" daemon "$@"
