#!/usr/bin/env bash
# Builds the Debian package with Tauri's bundler (the release profile; tauri-cli is
# installed on first use): target/release/bundle/deb/malo-browser_<version>_<arch>.deb,
# with the `malo` and `malo-daemon` binaries (the bundler takes every [[bin]]), a desktop
# entry that starts the daemon, the icons, and the dependencies (WebKitGTK 4.1, GTK 3,
# libayatana-appindicator, Xvfb for machines without a display). `malo autostart on`
# then starts it at login.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
command -v cargo-tauri >/dev/null 2>&1 || cargo install tauri-cli --version "^2" --locked
(cd src-tauri && cargo tauri build --bundles deb)
ls "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb
