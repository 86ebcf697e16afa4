# Alarms an operator needs first: errors, throttles, slowness, storage throttling.
locals {
  alarm_actions = var.alarm_sns_topic_arn == "" ? [] : [var.alarm_sns_topic_arn]
}

resource "aws_cloudwatch_metric_alarm" "url_5xx" {
  alarm_name          = "${local.prefix}-5xx"
  alarm_description   = "The registry answered 5xx: storage errors or crashes. Clients retry, but producers stall."
  namespace           = "AWS/Lambda"
  metric_name         = "Url5xxCount"
  dimensions          = { FunctionName = aws_lambda_function.registry.function_name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = var.alarm_5xx_per_5min
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "throttles" {
  alarm_name          = "${local.prefix}-throttles"
  alarm_description   = "Invocations hit reserved concurrency: raise reserved_concurrency or find the stampede."
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = aws_lambda_function.registry.function_name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "duration_p99" {
  alarm_name          = "${local.prefix}-duration-p99"
  alarm_description   = "p99 latency is high: registrations over 100 ms mean trouble for producers."
  namespace           = "AWS/Lambda"
  metric_name         = "Duration"
  dimensions          = { FunctionName = aws_lambda_function.registry.function_name }
  extended_statistic  = "p99"
  period              = 300
  evaluation_periods  = 3
  threshold           = var.alarm_duration_p99_ms
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

# DynamoDB publishes throttle events only when there are some: without FILL a period with read
# throttles but no write throttles sums to no data, and the alarm never fires.
resource "aws_cloudwatch_metric_alarm" "dynamodb_throttles" {
  alarm_name          = "${local.prefix}-dynamodb-throttles"
  alarm_description   = "DynamoDB throttled registry reads or writes (hot partition or account limits)."
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags

  metric_query {
    id          = "throttles"
    expression  = "FILL(reads, 0) + FILL(writes, 0)"
    label       = "Throttle events"
    return_data = true
  }

  dynamic "metric_query" {
    for_each = { reads = "ReadThrottleEvents", writes = "WriteThrottleEvents" }
    content {
      id = metric_query.key
      metric {
        namespace   = "AWS/DynamoDB"
        metric_name = metric_query.value
        dimensions  = { TableName = aws_dynamodb_table.registry.name }
        period      = 300
        stat        = "Sum"
      }
    }
  }
}

# ID churn, from the function's EMF metrics (registry_lambda::emf): one producer registering a new
# schema per message burns the ID space. The churn guard counts per instance; CloudWatch sums
# ChurnExceeded over every instance, so this alarm is fleet-wide.
resource "aws_cloudwatch_metric_alarm" "churn" {
  alarm_name          = "${local.prefix}-churn"
  alarm_description   = "A subject registered more than churn_max_per_hour new versions in an hour (ChurnExceeded). Find the producer registering a schema per message (log lines 'churn guard' name the subject)."
  namespace           = var.metrics_namespace
  metric_name         = "ChurnExceeded"
  dimensions          = { Registry = aws_lambda_function.registry.function_name }
  statistic           = "Sum"
  period              = 3600
  evaluation_periods  = 1
  threshold           = var.alarm_churn_per_hour
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags
}

resource "aws_cloudwatch_metric_alarm" "id_growth" {
  alarm_name          = "${local.prefix}-id-growth"
  alarm_description   = "The schema ID counter grew faster than alarm_id_growth_per_hour (hourly growth of MaxSchemaId)."
  evaluation_periods  = 1
  threshold           = var.alarm_id_growth_per_hour
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.alarm_actions
  ok_actions          = local.alarm_actions
  tags                = local.tags

  metric_query {
    id          = "growth"
    expression  = "DIFF(max_id)"
    label       = "Schema IDs allocated per hour"
    return_data = true
  }

  metric_query {
    id = "max_id"
    metric {
      namespace   = var.metrics_namespace
      metric_name = "MaxSchemaId"
      dimensions  = { Registry = aws_lambda_function.registry.function_name }
      period      = 3600
      stat        = "Maximum"
    }
  }
}
