# What the roles may do, read from the policy documents the module builds (their statements as
# configured; the mocked provider renders no JSON), after a mocked apply. Run by
# scripts/infra-check.sh (`terraform test`).

mock_provider "aws" {
  source = "./tests/aws"
}

variables {
  name = "team"
  # Any file: the mocked provider uploads nothing, but filebase64sha256 reads it.
  lambda_zip_path = "table.json"
}

run "one_region" {
  command = apply

  # Only the exporter function opens exporter credentials; the API seals them.
  assert {
    condition     = alltrue([for s in data.aws_iam_policy_document.registry.statement : !contains(s.actions, "kms:Decrypt") if length([for c in s.condition : c if c.variable == "kms:EncryptionContext:purpose"]) > 0])
    error_message = "The API role must not hold kms:Decrypt under the exporter credentials' encryption context."
  }
  assert {
    condition     = one([for s in data.aws_iam_policy_document.registry.statement : s.actions if s.sid == "ExporterCredentials"]) == toset(["kms:Encrypt"])
    error_message = "The API role must seal exporter credentials (kms:Encrypt) and nothing else under their context."
  }
  assert {
    condition     = toset(flatten([for s in data.aws_iam_policy_document.registry.statement : [for c in s.condition : c.variable if c.test == "Null" && toset(c.values) == toset(["false"])] if s.sid == "ExporterCredentials"])) == toset(["kms:EncryptionContext:exporter", "kms:EncryptionContext:destination"])
    error_message = "The API role may seal an exporter credential only under a context naming its exporter and destination."
  }
  assert {
    condition     = one([for s in data.aws_iam_policy_document.exporter[0].statement : s.actions if s.sid == "ExporterCredentials"]) == toset(["kms:Decrypt"])
    error_message = "The exporter role must open exporter credentials (kms:Decrypt) under their context."
  }

  # The fence item HOME / MARKER: an explicit deny of every write, in the document both functions'
  # roles merge (scripts/infra_check.py follows each role's document to its statements: the mocked
  # provider renders no JSON).
  assert {
    condition     = length([for s in data.aws_iam_policy_document.registry_items.statement : s if s.effect == "Deny" && length(setsubtract(["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"], s.actions)) == 0 && !contains(s.actions, "dynamodb:ConditionCheckItem") && length([for c in s.condition : c if c.test == "ForAnyValue:StringEquals" && c.variable == "dynamodb:LeadingKeys" && toset(c.values) == toset(["HOME"])]) == 1]) == 1
    error_message = "The roles' shared document must deny every write of the HOME partition (the fence marker), the ConditionCheck excepted."
  }
  assert {
    condition     = alltrue([for document in [data.aws_iam_policy_document.registry, data.aws_iam_policy_document.exporter[0]] : contains(document.source_policy_documents, data.aws_iam_policy_document.registry_items.json)])
    error_message = "The API and exporter roles must both merge the shared document with the HOME deny."
  }

  # The failure queue alarm counts messages sent, not the backlog nobody drains.
  assert {
    condition     = aws_cloudwatch_metric_alarm.registry["exporter-failures"].metric_name == "NumberOfMessagesSent" && aws_cloudwatch_metric_alarm.registry["exporter-failures"].statistic == "Sum"
    error_message = "The exporter failure alarm must fire on new messages (NumberOfMessagesSent), not on ApproximateNumberOfMessagesVisible."
  }

  # A stopped event source mapping raises an alarm: its own polled count, which it publishes.
  assert {
    condition     = aws_lambda_event_source_mapping.exporter[0].metrics_config[0].metrics == toset(["EventCount"])
    error_message = "The exporter's mapping must publish its event counts (metrics_config EventCount)."
  }
  assert {
    condition     = contains([for q in aws_cloudwatch_metric_alarm.registry["exporter-mapping-stopped"].metric_query : q.metric[0].metric_name if length(q.metric) > 0], "PolledEventCount")
    error_message = "An alarm must watch the exporter mapping's PolledEventCount."
  }
}

run "several_regions" {
  command = apply
  variables {
    regions = ["eu-west-1", "eu-central-1"]
  }

  assert {
    condition     = length([for s in data.aws_iam_policy_document.assume_s3.statement : s if length([for c in s.condition : c if c.variable == "aws:SourceAccount" && toset(c.values) == toset(["123456789012"])]) == 1]) == 1
    error_message = "The S3 replication role must be assumable only by S3 acting for this account (aws:SourceAccount)."
  }
  # The deny covers every replica the role reaches.
  assert {
    condition     = length(one([for s in data.aws_iam_policy_document.registry_items.statement : s.resources if s.sid == "HomeMarkerIsTheOperators"])) == 2
    error_message = "The HOME deny must name every region's replica."
  }
}

# The wait for ack_regions must end before the request's deadline (timeout less the 1 s margin).
run "ack_timeout_past_the_deadline_refused" {
  command = plan
  variables {
    regions         = ["eu-west-1", "eu-central-1"]
    ack_regions     = ["eu-central-1"]
    timeout_seconds = 10
    ack_timeout_ms  = 9000
  }
  expect_failures = [var.ack_timeout_ms]
}

run "ack_timeout_inside_the_deadline" {
  command = plan
  variables {
    regions         = ["eu-west-1", "eu-central-1"]
    ack_regions     = ["eu-central-1"]
    timeout_seconds = 10
    ack_timeout_ms  = 8999
  }
}

# Read regions behind CloudFront: the origin secret or origin access control would make their URLs
# refuse every client (CloudFront fronts the first region only).
run "several_regions_with_origin_secret_refused" {
  command = plan
  variables {
    regions                  = ["eu-west-1", "eu-central-1"]
    custom_domain            = "schemas.team.example.com"
    certificate_arn          = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
    cloudfront_origin_secret = "0123456789abcdef0123456789abcdef"
  }
  expect_failures = [var.regions]
}

run "several_regions_with_oac_refused" {
  command = plan
  variables {
    regions                          = ["eu-west-1", "eu-central-1"]
    custom_domain                    = "schemas.team.example.com"
    certificate_arn                  = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
    url_auth_type                    = "AWS_IAM"
    cloudfront_origin_access_control = true
    web_acl_arn                      = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/allow/00000000-0000-0000-0000-000000000000"
    auth_enabled                     = false
    allow_anonymous                  = true
  }
  expect_failures = [var.regions]
}

# A custom domain without secret or OAC still fronts the first region; the others serve on their
# own public URLs with the registry's auth.
run "several_regions_with_custom_domain_alone" {
  command = plan
  variables {
    regions         = ["eu-west-1", "eu-central-1"]
    custom_domain   = "schemas.team.example.com"
    certificate_arn = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
  }
}
