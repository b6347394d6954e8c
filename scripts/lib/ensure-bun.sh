# Sourced by scripts/start and scripts/test: makes sure `bun` is on PATH (a fresh machine has node
# and npm only) and the dependencies are installed exactly from bun.lock.
ensure_bun() {
  if ! command -v bun >/dev/null 2>&1; then
    echo "bun not found: installing it with npm" >&2
    if npm install -g bun >/dev/null 2>&1; then
      # npm's global bin folder may not be on PATH (a custom prefix).
      command -v bun >/dev/null 2>&1 || export PATH="$(npm prefix -g)/bin:$PATH"
    fi
    if ! command -v bun >/dev/null 2>&1; then
      # No global install possible: install into the repo's ignored .tmp folder instead.
      npm install --prefix "$ROOT/.tmp/bun" bun >/dev/null || {
        echo "could not install bun with npm" >&2
        return 1
      }
      export PATH="$ROOT/.tmp/bun/node_modules/.bin:$PATH"
    fi
    hash -r
  fi
  if ! bun --version >/dev/null 2>&1; then
    echo "bun is installed but does not run" >&2
    return 1
  fi
  (cd "$ROOT" && bun install --frozen-lockfile >/dev/null) || {
    echo "bun install --frozen-lockfile failed" >&2
    return 1
  }
}
