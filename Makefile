# Developer entry points. `make run` serves the registry on :8081 with the embedded store in ./data;
# `make test` runs every test (unit, router, store conformance, API, and the AWS store against the
# emulator when scripts/emulator-start.sh is present). CI runs `make test` through .ci/run.

SHELL := /usr/bin/env bash
CARGO ?= cargo

# Where the emulator started by scripts/emulator-start.sh listens; the AWS store tests read these.
EMULATOR_PORT ?= 4566
export EMULATOR_PORT
EMULATOR_ENV := AWS_ENDPOINT_URL=http://127.0.0.1:$(EMULATOR_PORT) AWS_REGION=us-east-1 \
	AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test

.PHONY: run run-aws localstack-up localstack-down test test-fast test-clients lint bench bench-edge bench-embedded package infra-check clean

# Debug profile on purpose: the release profile is tuned for Lambda (fat LTO, codegen-units=1), which
# makes the first build several times slower on a 2-core machine, and a local server does not need it.
# Env: PORT (8081), REGISTRY_DATA_DIR (./data), REGISTRY_BACKEND (embedded), RUST_LOG (info).
run:
	$(CARGO) run --quiet -p registry -- serve

# The registry against AWS APIs at AWS_ENDPOINT_URL (default: LocalStack or the emulator on
# localhost:4566), creating REGISTRY_TABLE and REGISTRY_BUCKET there first if they are missing.
AWS_LOCAL_ENV := AWS_ENDPOINT_URL=$${AWS_ENDPOINT_URL:-http://localhost:4566} AWS_REGION=$${AWS_REGION:-us-east-1} \
	AWS_ACCESS_KEY_ID=$${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=$${AWS_SECRET_ACCESS_KEY:-test} \
	REGISTRY_TABLE=$${REGISTRY_TABLE:-schema-registry} REGISTRY_BUCKET=$${REGISTRY_BUCKET:-schema-registry-bodies}
run-aws:
	env $(AWS_LOCAL_ENV) $(CARGO) run --quiet -p registry -- aws-init
	env $(AWS_LOCAL_ENV) REGISTRY_BACKEND=aws $(CARGO) run --quiet -p registry -- serve

# LocalStack (needs Docker) with the same table and bucket definitions as the Terraform module.
localstack-up:
	docker compose -f localstack/docker-compose.yml up -d --wait

localstack-down:
	docker compose -f localstack/docker-compose.yml down

# Everything, in steps (scripts/test.sh): the build; unit, router and store tests; the AWS store on
# the emulator (one table per conformance case); the API suite on memory, embedded, AWS and the real
# registry-lambda process under the Runtime API emulator of tests/src/lambda (which starts and kills
# each function instance by PID), and its lambda cases again under `cargo lambda watch`; the real clients; the offline infrastructure checks; the Terraform
# example applied on the emulator with the API suite served from what it created, and the runbooks
# walked there. After the build, four lanes run at once, each on an emulator of its own (see
# scripts/test.sh). The emulators are started first and stopped by PID afterwards, even when tests
# fail. Ends with one line per step (its time) and the run's peak
# memory. EMULATOR_PORT (4566) and SECOND_EMULATOR_PORT (a free port) move the emulators.
test:
	scripts/test.sh

# The inner loop, before every commit (no emulator, no clients): unit, router and store tests and the
# API suite on the memory and embedded stores.
test-fast:
	$(CARGO) nextest run --workspace --no-fail-fast -E '$(FAST_TESTS)'

FAST_TESTS := not package(registry-store-aws) and not (package(api-tests) and binary(api) and not test(/::(memory|local)::/))

# The real-client suites alone (Python, JavaScript, Rust serializers against `registry serve`).
test-clients:
	@set -euo pipefail; \
	trap 'scripts/emulator-stop.sh' EXIT; \
	scripts/emulator-start.sh; \
	env $(EMULATOR_ENV) scripts/clients-test.sh

# arm64 Lambda zip (target/lambda/registry-lambda/bootstrap.zip) with cargo-lambda + zig from PyPI.
package:
	scripts/package.sh

# Terraform itself (init, validate, terraform test with a mocked provider), terraform fmt -check,
# scripts/infra_check.py and checkov, offline.
infra-check:
	scripts/infra-check.sh

# fmt, clippy with warnings as errors, and the purity rule: the domain crates (the exporter's engine among
# them; its HTTP transports are registry-exporter-http), authentication and the settings pull in no AWS/HTTP
# stack (registry-app, the composition root, is where they meet)
# (aws-lc-rs, the crypto library registry-dek wraps keys with, calls no AWS service).
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	@set -euo pipefail; \
	for crate in registry-core registry-schema registry-dek registry-catalog registry-exporter registry-auth registry-settings; do \
		if $(CARGO) tree -p $$crate -e normal | grep -vE 'aws-lc-(rs|sys)' | grep -E 'aws|lambda|axum|hyper'; then \
			echo "lint: $$crate must not depend on aws/lambda/axum/hyper" >&2; exit 1; \
		fi; \
	done; \
	echo "purity check: registry-core, registry-schema, registry-dek, registry-catalog, registry-exporter, registry-auth and registry-settings are free of aws/lambda/axum/hyper"

# The benchmark table of BENCHMARKS.md (figures, never assertions): 0 / 100,000 / 1,000,000 subjects seeded
# directly, ready time and RSS, GET /subjects at 1M, read and lookup throughput under 256 connections,
# registrations under 32 clients, and AWS calls per operation counted on the emulator (started first, as for
# `make test`, and stopped by PID afterwards; it is idle while the load runs). Then the edge table (bench-edge).
bench:
	@set -euo pipefail; \
	trap 'scripts/emulator-stop.sh' EXIT; \
	scripts/emulator-start.sh; \
	env $(EMULATOR_ENV) scripts/bench.sh; \
	scripts/bench.sh --edge

# The serving edge alone (a few minutes): GET by ID and lookups on `registry serve` against a fixed-body
# axum server in the same run, 64 connections, with the ratios BENCHMARKS.md targets; then the Lambda
# path per core against the same router (the function's handler, with and without the event conversion).
bench-edge:
	scripts/bench.sh --edge

# The same table without the emulator (the AWS row says `skipped`).
bench-embedded:
	scripts/bench.sh

clean:
	$(CARGO) clean
	rm -rf data .emulator .cache
