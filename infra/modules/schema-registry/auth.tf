# Authentication (registry-auth): HTTP Basic users from a Secrets Manager secret, optional OIDC bearer tokens.
#
# The secret is created empty: no credential ever passes through Terraform or its state. The operator
# writes the users file (one JSON line per user, argon2id hashes made by `registry passwd`) with the CLI:
#   REGISTRY_USERS_FILE=users.jsonl registry passwd alice --role admin   # password on stdin
#   aws secretsmanager put-secret-value --secret-id <users_secret_arn> --secret-string file://users.jsonl
# Until a value exists the function cannot load its users and refuses to start (fail closed, never open).
# Admin tooling that can sign SigV4 can instead use url_auth_type = "AWS_IAM" on the Function URL.
#
# Bearer tokens: the issuer's JWKS (public keys, so no secret in the state) goes into a second secret
# the function reads at start: a Lambda environment holds 4 KB in all, which a JWKS of a few RSA keys
# exceeds.

resource "aws_secretsmanager_secret" "users" {
  # checkov:skip=CKV2_AWS_57: the value is a users file of argon2 hashes written by the operator; there is no service credential for a rotation function to rotate.
  count                   = var.auth_enabled ? 1 : 0
  name_prefix             = "${local.prefix}-users-"
  description             = "${local.prefix}: registry users file (JSON lines, argon2id hashes); value set by the operator"
  kms_key_id              = aws_kms_key.registry.arn
  recovery_window_in_days = 7
  tags                    = local.tags
}

resource "aws_secretsmanager_secret" "jwks" {
  # checkov:skip=CKV2_AWS_57: the value is the issuer's public JWKS, replaced by Terraform when jwks_json changes; there is nothing to rotate here.
  count                   = local.jwt_enabled ? 1 : 0
  name_prefix             = "${local.prefix}-jwks-"
  description             = "${local.prefix}: the bearer-token issuer's JWKS (public keys), from jwks_json"
  kms_key_id              = aws_kms_key.registry.arn
  recovery_window_in_days = 7
  tags                    = local.tags
}

resource "aws_secretsmanager_secret_version" "jwks" {
  count         = local.jwt_enabled ? 1 : 0
  secret_id     = aws_secretsmanager_secret.jwks[0].id
  secret_string = var.jwks_json
}

data "aws_iam_policy_document" "auth" {
  count = local.registry_auth ? 1 : 0

  statement {
    sid       = "ReadAuthSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = concat(aws_secretsmanager_secret.users[*].arn, aws_secretsmanager_secret.jwks[*].arn)
  }
}

resource "aws_iam_role_policy" "auth" {
  count  = local.registry_auth ? 1 : 0
  name   = "auth"
  role   = aws_iam_role.registry.id
  policy = data.aws_iam_policy_document.auth[0].json
}

locals {
  jwt_enabled = var.jwt_issuer != ""
  # The registry authenticates requests itself (Basic users, bearer tokens or both), reading its
  # secrets at start; the variables naming them are in lambda.tf (function_optional_environment).
  registry_auth = var.auth_enabled || local.jwt_enabled
}
