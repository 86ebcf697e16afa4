#!/usr/bin/env bash
# Prints the ready time of the real `registry serve` binary on an embedded store holding 0 and
# 100,000 subjects (time from spawn to the first 200 on GET /subjects?limit=1). A measurement to
# compare the two figures of one run, not a timed assertion.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet -p registry
cargo test --quiet -p api-tests --test api -- restart::ready_time_does_not_depend_on_subject_count --nocapture --test-threads=1 \
	| grep -E '^ready time|test result'
