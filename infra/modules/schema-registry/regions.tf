# Several regions (docs/multi-region.md): every region reads its local replica, one region (the
# home) commits every write.
#
# The first of `regions` is the AWS provider's region. Its table, bucket, key, function and URL are
# the resources the module always created, under the same addresses: a registry that was
# single-region gains regions without anything being destroyed or moved. Each further region gets
# the resources below (keyed by region, with AWS provider 6's per-resource `region` argument): a key,
# a bucket, a function with its URL, and a replica of the table (dynamodb.tf) and of the secrets
# (auth.tf). Which region is home is only configuration (home_region): the functions' environment and
# the role's write permissions, so a failover changes no resource's address either.

locals {
  multi_region   = length(var.regions) > 1
  primary_region = length(var.regions) > 0 ? var.regions[0] : data.aws_region.current.region
  home_region    = var.home_region != "" ? var.home_region : local.primary_region
  # The regions beyond the first: each gets the resources of this file.
  extra_regions = [for region in var.regions : region if region != local.primary_region]

  # Per region: its bucket, bucket ARN and key (the first region's are the module's own).
  bucket_ids  = merge({ (local.primary_region) = aws_s3_bucket.bodies.id }, { for region in local.extra_regions : region => aws_s3_bucket.replica[region].id })
  bucket_arns = merge({ (local.primary_region) = aws_s3_bucket.bodies.arn }, { for region in local.extra_regions : region => aws_s3_bucket.replica[region].arn })
  key_arns    = merge({ (local.primary_region) = aws_kms_key.registry.arn }, { for region in local.extra_regions : region => aws_kms_key.replica[region].arn })
  # Every replica of the table has the table's name; its ARN differs by region.
  table_arn_in = { for region in var.regions : region => "arn:${data.aws_partition.current.partition}:dynamodb:${region}:${data.aws_caller_identity.current.account_id}:table/${aws_dynamodb_table.registry.name}" }

  # What the function's role may read (every region's replica and bucket: a read region reads its
  # own and falls back to the home's; the home reads the acknowledging regions' replicas) and write
  # (the home region's only: a write anywhere else would be resolved last-writer-wins against the
  # home's, so IAM refuses it as well as the fence in the table).
  readable_table_arns  = local.multi_region ? values(local.table_arn_in) : [aws_dynamodb_table.registry.arn]
  writable_table_arn   = local.multi_region ? local.table_arn_in[local.home_region] : aws_dynamodb_table.registry.arn
  readable_bucket_arns = local.multi_region ? values(local.bucket_arns) : [aws_s3_bucket.bodies.arn]
  writable_bucket_arn  = local.multi_region ? local.bucket_arns[local.home_region] : aws_s3_bucket.bodies.arn
  # Following the home marker (follow_home_marker), a function writes wherever the marker names:
  # every region's replica and bucket, the fence in the table refusing a region the marker does not
  # name. Otherwise the home region's only.
  follows_marker      = local.multi_region && var.follow_home_marker
  written_table_arns  = local.follows_marker ? values(local.table_arn_in) : [local.writable_table_arn]
  written_bucket_arns = local.follows_marker ? values(local.bucket_arns) : [local.writable_bucket_arn]
  registry_key_arns   = local.multi_region ? values(local.key_arns) : [aws_kms_key.registry.arn]
  registry_regions    = local.multi_region ? var.regions : [data.aws_region.current.region]
  log_group_arns      = concat([aws_cloudwatch_log_group.registry.arn], [for region in local.extra_regions : aws_cloudwatch_log_group.replica[region].arn])

  # Ordered pairs of regions: S3 replicates each bucket to every other (two-way, so whichever region
  # is home, its new bodies and ledger entries reach the others, and a failback finds what the
  # interim home wrote); DynamoDB reports each pair's replication latency in the sending region.
  region_pairs = local.multi_region ? flatten([for from in var.regions : [for to in var.regions : { from = from, to = to } if to != from]]) : []

  # The secrets' replicas: same name, the region in the ARN.
  secret_variables = ["REGISTRY_USERS_SECRET", "REGISTRY_JWKS_SECRET", "REGISTRY_ORIGIN_SECRET"]
}

