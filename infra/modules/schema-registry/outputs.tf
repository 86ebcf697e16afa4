output "registry_url" {
  description = "What clients put in schema.registry.url: the custom domain when set, else the Function URL."
  value       = local.custom_domain ? "https://${var.custom_domain}" : trimsuffix(aws_lambda_function_url.registry.function_url, "/")
}

output "function_url" {
  description = "The Lambda Function URL (streaming)."
  value       = aws_lambda_function_url.registry.function_url
}

output "cloudfront_domain" {
  description = "Point custom_domain's DNS (CNAME or alias) here. Empty without a custom domain."
  value       = local.custom_domain ? aws_cloudfront_distribution.registry[0].domain_name : ""
}

output "table_name" {
  description = "DynamoDB table (REGISTRY_TABLE)."
  value       = aws_dynamodb_table.registry.name
}

output "bucket_name" {
  description = "S3 bucket of schema bodies (REGISTRY_BUCKET)."
  value       = aws_s3_bucket.bodies.id
}

output "function_name" {
  description = "The Lambda function."
  value       = aws_lambda_function.registry.function_name
}

output "kms_key_arn" {
  description = "The registry's KMS key."
  value       = aws_kms_key.registry.arn
}

output "users_secret_arn" {
  description = "Secrets Manager secret to fill with the users file (aws secretsmanager put-secret-value). Empty when auth_enabled = false."
  value       = var.auth_enabled ? aws_secretsmanager_secret.auth["users"].arn : ""
}

output "exporter_function_name" {
  description = "The exporter function (schema linking). Empty with exporter_enabled = false."
  value       = local.exporter ? aws_lambda_function.exporter[0].function_name : ""
}

output "exporter_failure_queue_url" {
  description = "The exporter's failure queue: stream batches that exhausted their retries and failed catch-up runs. Empty with exporter_enabled = false."
  value       = local.exporter ? aws_sqs_queue.exporter_failures[0].url : ""
}

output "home_region" {
  description = "The region that commits writes (home_region, or the first of regions)."
  value       = local.home_region
}

output "registry_urls" {
  description = "Per region: what clients in that region put in schema.registry.url (its Function URL; the first region's is registry_url, the custom domain when set). A single-region registry: its one URL, under the provider's region."
  value = merge(
    { (local.primary_region) = local.custom_domain ? "https://${var.custom_domain}" : trimsuffix(aws_lambda_function_url.registry.function_url, "/") },
    { for region in local.extra_regions : region => trimsuffix(aws_lambda_function_url.replica[region].function_url, "/") },
  )
}

output "bucket_names" {
  description = "Per region: the S3 bucket of schema bodies that region's function reads (REGISTRY_BUCKET there)."
  value       = merge({ (local.primary_region) = aws_s3_bucket.bodies.id }, { for region in local.extra_regions : region => aws_s3_bucket.replica[region].id })
}
