#!/usr/bin/env bash
# `make bench`: prints one table of the benchmark figures (see BENCHMARKS.md for the method and targets).
# Builds `registry` and `registry-bench` in release, counts AWS calls per operation against the
# emulator when AWS_ENDPOINT_URL is set, then runs the benchmark (seeds 0 / 100,000 / 1,000,000
# subjects in a temporary directory, about 2 minutes of seeding and 35 s of load on 2 cores).
# Figures are printed, never asserted. Extra arguments go to registry-bench, e.g.
#   scripts/bench.sh --sizes 0,100000 --seconds 5
# Env: BENCH_WORK_DIR (where seeded stores go; default the system temp dir, ~1 GB needed).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
cargo build --quiet --release -p registry -p registry-bench

args=("$@")
if [ -n "${BENCH_WORK_DIR:-}" ]; then
	args+=(--work-dir "$BENCH_WORK_DIR")
fi
if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
	calls_file="$(mktemp)"
	trap 'rm -f "$calls_file"' EXIT
	cargo test --quiet -p registry-store-aws --test calls -- --nocapture --test-threads=1 2>/dev/null \
		| grep -E '^(AWS calls per operation|allocate_id)' > "$calls_file" || true
	if [ -s "$calls_file" ]; then
		args+=(--aws-calls "$calls_file")
	else
		echo "bench: AWS_ENDPOINT_URL is set but the call-count test printed nothing" >&2
	fi
fi
echo "load before the run: $(cat /proc/loadavg)"
# registry-bench runs the `registry` binary beside it (the release build above).
"$(target_dir)/release/registry-bench" "${args[@]}"
# With the edge table, the Lambda path per core against the same router (its EMF lines to
# /dev/null, its table on stderr).
for arg in "$@"; do
	if [ "$arg" = "--edge" ]; then
		cargo bench --quiet -p registry-lambda --bench adapter > /dev/null
	fi
done