# ---------------------------------------------------------------------------------------------
# A key per further region: DynamoDB, S3, Secrets Manager, Lambda and CloudWatch Logs use a key of
# their own region. Its policy: data.aws_iam_policy_document.kms (main.tf).

resource "aws_kms_key" "replica" {
  for_each                = toset(local.extra_regions)
  region                  = each.key
  description             = "${local.prefix}: table replica, bucket, logs and function environment in ${each.key}"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.kms[each.key].json
  tags                    = local.tags
}

resource "aws_kms_alias" "replica" {
  for_each      = toset(local.extra_regions)
  region        = each.key
  name          = "alias/${local.prefix}"
  target_key_id = aws_kms_key.replica[each.key].key_id
}

# ---------------------------------------------------------------------------------------------
# A bucket per further region, configured as the first region's (s3.tf), and S3 replication from
# every bucket to every other.

resource "aws_s3_bucket" "replica" {
  # checkov:skip=CKV_AWS_18: access logging needs a separate log bucket per team and region; CloudTrail data events cover audits when wanted.
  # checkov:skip=CKV_AWS_144: replicated: aws_s3_bucket_replication_configuration.bodies replicates every region's bucket to every other.
  # checkov:skip=CKV2_AWS_62: nothing consumes bucket events; the registry and S3 replication are the only writers.
  for_each      = toset(local.extra_regions)
  region        = each.key
  bucket_prefix = "${local.prefix}-"
  tags          = local.tags
}

