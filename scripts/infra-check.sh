#!/usr/bin/env bash
# Offline infrastructure checks: `terraform fmt -check` when terraform is installed (providers
# cannot be downloaded here, so no validate), scripts/infra_check.py (the module parsed with a pinned
# python-hcl2 in ./.venv: invoke permissions, version floors, name limits, the Lambda environment
# against the variables the Rust sources read), and checkov with zero unexplained failures: every
# skip is justified inline beside its resource. checkov lives in its own venv (.cache/venv-checkov)
# so its pinned dependencies never clash with the emulator's.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

if command -v terraform >/dev/null 2>&1; then
  terraform fmt -check -recursive infra
  echo "infra-check: terraform fmt ok"
else
  echo "infra-check: terraform not installed, fmt check skipped"
fi

HCL2_VERSION=8.1.4
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('python-hcl2') != '$HCL2_VERSION')" 2>/dev/null; then
  venv_install "$VENV" "python-hcl2==$HCL2_VERSION"
fi
"$VENV/bin/python" scripts/infra_check.py

venv=.cache/venv-checkov
if [ ! -x "$venv/bin/checkov" ]; then
  venv_install "$venv" 'checkov==3.3.30'
fi
"$venv/bin/checkov" -d infra --framework terraform --compact --quiet --skip-download
echo "infra-check: checkov ok"
