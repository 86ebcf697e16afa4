# Alarms an operator needs first: errors, 4xx bursts, throttles, concurrency, slowness, storage
# throttling, ID churn and growth; with the exporter, its lag, errors and failed batches (exporter.tf).
locals {
  alarm_actions = var.alarm_sns_topic_arn == "" ? [] : [var.alarm_sns_topic_arn]
  # 80% of the reservation when there is one, else the operator's threshold.
  alarm_concurrent_executions = var.reserved_concurrency == null ? var.alarm_concurrent_executions : floor(var.reserved_concurrency * 0.8)

  function_dimensions = { FunctionName = aws_lambda_function.registry.function_name }
  # The function's EMF metrics (registry_lambda::emf) carry the registry's name as dimension.
  emf_dimensions = { Registry = aws_lambda_function.registry.function_name }

  # Every alarm, keyed by its name after the prefix; each fires above its threshold (in one
  # evaluation period unless it says otherwise). An alarm on one metric names it in `metric`
  # (statistic or extended_statistic); an alarm on metric math has an `expression` and the
  # `metrics` (by id) the expression reads.
  # An alarm with a `region` lives in that region (regions.tf), the others in the provider's.
  alarms = { for name, alarm in merge(local.alarm_definitions, local.exporter_alarm_definitions, local.exporter_mapping_alarm_definitions, local.region_alarm_definitions, local.regional_emf_alarm_definitions) : name => merge({ metric = {}, evaluation_periods = 1, expression = null, metrics = {}, region = null }, alarm) }
  # The counters of a multi-region function (registry_lambda::emf), each alarmed in the region of
  # the function that counts it (the function is named alike in every region).
  home_fallback_alarm_regions = local.multi_region ? [for region in var.regions : region if region != local.home_region] : []
  ack_timeout_alarm_regions   = local.multi_region && length(var.ack_regions) > 0 ? var.regions : []
  regional_emf_alarm_definitions = merge(
    # A read region's reads answered by the home region: the one sign of a replication that stopped.
    { for region in local.home_fallback_alarm_regions : "home-fallbacks-${region}" => {
      region      = local.alarm_region[region]
      description = "The function in ${region} answered more than alarm_home_fallbacks_per_5min reads from the home region (HomeFallbacks): its replica lacks what the home committed. Check DynamoDB and S3 replication to ${region}."
      metric      = { namespace = var.metrics_namespace, metric_name = "HomeFallbacks", dimensions = local.emf_dimensions, statistic = "Sum", period = 300 }
      threshold   = var.alarm_home_fallbacks_per_5min
    } },
    # RPO 0: a write whose wait for the ack_regions ran out (answered 50002, committed at home).
    { for region in local.ack_timeout_alarm_regions : "replication-ack-timeouts-${region}" => {
      region      = local.alarm_region[region]
      description = "Writes through ${region} were committed in the home region but not visible in every ack_regions region within ack_timeout_ms (ReplicationAckTimeouts): clients got 50002 and retried. Replication to an acknowledging region is slow or stopped."
      metric      = { namespace = var.metrics_namespace, metric_name = "ReplicationAckTimeouts", dimensions = local.emf_dimensions, statistic = "Sum", period = 300 }
      threshold   = 0
    } },
  )
  alarm_definitions = {
    "5xx" = {
      description = "The registry answered 5xx: storage errors or crashes. Clients retry, but producers stall."
      metric      = { namespace = "AWS/Lambda", metric_name = "Url5xxCount", dimensions = local.function_dimensions, statistic = "Sum", period = 300 }
      threshold   = var.alarm_5xx_per_5min
    }
    throttles = {
      description = "Invocations hit reserved concurrency: raise reserved_concurrency or find the stampede."
      metric      = { namespace = "AWS/Lambda", metric_name = "Throttles", dimensions = local.function_dimensions, statistic = "Sum", period = 300 }
      threshold   = 0
    }
    "duration-p99" = {
      description        = "p99 latency is high: registrations over 100 ms mean trouble for producers."
      metric             = { namespace = "AWS/Lambda", metric_name = "Duration", dimensions = local.function_dimensions, extended_statistic = "p99", period = 300 }
      evaluation_periods = 3
      threshold          = var.alarm_duration_p99_ms
    }
    # DynamoDB publishes throttle events only when there are some: without FILL a period with read
    # throttles but no write throttles sums to no data, and the alarm never fires.
    "dynamodb-throttles" = {
      description = "DynamoDB throttled registry reads or writes (hot partition or account limits)."
      expression  = { id = "throttles", expression = "FILL(reads, 0) + FILL(writes, 0)", label = "Throttle events" }
      metrics = {
        for id, name in { reads = "ReadThrottleEvents", writes = "WriteThrottleEvents" } :
        id => { namespace = "AWS/DynamoDB", metric_name = name, dimensions = { TableName = aws_dynamodb_table.registry.name }, period = 300, stat = "Sum" }
      }
      threshold = 0
    }
    # One producer registering a new schema per message burns the ID space. The churn guard counts
    # per instance; CloudWatch sums ChurnExceeded over every instance, so this alarm is fleet-wide.
    churn = {
      description = "A subject registered more than churn_max_per_hour new versions in an hour (ChurnExceeded). Find the producer registering a schema per message (log lines 'churn guard' name the subject)."
      metric      = { namespace = var.metrics_namespace, metric_name = "ChurnExceeded", dimensions = local.emf_dimensions, statistic = "Sum", period = 3600 }
      threshold   = var.alarm_churn_per_hour
    }
    # IDs allocated, counted where they are allocated (each EMF line carries this instance's new IDs
    # since its previous line), so the hourly sum is exact across instances and is 0 in a quiet hour.
    # (A DIFF of MaxSchemaId would compare the maxima of whichever instances happened to report in two
    # hours: after a quiet period a fresh instance reports a low maximum, the next hour a high one.)
    "id-growth" = {
      description = "More than alarm_id_growth_per_hour schema IDs were allocated in an hour (sum of NewSchemaIds over every instance)."
      metric      = { namespace = var.metrics_namespace, metric_name = "NewSchemaIds", dimensions = local.emf_dimensions, statistic = "Sum", period = 3600 }
      threshold   = var.alarm_id_growth_per_hour
    }
    # Function errors: crashes, invocations the runtime killed at the timeout, and answers that failed
    # after their status line was sent (a streamed list cut mid-way answered 200, so Url5xxCount never
    # counts it).
    errors = {
      description = "The function failed invocations (crash, timeout, or a streamed answer cut after its 200): clients saw broken answers."
      metric      = { namespace = "AWS/Lambda", metric_name = "Errors", dimensions = local.function_dimensions, statistic = "Sum", period = 300 }
      threshold   = var.alarm_errors_per_5min
    }
    # 4xx are normal in small numbers (a deserializer asking for an unknown ID, a lookup of a schema
    # not yet registered); a burst means clients with a revoked or mistyped credential (401), or a
    # producer whose schema is refused (409, 422) retrying in a loop.
    "4xx" = {
      description = "The registry answered more than alarm_4xx_per_5min 4xx in 5 minutes: credentials revoked or mistyped (401/403) or a producer retrying a refused schema (409/422). The log lines name operation, subject and status."
      metric      = { namespace = "AWS/Lambda", metric_name = "Url4xxCount", dimensions = local.function_dimensions, statistic = "Sum", period = 300 }
      threshold   = var.alarm_4xx_per_5min
    }
    concurrency = {
      description = "The function ran more instances at once than alarm_concurrent_executions: a stampede (Connect rebalance, a producer fleet restart) is eating the account's concurrency."
      metric      = { namespace = "AWS/Lambda", metric_name = "ConcurrentExecutions", dimensions = local.function_dimensions, statistic = "Maximum", period = 60 }
      threshold   = local.alarm_concurrent_executions
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "registry" {
  for_each            = local.alarms
  region              = each.value.region
  alarm_name          = "${local.prefix}-${each.key}"
  alarm_description   = each.value.description
  namespace           = lookup(each.value.metric, "namespace", null)
  metric_name         = lookup(each.value.metric, "metric_name", null)
  dimensions          = lookup(each.value.metric, "dimensions", null)
  statistic           = lookup(each.value.metric, "statistic", null)
  extended_statistic  = lookup(each.value.metric, "extended_statistic", null)
  period              = lookup(each.value.metric, "period", null)
  evaluation_periods  = each.value.evaluation_periods
  threshold           = each.value.threshold
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = each.value.region == null ? local.alarm_actions : local.region_alarm_actions[each.value.region]
  ok_actions          = each.value.region == null ? local.alarm_actions : local.region_alarm_actions[each.value.region]
  tags                = local.tags

  dynamic "metric_query" {
    for_each = each.value.expression == null ? [] : [each.value.expression]
    content {
      id          = metric_query.value.id
      expression  = metric_query.value.expression
      label       = metric_query.value.label
      return_data = true
    }
  }

  dynamic "metric_query" {
    for_each = each.value.metrics
    content {
      id = metric_query.key
      metric {
        namespace   = metric_query.value.namespace
        metric_name = metric_query.value.metric_name
        dimensions  = metric_query.value.dimensions
        period      = metric_query.value.period
        stat        = metric_query.value.stat
      }
    }
  }
}
