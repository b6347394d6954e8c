# Sourced by scripts/test: the dashboard's browser tests (test/dashboard/*.browser.test.ts) drive
# Debian's Chromium with playwright-core. Installs it with apt-get when it is missing (as root, or
# through sudo when that works without a password). $CHROMIUM names another binary.
ensure_chromium() {
  local bin="${CHROMIUM:-/usr/bin/chromium}"
  [ -x "$bin" ] && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "chromium is missing and apt-get is not available: the browser tests will fail (set CHROMIUM)" >&2; return 1; }
  local sudo=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "chromium is missing and installing it needs root: the browser tests will fail" >&2
      return 1
    fi
  fi
  echo "installing chromium (apt-get) for the dashboard's browser tests" >&2
  $sudo apt-get update >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || {
    echo "apt-get install chromium failed: the browser tests will fail" >&2
    return 1
  }
}
