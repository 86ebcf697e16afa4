# Schema bodies, content-addressed: key schemas/<sha256 of the canonical schema>. Written once
# with If-None-Match: * (the bucket policy refuses any other write there), never overwritten, never
# deleted by the registry (a hard delete removes
# the DynamoDB rows; an unreferenced body is harmless and keeps old IDs decodable from backups).
# Beside them, the ID ledger ids/<id:010>: one object per schema ID ever issued, created the same
# way before the table commits the ID, so a restore of the table cannot make an ID be issued again.
resource "aws_s3_bucket" "bodies" {
  # checkov:skip=CKV_AWS_18: access logging needs a separate log bucket per team; CloudTrail data events cover audits when wanted.
  # checkov:skip=CKV_AWS_144: replicated when the registry serves several regions (regions = [...]: aws_s3_bucket_replication_configuration.bodies, regions.tf); a single-region registry's bodies are re-creatable from an export.
  # checkov:skip=CKV2_AWS_62: nothing consumes bucket events; the registry is the only writer.
  bucket_prefix = "${local.prefix}-"
  tags          = local.tags
}

resource "aws_s3_bucket_versioning" "bodies" {
  bucket = aws_s3_bucket.bodies.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "bodies" {
  bucket = aws_s3_bucket.bodies.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.registry.arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_public_access_block" "bodies" {
  bucket                  = aws_s3_bucket.bodies.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "bodies" {
  bucket = aws_s3_bucket.bodies.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# Non-current versions expire only under schemas/ (where the bucket policy below leaves none to
# make but a delete marker). The ID ledger's versions are its audit trail, kept whatever happens:
# an IMPORT that gives a hard-deleted ID again writes a new version of ids/<id> over the old one.
resource "aws_s3_bucket_lifecycle_configuration" "bodies" {
  bucket = aws_s3_bucket.bodies.id

  rule {
    id     = "expire-noncurrent-bodies"
    status = "Enabled"
    filter {
      prefix = "schemas/"
    }
    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_days
    }
  }

  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

resource "aws_s3_bucket_policy" "bodies" {
  bucket = aws_s3_bucket.bodies.id
  policy = data.aws_iam_policy_document.bodies[local.primary_region].json
}

# The policy of every region's bucket: this one and each further region's (regions.tf). S3
# replication writes with s3:ReplicateObject, not s3:PutObject, so the write-once rule does not stop
# it (a body is the same bytes under its key everywhere).
data "aws_iam_policy_document" "bodies" {
  for_each = local.bucket_arns

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [each.value, "${each.value}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }

  # Bodies are content-addressed and written once: a write without If-None-Match (which would replace
  # the body an ID already points at) is refused for everyone, the function and operators alike.
  # (CopyObject into schemas/ is refused too; restore bodies with `registry import`, which writes
  # with If-None-Match like the function.)
  statement {
    sid       = "DenyBodyOverwrites"
    effect    = "Deny"
    actions   = ["s3:PutObject"]
    resources = ["${each.value}/schemas/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Null"
      variable = "s3:if-none-match"
      values   = ["true"]
    }
  }
}
