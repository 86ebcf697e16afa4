# The variants users pick, planned and applied by Terraform itself against a mocked AWS provider
# (no credentials, no network): the module must load, validate, plan and apply in each. Run by
# scripts/infra-check.sh (`terraform test` in this module's directory).

mock_provider "aws" {
  source = "./tests/aws"
}

variables {
  name = "team"
  # Any file: the mocked provider uploads nothing, but filebase64sha256 reads it.
  lambda_zip_path = "table.json"
}

run "defaults_one_region" {
  command = apply
}

# The exporter's policy document named its failure queue and log group, which exist only with the
# exporter: plan failed with exporter_enabled = false in every Terraform version.
run "exporters_off" {
  command = apply
  variables {
    exporter_enabled = false
  }
  assert {
    condition     = length(aws_lambda_function.exporter) == 0 && length(aws_iam_role_policy.exporter) == 0
    error_message = "exporter_enabled = false must create no exporter function or policy."
  }
}

run "one_region_listed" {
  command = apply
  variables {
    regions = ["eu-west-1"]
  }
}

# The first region is the provider's (the mocked eu-west-1); the second is home, the third acknowledges.
run "several_regions_home_and_ack" {
  command = apply
  variables {
    regions        = ["eu-west-1", "eu-central-1", "us-east-1"]
    home_region    = "eu-central-1"
    ack_regions    = ["us-east-1"]
    ack_timeout_ms = 2000
  }
  assert {
    condition     = length(aws_lambda_function.replica) == 2
    error_message = "Each region beyond the first must get its own function."
  }
}

# The origin secret is sensitive: a for_each that filters on it was refused at plan.
run "custom_domain_with_origin_secret" {
  command = apply
  variables {
    custom_domain            = "schemas.team.example.com"
    certificate_arn          = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
    cloudfront_origin_secret = "0123456789abcdef0123456789abcdef"
  }
  assert {
    condition     = length(aws_secretsmanager_secret_version.origin) == 1 && contains(keys(aws_secretsmanager_secret.auth), "origin")
    error_message = "The origin secret must be kept in its own secret."
  }
}

run "oac_with_waf" {
  command = apply
  variables {
    custom_domain                    = "schemas.team.example.com"
    certificate_arn                  = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
    url_auth_type                    = "AWS_IAM"
    cloudfront_origin_access_control = true
    web_acl_arn                      = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/allow/00000000-0000-0000-0000-000000000000"
    auth_enabled                     = false
    allow_anonymous                  = true
  }
  assert {
    condition     = length(aws_cloudfront_origin_access_control.registry) == 1
    error_message = "OAC must create the origin access control."
  }
}

run "jwt" {
  command = apply
  variables {
    jwt_issuer   = "https://issuer.example.com/"
    jwt_audience = "schema-registry"
    jwks_json    = "{\"keys\": []}"
  }
  assert {
    condition     = length(aws_secretsmanager_secret_version.jwks) == 1
    error_message = "The JWKS must be stored in its secret."
  }
}

# custom_domain with an IAM-authenticated URL and no origin access control: every request 403.
run "custom_domain_iam_without_oac_refused" {
  command = plan
  variables {
    custom_domain   = "schemas.team.example.com"
    certificate_arn = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
    url_auth_type   = "AWS_IAM"
    auth_enabled    = false
  }
  expect_failures = [aws_cloudfront_distribution.registry]
}
