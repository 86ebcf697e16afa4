#!/usr/bin/env bash
# Builds the Lambda deployment zip: lambda/registry-lambda/bootstrap.zip under cargo's target directory
# (target/ unless CARGO_TARGET_DIR says otherwise; arm64, provided.al2023), the file the Terraform
# module's `lambda_zip_path` expects.
# Installs cargo-lambda and ziglang from PyPI into ./.venv when missing (only `pip install` into
# the shared venv: the emulator scripts use it too), adds the aarch64 Rust target when missing,
# then runs `cargo lambda build --release --arm64`. Prints the zip path and size.
#   Env: CARGO_LAMBDA_VERSION (1.9.2), ZIGLANG_VERSION (0.17.1; cargo-lambda pulls ziglang itself)
set -euo pipefail

ZIGLANG_VERSION="${ZIGLANG_VERSION:-0.17.1}"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PACKAGE="registry-lambda"
ZIP="$(target_dir)/lambda/$PACKAGE/bootstrap.zip"

cd "$ROOT"

ensure_cargo_lambda
if ! "$VENV/bin/python" -m ziglang version >/dev/null 2>&1; then
  echo "installing ziglang==$ZIGLANG_VERSION into $VENV"
  venv_install "$VENV" "ziglang==$ZIGLANG_VERSION"
fi

if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
  rustup target add aarch64-unknown-linux-gnu
fi

# cargo-lambda finds zig through the venv's python (`python -m ziglang`) when it is first on PATH.
PATH="$VENV/bin:$PATH" cargo lambda build --release --arm64 -p "$PACKAGE" --output-format zip

if [ ! -f "$ZIP" ]; then
  echo "package: expected $ZIP, not found" >&2
  exit 1
fi
size=$(stat -c %s "$ZIP")
echo "$ZIP  $size bytes ($(( (size + 1023) / 1024 )) KiB)"
