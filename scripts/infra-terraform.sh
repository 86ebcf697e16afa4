#!/usr/bin/env bash
# Terraform itself on the module and every example, offline: `init -backend=false`, `validate`, and
# `terraform test` (tests/*.tftest.hcl: plans and mocked applies), which each directory must have.
# Usage: scripts/infra-terraform.sh   (run by scripts/infra-check.sh; WORK defaults to .cache/terraform)
#
# Providers come from a filesystem mirror (TF_PLUGIN_MIRROR, default /opt/tf-plugins) through a CLI
# config of our own: no registry, no checkpoint call. When the mirror holds no hashicorp/aws 6.x, the
# checks run on the copy scripts/tf-provider-compat.py derives (the reviewed 6.x-only list, each
# rewritten line printed as not checked); with 6.x they run on a plain copy of infra/. Either way
# Terraform's working files stay out of the source tree.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

mirror="${TF_PLUGIN_MIRROR:-/opt/tf-plugins}"
work="${WORK:-$ROOT/.cache/terraform}"
aws_versions="$mirror/registry.terraform.io/hashicorp/aws"
[ -d "$aws_versions" ] || { echo "infra-terraform: no hashicorp/aws in the provider mirror $mirror" >&2; exit 1; }

mkdir -p "$work"
cat >"$work/cli.tfrc" <<CONFIG
provider_installation {
  filesystem_mirror {
    path = "$mirror"
  }
}
CONFIG
export TF_CLI_CONFIG_FILE="$work/cli.tfrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0

if ls "$aws_versions" | grep -q '^6\.'; then
  rm -rf "$work/infra"
  cp -r infra "$work/infra"
  find "$work/infra" \( -name .terraform -o -name .terraform.lock.hcl \) -prune -exec rm -rf {} +
  echo "infra-terraform: hashicorp/aws $(ls "$aws_versions" | tr '\n' ' ')from $mirror: the module as written"
else
  echo "infra-terraform: hashicorp/aws $(ls "$aws_versions" | tr '\n' ' ')from $mirror, older than the module's 6.28: checking the copy of scripts/tf-provider-compat.py"
  scripts/tf-provider-compat.py "$work"
fi

# The first line of `terraform version`, read whole: `| head -1` would close the pipe early and,
# under pipefail, fail the script on terraform's broken pipe now and then.
terraform_version="$(terraform version)"
echo "${terraform_version%%$'\n'*}"
for dir in "$work/infra/modules/"*/ "$work/infra/examples/"*/; do
  name="${dir#"$work/"}"
  (
    cd "$dir"
    terraform init -backend=false -no-color >/dev/null || terraform init -backend=false -no-color
    terraform validate -no-color
    # Every module and example plans and applies in a test of its own: validate alone never plans.
    compgen -G "tests/*.tftest.hcl" >/dev/null || { echo "infra-terraform: ${name%/} has no tests/*.tftest.hcl" >&2; exit 1; }
    terraform test -no-color
  ) || { echo "infra-terraform: FAILED in ${name%/}" >&2; exit 1; }
  echo "infra-terraform: ${name%/} ok"
done
