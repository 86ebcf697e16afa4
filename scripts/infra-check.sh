#!/usr/bin/env bash
# Offline infrastructure checks. Terraform itself is the gate: on the module and every example,
# `terraform init -backend=false`, `terraform validate` and `terraform test` (*.tftest.hcl in their
# tests/ directories: plans and applies of the example and of each variant users pick, against a
# mocked AWS provider, so no credentials or network). Providers come from a filesystem mirror
# (TF_PLUGIN_MIRROR, default /opt/tf-plugins), never a registry. When the mirror's hashicorp/aws is
# older than the module needs (6.28), Terraform runs on the copy scripts/tf-provider-compat.py
# derives from the reviewed list of 6.x-only syntax, which prints what that leaves unchecked.
# Then `terraform fmt -check`, scripts/infra_check.py (the module parsed with a pinned python-hcl2 in
# ./.venv: invoke permissions, version floors, name limits, the Lambda environment against the
# variables the Rust sources read), and checkov with zero unexplained failures: every skip is
# justified inline beside its resource. checkov lives in its own venv (.cache/venv-checkov) so its
# pinned dependencies never clash with the emulator's.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

command -v terraform >/dev/null 2>&1 || { echo "infra-check: terraform is not installed: it is the gate" >&2; exit 1; }
terraform fmt -check -recursive infra
echo "infra-check: terraform fmt ok"
scripts/infra-terraform.sh

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
