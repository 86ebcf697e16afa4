#!/usr/bin/env bash
# Stops the emulator on EMULATOR_PORT (4566) started by scripts/emulator-start.sh, by the PID it
# recorded. Idempotent.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PID_FILE="$ROOT/.emulator/${EMULATOR_PORT:-4566}/moto.pid"

if [ ! -f "$PID_FILE" ]; then
  echo "emulator not running (no $PID_FILE)"
  exit 0
fi
PID="$(cat "$PID_FILE")"
if kill -0 "$PID" 2>/dev/null; then
  kill "$PID"
  for _ in $(seq 1 50); do
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$PID" 2>/dev/null && kill -9 "$PID" 2>/dev/null || true
  echo "emulator stopped (pid $PID)"
else
  echo "emulator was not running (stale pid $PID)"
fi
rm -f "$PID_FILE"
