locals {
  # The ownership policy is off unless a property name is given.
  owner_environment = var.require_owner == "" ? {} : { REGISTRY_REQUIRE_OWNER = var.require_owner }
}

# One function serves the whole Confluent API (see README.md "One function, not a read/write split").
resource "aws_cloudwatch_log_group" "registry" {
  name              = "/aws/lambda/${local.prefix}"
  retention_in_days = var.log_retention_days
  kms_key_id        = aws_kms_key.registry.arn
  tags              = local.tags
}

resource "aws_lambda_function" "registry" {
  # checkov:skip=CKV_AWS_116: a dead-letter queue applies to asynchronous invocations; every call here is a synchronous HTTP request.
  # checkov:skip=CKV_AWS_117: the function only calls DynamoDB and S3 over TLS with IAM; a VPC adds NAT cost and cold-start time for no isolation gain.
  # checkov:skip=CKV_AWS_272: code signing needs a signing profile per account; the zip is built reproducibly by `make package`.
  # checkov:skip=CKV_AWS_50: X-Ray is optional (var.xray_tracing) because it bills per trace; logs and metrics cover the default.
  function_name                  = local.prefix
  description                    = "Confluent-compatible schema registry (${var.name})"
  role                           = aws_iam_role.registry.arn
  filename                       = var.lambda_zip_path
  source_code_hash               = filebase64sha256(var.lambda_zip_path)
  handler                        = "bootstrap"
  runtime                        = "provided.al2023"
  architectures                  = ["arm64"]
  memory_size                    = var.memory_mb
  timeout                        = var.timeout_seconds
  reserved_concurrent_executions = var.reserved_concurrency
  kms_key_arn                    = aws_kms_key.registry.arn

  environment {
    variables = merge(local.auth_environment, local.owner_environment, {
      REGISTRY_BACKEND                     = "aws"
      REGISTRY_TABLE                       = aws_dynamodb_table.registry.name
      REGISTRY_BUCKET                      = aws_s3_bucket.bodies.id
      REGISTRY_DEFAULT_COMPATIBILITY       = var.default_compatibility
      RUST_LOG                             = var.log_level
      REGISTRY_CHURN_MAX_PER_HOUR          = tostring(var.churn_max_per_hour)
      REGISTRY_CHURN_ENFORCE               = tostring(var.churn_enforce)
      REGISTRY_METRICS_NAMESPACE           = var.metrics_namespace
      REGISTRY_USAGE_GRANULARITY_DAYS      = tostring(var.usage_granularity_days)
      REGISTRY_ANSWER_MEMORY_MS            = tostring(var.answer_memory_ms)
      AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH = "true"
    })
  }

  tracing_config {
    mode = var.xray_tracing ? "Active" : "PassThrough"
  }

  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.registry.name
  }

  depends_on = [aws_iam_role_policy.registry, aws_cloudwatch_log_group.registry]
  tags       = local.tags
}

# Streaming, so lists larger than Lambda's 6 MB buffered limit still arrive whole.
resource "aws_lambda_function_url" "registry" {
  # checkov:skip=CKV_AWS_258: Confluent serializers cannot sign SigV4 requests; the registry authenticates clients itself (HTTP Basic). Set url_auth_type = "AWS_IAM" for admin-only deployments.
  function_name      = aws_lambda_function.registry.function_name
  authorization_type = var.url_auth_type
  invoke_mode        = "RESPONSE_STREAM"
}
