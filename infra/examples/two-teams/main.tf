# Two teams, two registries: separate tables, buckets, functions, URLs and alarms, so one
# team's churn or outage never reaches the other (no shared fate).
#
# Payments serves from two regions (docs/multi-region.md): each reads its local replica of the table
# and its own bucket, writes are committed in the home region (the first), and a failover is
# `registry failover --to <second_region>` (the functions follow it with no apply). To match it here
# later, set home_region = var.second_region and ack_regions = [] together: ack_regions may not
# name the home (docs/multi-region.md, "Terraform during and after a failover").
#
# "No shared fate" has two prerequisites this example cannot apply for you. Without them the two
# registries share the account's Lambda concurrency: one team's stampede (a Connect rebalance, a
# producer fleet restart) throttles the other's functions.
# 1. Raise the account's quota first (Service Quotas, "Lambda concurrent executions", in every
#    region used): to at least 100 plus the sum of every reservation. A new account's quota is often
#    10, and Lambda refuses a reservation that leaves fewer than 100 unreserved.
# 2. Then give each team reserved_concurrency on its module call (its most instances, e.g. 50):
#    each team then has its own share that the other cannot take, and the throttles alarm fires when
#    a team reaches its own.
# As written the example reserves nothing, so that it applies on a fresh account; the variable
# reserved_concurrency below is the per-team reservation once the quota is raised.
#
# One state for both teams keeps this example short; it is not what a real deployment should do:
# one `terraform apply` (and one state lock, one set of credentials) would then touch both teams'
# registries. Give each team its own root module and state (a directory or workspace per team,
# each with one module call and its own backend), and share only the alarm topic, by ARN.
terraform {
  # The module's floors (see its versions.tf).
  required_version = ">= 1.9.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.28.0"
    }
  }
}

provider "aws" {
  region = var.region
}

variable "region" {
  description = "AWS region for both registries (the home region of payments)."
  type        = string
  default     = "eu-west-1"
}

variable "second_region" {
  description = "The second region payments serves from (reads locally, writes committed in the home region)."
  type        = string
  default     = "eu-central-1"
}

variable "alarm_email" {
  description = "Where alarm notifications go (an email subscription to the topic, confirmed by the recipient). Empty: no subscription, and alarms notify no one."
  type        = string
  default     = ""
}

variable "reserved_concurrency" {
  description = "Per team: the most function instances each registry may run, reserved for it (null: none). Raise the account's Lambda concurrency quota first (see the top of this file)."
  type        = number
  default     = null
}

variable "lambda_zip_path" {
  description = "The bootstrap zip from `make package`."
  type        = string
  default     = "../../../target/lambda/registry-lambda/bootstrap.zip"
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

# Alarm notifications, encrypted with a key of our own: CloudWatch alarms cannot publish to a topic
# under the AWS-managed alias/aws/sns key (its policy cannot grant CloudWatch), so they would fire
# silently. This key's policy lets CloudWatch encrypt the messages it publishes.
resource "aws_kms_key" "registry_alarms" {
  description             = "schema-registry alarms topic"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.registry_alarms_key.json
}

data "aws_iam_policy_document" "registry_alarms_key" {
  # checkov:skip=CKV_AWS_111: this is a key policy: its resource "*" means this key only, and the account root must administer it.
  # checkov:skip=CKV_AWS_356: this is a key policy: its resource "*" means this key only.
  # checkov:skip=CKV_AWS_109: this is a key policy: the account root must keep control of the key, or it becomes unmanageable.
  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"] # a key policy's resource is always the key itself
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  statement {
    sid       = "CloudWatchAlarmsPublish"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
    resources = ["*"] # a key policy's resource is always the key itself
    principals {
      type        = "Service"
      identifiers = ["cloudwatch.amazonaws.com"]
    }
  }
}

resource "aws_sns_topic" "registry_alarms" {
  name              = "schema-registry-alarms"
  kms_master_key_id = aws_kms_key.registry_alarms.arn
}

# Without a subscription the topic delivers to no one: an alarm would fire silently.
resource "aws_sns_topic_subscription" "registry_alarms_email" {
  count     = var.alarm_email == "" ? 0 : 1
  topic_arn = aws_sns_topic.registry_alarms.arn
  protocol  = "email"
  endpoint  = var.alarm_email
}

# The second region's alarms (the payments function there, replication from there) notify a topic of
# that region: CloudWatch alarms publish only to topics in their own region.
resource "aws_kms_key" "registry_alarms_second" {
  region                  = var.second_region
  description             = "schema-registry alarms topic (${var.second_region})"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = data.aws_iam_policy_document.registry_alarms_key.json
}

resource "aws_sns_topic" "registry_alarms_second" {
  region            = var.second_region
  name              = "schema-registry-alarms"
  kms_master_key_id = aws_kms_key.registry_alarms_second.arn
}

resource "aws_sns_topic_subscription" "registry_alarms_second_email" {
  count     = var.alarm_email == "" ? 0 : 1
  region    = var.second_region
  topic_arn = aws_sns_topic.registry_alarms_second.arn
  protocol  = "email"
  endpoint  = var.alarm_email
}

output "alarm_topic_arn" {
  description = "Subscribe the on-call tool (PagerDuty, Opsgenie, chat) to this topic."
  value       = aws_sns_topic.registry_alarms.arn
}

module "payments" {
  source               = "../../modules/schema-registry"
  name                 = "payments"
  lambda_zip_path      = var.lambda_zip_path
  alarm_sns_topic_arn  = aws_sns_topic.registry_alarms.arn
  serve_alias          = true # a new deployment: the URL serves the alias "live", for rollbacks
  reserved_concurrency = var.reserved_concurrency
  tags                 = { team = "payments" }

  # Two regions: the first (the provider's) is home; the second reads locally. Registrations are
  # acknowledged once the second region's replica shows them (RPO 0), waiting at most 2 s.
  regions                     = [var.region, var.second_region]
  ack_regions                 = [var.second_region]
  ack_timeout_ms              = 2000
  region_alarm_sns_topic_arns = { (var.second_region) = aws_sns_topic.registry_alarms_second.arn }
}

module "logistics" {
  source                = "../../modules/schema-registry"
  name                  = "logistics"
  lambda_zip_path       = var.lambda_zip_path
  default_compatibility = "FULL_TRANSITIVE"
  alarm_sns_topic_arn   = aws_sns_topic.registry_alarms.arn
  serve_alias           = true
  reserved_concurrency  = var.reserved_concurrency
  tags                  = { team = "logistics" }
}

output "payments_registry_url" {
  value = module.payments.registry_url
}

# Per region: clients in each region use their region's URL.
output "payments_registry_urls" {
  value = module.payments.registry_urls
}

output "logistics_registry_url" {
  value = module.logistics.registry_url
}

# What the restore runbook (module README "Restoring the table") reads.
output "payments_table_name" {
  value = module.payments.table_name
}

output "payments_bucket_name" {
  value = module.payments.bucket_name
}

output "payments_kms_key_arn" {
  value = module.payments.kms_key_arn
}
