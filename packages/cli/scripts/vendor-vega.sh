#!/usr/bin/env bash
# Refresh the report's charting runtime from the npm registry: Vega and Vega-Lite's
# minified browser builds, copied into the package (the report inlines them, so it opens
# from file:// with no network; nothing is downloaded when lasagna runs).
# Usage: bash packages/cli/scripts/vendor-vega.sh [VEGA_VERSION] [VEGA_LITE_VERSION]
# Then update assets/vendor.json's sha256 (the test tests/cli/test_report_html.py checks them).
set -euo pipefail
vega="${1:-6.4.0}"
lite="${2:-6.4.3}"
here="$(cd "$(dirname "$0")/.." && pwd)"
assets="$here/src/lasagna_cli/engine/reports/assets"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund "vega@$vega" "vega-lite@$lite" >/dev/null)
cp "$work/node_modules/vega/build/vega.min.js" "$work/node_modules/vega-lite/build/vega-lite.min.js" "$assets/"
{
    echo "vega $vega (BSD-3-Clause)"; echo; cat "$work/node_modules/vega/LICENSE"; echo
    echo "vega-lite $lite (BSD-3-Clause)"; echo; cat "$work/node_modules/vega-lite/LICENSE"
} >"$assets/VEGA-LICENSES.txt"
(cd "$assets" && sha256sum vega.min.js vega-lite.min.js)
