#!/usr/bin/env bash
# `make test`: every test of the project, in steps, then one line per step with its time and the
# peak memory of everything it started (test processes, servers, functions and the emulators).
#
#   build                 every test binary, the registry and registry-lambda binaries, and what the
#                         client suites install and build (Python packages, npm packages, the Rust
#                         client crate)
#   unit, router, stores  every crate's unit and integration tests that need no emulator
#                         (domain, formats, router, memory and SQLite conformance, admin commands)
#   aws store             registry-store-aws on the emulator (conformance: one table per case)
#   api <backend>         the API suite (tests/api) on memory, local (the embedded store), aws and
#                         lambda (the real registry-lambda binary under the Runtime API emulator)
#   api cargo lambda      the API suite's lambda cases with the function under cargo-lambda's own
#                         runtime emulator (`cargo lambda watch`, one per case; cargo-lambda from
#                         PyPI in the venv), as a Rust Lambda developer runs it locally
#   clients <backend>     the real-client suites (scripts/clients-test.sh) on embedded, aws, lambda
#   infra check           scripts/infra-check.sh (terraform init/validate/test, fmt, infra_check.py, checkov)
#   api terraform         infra/examples/two-teams applied by `terraform apply` on the emulator, the API
#                         suite's lambda cases then run one at a time on the registry it created
#                         (scripts/terraform_emulator.py: the function's environment as Terraform
#                         wrote it, its table and bucket), then the runbooks' Terraform steps
#   runbooks              the runbooks walked on the emulator (scripts/restore_walkthrough.py,
#                         scripts/runbook_walkthrough.py: adding a region, failover, the restore of a
#                         multi-region table, failback)
#
# After the build, four lanes run at once, each its steps in order and on an emulator of its own:
# aws store, clients aws and clients lambda on the emulator at EMULATOR_PORT; api aws and api
# terraform on a second; api lambda (the function as a read region, its replica kept in step before
# each request), runbooks and api cargo lambda on a third; and the steps that are mostly not about AWS (unit, router,
# stores; api memory, local and other; clients embedded; infra check) on a fourth, which serves their few AWS tests (admin
# commands, the exporter's stream) without queueing behind the other lanes' requests (each emulator
# is a single Python process serving one request at a time, so a lane's AWS tests wait on its
# emulator more than on the CPU). The emulator-bound lanes mostly wait
# on their emulators, so the lanes overlap that waiting with the CPU work of the third. Each step's
# output is written to a log and printed when the step ends (one step's output at a time). A
# failing step does not end its lane: every step runs, the table at the end names each one passed
# or FAILED, and the run fails when any failed (only a failed build ends the run at once: nothing
# can run without it). The emulators are started first and stopped by their PIDs at the end, also
# on failure. The binaries are found where cargo builds them (`cargo metadata`'s target_directory:
# CARGO_TARGET_DIR, or .cargo/config's build.target-dir, or ./target).
#
# Env: EMULATOR_PORT (4566), SECOND_EMULATOR_PORT, THIRD_EMULATOR_PORT and FOURTH_EMULATOR_PORT
# (free ports) place the emulators; EMULATOR_TEST_THREADS (4) is nextest's --test-threads in the emulator-bound steps;
# TEST_STEPS (the steps to run, by the names above with spaces as dashes, e.g. "build api-memory";
# default all).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

