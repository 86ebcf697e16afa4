#!/usr/bin/env bash
# Real Confluent clients against a real `registry serve`: the Python (confluent-kafka), JavaScript
# (@kafkajs/confluent-schema-registry) and Rust (schema_registry_converter) suites in tests/clients.
#
# Installs what it needs (pinned: Python packages into ./.venv, npm packages from the committed
# package-lock.json, Rust crates from tests/clients/rust/Cargo.lock), then per backend starts one
# server on a free loopback port with a fresh temporary data dir, runs the suites, and stops the
# server by its PID, also on failure (the Python suite's test_auth.py starts and stops a second one,
# with HTTP Basic on, on the same backend). Exits non-zero when any suite fails.
#
# Backends: embedded (all three suites), aws (Python suite, against the moto emulator of
# scripts/emulator-start.sh: started here when nothing answers yet, stopped again if started here;
# a table and bucket unique to the run are created by `registry aws-init` and deleted afterwards)
# and lambda (Python suite, as aws, but the registry is the real registry-lambda binary under the
# Lambda Runtime API emulator `lambda-emulator` of the tests crate, reached through Function URL
# requests on plain paths; test_auth.py starts a second one with HTTP Basic on).
#   CLIENTS_BACKENDS="embedded aws lambda"   which backends to run (default all three)
#   CLIENTS_SUITES="python js rust"          which suites to run on embedded (default all)
#   REGISTRY_BIN=path                        use this registry binary instead of building one (cargo build -p registry)
#   LAMBDA_EMULATOR=path                     use this lambda-emulator (it runs registry-lambda from its own directory)
#   CLIENTS_PREPARE_ONLY=1                   install the packages and build the Rust suite, run nothing
#                                            (`make test` does it in its build step)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CLIENTS="$ROOT/tests/clients"
CARGO="${CARGO:-cargo}"
# Where cargo builds (CARGO_TARGET_DIR or ./target, as `cargo metadata` says).
TARGET_DIR="$(target_dir)"
BACKENDS="${CLIENTS_BACKENDS:-embedded aws lambda}"
SUITES="${CLIENTS_SUITES:-python js rust}"
EMULATOR_PORT="${EMULATOR_PORT:-4566}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/clients-test.XXXXXX")"
REGISTRY_BIN="${REGISTRY_BIN:-}"
LAMBDA_EMULATOR="${LAMBDA_EMULATOR:-}"
# The servers' `local-kms` secret (shared local-kms KEKs); the Python suite reads it too.
export REGISTRY_LOCAL_KMS_SECRET="${REGISTRY_LOCAL_KMS_SECRET:-clients-test-local-kms-secret}"
SERVER_PID=""
STARTED_EMULATOR=0
FAILED=()
PASSED=()