# Versioning: S3 replication requires it on source and destination.
resource "aws_s3_bucket_versioning" "replica" {
  for_each = toset(local.extra_regions)
  region   = each.key
  bucket   = aws_s3_bucket.replica[each.key].id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "replica" {
  for_each = toset(local.extra_regions)
  region   = each.key
  bucket   = aws_s3_bucket.replica[each.key].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.replica[each.key].arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_public_access_block" "replica" {
  for_each                = toset(local.extra_regions)
  region                  = each.key
  bucket                  = aws_s3_bucket.replica[each.key].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "replica" {
  for_each = toset(local.extra_regions)
  region   = each.key
  bucket   = aws_s3_bucket.replica[each.key].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

# The same rules as the first region's bucket: non-current versions expire only under schemas/, the
# ID ledger's are kept.
resource "aws_s3_bucket_lifecycle_configuration" "replica" {
  for_each = toset(local.extra_regions)
  region   = each.key
  bucket   = aws_s3_bucket.replica[each.key].id

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

resource "aws_s3_bucket_policy" "replica" {
  for_each = toset(local.extra_regions)
  region   = each.key
  bucket   = aws_s3_bucket.replica[each.key].id
  policy   = data.aws_iam_policy_document.bodies[each.key].json
}

# Every bucket replicates to every other: the home's new bodies and ID ledger entries reach every
# read region, and whichever region becomes home after a failover replicates to the others and back
# to the old home (failback). A replica is never replicated again, so objects do not loop. Delete
# markers are not replicated (the registry never deletes objects). Replication metrics are on, for
# the latency and failure alarms.
resource "aws_s3_bucket_replication_configuration" "bodies" {
  for_each = local.multi_region ? { for region in var.regions : region => region } : {}
  region   = each.key == local.primary_region ? null : each.key
  role     = aws_iam_role.replication[0].arn
  bucket   = local.bucket_ids[each.key]

  dynamic "rule" {
    for_each = [for to in var.regions : to if to != each.key]
    content {
      id       = "to-${rule.value}"
      status   = "Enabled"
      priority = index(var.regions, rule.value)
      filter {}
      delete_marker_replication {
        status = "Disabled"
      }
      # The buckets are SSE-KMS: objects are replicated only when this says so, and re-encrypted
      # under the destination region's key.
      source_selection_criteria {
        sse_kms_encrypted_objects {
          status = "Enabled"
        }
      }
      destination {
        bucket        = local.bucket_arns[rule.value]
        storage_class = "STANDARD"
        encryption_configuration {
          replica_kms_key_id = local.key_arns[rule.value]
        }
        metrics {
          status = "Enabled"
        }
      }
    }
  }

  depends_on = [aws_s3_bucket_versioning.bodies, aws_s3_bucket_versioning.replica]
}

data "aws_iam_policy_document" "assume_s3" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }
    # Only S3 acting for this account's buckets may assume it (confused deputy: another account's
    # replication configuration naming this role's ARN).
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

# The role S3 replicates with: read the versions to replicate from every bucket, write replicas into
# every bucket, decrypt with each source region's key and encrypt with each destination's, each only
# through S3 in that key's region.
resource "aws_iam_role" "replication" {
  count              = local.multi_region ? 1 : 0
  name_prefix        = "${local.prefix}-"
  description        = "${local.prefix}: S3 replication between the regions' buckets"
  assume_role_policy = data.aws_iam_policy_document.assume_s3.json
  tags               = local.tags
}

data "aws_iam_policy_document" "replication" {
  count = local.multi_region ? 1 : 0

  statement {
    sid       = "SourceBuckets"
    actions   = ["s3:GetReplicationConfiguration", "s3:ListBucket"]
    resources = values(local.bucket_arns)
  }

  statement {
    sid       = "SourceVersions"
    actions   = ["s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl", "s3:GetObjectVersionTagging"]
    resources = [for arn in values(local.bucket_arns) : "${arn}/*"]
  }

  statement {
    sid       = "DestinationReplicas"
    actions   = ["s3:ReplicateObject", "s3:ReplicateTags"]
    resources = [for arn in values(local.bucket_arns) : "${arn}/*"]
  }

  statement {
    sid       = "KeysViaS3"
    actions   = ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"]
    resources = values(local.key_arns)
    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = [for region in var.regions : "s3.${region}.amazonaws.com"]
    }
  }
}

resource "aws_iam_role_policy" "replication" {
  count  = local.multi_region ? 1 : 0
  name   = "replication"
  role   = aws_iam_role.replication[0].id
  policy = data.aws_iam_policy_document.replication[0].json
}

# ---------------------------------------------------------------------------------------------
# A function and Function URL per further region, as the first region's (lambda.tf): the same zip,
# role and settings, its own bucket, key, log group and secrets' replicas. It reads the region's
# replica and commits writes in the home region (REGISTRY_HOME_REGION).

locals {
  # The environment of the function in each further region: its own bucket and its region's replica
  # of each secret; the multi-region settings as everywhere.
  replica_environment = {
    for region in local.extra_regions : region => merge(local.function_environment, { REGISTRY_BUCKET = aws_s3_bucket.replica[region].id }, {
      for name, value in merge(local.function_optional_environment, local.region_environment) : name => (contains(local.secret_variables, name) ? replace(value, ":${local.primary_region}:", ":${region}:") : value) if value != null
    })
  }
}

resource "aws_cloudwatch_log_group" "replica" {
  for_each          = toset(local.extra_regions)
  region            = each.key
  name              = "/aws/lambda/${local.prefix}"
  retention_in_days = var.log_retention_days
  kms_key_id        = aws_kms_key.replica[each.key].arn
  tags              = local.tags
}

resource "aws_lambda_function" "replica" {
  # checkov:skip=CKV_AWS_116: a dead-letter queue applies to asynchronous invocations; every call here is a synchronous HTTP request.
  # checkov:skip=CKV_AWS_117: the function only calls DynamoDB and S3 over TLS with IAM; a VPC adds NAT cost and cold-start time for no isolation gain.
  # checkov:skip=CKV_AWS_272: code signing needs a signing profile per account; the zip is built reproducibly by `make package`.
  # checkov:skip=CKV_AWS_50: X-Ray is optional (var.xray_tracing) because it bills per trace; logs and metrics cover the default.
  # checkov:skip=CKV_AWS_115: reserved concurrency is optional (var.reserved_concurrency): reserving fails on accounts with a low concurrency quota.
  for_each                       = toset(local.extra_regions)
  region                         = each.key
  function_name                  = local.prefix
  description                    = "Confluent-compatible schema registry (${var.name}), ${each.key}"
  role                           = aws_iam_role.registry.arn
  filename                       = var.lambda_zip_path
  source_code_hash               = filebase64sha256(var.lambda_zip_path)
  handler                        = "bootstrap"
  runtime                        = "provided.al2023"
  architectures                  = ["arm64"]
  memory_size                    = var.memory_mb
  timeout                        = var.timeout_seconds
  reserved_concurrent_executions = var.reserved_concurrency
  kms_key_arn                    = aws_kms_key.replica[each.key].arn
  publish                        = true

  environment {
    variables = local.replica_environment[each.key]
  }

  tracing_config {
    mode = var.xray_tracing ? "Active" : "PassThrough"
  }

  logging_config {
    log_format       = "JSON"
    log_group        = aws_cloudwatch_log_group.replica[each.key].name
    system_log_level = "WARN"
  }

  depends_on = [aws_iam_role_policy.registry, aws_iam_role_policy.auth, aws_secretsmanager_secret_version.jwks, aws_secretsmanager_secret_version.origin, aws_cloudwatch_log_group.replica]
  tags       = local.tags
}

resource "aws_lambda_alias" "replica" {
  for_each         = toset(local.extra_regions)
  region           = each.key
  name             = "live"
  description      = "${local.prefix}: the version that serves"
  function_name    = aws_lambda_function.replica[each.key].function_name
  function_version = var.function_version == "" ? aws_lambda_function.replica[each.key].version : var.function_version
}

resource "aws_lambda_function_url" "replica" {
  # checkov:skip=CKV_AWS_258: Confluent serializers cannot sign SigV4 requests; the registry authenticates clients itself (HTTP Basic or bearer tokens), and turning that off on a public URL needs allow_anonymous = true. url_auth_type = "AWS_IAM" is offered.
  for_each           = toset(local.extra_regions)
  region             = each.key
  function_name      = aws_lambda_function.replica[each.key].function_name
  qualifier          = var.serve_alias ? aws_lambda_alias.replica[each.key].name : null
  authorization_type = var.url_auth_type
  invoke_mode        = "RESPONSE_STREAM"
}

# The two statements a public URL needs (lambda.tf explains them); with url_auth_type = "AWS_IAM"
# callers sign, and none is needed. CloudFront (custom_domain) fronts the first region's URL only.
resource "aws_lambda_permission" "replica_url" {
  # checkov:skip=CKV_AWS_301: a public Function URL is the point of auth type NONE; the registry authenticates every request itself unless allow_anonymous = true says otherwise, and lambda:InvokeFunction is limited to invocations through the URL (invoked_via_function_url).
  for_each = merge(
    { for region in local.extra_regions : "${region}/RegistryPublicUrl" => { region = region, action = "lambda:InvokeFunctionUrl", function_url_auth_type = "NONE", invoked_via_function_url = null } if var.url_auth_type == "NONE" },
    { for region in local.extra_regions : "${region}/RegistryPublicUrlInvoke" => { region = region, action = "lambda:InvokeFunction", function_url_auth_type = null, invoked_via_function_url = true } if var.url_auth_type == "NONE" },
  )
  region                   = each.value.region
  statement_id             = trimprefix(each.key, "${each.value.region}/")
  action                   = each.value.action
  function_name            = aws_lambda_function.replica[each.value.region].function_name
  qualifier                = var.serve_alias ? aws_lambda_alias.replica[each.value.region].name : null
  principal                = "*"
  function_url_auth_type   = each.value.function_url_auth_type
  invoked_via_function_url = each.value.invoked_via_function_url
}

# ---------------------------------------------------------------------------------------------
# Alarms of the further regions and of replication (created by alarms.tf with the others). An alarm
# lives in the region of its metric and notifies a topic of that region.

locals {
  region_alarm_actions = { for region in local.extra_regions : region => lookup(var.region_alarm_sns_topic_arns, region, "") == "" ? [] : [var.region_alarm_sns_topic_arns[region]] }
  # The first region's alarms carry no region (the provider's).
  alarm_region = { for region in var.regions : region => region == local.primary_region ? null : region }

  region_alarm_definitions = merge(
    { for region in local.extra_regions : "${region}-5xx" => {
      region      = region
      description = "The registry in ${region} answered 5xx: storage errors, crashes, or writes the home region refused (a fence after a failover)."
      metric      = { namespace = "AWS/Lambda", metric_name = "Url5xxCount", dimensions = { FunctionName = aws_lambda_function.replica[region].function_name }, statistic = "Sum", period = 300 }
      threshold   = var.alarm_5xx_per_5min
    } },
    { for region in local.extra_regions : "${region}-errors" => {
      region      = region
      description = "The function in ${region} failed invocations (crash, timeout, or a streamed answer cut after its 200)."
      metric      = { namespace = "AWS/Lambda", metric_name = "Errors", dimensions = { FunctionName = aws_lambda_function.replica[region].function_name }, statistic = "Sum", period = 300 }
      threshold   = var.alarm_errors_per_5min
    } },
    # DynamoDB publishes ReplicationLatency in the sending region, per receiving region. A
    # replication that has stopped sends no data points (the alarm stays OK): the read regions'
    # fallbacks to the home region show it (docs/multi-region.md).
    { for pair in local.region_pairs : "replication-${pair.from}-to-${pair.to}" => {
      region             = local.alarm_region[pair.from]
      description        = "DynamoDB replication from ${pair.from} to ${pair.to} lags more than alarm_replication_latency_ms: reads in ${pair.to} fall back to the home region more often, and without ack_regions a loss of ${pair.from} while it is home can take the writes of this window."
      metric             = { namespace = "AWS/DynamoDB", metric_name = "ReplicationLatency", dimensions = { TableName = aws_dynamodb_table.registry.name, ReceivingRegion = pair.to }, statistic = "Maximum", period = 60 }
      evaluation_periods = 5
      threshold          = var.alarm_replication_latency_ms
    } },
    # S3 replication metrics (on in every rule), in the source bucket's region.
    { for pair in local.region_pairs : "s3-replication-latency-${pair.from}-to-${pair.to}" => {
      region             = local.alarm_region[pair.from]
      description        = "S3 replication of bodies and ID ledger from ${pair.from} to ${pair.to} lags more than alarm_s3_replication_latency_seconds: ${pair.to} reads new bodies from the home bucket meanwhile."
      metric             = { namespace = "AWS/S3", metric_name = "ReplicationLatency", dimensions = { SourceBucket = local.bucket_ids[pair.from], DestinationBucket = local.bucket_ids[pair.to], RuleId = "to-${pair.to}" }, statistic = "Maximum", period = 300 }
      evaluation_periods = 3
      threshold          = var.alarm_s3_replication_latency_seconds
    } },
    { for pair in local.region_pairs : "s3-replication-failed-${pair.from}-to-${pair.to}" => {
      region      = local.alarm_region[pair.from]
      description = "S3 failed to replicate objects from ${pair.from} to ${pair.to} (OperationsFailedReplication): check the replication role and the keys; the failed objects are not retried by S3."
      metric      = { namespace = "AWS/S3", metric_name = "OperationsFailedReplication", dimensions = { SourceBucket = local.bucket_ids[pair.from], DestinationBucket = local.bucket_ids[pair.to], RuleId = "to-${pair.to}" }, statistic = "Sum", period = 300 }
      threshold   = 0
    } },
  )
}
