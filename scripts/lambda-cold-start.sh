#!/usr/bin/env bash
# Lambda init and first-request figures (BENCHMARKS.md "Lambda cold start"): builds registry-lambda in
# debug and release and the project's Runtime API emulator (lambda-emulator), then runs
# scripts/lambda_cold_start.py against the emulator at AWS_ENDPOINT_URL. Prints figures, asserts
# nothing. Seeding 100,000 subjects into moto takes minutes and gigabytes: restart the emulator
# afterwards (scripts/emulator-stop.sh; scripts/emulator-start.sh). Extra arguments go to the script,
# e.g. scripts/lambda-cold-start.sh --subjects 10000 --runs 3
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
: "${AWS_ENDPOINT_URL:?start an emulator (scripts/emulator-start.sh) and set AWS_ENDPOINT_URL and the AWS_* test credentials}"
cargo build --quiet -p registry -p registry-lambda -p api-tests --bin lambda-emulator
cargo build --quiet --release -p registry-lambda  # fat LTO: the first release build takes a while
TARGET_DIR="$(target_dir)"
"$VENV/bin/python" scripts/lambda_cold_start.py --registry "$TARGET_DIR/debug/registry" \
	--emulator "$TARGET_DIR/debug/lambda-emulator" --function debug="$TARGET_DIR/debug/registry-lambda" \
	--function release="$TARGET_DIR/release/registry-lambda" "$@"
