#!/usr/bin/env bash
# `make test`: every test of the project, in steps, then one line per step with its time and the
# peak memory of everything it started (test processes, servers, functions and the emulator).
#
#   build                 every test binary, the registry and registry-lambda binaries
#   unit, router, stores  every crate's unit and integration tests that need no emulator
#                         (domain, formats, router, memory and SQLite conformance, admin commands)
#   aws store             registry-store-aws on the emulator (conformance: one table per case)
#   api <backend>         the API suite (tests/api) on memory, local (the embedded store), aws and
#                         lambda (the real registry-lambda binary under the Runtime API emulator)
#   clients <backend>     the real-client suites (scripts/clients-test.sh) on embedded, aws, lambda
#   infra check           scripts/infra-check.sh (terraform fmt, infra_check.py, checkov)
#
# The emulator (scripts/emulator-start.sh) is started first and stopped by its PID at the end, also
# on failure. The first failing step ends the run. Env: EMULATOR_PORT (4566), TEST_STEPS (the steps
# to run, by the names above with spaces as dashes, e.g. "build api-memory"; default all).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

CARGO="${CARGO:-cargo}"
export EMULATOR_PORT="${EMULATOR_PORT:-4566}"
export AWS_ENDPOINT_URL="http://127.0.0.1:$EMULATOR_PORT" AWS_REGION=us-east-1 \
  AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
WORK="$(mktemp -d "${TMPDIR:-/tmp}/make-test.XXXXXX")"
TIMES="$WORK/steps"
SAMPLER=""
STARTED=$(date +%s%N)

# nextest runs each test in a process of its own and reports each test's time; its default profile
# never ends a test for being slow.
nextest() { "$CARGO" nextest run --workspace --no-fail-fast "$@"; }

report() {
  local status=$?
  if [ -n "$SAMPLER" ]; then
    kill -TERM "$SAMPLER" 2>/dev/null
    wait "$SAMPLER" 2>/dev/null
  fi
  "$ROOT/scripts/emulator-stop.sh" >/dev/null 2>&1 || true
  echo
  echo "make test: time per step"
  cat "$TIMES" 2>/dev/null
  printf '  %-24s %6d s\n' "total" "$(seconds_since "$STARTED")"
  if [ -s "$WORK/peak" ]; then
    printf '  %-24s %6d MB (all processes of the run, the emulator included)\n' "peak memory" \
      "$(($(cat "$WORK/peak") / 1000000))"
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap report EXIT

seconds_since() { echo $((($(date +%s%N) - $1) / 1000000000)); }

wanted() { [ -z "${TEST_STEPS:-}" ] || [[ " $TEST_STEPS " == *" ${1// /-} "* ]]; }

# step NAME COMMAND...: runs COMMAND as the step NAME (unless TEST_STEPS leaves it out), records its
# time, and ends the run when it fails.
step() {
  local name="$1" started status
  shift
  wanted "$name" || return 0
  echo "=== make test: $name" >&2
  started=$(date +%s%N)
  "$@"
  status=$?
  printf '  %-24s %6d s%s\n' "$name" "$(seconds_since "$started")" \
    "$([ "$status" = 0 ] || echo "  FAILED (exit $status)")" >>"$TIMES"
  if [ "$status" != 0 ]; then
    echo "make test: step '$name' failed (exit $status)" >&2
    exit "$status"
  fi
}

"$CARGO" nextest --version >/dev/null 2>&1 || { echo "make test: installing cargo-nextest" >&2; \
  "$CARGO" install --locked cargo-nextest || exit 1; }

"$ROOT/scripts/emulator-start.sh" || exit 1
python3 "$ROOT/scripts/peak_memory.py" $$ "$WORK/peak" "$ROOT/.emulator/$EMULATOR_PORT/moto.pid" &
SAMPLER=$!

API='package(api-tests) and binary(api)'
step "build" "$CARGO" nextest run --workspace --no-run
step "unit, router, stores" nextest -E "not package(registry-store-aws) and not ($API)"
step "aws store" nextest -E 'package(registry-store-aws)'
# Each API case is instantiated once per backend as <module>::<backend>::<case> (the embedded store
# is `local`); the few cases outside that scheme run in the last API step.
for backend in memory local aws lambda; do
  step "api $backend" nextest -E "$API and test(/::$backend::/)"
done
step "api other" nextest -E "$API and not test(/::(memory|local|aws|lambda)::/)"
for backend in embedded aws lambda; do
  step "clients $backend" env CLIENTS_BACKENDS="$backend" "$ROOT/scripts/clients-test.sh"
done
step "infra check" "$ROOT/scripts/infra-check.sh"
