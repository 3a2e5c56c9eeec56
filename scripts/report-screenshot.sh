#!/usr/bin/env bash
# Makes docs/report.png (the report on fixtures/news, its largest story open) and
# docs/report-side-by-side.png (a member and its representative side by side) with headless
# Chromium, for README.md and docs/GUIDE.md.
#
#   scripts/report-screenshot.sh
#
# Needs chromium (apt-get install chromium). The page is loaded from disk; nothing is fetched.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "report-screenshot.sh: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/release/megashingle report fixtures/news -o "$work/report.html" --quiet
mkdir -p docs
shot() { # shot FRAGMENT OUT WIDTH,HEIGHT
  "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="$3" --screenshot="$2" "file://$work/report.html#$1" 2>/dev/null
  echo "report-screenshot.sh: wrote $2" >&2
}
shot "open=0" docs/report.png 1400,1180
shot "view=0.2" docs/report-side-by-side.png 1400,900
