# Authentication (registry-auth): HTTP Basic users from a Secrets Manager secret, optional OIDC bearer tokens.
#
# The secret is created empty: no credential ever passes through Terraform or its state. The operator
# writes the users file (one JSON line per user, argon2id hashes made by `registry passwd`) with the CLI:
#   REGISTRY_USERS_FILE=users.jsonl registry passwd alice --role admin   # password on stdin
#   aws secretsmanager put-secret-value --secret-id <users_secret_arn> --secret-string file://users.jsonl
# Until a value exists the function cannot load its users and refuses to start (fail closed, never open).
# Admin tooling that can sign SigV4 can instead use url_auth_type = "AWS_IAM" on the Function URL.
#
# Bearer tokens: the issuer's JWKS (public keys, so no secret in the state) goes into a second secret:
# a Lambda environment holds 4 KB in all, which a JWKS of a few RSA keys exceeds.
#
# The function reads both secrets at init and again every auth_reload_seconds on every warm instance
# (README "Revocation"), so removing a user or rotating a key out reaches instances that live for hours.

# The secrets the function reads at init and on the reload interval, each only when its feature is on.
resource "aws_secretsmanager_secret" "auth" {
  # checkov:skip=CKV2_AWS_57: the values are a users file of argon2 hashes written by the operator and the issuer's public JWKS, replaced by Terraform when jwks_json changes; there is no service credential for a rotation function to rotate.
  for_each                = { for name, secret in local.auth_secrets : name => secret if secret.enabled }
  name_prefix             = "${local.prefix}-${each.key}-"
  description             = "${local.prefix}: ${each.value.description}"
  kms_key_id              = aws_kms_key.registry.arn
  recovery_window_in_days = 7
  tags                    = local.tags

  # With several regions (regions.tf): a replica in every further region, under that region's key,
  # so each region's function reads its secrets locally and keeps reading them when another region
  # is down. Writing the value in the first region updates every replica.
  dynamic "replica" {
    for_each = local.extra_regions
    content {
      region     = replica.value
      kms_key_id = aws_kms_key.replica[replica.value].arn
    }
  }
}

# The accepted origin-header values, one per line: the current one (what CloudFront sends) first.
resource "aws_secretsmanager_secret_version" "origin" {
  count         = local.origin_secret ? 1 : 0
  secret_id     = aws_secretsmanager_secret.auth["origin"].id
  secret_string = join("\n", [for value in [var.cloudfront_origin_secret, var.cloudfront_origin_secret_previous] : value if value != ""])
}

resource "aws_secretsmanager_secret_version" "jwks" {
  count         = local.jwt_enabled ? 1 : 0
  secret_id     = aws_secretsmanager_secret.auth["jwks"].id
  secret_string = var.jwks_json
}

data "aws_iam_policy_document" "auth" {
  count = local.registry_auth || local.origin_secret ? 1 : 0

  statement {
    sid     = "ReadAuthSecrets"
    actions = ["secretsmanager:GetSecretValue"]
    # Each secret and its replicas (the same ARN in another region).
    resources = flatten([for secret in values(aws_secretsmanager_secret.auth) : concat([secret.arn], [for region in local.extra_regions : replace(secret.arn, ":${local.primary_region}:", ":${region}:")])])
  }
}

resource "aws_iam_role_policy" "auth" {
  count  = local.registry_auth || local.origin_secret ? 1 : 0
  name   = "auth"
  role   = aws_iam_role.registry.id
  policy = data.aws_iam_policy_document.auth[0].json
}

locals {
  jwt_enabled = var.jwt_issuer != ""
  # The registry authenticates requests itself (Basic users, bearer tokens or both), reading its
  # secrets at init and on the reload interval; the variables naming them are in lambda.tf (function_optional_environment).
  registry_auth = var.auth_enabled || local.jwt_enabled

  auth_secrets = {
    users  = { enabled = var.auth_enabled, description = "registry users file (JSON lines, argon2id hashes); value set by the operator" }
    jwks   = { enabled = local.jwt_enabled, description = "the bearer-token issuer's JWKS (public keys), from jwks_json" }
    origin = { enabled = local.origin_secret, description = "values of CloudFront's x-registry-origin header, from cloudfront_origin_secret" }
  }
}
