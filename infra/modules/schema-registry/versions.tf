terraform {
  # 1.9: variable validations that refer to other variables (allow_anonymous, certificate_arn,
  # jwt_audience, jwks_json, cloudfront_origin_access_control, regions, ack_timeout_ms).
  # scripts/infra_check.py checks that this floor matches the features the module uses, and that no
  # expression relies on `||`/`&&` short-circuiting, which Terraform does only from 1.12.
  # scripts/infra-check.sh loads, plans and applies (mocked) the module with the Terraform of the
  # build machines (1.11.4): the floor must stay at or below it.
  required_version = ">= 1.9.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 6.28: aws_lambda_permission.invoked_via_function_url, the lambda:InvokeFunction statement a
      # Function URL needs since October 2025. (Several regions, regions.tf, also need the
      # per-resource region argument of 6.0, replica consistency_mode of 6.3 and replica
      # deletion_protection_enabled of 6.9.) Where only 5.x is at hand, the checks run on the copy
      # scripts/tf-provider-compat.py makes from the reviewed list scripts/tf-provider-compat.txt.
      version = ">= 6.28.0"
    }
  }
}
