# shellcheck shell=bash
# Sourced by the scripts beside it: the repository root, the Python venv the emulator, client tests,
# packaging and infra checks share, and how they install pinned Python packages into a venv.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC2034 # read by the scripts that source this file
VENV="$ROOT/.venv"

# target_dir: the directory cargo builds into, as `cargo metadata` reports it (CARGO_TARGET_DIR, a
# .cargo/config build.target-dir, or ./target), so that scripts find the binaries wherever they are.
target_dir() {
  "${CARGO:-cargo}" metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

# venv_install VENV PIP-ARGS...: pip-installs into VENV (pinned specs, or -r FILE), creating the venv
# first when it does not exist yet.
venv_install() {
  local venv="$1"
  shift
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
}

# ensure_cargo_lambda: cargo-lambda (CARGO_LAMBDA_VERSION, 1.9.2) from PyPI in the shared venv, when
# missing: `make package` builds the zip with it and `make test` runs the API suite under its
# `cargo lambda watch`.
ensure_cargo_lambda() {
  if ! "$VENV/bin/cargo-lambda" lambda --version >/dev/null 2>&1; then
    echo "installing cargo-lambda==${CARGO_LAMBDA_VERSION:-1.9.2} into $VENV"
    venv_install "$VENV" "cargo-lambda==${CARGO_LAMBDA_VERSION:-1.9.2}"
  fi
}
