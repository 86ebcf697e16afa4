# The example as an operator applies it, planned and applied by Terraform itself against a mocked
# AWS provider (the module's mocks). Run by scripts/infra-check.sh (`terraform test` here).

mock_provider "aws" {
  source = "../../modules/schema-registry/tests/aws"
}

variables {
  # Any file: the mocked provider uploads nothing, but filebase64sha256 reads it.
  lambda_zip_path = "../../modules/schema-registry/table.json"
}

# Payments in two regions with an acknowledging region, logistics in one (the `||` of the table's
# precondition failed plan for it before Terraform 1.12), both with their exporters.
run "as_written" {
  command = apply
  assert {
    condition     = length(module.payments.registry_urls) == 2 && length(module.logistics.registry_urls) == 1
    error_message = "Payments must serve from two regions, logistics from one."
  }
  assert {
    condition     = module.payments.table_name != module.logistics.table_name && module.payments.bucket_name != module.logistics.bucket_name
    error_message = "No shared fate: each team its own table and bucket."
  }
}

run "with_alarm_email" {
  command = apply
  variables {
    alarm_email = "oncall@example.com"
  }
  assert {
    condition     = length(aws_sns_topic_subscription.registry_alarms_email) == 1 && length(aws_sns_topic_subscription.registry_alarms_second_email) == 1
    error_message = "An alarm email must be subscribed to both regions' topics."
  }
}

# No shared fate once the quota is raised: each team its own reservation, passed to its module
# and applied.
run "per_team_reserved_concurrency" {
  command = apply
  variables {
    reserved_concurrency = 50
  }
}