cleanup() {
  stop_server
  if [ "$STARTED_EMULATOR" = 1 ]; then "$ROOT/scripts/emulator-stop.sh" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

log() { echo "clients-test: $*" >&2; }

# ---- installs -------------------------------------------------------------------------------

install_python() {
  if ! "$VENV/bin/python" - "$CLIENTS/python/requirements.txt" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, wanted = line.split("==")
    if version(name.split("[")[0]) != wanted:
        sys.exit(1)
import confluent_kafka.schema_registry.protobuf, confluent_kafka.schema_registry.avro  # extras present
import confluent_kafka.schema_registry.json_schema
PY
    log "installing $CLIENTS/python/requirements.txt into $VENV"
    venv_install "$VENV" -r "$CLIENTS/python/requirements.txt"
  fi
}

install_js() {
  local stamp="$CLIENTS/js/node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ "$CLIENTS/js/package-lock.json" -nt "$stamp" ]; then
    log "npm ci in $CLIENTS/js"
    (cd "$CLIENTS/js" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# ---- server ---------------------------------------------------------------------------------

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME [ENV=VALUE...]: starts `registry serve` with the given environment, waits
# until it answers, sets REGISTRY_URL. Its exporters may send to loopback (test_schema_linking.py's
# destination), which REGISTRY_EXPORTER_ALLOWED_DESTINATIONS refuses unless it lists it.
start_server() {
  local name="$1"
  shift
  local port data
  port="$(free_port)"
  data="$WORK/$name-data"
  mkdir -p "$data"
  env PORT="$port" REGISTRY_BIND=127.0.0.1 REGISTRY_DATA_DIR="$data" RUST_LOG="${RUST_LOG:-warn}" \
    REGISTRY_EXPORTER_ALLOWED_DESTINATIONS=127.0.0.1 "$@" "$REGISTRY_BIN" serve >"$WORK/$name-server.log" 2>&1 &
  SERVER_PID=$!
  REGISTRY_URL="http://127.0.0.1:$port"
  # Up to 120 s (a start takes milliseconds: only a server that never answers fails here, never a
  # slow machine); a server that exits ends the wait at once.
  for _ in $(seq 1 600); do
    if curl -fsS -o /dev/null "$REGISTRY_URL/subjects"; then
      log "$name: registry serve (pid $SERVER_PID) answers on $REGISTRY_URL"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    sleep 0.2
  done
  log "$name: registry serve did not come up; its log:"
  cat "$WORK/$name-server.log" >&2 || true
  SERVER_PID=""
  return 1
}

# start_function NAME [ENV=VALUE...]: starts registry-lambda under lambda-emulator (by its PID, as a
# server) with the given environment, waits until the Function URL answers, sets REGISTRY_URL.
start_function() {
  local name="$1"
  shift
  local port
  port="$(free_port)"
  env RUST_LOG="${RUST_LOG:-warn}" "$@" "$LAMBDA_EMULATOR" --port "$port" --log "$WORK/$name-function.log" \
    >"$WORK/$name-server.log" 2>&1 &
  SERVER_PID=$!
  REGISTRY_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 600); do
    if curl -fsS -o /dev/null "$REGISTRY_URL/" 2>/dev/null; then
      log "$name: $(grep -m1 'serves' "$WORK/$name-server.log" || echo "lambda-emulator (pid $SERVER_PID) on $REGISTRY_URL")"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    sleep 0.2
  done
  log "$name: the function did not come up; its log:"
  cat "$WORK/$name-server.log" "$WORK/$name-function.log" >&2 || true
  SERVER_PID=""
  return 1
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}

# run_suite LABEL COMMAND...: runs one client suite, records the outcome.
run_suite() {
  local label="$1"
  shift
  log "running $label"
  if env REGISTRY_URL="$REGISTRY_URL" "$@"; then
    PASSED+=("$label")
  else
    FAILED+=("$label")
    log "$label FAILED; server log tail:"
    tail -n 30 "$WORK"/*-server.log >&2 2>/dev/null || true
  fi
}

# python_suite LABEL BACKEND [ENV=VALUE...]: test_auth.py starts its own server with authentication on,
# from REGISTRY_BIN on REGISTRY_BACKEND with the given environment (the run's AWS variables for aws;
# LAMBDA_EMULATOR among them for the function: test_auth.py starts the function when it is set, so
# it is set only then).
python_suite() {
  local label="$1" backend="$2"
  shift 2
  run_suite "python ($label)" env -u LAMBDA_EMULATOR REGISTRY_BIN="$REGISTRY_BIN" REGISTRY_BACKEND="$backend" "$@" \
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$CLIENTS/python"
}
js_suite() { run_suite "js ($1)" bash -c "cd '$CLIENTS/js' && node --test"; }
RUST_TEST=(env CARGO_TARGET_DIR="$TARGET_DIR/clients-rust" "$CARGO" test --quiet --locked
  --manifest-path "$CLIENTS/rust/Cargo.toml")
rust_suite() { run_suite "rust ($1)" "${RUST_TEST[@]}"; }

wants() { [[ " $2 " == *" $1 "* ]]; }

# ---- backends -------------------------------------------------------------------------------

run_embedded() {
  start_server embedded REGISTRY_BACKEND=embedded || { FAILED+=("embedded server"); return; }
  wants python "$SUITES" && python_suite embedded embedded
  wants js "$SUITES" && js_suite embedded
  wants rust "$SUITES" && rust_suite embedded
  stop_server
}

# aws_resources NAME: starts the emulator if nothing answers, creates a table and bucket unique to
# the run with `registry aws-init`, and sets AWS_ENV to the variables that reach them.
aws_resources() {
  if ! curl -fsS -o /dev/null "http://127.0.0.1:$EMULATOR_PORT/moto-api/" 2>/dev/null; then
    "$ROOT/scripts/emulator-start.sh"
    STARTED_EMULATOR=1
  fi
  local suffix="$1-$(date +%s)-$$"
  AWS_ENV=(AWS_ENDPOINT_URL="http://127.0.0.1:$EMULATOR_PORT" AWS_REGION=us-east-1
    AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test REGISTRY_TABLE="clients-$suffix" REGISTRY_BUCKET="clients-$suffix")
  env "${AWS_ENV[@]}" "$REGISTRY_BIN" aws-init >"$WORK/$1-aws-init.log" 2>&1 ||
    { cat "$WORK/$1-aws-init.log" >&2; return 1; }
}

delete_aws_resources() {
  env "${AWS_ENV[@]}" "$VENV/bin/python" "$CLIENTS/python/aws_resources.py" delete ||
    log "could not delete the run's table and bucket from the emulator"
}

run_aws() {
  aws_resources aws || { FAILED+=("aws-init"); return; }
  start_server aws REGISTRY_BACKEND=aws "${AWS_ENV[@]}" || { FAILED+=("aws server"); delete_aws_resources; return; }
  wants python "$SUITES" && python_suite aws aws "${AWS_ENV[@]}"
  stop_server
  delete_aws_resources
}

run_lambda() {
  aws_resources lambda || { FAILED+=("aws-init (lambda)"); return; }
  start_function lambda "${AWS_ENV[@]}" || { FAILED+=("lambda function"); delete_aws_resources; return; }
  wants python "$SUITES" && python_suite lambda aws "${AWS_ENV[@]}" LAMBDA_EMULATOR="$LAMBDA_EMULATOR"
  stop_server
  delete_aws_resources
}

if [ "${CLIENTS_PREPARE_ONLY:-0}" = 1 ]; then
  install_python
  if wants js "$SUITES"; then install_js; fi
  if wants rust "$SUITES"; then
    log "building the Rust suite"
    "${RUST_TEST[@]}" --no-run
  fi
  exit 0
fi

if [ -z "$REGISTRY_BIN" ]; then
  log "building the registry binary"
  "$CARGO" build --quiet -p registry
  REGISTRY_BIN="$TARGET_DIR/debug/registry"
fi
if wants lambda "$BACKENDS" && [ -z "$LAMBDA_EMULATOR" ]; then
  log "building registry-lambda and lambda-emulator"
  "$CARGO" build --quiet -p registry-lambda
  "$CARGO" build --quiet -p api-tests --bin lambda-emulator
  LAMBDA_EMULATOR="$TARGET_DIR/debug/lambda-emulator"
fi
install_python
wants js "$SUITES" && install_js

for backend in $BACKENDS; do
  case "$backend" in
    embedded) run_embedded ;;
    aws) run_aws ;;
    lambda) run_lambda ;;
    *) log "unknown backend $backend"; FAILED+=("backend $backend") ;;
  esac
done

log "passed: ${PASSED[*]:-none}"
if [ "${#FAILED[@]}" -gt 0 ]; then
  log "FAILED: ${FAILED[*]}"
  exit 1
fi
log "all client suites passed"
