locals {
  # Every variable the function reads is set here, or named with its reason in README.md "Function
  # settings"; scripts/infra_check.py compares both with the variables the Rust sources read.
  function_environment = {
    REGISTRY_BACKEND                            = "aws" # fixed: the function serves only the AWS store
    REGISTRY_TABLE                              = aws_dynamodb_table.registry.name
    REGISTRY_BUCKET                             = aws_s3_bucket.bodies.id
    REGISTRY_DEFAULT_COMPATIBILITY              = var.default_compatibility
    REGISTRY_CACHE_BYTES                        = tostring(var.cache_bytes)
    RUST_LOG                                    = var.log_level
    REGISTRY_LOG_FORMAT                         = "json" # fixed: CloudWatch gets JSON lines (logging_config below)
    REGISTRY_CHURN_MAX_PER_HOUR                 = tostring(var.churn_max_per_hour)
    REGISTRY_CHURN_ENFORCE                      = tostring(var.churn_enforce)
    REGISTRY_INCOMPATIBLE_ERROR_CODE            = tostring(var.incompatible_error_code)
    REGISTRY_PROTOBUF_PACKAGE_CHANGE_COMPATIBLE = tostring(var.protobuf_package_change_compatible)
    REGISTRY_REFERENCE_VERSIONS_STRICT          = tostring(var.reference_versions_strict)
    REGISTRY_METRICS_NAMESPACE                  = var.metrics_namespace
    REGISTRY_USAGE_GRANULARITY_DAYS             = tostring(var.usage_granularity_days)
    REGISTRY_ANSWER_MEMORY_MS                   = tostring(var.answer_memory_ms)
    REGISTRY_AUTH_RELOAD_SECONDS                = tostring(var.auth_reload_seconds)
    # Exporter credentials are encrypted by KMS under the module's key (its alias names each region's
    # key in its own region), for this use only: ExporterCredentials in iam.tf.
    REGISTRY_EXPORTER_KMS_KEY = aws_kms_alias.registry.name
  }

  # Set only when configured: null leaves the variable unset, so the function's default applies.
  function_optional_environment = {
    REGISTRY_REQUIRE_OWNER    = var.require_owner == "" ? null : var.require_owner
    REGISTRY_ID_CACHE_CONTROL = var.id_cache_control
    REGISTRY_USERS_SECRET     = var.auth_enabled ? aws_secretsmanager_secret.auth["users"].arn : null
    REGISTRY_JWT_ISSUER       = local.jwt_enabled ? var.jwt_issuer : null
    REGISTRY_JWT_AUDIENCE     = local.jwt_enabled ? var.jwt_audience : null
    REGISTRY_JWT_ROLE_CLAIM   = local.jwt_enabled ? var.jwt_role_claim : null
    REGISTRY_JWKS_SECRET      = local.jwt_enabled ? aws_secretsmanager_secret.auth["jwks"].arn : null
    REGISTRY_ORIGIN_SECRET    = local.origin_secret ? aws_secretsmanager_secret.auth["origin"].arn : null
    # Changes with the JWKS Terraform writes: the function's configuration changes with it, so every
    # warm instance is replaced at once (reloads would reach them within auth_reload_seconds anyway).
    REGISTRY_AUTH_REVISION = local.jwt_enabled ? "jwks-${substr(sha256(var.jwks_json), 0, 16)}" : null
    # Always set: unset would let the function try any key its role may use (README "Field-level
    # encryption"); "none" names no key, so every aws-kms KEK is refused before any KMS call.
    REGISTRY_KMS_KEY_ARNS = length(var.kms_key_arns) > 0 ? join(",", var.kms_key_arns) : "none"
  }

  # Several regions (regions.tf): where writes are committed (first), whom they wait for, and where
  # the home marker may send them. Unset in a single-region registry, whose function commits in its
  # own table as it always did.
  region_environment = {
    REGISTRY_HOME_REGION = local.multi_region ? local.home_region : null
    REGISTRY_HOME_BUCKET = local.multi_region ? local.bucket_ids[local.home_region] : null
    REGISTRY_ACK_REGIONS = local.multi_region && length(var.ack_regions) > 0 ? join(",", [for region in var.ack_regions : "${region}=${local.bucket_ids[region]}"]) : null
    # Also without ack_regions: a read region's writes wait for its own replica (read-your-writes).
    REGISTRY_ACK_TIMEOUT_MS = local.multi_region ? tostring(var.ack_timeout_ms) : null
    # Every region's bucket: the function follows the home marker (home_region is where it starts).
    REGISTRY_REGION_BUCKETS     = local.follows_marker ? join(",", [for region in var.regions : "${region}=${local.bucket_ids[region]}"]) : null
    REGISTRY_HOME_MARKER_TTL_MS = local.follows_marker ? tostring(var.home_marker_ttl_ms) : null
  }
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
  # checkov:skip=CKV_AWS_115: reserved concurrency is optional (var.reserved_concurrency): reserving fails on accounts with a low concurrency quota.
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
  # Every change of code or configuration is a numbered version to roll back to (README "Rollback").
  publish = true

  environment {
    variables = merge(local.function_environment, { for name, value in merge(local.function_optional_environment, local.region_environment) : name => value if value != null })
  }

  tracing_config {
    mode = var.xray_tracing ? "Active" : "PassThrough"
  }

  # WARN drops the platform's START, END and REPORT lines (about 0.7 KB per request, a third of the
  # log bill); duration, memory and errors remain Lambda metrics. The registry's own lines follow
  # RUST_LOG (log_level).
  logging_config {
    log_format       = "JSON"
    log_group        = aws_cloudwatch_log_group.registry.name
    system_log_level = "WARN"
  }

  depends_on = [aws_iam_role_policy.registry, aws_iam_role_policy.auth, aws_secretsmanager_secret_version.jwks, aws_secretsmanager_secret_version.origin, aws_cloudwatch_log_group.registry]
  tags       = local.tags
}

