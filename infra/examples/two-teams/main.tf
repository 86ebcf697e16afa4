# Two teams, two registries: separate tables, buckets, functions, URLs and alarms, so one
# team's churn or outage never reaches the other (no shared fate).
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.50.0"
    }
  }
}

provider "aws" {
  region = var.region
}

variable "region" {
  description = "AWS region for both registries."
  type        = string
  default     = "eu-west-1"
}

variable "lambda_zip_path" {
  description = "The bootstrap zip from `make package`."
  type        = string
  default     = "../../../target/lambda/registry-lambda/bootstrap.zip"
}

resource "aws_sns_topic" "registry_alarms" {
  name              = "schema-registry-alarms"
  kms_master_key_id = "alias/aws/sns"
}

module "payments" {
  source              = "../../modules/schema-registry"
  name                = "payments"
  lambda_zip_path     = var.lambda_zip_path
  alarm_sns_topic_arn = aws_sns_topic.registry_alarms.arn
  tags                = { team = "payments" }
}

module "logistics" {
  source                = "../../modules/schema-registry"
  name                  = "logistics"
  lambda_zip_path       = var.lambda_zip_path
  default_compatibility = "FULL_TRANSITIVE"
  reserved_concurrency  = 50
  alarm_sns_topic_arn   = aws_sns_topic.registry_alarms.arn
  tags                  = { team = "logistics" }
}

output "payments_registry_url" {
  value = module.payments.registry_url
}

output "logistics_registry_url" {
  value = module.logistics.registry_url
}
