# Authentication (registry-auth): HTTP Basic users from a Secrets Manager secret, optional OIDC bearer tokens.
#
# The secret is created empty: no credential ever passes through Terraform or its state. The operator
# writes the users file (one JSON line per user, argon2id hashes made by `registry passwd`) with the CLI:
#   REGISTRY_USERS_FILE=users.jsonl registry passwd alice --role admin   # password on stdin
#   aws secretsmanager put-secret-value --secret-id <users_secret_arn> --secret-string file://users.jsonl
# Until a value exists the function cannot load its users and refuses to start (fail closed, never open).
# Admin tooling that can sign SigV4 can instead use url_auth_type = "AWS_IAM" on the Function URL.

resource "aws_secretsmanager_secret" "users" {
  # checkov:skip=CKV2_AWS_57: the value is a users file of argon2 hashes written by the operator; there is no service credential for a rotation function to rotate.
  count                   = var.auth_enabled ? 1 : 0
  name_prefix             = "${local.prefix}-users-"
  description             = "${local.prefix}: registry users file (JSON lines, argon2id hashes); value set by the operator"
  kms_key_id              = aws_kms_key.registry.arn
  recovery_window_in_days = 7
  tags                    = local.tags
}

data "aws_iam_policy_document" "auth" {
  count = var.auth_enabled ? 1 : 0

  statement {
    sid       = "ReadUsersSecret"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.users[0].arn]
  }
}

resource "aws_iam_role_policy" "auth" {
  count  = var.auth_enabled ? 1 : 0
  name   = "auth"
  role   = aws_iam_role.registry.id
  policy = data.aws_iam_policy_document.auth[0].json
}

locals {
  jwt_enabled = var.jwt_issuer != ""

  # Merged into the function's environment (lambda.tf). Names as read by registry-auth AuthConfig::from_env.
  auth_environment = merge(
    var.auth_enabled ? { REGISTRY_USERS_SECRET = aws_secretsmanager_secret.users[0].arn } : {},
    local.jwt_enabled ? {
      REGISTRY_JWT_ISSUER     = var.jwt_issuer
      REGISTRY_JWT_AUDIENCE   = var.jwt_audience
      REGISTRY_JWKS           = var.jwks_json
      REGISTRY_JWT_ROLE_CLAIM = var.jwt_role_claim
    } : {},
  )
}
