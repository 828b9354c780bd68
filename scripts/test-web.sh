#!/usr/bin/env bash
# The web page (clients/web): type check, build freshness and size, then the browser tests.
#   1. npm ci (pinned by clients/web/package-lock.json), tsc --noEmit
#   2. vite build: the committed clients/web/dist must be exactly what the sources build to
#      (bete-server embeds it at compile time), and its JS + CSS at most 250 KB gzipped
#   3. the browser tests (clients/web/tests/browser.ts): playwright-core driving Debian's
#      Chromium (apt-get installed where /usr/bin/chromium is missing) against a real bete-server
#      with house bots; screenshots into target/web-screenshots/ (ignored; no tracked file is
#      rewritten). scripts/refresh-screenshots.sh refreshes docs/web-*.png on purpose.
#
#   bash scripts/test-web.sh          # everything
#   BETE_WEB_SKIP_BROWSER=1 bash scripts/test-web.sh   # 1 and 2 only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
web=clients/web
max_gzip=$((250 * 1000))

echo "test-web: npm ci" >&2
(cd "$web" && npm ci --silent --no-audit --no-fund)

echo "test-web: type check" >&2
(cd "$web" && node_modules/.bin/tsc --noEmit -p .)

echo "test-web: build, and compare with the committed dist/" >&2
(cd "$web" && node_modules/.bin/vite build --logLevel warn)
status=0
if ! git diff --exit-code --stat -- "$web/dist"; then
  echo "test-web: clients/web/dist differs from what the sources build to (diff above): run \`npm run build\` in clients/web and commit dist/" >&2
  status=1
fi
untracked=$(git ls-files --others --exclude-standard -- "$web/dist")
if [ -n "$untracked" ]; then
  printf 'test-web: built files not committed:\n%s\n' "$untracked" >&2
  status=1
fi
[ "$status" -eq 0 ] || exit "$status"

# The plain files (the build's .gz and .br copies of them are what goes on the wire).
size=$(find "$web/dist" -type f ! -name '*.gz' ! -name '*.br' -print0 | sort -z | xargs -0 cat | gzip -9 | wc -c)
echo "test-web: bundle $size bytes gzipped (limit $max_gzip)" >&2
if [ "$size" -gt "$max_gzip" ]; then
  echo "test-web: the bundle is over 250 KB gzipped" >&2
  exit 1
fi

if [ -n "${BETE_WEB_SKIP_BROWSER:-}" ]; then
  echo "test-web: ok (browser tests skipped)" >&2
  exit 0
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "test-web: installing Debian's chromium" >&2
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && apt-get install -y -qq chromium
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq chromium
  fi
fi

server_bin=${BETE_SERVER_BIN:-}
if [ -z "$server_bin" ]; then
  echo "test-web: building bete-server" >&2
  cargo build -p bete-server --locked
  server_bin=$root/target/debug/bete-server
fi
echo "test-web: browser tests" >&2
(cd "$web" && node_modules/.bin/rolldown tests/browser.ts --platform node --format esm \
  -o .test-build/browser.mjs -e playwright-core --logLevel silent)
BETE_SERVER="$server_bin" node "$web/.test-build/browser.mjs"
echo "test-web: ok" >&2
