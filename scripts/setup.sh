#!/usr/bin/env bash
# Installs what malo-browser needs on Debian/Ubuntu: the WebKitGTK/GTK development
# packages, the web-process sandbox (bubblewrap, xdg-dbus-proxy), an X server for headless
# use (Xvfb), the tools the tests use, and Rust (through rustup) when cargo is missing. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  build-essential pkg-config curl ca-certificates
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libxdo-dev libssl-dev libdbus-1-dev libwebp-dev
  bubblewrap xdg-dbus-proxy
  xvfb xauth x11-utils xdotool openbox imagemagick weston xwayland sway poppler-utils
  dbus dbus-x11 gnome-keyring libsecret-tools
  # The person's browser of the live-view tests and the peer of the benchmark (Debian's).
  chromium
)
# Node.js and npm run the pinned DevTools clients of the tests (tests/clients/); a machine
# that has them from elsewhere (NodeSource, nvm) keeps its own.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: installing Rust with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi
# The test command checks formatting and lints.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  if command -v rustup >/dev/null 2>&1; then
    echo "setup: adding rustfmt and clippy" >&2
    rustup component add rustfmt clippy
  fi
fi

# Python tools the tests use: the official MCP SDK (a real MCP client), schemathesis
# (fuzzing the OpenAPI spec) and dbus-next (the test desktop's tray host and notification
# server), pinned, in a virtual environment of their own.
venv="$HOME/.cache/malo-browser/venv"
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq python3-venv
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import mcp, schemathesis, dbus_next' >/dev/null 2>&1; then
  echo "setup: installing the MCP SDK, schemathesis and dbus-next into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check mcp==2.3.0 schemathesis==4.32.5 dbus-next==0.2.3
fi

# axe-core, the accessibility rules `a11y` runs, at the version src-tauri/axe/package.json
# pins (its lock holds the checksum): installed into src-tauri/axe/node_modules, which the
# build bundles into the daemon (src-tauri/build.rs). Without it `a11y` is unsupported.
axe_dir="$(cd "$(dirname "$0")/.." && pwd)/src-tauri/axe"
axe_wanted=$(sed -n 's/.*"axe-core": "\(.*\)".*/\1/p' "$axe_dir/package.json")
axe_installed=""
if [ -f "$axe_dir/node_modules/axe-core/package.json" ]; then
  axe_installed=$(sed -n 's/^ *"version": "\(.*\)".*/\1/p' "$axe_dir/node_modules/axe-core/package.json" | head -n 1)
fi
if [ "$axe_installed" != "$axe_wanted" ]; then
  echo "setup: installing axe-core $axe_wanted into $axe_dir" >&2
  (cd "$axe_dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
