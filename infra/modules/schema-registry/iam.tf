# Least privilege: exactly the item and object actions the backend issues, on this registry's
# table, bucket prefixes (bodies, ID ledger), key and log group. No Scan, no DeleteObject, no
# wildcard resources. With several regions (regions.tf) the one role serves every region's function:
# it reads every region's replica and bucket, and writes only the home region's.
data "aws_iam_policy_document" "assume_lambda" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "registry" {
  name_prefix        = "${local.prefix}-"
  assume_role_policy = data.aws_iam_policy_document.assume_lambda.json
  tags               = local.tags
}

# What both functions' roles hold alike (this file's and the exporter's, exporter.tf): they read the
# registry's items in every region's replica, and neither may write the home marker.
data "aws_iam_policy_document" "registry_items" {
  statement {
    sid = "RegistryReads"
    actions = [
      "dynamodb:GetItem",
      "dynamodb:BatchGetItem",
      "dynamodb:Query",
    ]
    resources = local.readable_table_arns
  }

  # The fence item HOME / MARKER is written only by `registry failover` (an operator's role). Every
  # write's fence passes while the marker is absent, so a function that could delete or rewrite it
  # could commit in a region that is not home: an explicit deny, whatever else grants (the
  # transactions' ConditionCheck of the marker stays allowed).
  statement {
    sid       = "HomeMarkerIsTheOperators"
    effect    = "Deny"
    actions   = local.home_marker_writes
    resources = local.readable_table_arns
    condition {
      test     = "ForAnyValue:StringEquals"
      variable = "dynamodb:LeadingKeys"
      values   = ["HOME"]
    }
  }
}

data "aws_iam_policy_document" "registry" {
  source_policy_documents = [data.aws_iam_policy_document.registry_items.json]

  # Writes (and the condition checks of transactions) only where writes may be committed: the home
  # region's replica, or with follow_home_marker every replica, each write fenced on the marker. An
  # unfenced write to another replica would race the home's, last writer wins.
  statement {
    sid = "RegistryWrites"
    actions = [
      "dynamodb:PutItem",
      "dynamodb:UpdateItem",
      "dynamodb:DeleteItem",
      "dynamodb:ConditionCheckItem",
    ]
    resources = local.written_table_arns
  }

  # Bodies (schemas/) and the ID ledger (ids/<id>, one object per ID ever issued, created with
  # If-None-Match: *): read in every region's bucket, written where writes are committed. An
  # allocation that finds its claim taken lists the ledger to move past the highest ID, which a
  # restore of the table cannot rewind (README "Restoring the table").
  statement {
    sid       = "BodiesAndIdLedger"
    actions   = ["s3:GetObject"]
    resources = flatten([for arn in local.readable_bucket_arns : ["${arn}/schemas/*", "${arn}/ids/*"]])
  }

  statement {
    sid       = "BodyAndIdLedgerWrites"
    actions   = ["s3:PutObject"]
    resources = flatten([for arn in local.written_bucket_arns : ["${arn}/schemas/*", "${arn}/ids/*"]])
  }

  # Listing, on the whole bucket: the ledger is listed by prefix, and without s3:ListBucket S3
  # answers a GetObject of a missing key with 403 instead of 404, which the registry cannot tell from
  # a real denial (a missing body or ledger entry would be a 500, not "absent"). A prefix condition
  # would not do: GetObject's request carries no s3:prefix, so S3 would still answer 403. The bucket
  # holds only this registry's bodies and ledger, all of which the role may read anyway.
  statement {
    sid       = "ListBucket"
    actions   = ["s3:ListBucket"]
    resources = local.readable_bucket_arns
  }

  # The module's key encrypts the table, the bucket, the secrets and the function's environment; the
  # role never calls KMS with it directly, only through those services: S3 asks for a data key on
  # PutObject (SSE-KMS) and decrypts on GetObject, Secrets Manager decrypts on GetSecretValue,
  # DynamoDB and Lambda decrypt their own data. kms:ViaService keeps a leaked role credential from
  # decrypting anything with the key outside them.
  statement {
    sid       = "EncryptionKeyViaServices"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"]
    resources = local.registry_key_arns
    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = flatten([for region in local.registry_regions : [for service in local.key_services : "${service}.${region}.amazonaws.com"]])
    }
  }

  # Schema linking: credentials in an exporter's config are encrypted by KMS directly when an admin
  # writes them, always with the encryption context purpose=registry-exporter-credential. Encrypt
  # only: the API never opens a credential (it answers them masked), only the exporter function does
  # (exporter.tf), so a compromised API function cannot read the destinations' secrets back. The
  # context also names the exporter and its destination URL (required here), so a ciphertext opens
  # only for the exporter and destination it was sealed for.
  statement {
    sid       = "ExporterCredentials"
    actions   = ["kms:Encrypt"]
    resources = local.registry_key_arns
    condition {
      test     = "StringEquals"
      variable = "kms:EncryptionContext:purpose"
      values   = ["registry-exporter-credential"]
    }
    condition {
      test     = "Null"
      variable = "kms:EncryptionContext:exporter"
      values   = ["false"]
    }
    condition {
      test     = "Null"
      variable = "kms:EncryptionContext:destination"
      values   = ["false"]
    }
  }

  # Shared aws-kms KEKs: the registry wraps and unwraps the DEKs it generates (it generates them
  # itself, so kms:GenerateDataKey is never called) under exactly the keys listed in
  # var.kms_key_arns; with none listed, this statement does not exist.
  dynamic "statement" {
    for_each = length(var.kms_key_arns) > 0 ? [var.kms_key_arns] : []
    content {
      sid       = "KekKeys"
      actions   = ["kms:Encrypt", "kms:Decrypt"]
      resources = statement.value
    }
  }

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = [for arn in local.log_group_arns : "${arn}:*"]
  }
}

locals {
  # The services that use the module's key on the role's behalf.
  key_services = ["s3", "dynamodb", "secretsmanager", "lambda"]
  # Every item write IAM knows, denied on the home marker to the functions' roles.
  home_marker_writes = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete"]
}

resource "aws_iam_role_policy" "registry" {
  name   = "registry"
  role   = aws_iam_role.registry.id
  policy = data.aws_iam_policy_document.registry.json
}

# X-Ray's write actions have no resource-level permissions, so they come from AWS's managed
# policy, and only when tracing is on.
resource "aws_iam_role_policy_attachment" "xray" {
  count      = var.xray_tracing ? 1 : 0
  role       = aws_iam_role.registry.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/AWSXRayDaemonWriteAccess"
}