# The version that serves when the URL is on the alias (serve_alias): the one this apply published, or
# the earlier one function_version names (a rollback that touches nothing else).
resource "aws_lambda_alias" "live" {
  name             = "live"
  description      = "${local.prefix}: the version that serves"
  function_name    = aws_lambda_function.registry.function_name
  function_version = var.function_version == "" ? aws_lambda_function.registry.version : var.function_version
}

locals {
  # The Function URL and its invoke permissions sit on the alias with serve_alias, else on $LATEST.
  url_qualifier = var.serve_alias ? aws_lambda_alias.live.name : null
}

# Streaming, so lists larger than Lambda's 6 MB buffered limit still arrive whole.
resource "aws_lambda_function_url" "registry" {
  # checkov:skip=CKV_AWS_258: Confluent serializers cannot sign SigV4 requests; the registry authenticates clients itself (HTTP Basic or bearer tokens), and turning that off on a public URL needs allow_anonymous = true. url_auth_type = "AWS_IAM" is offered.
  function_name      = aws_lambda_function.registry.function_name
  qualifier          = local.url_qualifier
  authorization_type = var.url_auth_type
  invoke_mode        = "RESPONSE_STREAM"
}

# Who may call the Function URL, by statement ID: anyone on a public URL (auth type NONE), and
# CloudFront when it signs its requests with origin access control (domain.tf; the URL's auth type is
# AWS_IAM then). AWS_IAM callers of the same account need both actions below in their identity
# policy instead.
locals {
  url_callers = {
    for id, caller in {
      RegistryPublicUrl     = { enabled = var.url_auth_type == "NONE", principal = "*", source_arn = null }
      RegistryCloudFrontUrl = { enabled = local.origin_access_control, principal = "cloudfront.amazonaws.com", source_arn = one(aws_cloudfront_distribution.registry[*].arn) }
    } : id => caller if caller.enabled
  }
}

# A caller gets through only with both statements in the function's policy: lambda:InvokeFunctionUrl
# for the URL's auth type and, for URLs created since October 2025, lambda:InvokeFunction when
# invoked through a URL. Without them every request is 403. (The AWS provider also adds statements of
# its own when it creates a NONE URL, outside Terraform's state; these are tracked, so changing
# url_auth_type removes them.)
resource "aws_lambda_permission" "url" {
  # checkov:skip=CKV_AWS_301: a public Function URL is the point of auth type NONE; the registry authenticates every request itself unless allow_anonymous = true says otherwise, and lambda:InvokeFunction is limited to invocations through the URL (invoked_via_function_url).
  for_each = merge(
    { for id, caller in local.url_callers : id => merge(caller, { action = "lambda:InvokeFunctionUrl", function_url_auth_type = var.url_auth_type, invoked_via_function_url = null }) },
    { for id, caller in local.url_callers : "${id}Invoke" => merge(caller, { action = "lambda:InvokeFunction", function_url_auth_type = null, invoked_via_function_url = true }) },
  )
  statement_id             = each.key
  action                   = each.value.action
  function_name            = aws_lambda_function.registry.function_name
  qualifier                = local.url_qualifier
  principal                = each.value.principal
  source_arn               = each.value.source_arn
  function_url_auth_type   = each.value.function_url_auth_type
  invoked_via_function_url = each.value.invoked_via_function_url
}