CARGO="${CARGO:-cargo}"
export CARGO
TARGET_DIR="$(target_dir)" || { echo "make test: cargo metadata could not say where cargo builds" >&2; exit 1; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
export EMULATOR_PORT="${EMULATOR_PORT:-4566}"
SECOND_EMULATOR_PORT="${SECOND_EMULATOR_PORT:-$(free_port)}"
THIRD_EMULATOR_PORT="${THIRD_EMULATOR_PORT:-$(free_port)}"
FOURTH_EMULATOR_PORT="${FOURTH_EMULATOR_PORT:-$(free_port)}"
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
WORK="$(mktemp -d "${TMPDIR:-/tmp}/make-test.XXXXXX")"
mkdir -p "$WORK/times" "$WORK/logs" "$WORK/status"
SAMPLER=""
LANES=()
STARTED=$(date +%s%N)

# order_of STEP: the step's place in the report (each lane records its own lines; the report sorts
# them back into this order).
order_of() {
  local order=("build" "unit, router, stores" "aws store" "api memory" "api local" "api aws" "api lambda"
    "api cargo lambda" "api other" "clients embedded" "clients aws" "clients lambda" "infra check" "api terraform" "runbooks") i
  for i in "${!order[@]}"; do
    if [ "${order[$i]}" = "$1" ]; then printf '%02d' "$i"; return; fi
  done
  echo 99
}

# nextest runs each test in a process of its own and reports each test's time; its default profile
# never ends a test for being slow.
nextest() { "$CARGO" nextest run --workspace --no-fail-fast "$@"; }
# Tests at once in the emulator-bound steps: they mostly wait on the emulator, so more than one per
# core keep it busy (and, on a machine loaded by other jobs, get the run a larger share of it).
EMULATOR_TEST_THREADS="${EMULATOR_TEST_THREADS:-4}"

stop_emulators() {
  EMULATOR_PORT="$FOURTH_EMULATOR_PORT" "$ROOT/scripts/emulator-stop.sh" >/dev/null 2>&1 || true
  EMULATOR_PORT="$THIRD_EMULATOR_PORT" "$ROOT/scripts/emulator-stop.sh" >/dev/null 2>&1 || true
  EMULATOR_PORT="$SECOND_EMULATOR_PORT" "$ROOT/scripts/emulator-stop.sh" >/dev/null 2>&1 || true
  "$ROOT/scripts/emulator-stop.sh" >/dev/null 2>&1 || true
}

report() {
  local status=$? lane
  for lane in "${LANES[@]}"; do
    # Only on an interrupted run: each lane is a job of its own process group, ended as a group.
    kill -0 "$lane" 2>/dev/null && kill -TERM -- "-$lane" 2>/dev/null
  done
  if [ -n "$SAMPLER" ]; then
    kill -TERM "$SAMPLER" 2>/dev/null
    wait "$SAMPLER" 2>/dev/null
  fi
  stop_emulators
  echo
  echo "make test: time per step"
  cat "$WORK"/times/* 2>/dev/null
  printf '  %-24s %6d s\n' "total" "$(seconds_since "$STARTED")"
  if [ -s "$WORK/peak" ]; then
    printf '  %-24s %6d MB (all processes of the run, the emulators included)\n' "peak memory" \
      "$(($(cat "$WORK/peak") / 1000000))"
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap report EXIT
trap 'exit 130' INT TERM

seconds_since() { echo $((($(date +%s%N) - $1) / 1000000000)); }

wanted() { [ -z "${TEST_STEPS:-}" ] || [[ " $TEST_STEPS " == *" ${1// /-} "* ]]; }

# step NAME COMMAND...: runs COMMAND as the step NAME (unless TEST_STEPS leaves it out) with its
# output in a log printed when it ends, records its time, and returns its status.
step() {
  local name="$1" started status log
  shift
  wanted "$name" || return 0
  log="$WORK/logs/${name//[ ,]/-}.log"
  echo "=== make test: $name started" >&2
  started=$(date +%s%N)
  "$@" >"$log" 2>&1 </dev/null
  status=$?
  printf '  %-24s %6d s  %s\n' "$name" "$(seconds_since "$started")" \
    "$([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)")" >"$WORK/times/$(order_of "$name")"
  flock "$WORK/print.lock" bash -c 'echo "=== make test: $1 ($2)"; cat "$3"' _ "$name" \
    "$([ "$status" = 0 ] && echo "passed in $(seconds_since "$started") s" || echo "FAILED, exit $status")" \
    "$log" >&2
  return "$status"
}

# on_emulator PORT COMMAND...: COMMAND with the AWS variables (and EMULATOR_PORT, which the client
# suites read) aimed at the emulator on PORT.
on_emulator() {
  local port="$1"
  shift
  EMULATOR_PORT="$port" AWS_ENDPOINT_URL="http://127.0.0.1:$port" "$@"
}

API='package(api-tests) and binary(api)'
# Each API case is instantiated once per backend as <module>::<backend>::<case> (the embedded store
# is `local`); the few cases outside that scheme run in "api other".
api() {
  local backend="$1"
  shift
  nextest -E "$API and test(/::$backend::/)" "$@"
}
# The client suites use the binaries of the build step (no cargo build of their own).
clients() {
  CLIENTS_BACKENDS="$1" REGISTRY_BIN="$TARGET_DIR/debug/registry" LAMBDA_EMULATOR="$TARGET_DIR/debug/lambda-emulator" \
    "$ROOT/scripts/clients-test.sh"
}

build() {
  "$CARGO" nextest run --workspace --no-run && CLIENTS_PREPARE_ONLY=1 "$ROOT/scripts/clients-test.sh" &&
    ensure_cargo_lambda && mkdir -p "$WORK/bin" && cp "$TARGET_DIR/debug/registry-lambda" "$FUNCTION_BIN"
}
# The function every lane but "api cargo lambda" runs: a copy of the build step's registry-lambda.
# `cargo lambda watch` runs `cargo run -p registry-lambda`, whose feature set differs from the
# workspace build's, so it relinks registry-lambda in cargo's debug directory (removes it, links its own build)
# while the other lanes start the function from there.
FUNCTION_BIN="$WORK/bin/registry-lambda"
export REGISTRY_LAMBDA_BIN="$FUNCTION_BIN"

# The lambda cases under `cargo lambda watch` (tests/src/lambda/cargo_lambda.rs), whose
# `cargo run` builds registry-lambda with that package's features (once, then reuses it).
cargo_lambda_cases() {
  API_LAMBDA_RUNTIME=cargo-lambda CARGO_LAMBDA="$VENV/bin/cargo-lambda" api lambda "$@"
}

# Each lane runs all of its steps, also after a failed one (a red step must not hide what else
# would fail), and fails when any of them failed.
store_lane() {
  local failed=0
  on_emulator "$EMULATOR_PORT" step "aws store" nextest --test-threads "$EMULATOR_TEST_THREADS" \
    -E 'package(registry-store-aws)' || failed=1
  on_emulator "$EMULATOR_PORT" step "clients aws" clients aws || failed=1
  on_emulator "$EMULATOR_PORT" step "clients lambda" clients lambda || failed=1
  return "$failed"
}

api_aws_lane() {
  local failed=0
  on_emulator "$SECOND_EMULATOR_PORT" step "api aws" api aws --test-threads "$EMULATOR_TEST_THREADS" || failed=1
  on_emulator "$SECOND_EMULATOR_PORT" step "api terraform" "$VENV/bin/python" "$ROOT/scripts/terraform_emulator.py" || failed=1
  return "$failed"
}

api_lambda_lane() {
  local failed=0
  on_emulator "$THIRD_EMULATOR_PORT" step "api lambda" api lambda --test-threads "$EMULATOR_TEST_THREADS" || failed=1
  on_emulator "$THIRD_EMULATOR_PORT" step "runbooks" runbooks || failed=1
  on_emulator "$THIRD_EMULATOR_PORT" step "api cargo lambda" cargo_lambda_cases --test-threads "$EMULATOR_TEST_THREADS" ||
    failed=1
  return "$failed"
}

runbooks() {
  "$VENV/bin/python" "$ROOT/scripts/restore_walkthrough.py" && "$VENV/bin/python" "$ROOT/scripts/runbook_walkthrough.py"
}

local_lane() {
  local failed=0
  on_emulator "$FOURTH_EMULATOR_PORT" step "unit, router, stores" \
    nextest -E "not package(registry-store-aws) and not ($API)" || failed=1
  on_emulator "$FOURTH_EMULATOR_PORT" step "api memory" api memory || failed=1
  on_emulator "$FOURTH_EMULATOR_PORT" step "api local" api local || failed=1
  on_emulator "$FOURTH_EMULATOR_PORT" step "api other" nextest -E "$API and not test(/::(memory|local|aws|lambda)::/)" || failed=1
  on_emulator "$FOURTH_EMULATOR_PORT" step "clients embedded" clients embedded || failed=1
  step "infra check" "$ROOT/scripts/infra-check.sh" || failed=1
  return "$failed"
}

"$CARGO" nextest --version >/dev/null 2>&1 || { echo "make test: installing cargo-nextest" >&2; \
  "$CARGO" install --locked cargo-nextest || exit 1; }

"$ROOT/scripts/emulator-start.sh" || exit 1
EMULATOR_PORT="$SECOND_EMULATOR_PORT" "$ROOT/scripts/emulator-start.sh" || exit 1
EMULATOR_PORT="$THIRD_EMULATOR_PORT" "$ROOT/scripts/emulator-start.sh" || exit 1
EMULATOR_PORT="$FOURTH_EMULATOR_PORT" "$ROOT/scripts/emulator-start.sh" || exit 1
python3 "$ROOT/scripts/peak_memory.py" $$ "$WORK/peak" "$ROOT/.emulator/$EMULATOR_PORT/moto.pid" \
  "$ROOT/.emulator/$SECOND_EMULATOR_PORT/moto.pid" "$ROOT/.emulator/$THIRD_EMULATOR_PORT/moto.pid" \
  "$ROOT/.emulator/$FOURTH_EMULATOR_PORT/moto.pid" &
SAMPLER=$!

step "build" build || exit 1

# Job control puts each lane in a process group of its own, so an interrupted run ends each lane
# with everything it started.
set -m
for lane in store_lane api_aws_lane api_lambda_lane local_lane; do
  "$lane" &
  LANES+=($!)
done
set +m
failed=0
for lane in "${LANES[@]}"; do
  wait "$lane" || failed=1
done
LANES=()
exit "$failed"
