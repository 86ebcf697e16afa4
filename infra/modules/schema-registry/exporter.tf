# Schema linking (Confluent's exporters API): the table's change stream drives an exporter function,
# the same bootstrap as the API function started with REGISTRY_LAMBDA_HANDLER = "exporter", which
# turns each batch of stream records into "subject changed" events for every exporter whose subjects
# match and pushes the changes to the destination registries. The exporters' configuration, offset and
# state are items in the registry's own table.
#
# Delivery is at least once and idempotent: a record is reported failed (ReportBatchItemFailures) when
# its change could not be pushed or recorded, so Lambda retries from it and never past it; a crash
# between a push and the offset re-sends, which the destination answers as already done. A scheduled
# run catches every exporter up from the table itself (not the stream), which is what brings an
# exporter level after a reset, a resume after a long pause (a stream keeps records 24 hours only) or
# records that exhausted their retries.

locals {
  exporter = var.exporter_enabled

  exporter_environment = merge({
    REGISTRY_LAMBDA_HANDLER = "exporter" # the same bootstrap, started as the stream handler
    REGISTRY_BACKEND        = "aws"
    REGISTRY_TABLE          = aws_dynamodb_table.registry.name
    REGISTRY_BUCKET         = aws_s3_bucket.bodies.id
    RUST_LOG                = var.log_level
  }, local.exporter_region_environment)

  # Several regions: the function runs in the first region and copies from its replica, but keeps
  # the exporters' records where the API does, in the home region's table, each write fenced on the
  # home marker (docs/multi-region.md). Credentials are opened by the home region's KMS, then by
  # every region's key (a failover leaves credentials sealed by an earlier home). It writes no
  # object; the buckets it is given only name the regions it may follow (they must agree with the
  # API function's). Unset in a single-region registry, which runs as it always did.
  exporter_region_environment = merge(local.multi_region ? {
    REGISTRY_HOME_REGION       = local.home_region
    REGISTRY_EXPORTER_KMS_KEYS = join(",", [for region in var.regions : local.key_arns[region]])
    } : {}, local.follows_marker ? {
    # Following the home marker as the API function does: the records at whichever region the
    # marker names, with no apply after a failover.
    REGISTRY_HOME_BUCKET        = local.bucket_ids[local.home_region]
    REGISTRY_REGION_BUCKETS     = join(",", [for region in var.regions : "${region}=${local.bucket_ids[region]}"])
    REGISTRY_HOME_MARKER_TTL_MS = tostring(var.home_marker_ttl_ms)
  } : {})

  # Only the items that change what an exporter copies reach the function; filtered-out records cost
  # nothing (no invocation). Version rows (registrations, soft and hard deletes: S#<subject> / V#<n>)
  # and config items (CONFIG / GLOBAL or S#<subject>). Not the exporters' own items (EXPORTER...):
  # the function writes them, and their records would invoke it again for nothing.
  exporter_stream_filters = [
    { dynamodb = { Keys = { pk = { S = [{ prefix = "S#" }] }, sk = { S = [{ prefix = "V#" }] } } } },
    { dynamodb = { Keys = { pk = { S = ["CONFIG"] } } } },
  ]

  # Partitions the exporter function may write: its exporters' configuration, offset and state.
  exporter_partitions = ["EXPORTER", "EXPORTER#*"]

  # A batch is one invocation that pushes at most batch_size changes, each a few requests to the
  # destination: 300 s leaves room for a slow destination (the HTTP client's own timeouts are far
  # shorter), and a timed-out batch is retried from its first unconfirmed record.
  exporter_timeout_seconds = 300
}

resource "aws_cloudwatch_log_group" "exporter" {
  count             = local.exporter ? 1 : 0
  name              = "/aws/lambda/${local.prefix}-exporter"
  retention_in_days = var.log_retention_days
  kms_key_id        = aws_kms_key.registry.arn
  tags              = local.tags
}

