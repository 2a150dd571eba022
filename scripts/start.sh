#!/usr/bin/env bash
# Installs what is needed, builds the release binaries, installs them as ~/.local/bin/malo
# and ~/.local/bin/malo-daemon (MALO_INSTALL_DIR to choose another folder) and starts the
# daemon with the default settings (broker on 127.0.0.1:7410, leases on 7411-7499, state
# in ~/.malo-browser). Without a display the daemon starts a private X server of its own.
# Extra arguments go to `malo daemon`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo build --release --locked --bin malo --bin malo-daemon
bin_dir="${MALO_INSTALL_DIR:-$HOME/.local/bin}"
mkdir -p "$bin_dir"
for binary in malo malo-daemon; do
  install -m 0755 "$CARGO_TARGET_DIR/release/$binary" "$bin_dir/$binary"
done
echo "start: installed $bin_dir/malo and $bin_dir/malo-daemon" >&2
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "start: $bin_dir is not on your PATH; add it to run \`malo\` by name:" \
       "echo 'export PATH=\"$bin_dir:\$PATH\"' >> ~/.profile" >&2 ;;
esac
exec "$bin_dir/malo" daemon "$@"
