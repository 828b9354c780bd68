#!/usr/bin/env bash
# Refreshes the documentation's screenshots (docs/web-*.png) from the web page's browser tests.
# Opt-in: the test command writes its screenshots to target/web-screenshots/ and never rewrites
# a tracked file; run this when the page changed, look at the images, and commit them.
#
#   bash scripts/refresh-screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BETE_WEB_SCREENSHOTS=docs bash scripts/test-web.sh
git status --short -- 'docs/web-*.png'