resource "aws_lambda_function" "exporter" {
  # checkov:skip=CKV_AWS_117: the function calls DynamoDB, S3 and the destination registries' public URLs over TLS; a VPC adds NAT cost for no isolation gain.
  # checkov:skip=CKV_AWS_272: code signing needs a signing profile per account; the zip is built reproducibly by `make package`.
  # checkov:skip=CKV_AWS_50: X-Ray is optional (var.xray_tracing) because it bills per trace; logs and metrics cover the default.
  # checkov:skip=CKV_AWS_115: one instance per stream shard at most (parallelization_factor 1), so a reservation would only take concurrency from the account.
  count            = local.exporter ? 1 : 0
  function_name    = "${local.prefix}-exporter"
  description      = "Schema registry exporters (${var.name}): table stream -> destination registries"
  role             = aws_iam_role.exporter[0].arn
  filename         = var.lambda_zip_path
  source_code_hash = filebase64sha256(var.lambda_zip_path)
  handler          = "bootstrap"
  runtime          = "provided.al2023"
  architectures    = ["arm64"]
  memory_size      = var.memory_mb
  timeout          = local.exporter_timeout_seconds
  kms_key_arn      = aws_kms_key.registry.arn

  environment {
    variables = local.exporter_environment
  }

  # Scheduled catch-up runs are asynchronous invocations: one that fails after its retries lands
  # here, beside the stream's failed batches.
  dead_letter_config {
    target_arn = aws_sqs_queue.exporter_failures[0].arn
  }

  tracing_config {
    mode = var.xray_tracing ? "Active" : "PassThrough"
  }

  logging_config {
    log_format       = "JSON"
    log_group        = aws_cloudwatch_log_group.exporter[0].name
    system_log_level = "WARN"
  }

  depends_on = [aws_iam_role_policy.exporter, aws_cloudwatch_log_group.exporter]
  tags       = local.tags
}

# The stream -> function mapping.
resource "aws_lambda_event_source_mapping" "exporter" {
  count            = local.exporter ? 1 : 0
  function_name    = aws_lambda_function.exporter[0].arn
  event_source_arn = aws_dynamodb_table.registry.stream_arn
  # A mapping created (or re-created) after the table was written starts at the oldest record the
  # stream still holds, never skipping what happened in between; LATEST would.
  starting_position = "TRIM_HORIZON"
  # A Confluent import or a burst of registrations writes hundreds of rows at once; the handler
  # coalesces a batch's records per subject, so larger batches mean fewer pushes. 100 changes at a
  # few destination requests each stay far inside the 300 s timeout.
  batch_size = var.exporter_batch_size
  # Waiting up to 1 s fills a batch during a burst, and adds at most 1 s to an export.
  maximum_batching_window_in_seconds = 1
  # One invocation per shard at a time: records of one shard are handled in stream order, so an
  # exporter's offset only moves forward.
  parallelization_factor = 1
  # The handler reports the first record it could not push (and every one after it) in
  # batchItemFailures: Lambda retries from there, so a failing record is retried, never skipped.
  function_response_types = ["ReportBatchItemFailures"]
  # A crash or timeout fails the whole batch; halving it on each retry isolates the record that
  # causes it instead of retrying the same 100 for ever.
  bisect_batch_on_function_error = true
  # A destination that refuses (auth, ID conflict) puts the exporter in ERROR and the record is
  # retried: 10 attempts with Lambda's backoff cover an outage of the destination of minutes. After
  # them, or once the record is 6 hours old, the failed range is sent to the on-failure queue (it
  # names the shard and sequence numbers, an alarm fires) and the shard moves on: the change itself
  # is not lost, since the scheduled catch-up run copies from the table, not from the stream. Without
  # a bound, one refused change would hold back every later change of the table for 24 hours, after
  # which the stream drops records anyway.
  maximum_retry_attempts        = 10
  maximum_record_age_in_seconds = 21600

  destination_config {
    on_failure {
      destination_arn = aws_sqs_queue.exporter_failures[0].arn
    }
  }

  # PolledEventCount and the mapping's other counts, for the exporter-mapping-stopped alarm.
  metrics_config {
    metrics = ["EventCount"]
  }

  filter_criteria {
    dynamic "filter" {
      for_each = local.exporter_stream_filters
      content {
        pattern = jsonencode(filter.value)
      }
    }
  }
}

# Batches that exhausted their retries (the shard and sequence range, not the records) and failed
# catch-up runs. Kept 14 days (SQS's maximum) for the operator; encrypted with the module's key.
resource "aws_sqs_queue" "exporter_failures" {
  count                     = local.exporter ? 1 : 0
  name                      = "${local.prefix}-exporter-failures"
  message_retention_seconds = 1209600
  kms_master_key_id         = aws_kms_key.registry.arn
  # A data key is reused for 5 minutes instead of a KMS call per message.
  kms_data_key_reuse_period_seconds = 300
  tags                              = local.tags
}

