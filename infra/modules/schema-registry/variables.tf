variable "name" {
  description = "Registry name, usually the team's: prefixes every resource (lower-case letters, digits and dashes)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}[a-z0-9]$", var.name))
    error_message = "name must be 3-32 characters of lower-case letters, digits and dashes, starting with a letter."
  }
}

variable "lambda_zip_path" {
  description = "Path of the arm64 bootstrap zip built by `make package` (target/lambda/registry-lambda/bootstrap.zip)."
  type        = string
}

variable "memory_mb" {
  description = "Lambda memory in MB. 256 is plenty: nothing is loaded at start and caches are bounded."
  type        = number
  default     = 256
}

variable "timeout_seconds" {
  description = "Lambda timeout in seconds. Large lists stream, so this bounds the longest list a client can ask for."
  type        = number
  default     = 30
}

variable "reserved_concurrency" {
  description = "Reserved concurrency: the most instances this registry may run, so one team's stampede cannot starve the account."
  type        = number
  default     = 100
}

variable "default_compatibility" {
  description = "Compatibility level when neither subject nor global config sets one."
  type        = string
  default     = "BACKWARD"

  validation {
    condition     = contains(["NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE"], var.default_compatibility)
    error_message = "default_compatibility must be one of Confluent's seven levels, upper-case."
  }
}

variable "log_level" {
  description = "RUST_LOG filter for the function."
  type        = string
  default     = "info"
}

variable "log_retention_days" {
  description = "CloudWatch Logs retention."
  type        = number
  default     = 365
}

variable "xray_tracing" {
  description = "Turn on AWS X-Ray active tracing for the function."
  type        = bool
  default     = false
}

variable "url_auth_type" {
  description = "Function URL auth: NONE (the registry answers clients itself; Confluent clients cannot sign SigV4) or AWS_IAM (admin tooling only)."
  type        = string
  default     = "NONE"

  validation {
    condition     = contains(["NONE", "AWS_IAM"], var.url_auth_type)
    error_message = "url_auth_type must be NONE or AWS_IAM."
  }
}

variable "custom_domain" {
  description = "Optional custom domain (e.g. schemas.team-a.example.com) served by CloudFront in front of the Function URL. Empty: none."
  type        = string
  default     = ""
}

variable "certificate_arn" {
  description = "ACM certificate (us-east-1) for custom_domain. Required when custom_domain is set."
  type        = string
  default     = ""
}

variable "web_acl_arn" {
  description = "Optional WAFv2 web ACL (CLOUDFRONT scope) attached to the custom-domain distribution."
  type        = string
  default     = ""
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic that receives alarm notifications. Empty: alarms without actions."
  type        = string
  default     = ""
}

variable "alarm_5xx_per_5min" {
  description = "Alarm when the Function URL answers more than this many 5xx in 5 minutes."
  type        = number
  default     = 5
}

variable "alarm_duration_p99_ms" {
  description = "Alarm when the p99 duration over 5 minutes exceeds this (ms)."
  type        = number
  default     = 1000
}

variable "noncurrent_version_days" {
  description = "Days before non-current S3 object versions expire (bodies are immutable; this only trims overwrites)."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "auth_enabled" {
  description = "HTTP Basic authentication from a Secrets Manager users secret (created empty; see README \"Authentication\"). Turn off only behind another gate such as url_auth_type = \"AWS_IAM\"."
  type        = bool
  default     = true
}

variable "jwt_issuer" {
  description = "OIDC issuer (`iss`) of accepted bearer tokens. Empty: bearer tokens are not accepted."
  type        = string
  default     = ""
}

variable "jwt_audience" {
  description = "Required audience (`aud`) of bearer tokens; required with jwt_issuer."
  type        = string
  default     = ""

  validation {
    condition     = var.jwt_issuer == "" || var.jwt_audience != ""
    error_message = "jwt_audience is required when jwt_issuer is set."
  }
}

variable "jwks_json" {
  description = "The issuer's JWKS document (public keys, JSON text); required with jwt_issuer. The function never fetches it."
  type        = string
  default     = ""

  validation {
    condition     = var.jwt_issuer == "" || can(jsondecode(var.jwks_json).keys)
    error_message = "jwks_json must be a JWKS document ({\"keys\": [...]}) when jwt_issuer is set."
  }
}

variable "jwt_role_claim" {
  description = "Token claim holding registry:read / registry:write / registry:admin (and registry:prefix:<P>) values."
  type        = string
  default     = "scope"
}

variable "churn_max_per_hour" {
  description = "Churn guard: new versions per subject per rolling hour before the function warns and emits ChurnExceeded (REGISTRY_CHURN_MAX_PER_HOUR; counted per instance; 0 = off)."
  type        = number
  default     = 50

  validation {
    condition     = var.churn_max_per_hour >= 0 && floor(var.churn_max_per_hour) == var.churn_max_per_hour
    error_message = "churn_max_per_hour must be a non-negative integer."
  }
}

variable "churn_enforce" {
  description = "Churn guard: refuse new versions over churn_max_per_hour with 429 / error_code 42901 instead of only warning (REGISTRY_CHURN_ENFORCE)."
  type        = bool
  default     = false
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the function's embedded-metric-format (EMF) metrics (REGISTRY_METRICS_NAMESPACE)."
  type        = string
  default     = "SchemaRegistry"
}

variable "alarm_churn_per_hour" {
  description = "Alarm when more than this many registrations per hour (all instances, all subjects) were over the churn threshold (metric ChurnExceeded)."
  type        = number
  default     = 0
}

variable "alarm_id_growth_per_hour" {
  description = "Alarm when the highest schema ID (metric MaxSchemaId) grows by more than this many IDs in an hour: a producer registering a new schema per message burns the ID space."
  type        = number
  default     = 1000
}

variable "require_owner" {
  description = "Ownership policy: a new subject must carry this metadata property (e.g. \"owner\"). Empty: off."
  type        = string
  default     = ""
}

variable "usage_granularity_days" {
  description = "Period of the per-subject last-used marker read by `registry prune`: at most one DynamoDB write per subject per period per instance. 0 turns it off."
  type        = number
  default     = 1
}

variable "answer_memory_ms" {
  description = "How long (ms) an instance may answer lookups (POST /subjects/{s}) and an ID's existence from memory: deletes and config changes made through other instances show after at most this. 0 turns it off (every request reads DynamoDB)."
  type        = number
  default     = 5000

  validation {
    condition     = var.answer_memory_ms >= 0 && floor(var.answer_memory_ms) == var.answer_memory_ms
    error_message = "answer_memory_ms must be a whole number of milliseconds, 0 or more."
  }
}
