# One schema registry: a DynamoDB table (subjects, versions, IDs, config, mode), an S3 bucket
# (content-addressed schema bodies), one Lambda function behind a streaming Function URL.

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

locals {
  prefix = "schema-registry-${var.name}"
  # The table's key schema comes from the same file the Rust backend and the LocalStack init read.
  table     = jsondecode(file("${path.module}/table.json"))
  hash_key  = one([for k in local.table.KeySchema : k.AttributeName if k.KeyType == "HASH"])
  range_key = one([for k in local.table.KeySchema : k.AttributeName if k.KeyType == "RANGE"])
  tags      = merge(var.tags, { "schema-registry" = var.name })
}

resource "aws_kms_key" "registry" {
  description             = "${local.prefix}: table, bucket, logs and function environment"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.kms[local.primary_region].json
  tags                    = local.tags
}

resource "aws_kms_alias" "registry" {
  name          = "alias/${local.prefix}"
  target_key_id = aws_kms_key.registry.key_id
}

# Every region's key policy: this key's (the first region's) and each further region's (regions.tf).
# The account administers the key; CloudWatch Logs of the key's region may encrypt the registry's
# log groups there with it (the API function's everywhere, the exporter function's in the first
# region, where it runs: exporter.tf).
data "aws_iam_policy_document" "kms" {
  # checkov:skip=CKV_AWS_111: this is a key policy: its resource "*" means this key only, and the account root must administer it.
  # checkov:skip=CKV_AWS_356: this is a key policy: its resource "*" means this key only.
  # checkov:skip=CKV_AWS_109: this is a key policy: the account root must keep control of the key, or it becomes unmanageable.
  for_each = merge(
    { (local.primary_region) = [local.prefix, "${local.prefix}-exporter"] },
    { for region in local.extra_regions : region => [local.prefix] },
  )

  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"] # a key policy's resource is always the key itself
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  statement {
    sid       = "CloudWatchLogsEncrypt"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"] # a key policy's resource is always the key itself
    principals {
      type        = "Service"
      identifiers = ["logs.${each.key}.amazonaws.com"]
    }
    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = [for group in each.value : "arn:${data.aws_partition.current.partition}:logs:${each.key}:${data.aws_caller_identity.current.account_id}:log-group:/aws/lambda/${group}"]
    }
  }
}
