# Sourced by scripts/test: makes sure Debian's PostgreSQL server binaries are installed (the store tests
# start a throwaway server of their own from them: initdb into a temp dir, a free port on 127.0.0.1,
# stopped by PID; no system service is used). Installs the `postgresql` package with apt-get when
# missing (as root, or through passwordless sudo).
ensure_postgres() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then return 0; fi
  local SUDO=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
      echo "PostgreSQL is not installed and apt-get needs root: install the postgresql package" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "PostgreSQL is not installed and there is no apt-get: install PostgreSQL's server binaries" >&2
    return 1
  fi
  echo "PostgreSQL not found: installing Debian's postgresql package" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || {
      echo "apt-get install postgresql failed" >&2
      return 1
    }
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