# Asynchronous invocations (the schedule) are not retried: the next run, exporter_catch_up_minutes
# later, does the same work from the same table state.
resource "aws_lambda_function_event_invoke_config" "exporter" {
  count                        = local.exporter ? 1 : 0
  function_name                = aws_lambda_function.exporter[0].function_name
  maximum_retry_attempts       = 0
  maximum_event_age_in_seconds = 3600
}

# The catch-up run: after a reset, a resume from a pause longer than the stream's 24 hours, or a
# batch sent to the failure queue, the stream alone would never bring the exporter level.
resource "aws_cloudwatch_event_rule" "exporter_catch_up" {
  count               = local.exporter ? 1 : 0
  name                = "${local.prefix}-exporter-catch-up"
  description         = "${local.prefix}: every exporter caught up from the table"
  schedule_expression = "rate(${var.exporter_catch_up_minutes} minutes)"
  tags                = local.tags
}

resource "aws_cloudwatch_event_target" "exporter_catch_up" {
  count = local.exporter ? 1 : 0
  rule  = aws_cloudwatch_event_rule.exporter_catch_up[0].name
  arn   = aws_lambda_function.exporter[0].arn
  # The function tells a scheduled run from a stream batch by this input.
  input = jsonencode({ registry = "exporter-catch-up" })
}

resource "aws_lambda_permission" "exporter_catch_up" {
  count         = local.exporter ? 1 : 0
  statement_id  = "ExporterCatchUp"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.exporter[0].function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.exporter_catch_up[0].arn
}

# Least privilege: read the stream and the registry's items and bodies, write only the exporters'
# own items, send failures to its queue, write its log group. No Scan, no write to registry items.
resource "aws_iam_role" "exporter" {
  count              = local.exporter ? 1 : 0
  name_prefix        = "${local.prefix}-"
  description        = "${local.prefix}: the exporter function"
  assume_role_policy = data.aws_iam_policy_document.assume_lambda.json
  tags               = local.tags
}

data "aws_iam_policy_document" "exporter" {
  # Only with the exporter: its statements name the failure queue and log group, which exist only then.
  count = local.exporter ? 1 : 0

  # As the API function's role (iam.tf): it reads the registry's items (the exported subjects' rows,
  # configs and bodies' bindings in this region's replica, the exporters' items in the home region's,
  # wherever the home is), and the fence item is the failover command's only.
  source_policy_documents = [data.aws_iam_policy_document.registry_items.json]

  # What the event source mapping reads on the function's behalf.
  statement {
    sid       = "TableStream"
    actions   = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"]
    resources = ["${aws_dynamodb_table.registry.arn}/stream/*"]
  }

  # Offsets and states: only items whose partition key is an exporter's, and only where the API
  # function's role (iam.tf) writes: the home region's replica, or with follow_home_marker every
  # replica, the fence on the marker refusing a region it does not name (a write to a non-home
  # replica would race the home's by last writer wins).
  statement {
    sid       = "ExporterItems"
    actions   = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
    resources = local.written_table_arns
    condition {
      test     = "ForAllValues:StringLike"
      variable = "dynamodb:LeadingKeys"
      values   = local.exporter_partitions
    }
  }

  # Several regions: every write carries the home marker's check (HOME / MARKER), read only.
  dynamic "statement" {
    for_each = local.multi_region ? ["HOME"] : []
    content {
      sid       = "HomeMarkerCheck"
      actions   = ["dynamodb:ConditionCheckItem"]
      resources = local.written_table_arns
      condition {
        test     = "ForAllValues:StringEquals"
        variable = "dynamodb:LeadingKeys"
        values   = [statement.value]
      }
    }
  }

  statement {
    sid       = "SchemaBodies"
    actions   = ["s3:GetObject"]
    resources = ["${aws_s3_bucket.bodies.arn}/schemas/*"]
  }

  # Without it S3 answers a missing body with 403, not 404 (see iam.tf).
  statement {
    sid       = "ListBucket"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.bodies.arn]
  }

  statement {
    sid       = "FailureQueue"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.exporter_failures[0].arn]
  }

  # As the API function's role: the module's key only through the services that hold data under it
  # (the table and its stream, the bucket, the function's environment, the failure queue).
  statement {
    sid       = "EncryptionKeyViaServices"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"]
    resources = [aws_kms_key.registry.arn]
    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = [for service in ["dynamodb", "s3", "lambda", "sqs"] : "${service}.${data.aws_region.current.region}.amazonaws.com"]
    }
  }

  # The destinations' credentials, which the API function encrypted under the home region's key
  # (any region's, after failovers): Decrypt only, and only of values carrying their encryption
  # context (as ExporterCredentials in iam.tf).
  statement {
    sid       = "ExporterCredentials"
    actions   = ["kms:Decrypt"]
    resources = local.registry_key_arns
    condition {
      test     = "StringEquals"
      variable = "kms:EncryptionContext:purpose"
      values   = ["registry-exporter-credential"]
    }
  }

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.exporter[0].arn}:*"]
  }
}

