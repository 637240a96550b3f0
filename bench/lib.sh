# Shared set-up for the benchmarks: Debian packages and a Python venv for the reference runs.
# Sourced from the checkout's root. A POSTERN_BIN outside the checkout finds no bundled templates
# beside itself: every daemon a benchmark starts uses this checkout's.
export POSTERN_TEMPLATES=${POSTERN_TEMPLATES:-$PWD/templates}
bench_install_swift_deps() {
  local need=()
  for p in libcurl4-openssl-dev libssl-dev libsqlite3-dev libmicrohttpd-dev libidn2-dev libphonenumber-dev libpq-dev libcrypt-dev pkg-config openssl util-linux "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
  fi
}

# bench_python PKG... : a venv in .venv with the packages; sets BENCH_PY.
bench_python() {
  if ! command -v python3 >/dev/null; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >&2
  fi
  [ -x .venv/bin/python ] || python3 -m venv .venv >&2
  BENCH_PY=$PWD/.venv/bin/python
  "$BENCH_PY" -m pip install -q "$@" >&2
}