resource "aws_iam_role_policy" "exporter" {
  count  = local.exporter ? 1 : 0
  name   = "exporter"
  role   = aws_iam_role.exporter[0].id
  policy = data.aws_iam_policy_document.exporter[0].json
}

resource "aws_iam_role_policy_attachment" "exporter_xray" {
  count      = local.exporter && var.xray_tracing ? 1 : 0
  role       = aws_iam_role.exporter[0].name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/AWSXRayDaemonWriteAccess"
}

locals {
  # alarms.tf creates these with the others.
  exporter_dimensions = local.exporter ? { FunctionName = aws_lambda_function.exporter[0].function_name } : {}
  exporter_alarm_definitions = local.exporter ? {
    # IteratorAge is the age of the newest record of the last batch: how far exports lag behind the
    # table. The stream keeps records 24 hours; the default hour leaves 23 to act.
    "exporter-iterator-age" = {
      description = "Exports lag the table by more than alarm_exporter_iterator_age_seconds (IteratorAge): a destination refusing or down, or the exporter failing. Records older than 24 hours leave the stream; the catch-up run then copies from the table."
      metric      = { namespace = "AWS/Lambda", metric_name = "IteratorAge", dimensions = local.exporter_dimensions, statistic = "Maximum", period = 300 }
      threshold   = var.alarm_exporter_iterator_age_seconds * 1000
    }
    "exporter-errors" = {
      description = "The exporter function failed invocations (crash or timeout): its batch is retried, halved each time."
      metric      = { namespace = "AWS/Lambda", metric_name = "Errors", dimensions = local.exporter_dimensions, statistic = "Sum", period = 300 }
      threshold   = 0
    }
    "exporter-failures" = {
      description = "A stream batch exhausted its retries or a catch-up run failed: the failure queue names the shard and sequence range. The next catch-up run copies the change from the table; find why the exporter failed (GET /exporters/{name}/status, its trace)."
      # Messages sent in the period, not the ones waiting: nothing drains the queue (it is a
      # record for the operator), so a backlog would keep the alarm firing for 14 days and hide
      # every later failure. Lambda's on-failure delivery counts in NumberOfMessagesSent.
      metric    = { namespace = "AWS/SQS", metric_name = "NumberOfMessagesSent", dimensions = { QueueName = aws_sqs_queue.exporter_failures[0].name }, statistic = "Sum", period = 300 }
      threshold = 0
    }
  } : {}
  # Its own conditional: its metric math does not have the other alarms' shape.
  exporter_mapping_alarm_definitions = local.exporter ? {
    # A mapping that stops (disabled by hand or by Lambda, e.g. after losing access to the stream)
    # sends no IteratorAge and no errors: the alarms above stay quiet while nothing is exported. The
    # mapping's own count of records read (metrics_config) stays 0 while the table is written.
    "exporter-mapping-stopped" = {
      description        = "The table was written but the exporter's event source mapping read no stream record for 30 minutes: the mapping is disabled or stopped (aws lambda get-event-source-mapping, State and StateTransitionReason). The catch-up run still copies every 15 minutes; re-enable the mapping."
      expression         = { id = "stopped", expression = "IF((FILL(writes, 0) + FILL(replicated, 0)) > 0 AND FILL(polled, 0) == 0, 1, 0)", label = "Table written, stream not read" }
      evaluation_periods = 2
      threshold          = 0
      metrics = {
        writes     = { namespace = "AWS/DynamoDB", metric_name = "ConsumedWriteCapacityUnits", dimensions = { TableName = aws_dynamodb_table.registry.name }, period = 900, stat = "Sum" }
        replicated = { namespace = "AWS/DynamoDB", metric_name = "ReplicatedWriteCapacityUnits", dimensions = { TableName = aws_dynamodb_table.registry.name }, period = 900, stat = "Sum" }
        polled     = { namespace = "AWS/Lambda", metric_name = "PolledEventCount", dimensions = { EventSourceMappingUUID = aws_lambda_event_source_mapping.exporter[0].uuid }, period = 900, stat = "Sum" }
      }
    }
  } : {}
}
