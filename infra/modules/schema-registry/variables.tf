variable "name" {
  description = "Registry name, usually the team's: prefixes every resource (lower-case letters, digits and dashes). At most 20 characters: the bucket prefix schema-registry-<name>- may have 37 (S3's 63 less the 26 Terraform appends)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,18}[a-z0-9]$", var.name))
    error_message = "name must be 3-20 characters of lower-case letters, digits and dashes, starting with a letter and not ending with a dash."
  }
}

variable "table_name" {
  description = "Name of the DynamoDB table. Empty (default): schema-registry-<name>. Set it to adopt a table restored from a backup or a point in time (DynamoDB restores into a new name; README \"Restoring the table\")."
  type        = string
  default     = ""

  validation {
    condition     = var.table_name == "" || can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.table_name))
    error_message = "table_name must be empty or a DynamoDB table name: 3-255 letters, digits, '_', '-' and '.'."
  }
}

variable "lambda_zip_path" {
  description = "Path of the arm64 bootstrap zip built by `make package` (target/lambda/registry-lambda/bootstrap.zip)."
  type        = string
}

variable "memory_mb" {
  description = "Lambda memory in MB (128 to 10240). 256 is plenty: nothing is loaded at start and caches are bounded."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_mb >= 128 && var.memory_mb <= 10240 && floor(var.memory_mb) == var.memory_mb
    error_message = "memory_mb must be a whole number of MB from 128 to 10240 (Lambda's range)."
  }
}

variable "timeout_seconds" {
  description = "Lambda timeout in seconds (3 to 900). Each request answers 504 one second before it (REGISTRY_DEADLINE_MARGIN_MS; half the time left when under two seconds remain), so a slow request is answered and logged instead of killed. Large lists stream, so this bounds the longest list a client can ask for. With custom_domain, CloudFront waits at most 60 s for the first byte."
  type        = number
  default     = 30

  validation {
    condition     = var.timeout_seconds >= 3 && var.timeout_seconds <= 900 && floor(var.timeout_seconds) == var.timeout_seconds
    error_message = "timeout_seconds must be a whole number of seconds from 3 (the registry answers 504 one second before the deadline) to 900 (Lambda's limit)."
  }
}

variable "serve_alias" {
  description = "Serve the Function URL from the alias \"live\" (a published version) instead of $LATEST, so a bad deployment is rolled back by pointing the alias at the previous version (function_version). Changing it gives the URL a new address (a Function URL's qualifier cannot change): clients that use the Function URL directly, not a custom_domain, must be given the new registry_url. Recommended for new deployments; false keeps an existing URL."
  type        = bool
  default     = false
}

variable "function_version" {
  description = "With serve_alias: the published version (a number, see `aws lambda list-versions-by-function`) the alias \"live\" points to. Empty (default): the version this apply published. Set it to an earlier number to roll back without touching anything else; empty it again to roll forward."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^[0-9]*$", var.function_version))
    error_message = "function_version must be empty or a published version number."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrency: the most instances this registry may run, so one team's stampede cannot starve the account. null (default): none reserved, because reserving fails on accounts whose concurrency quota cannot keep 100 unreserved besides it (new accounts often have 10)."
  type        = number
  default     = null

  validation {
    condition     = var.reserved_concurrency == null ? true : var.reserved_concurrency >= 1 && floor(var.reserved_concurrency) == var.reserved_concurrency
    error_message = "reserved_concurrency must be null (none reserved) or a whole number of at least 1 (0 would refuse every request)."
  }
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
  description = "CloudWatch Logs retention in days. 365 keeps a year of who registered and deleted what (each request's log line names operation, subject, status and caller's request id); at about 1 KB per request that is about $0.05 of storage per million requests (README \"What it costs\")."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of CloudWatch Logs' retention periods (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)."
  }
}

variable "xray_tracing" {
  description = "Turn on AWS X-Ray active tracing for the function."
  type        = bool
  default     = false
}

variable "url_auth_type" {
  description = "Function URL auth: NONE (public URL; the registry authenticates clients itself, since Confluent clients cannot sign SigV4) or AWS_IAM (callers sign with SigV4, or CloudFront does with cloudfront_origin_access_control)."
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
  description = "ACM certificate (us-east-1, as CloudFront requires) for custom_domain. Required when custom_domain is set."
  type        = string
  default     = ""

  validation {
    condition     = var.custom_domain == "" || can(regex("^arn:aws[a-z-]*:acm:us-east-1:[0-9]{12}:certificate/", var.certificate_arn))
    error_message = "custom_domain needs certificate_arn: an ACM certificate ARN in us-east-1 (CloudFront only uses certificates from there)."
  }
}

variable "web_acl_arn" {
  description = "Optional WAFv2 web ACL (CLOUDFRONT scope) attached to the custom-domain distribution. With url_auth_type = \"NONE\" it is bypassed by calling the Function URL directly (see README \"Access\"). Required with cloudfront_origin_access_control, where it is the only gate."
  type        = string
  default     = ""

  # The combination that leaves the registry open (README "Access"). It sits here because no other
  # variable's validation refers to web_acl_arn, so no validations refer to each other in a cycle.
  # (custom_domain with url_auth_type = "AWS_IAM" but no origin access control does not refer to
  # web_acl_arn, which a validation must: it is a precondition of the distribution, domain.tf.)
  validation {
    condition     = !var.cloudfront_origin_access_control || can(regex("^arn:aws[a-z-]*:wafv2:us-east-1:[0-9]{12}:global/webacl/", var.web_acl_arn))
    error_message = "cloudfront_origin_access_control turns the registry's own auth off (CloudFront's signature replaces Authorization): anyone who reaches the domain may read, write and delete. Set web_acl_arn to a CLOUDFRONT-scope WAFv2 web ACL (us-east-1, e.g. an IP allow list) that decides who may."
  }
}

variable "cloudfront_origin_access_control" {
  description = "CloudFront signs every request to the Function URL (origin access control), so the URL answers only the distribution and the WAF cannot be bypassed. Needs custom_domain, url_auth_type = \"AWS_IAM\", a web_acl_arn (the only gate left) and the registry's own auth off with allow_anonymous = true (CloudFront's signature replaces the client's Authorization header). POST and PUT then need x-amz-content-sha256, which stock Confluent clients do not send: registrations and lookups fail (see README \"Access\")."
  type        = bool
  default     = false

  validation {
    # allow_anonymous = true is required by allow_anonymous's own validation (validations must not refer to each other in a cycle).
    condition     = !var.cloudfront_origin_access_control || (var.custom_domain != "" && var.url_auth_type == "AWS_IAM" && !var.auth_enabled && var.jwt_issuer == "")
    error_message = "cloudfront_origin_access_control needs custom_domain, url_auth_type = \"AWS_IAM\", auth_enabled = false and no jwt_issuer (plus allow_anonymous = true): CloudFront's SigV4 signature replaces the client's Authorization header."
  }
}

variable "cloudfront_origin_secret" {
  description = "With custom_domain and a public URL (url_auth_type = \"NONE\"): a secret value (at least 32 characters, e.g. `openssl rand -hex 32`) that CloudFront sends in the x-registry-origin header of every request; the function answers 403 to any request without it (REGISTRY_ORIGIN_SECRET), so the URL cannot be called around the distribution and its WAF, while the registry's own auth stays on and stock producers can POST. It is kept in a Secrets Manager secret and, as part of the distribution's configuration, in the Terraform state. Empty: no origin header."
  type        = string
  default     = ""
  sensitive   = true

  validation {
    condition     = var.cloudfront_origin_secret == "" || (length(var.cloudfront_origin_secret) >= 32 && can(regex("^[!-~]+$", var.cloudfront_origin_secret)) && var.custom_domain != "" && var.url_auth_type == "NONE" && !var.cloudfront_origin_access_control)
    error_message = "cloudfront_origin_secret needs custom_domain, url_auth_type = \"NONE\" and no origin access control, and must be at least 32 printable characters without spaces."
  }
}

variable "cloudfront_origin_secret_previous" {
  description = "During a rotation of cloudfront_origin_secret: the old value, still accepted by the function until every CloudFront edge sends the new one (minutes after the apply). Empty it in a second apply."
  type        = string
  default     = ""
  sensitive   = true
}

variable "edge_cache_ids" {
  description = "With a custom domain and the registry's auth off: CloudFront caches the immutable /schemas/ids/* and /schemas/guids/* answers as their Cache-Control allows (Accept and the query string in the cache key). With auth on nothing is cached at the edge (see README \"Caching at the edge\")."
  type        = bool
  default     = true
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

variable "alarm_errors_per_5min" {
  description = "Alarm when the function fails more than this many invocations in 5 minutes (Errors: crashes, timeouts, streamed answers cut after their 200, which Url5xxCount does not count)."
  type        = number
  default     = 0
}

variable "alarm_4xx_per_5min" {
  description = "Alarm when the Function URL answers more than this many 4xx in 5 minutes (a burst of 401s after a credential change, a producer retrying a refused schema)."
  type        = number
  default     = 500
}

variable "alarm_concurrent_executions" {
  description = "Alarm when more instances than this run at once (ConcurrentExecutions, maximum per minute). Ignored with reserved_concurrency, where the alarm is at 80% of the reservation."
  type        = number
  default     = 50
}

variable "alarm_duration_p99_ms" {
  description = "Alarm when the p99 duration over 5 minutes exceeds this (ms)."
  type        = number
  default     = 1000
}

variable "noncurrent_version_days" {
  description = "Days before non-current versions under schemas/ expire (bodies are write-once, so there are none but delete markers). The ID ledger's (ids/) versions never expire: they are its audit trail."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "auth_enabled" {
  description = "HTTP Basic authentication from a Secrets Manager users secret (created empty; see README \"Authentication\"). Turning the registry's auth off while its URL is public needs allow_anonymous = true."
  type        = bool
  default     = true
}

variable "allow_anonymous" {
  description = "The explicit choice of a registry that anyone who can reach it may use, read and write: required when the registry's own auth is off (auth_enabled = false, no jwt_issuer) and the Function URL is public (url_auth_type = \"NONE\") or fronted by CloudFront with origin access control."
  type        = bool
  default     = false

  validation {
    condition     = var.allow_anonymous || var.auth_enabled || var.jwt_issuer != "" || (var.url_auth_type == "AWS_IAM" && !var.cloudfront_origin_access_control)
    error_message = "The registry's auth is off (auth_enabled = false, no jwt_issuer) and its URL is reachable without credentials: set allow_anonymous = true to choose an open registry, or keep auth on, or use url_auth_type = \"AWS_IAM\"."
  }
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
  description = "The issuer's JWKS document (public keys, JSON text); required with jwt_issuer. Stored in a Secrets Manager secret the function reads at init and every auth_reload_seconds (REGISTRY_JWKS_SECRET), not in its environment, whose 4 KB limit a JWKS with a few RSA keys exceeds. The function never fetches it from the issuer."
  type        = string
  default     = ""

  validation {
    condition     = var.jwt_issuer == "" || can(jsondecode(var.jwks_json).keys)
    error_message = "jwks_json must be a JWKS document ({\"keys\": [...]}) when jwt_issuer is set."
  }
}

variable "auth_reload_seconds" {
  description = "Seconds after which a running instance reads the users secret and the JWKS secret again (REGISTRY_AUTH_RELOAD_SECONDS): the longest a removed user, a changed password or a key rotated out keeps working on warm instances. Each serving instance calls GetSecretValue at most once per secret per interval. 0: read once at init (revocation then needs a new deployment)."
  type        = number
  default     = 60

  validation {
    condition     = var.auth_reload_seconds >= 0 && var.auth_reload_seconds <= 3600 && floor(var.auth_reload_seconds) == var.auth_reload_seconds
    error_message = "auth_reload_seconds must be a whole number of seconds from 0 to 3600."
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

variable "incompatible_error_code" {
  description = "error_code of an incompatible-schema answer (HTTP 409 either way): 40901 as Confluent 8.0.4+/8.1.2+/8.2+, or 409 as earlier releases (REGISTRY_INCOMPATIBLE_ERROR_CODE)."
  type        = number
  default     = 40901
  validation {
    condition     = contains([40901, 409], var.incompatible_error_code)
    error_message = "incompatible_error_code must be 40901 or 409."
  }
}

variable "protobuf_package_change_compatible" {
  description = "Protobuf compatibility: a package change passes, as in Confluent Platform 7.x before 2024; false (default) reports it incompatible (PACKAGE_CHANGED) as Confluent 7.6+ and 8.x (REGISTRY_PROTOBUF_PACKAGE_CHANGE_COMPATIBLE)."
  type        = bool
  default     = false
}

variable "reference_versions_strict" {
  description = "Refuse (42201) a schema whose references bind one reference name at two versions, as Confluent's schema.providers.reference.versions.strict; false (default): the first binding wins (REGISTRY_REFERENCE_VERSIONS_STRICT)."
  type        = bool
  default     = false
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
  description = "How long (ms) an instance may answer lookups (POST /subjects/{s}) and an ID's or guid's existence from memory: deletes and config changes made through other instances show after at most this. 0 turns it off (every request reads DynamoDB)."
  type        = number
  default     = 5000

  validation {
    condition     = var.answer_memory_ms >= 0 && floor(var.answer_memory_ms) == var.answer_memory_ms
    error_message = "answer_memory_ms must be a whole number of milliseconds, 0 or more."
  }
}

variable "cache_bytes" {
  description = "Bound of each instance's cache of immutable data (schema bodies by ID), in bytes (REGISTRY_CACHE_BYTES). Keep it well under memory_mb."
  type        = number
  default     = 33554432

  validation {
    condition     = var.cache_bytes >= 0 && floor(var.cache_bytes) == var.cache_bytes && var.cache_bytes <= var.memory_mb * 1048576 / 2
    error_message = "cache_bytes must be a whole number of bytes from 0 to half of memory_mb (the rest holds requests, answers and the runtime)."
  }
}

variable "id_cache_control" {
  description = "Cache-Control of the by-ID answers (REGISTRY_ID_CACHE_CONTROL). null: the function's default (public, max-age=0, must-revalidate: shared caches revalidate each use, so a hard delete or an IMPORT rebinding a freed ID shows at once); a positive max-age lets them serve an ID's old answer that long; \"\" sends none."
  type        = string
  default     = null
}

variable "kms_key_arns" {
  description = "ARNs of the AWS KMS keys that shared aws-kms KEKs (field-level encryption) may name. The function's role gets kms:Encrypt and kms:Decrypt on exactly these keys, and the registry refuses any other key before calling KMS (REGISTRY_KMS_KEY_ARNS). Key ARNs, not aliases: IAM grants on keys, and a KEK naming an alias would be refused. Empty (default): no KMS permission for KEKs at all, and REGISTRY_KMS_KEY_ARNS = \"none\"."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.kms_key_arns : can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", arn))])
    error_message = "kms_key_arns must be key ARNs (arn:aws:kms:<region>:<account>:key/<id>), not alias ARNs or key IDs: IAM grants on keys, and the registry compares the KEK's kmsKeyId with this list."
  }
}

variable "exporter_enabled" {
  description = "Schema linking: the table's change stream (NEW_AND_OLD_IMAGES) drives an exporter function that copies the subjects of every exporter (POST /exporters) to its destination registry, with a scheduled catch-up run, a failure queue and alarms (exporter.tf). false: no stream, no exporter function; exporters can be configured but export nothing."
  type        = bool
  default     = true
}

variable "exporter_batch_size" {
  description = "Stream records per exporter invocation (1 to 1000): the handler coalesces a batch's records per subject, and each change costs a few requests to the destination within the function's 300 s."
  type        = number
  default     = 100

  validation {
    condition     = var.exporter_batch_size >= 1 && var.exporter_batch_size <= 1000 && floor(var.exporter_batch_size) == var.exporter_batch_size
    error_message = "exporter_batch_size must be a whole number from 1 to 1000."
  }
}

variable "exporter_catch_up_minutes" {
  description = "Minutes between scheduled catch-up runs, which bring every exporter level from the table after a reset, a resume after a pause longer than the stream's 24 hours, or a batch that exhausted its retries (5 to 1440)."
  type        = number
  default     = 15

  validation {
    condition     = var.exporter_catch_up_minutes >= 5 && var.exporter_catch_up_minutes <= 1440 && floor(var.exporter_catch_up_minutes) == var.exporter_catch_up_minutes
    error_message = "exporter_catch_up_minutes must be a whole number of minutes from 5 to 1440."
  }
}

variable "alarm_exporter_iterator_age_seconds" {
  description = "Alarm when exports lag the table by more than this (the exporter function's IteratorAge). Under the stream's 24 hours, so there is time to act before records leave it."
  type        = number
  default     = 3600

  validation {
    condition     = var.alarm_exporter_iterator_age_seconds >= 60 && var.alarm_exporter_iterator_age_seconds < 86400
    error_message = "alarm_exporter_iterator_age_seconds must be from 60 to under 86400 (the stream keeps records 24 hours)."
  }
}

variable "regions" {
  description = "Regions the registry serves from (docs/multi-region.md). Each gets a replica of the table (a DynamoDB global table, multi-Region eventual consistency), its own bucket (S3 replication both ways), a function and a Function URL; reads are answered from the region's replica, every write is committed in home_region. The first must be the AWS provider's region: the table, bucket and function the module always created stay there, under the same addresses, so adding regions to an existing registry destroys nothing. Empty (default) or a single region: today's single-region registry, nothing replicated."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for region in var.regions : can(regex("^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$", region))]) && length(distinct(var.regions)) == length(var.regions)
    error_message = "regions must be distinct AWS region names (e.g. [\"ap-south-1\", \"ap-southeast-1\"])."
  }

  # CloudFront fronts the first region's URL only. With an origin secret every function (the read
  # regions' too) refuses requests without the header, and with origin access control only the
  # distribution may call a URL: either way the read regions' URLs would answer no client.
  validation {
    condition     = length(var.regions) <= 1 || (nonsensitive(var.cloudfront_origin_secret == "") && !var.cloudfront_origin_access_control)
    error_message = "Several regions cannot be combined with cloudfront_origin_secret or cloudfront_origin_access_control: CloudFront fronts the first region only, and the other regions' URLs would refuse every client. Use the registry's own auth on public URLs (each region's URL in registry_urls), or one region."
  }
}

variable "home_region" {
  description = "The region that commits every write (the ID counter, versions, config, mode, deletes, DEKs): one of regions. Empty (default): the first of regions. With follow_home_marker (default) the functions follow `registry failover` on their own, and this is the home a new registry starts with (while no failover has written the home marker) and what the configuration documents: set it to the new home after a failover. Without, changing it is the Terraform half of a failover (docs/multi-region.md \"Failover and failback runbook\"): every function is pointed at the new home and the role may write only there."
  type        = string
  default     = ""

  validation {
    condition     = var.home_region == "" || contains(var.regions, var.home_region)
    error_message = "home_region must be empty (the first of regions) or one of regions."
  }
}

variable "ack_regions" {
  description = "RPO 0 on request: read regions whose replica must show a write (a registration's items and its body in their bucket; a delete, a config or mode change, a KEK or DEK write) before the home region acknowledges it (REGISTRY_ACK_REGIONS), waiting at most ack_timeout_ms. Empty (default): a write is acknowledged once committed in the home region, and a loss of the home region can take the writes of the last replication lag (ReplicationLatency) with it."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for region in var.ack_regions : contains(var.regions, region) && region != (var.home_region != "" ? var.home_region : (length(var.regions) > 0 ? var.regions[0] : ""))])
    error_message = "ack_regions must be regions other than the home region."
  }
}

variable "ack_timeout_ms" {
  description = "The longest a write waits for the ack_regions' replicas and, through a read region, for that region's own replica (read-your-writes) (REGISTRY_ACK_TIMEOUT_MS); past it the client gets a retryable error (the write is committed at home; sending it again is safe, see docs/multi-region.md). Keep it under timeout_seconds."
  type        = number
  default     = 2000

  validation {
    condition     = var.ack_timeout_ms >= 100 && var.ack_timeout_ms <= 60000 && floor(var.ack_timeout_ms) == var.ack_timeout_ms
    error_message = "ack_timeout_ms must be a whole number of milliseconds from 100 to 60000."
  }

  # A wait that outlasts the request's deadline (the timeout less the 1 s margin in which the
  # function answers 504, REGISTRY_DEADLINE_MARGIN_MS) would turn every slow acknowledgement into a
  # 504 instead of the retryable 50002 the wait exists to give.
  validation {
    condition     = var.ack_timeout_ms < var.timeout_seconds * 1000 - 1000
    error_message = "ack_timeout_ms must be below timeout_seconds less the function's 1 s deadline margin (timeout_seconds * 1000 - 1000)."
  }
}

variable "follow_home_marker" {
  description = "With several regions: every function follows the home marker (REGISTRY_REGION_BUCKETS): after `registry failover --to R` its writes go to R as soon as its replica shows the marker, within home_marker_ttl_ms, with no apply; home_region is then where the registry starts and what the configuration documents. For that the role may write every region's replica and bucket, and the fence (the marker's check in every write) is what keeps a non-home region from committing. False: the home is fixed by home_region and the role may write only there; a failover needs an apply of home_region in every region."
  type        = bool
  default     = true
}

variable "home_marker_ttl_ms" {
  description = "With follow_home_marker: how long a function instance trusts the home marker it last read (REGISTRY_HOME_MARKER_TTL_MS; one strongly consistent GetItem of its replica per period). A failover reaches a region's writes within the marker's replication plus this."
  type        = number
  default     = 5000

  validation {
    condition     = var.home_marker_ttl_ms >= 100 && var.home_marker_ttl_ms <= 60000 && floor(var.home_marker_ttl_ms) == var.home_marker_ttl_ms
    error_message = "home_marker_ttl_ms must be a whole number of milliseconds from 100 to 60000."
  }
}

variable "alarm_replication_latency_ms" {
  description = "With several regions: alarm when DynamoDB's ReplicationLatency from one region's replica to another stays above this (ms, maximum per minute, 5 minutes in a row). Replication usually takes under a second; what it takes is the window of acknowledged writes a regional loss can take (without ack_regions) and how long a read region answers from the home region instead of its replica."
  type        = number
  default     = 30000
}

variable "alarm_home_fallbacks_per_5min" {
  description = "With several regions: alarm when a read region's function answered more than this many reads from the home region in 5 minutes (HomeFallbacks: its replica missed an ID, body or subject the home had committed). A few follow every registration within the replication lag; many mean replication has stopped, which ReplicationLatency cannot show (a stopped replication sends no data points)."
  type        = number
  default     = 300
}

variable "alarm_s3_replication_latency_seconds" {
  description = "With several regions: alarm when S3's ReplicationLatency of a replication rule (bodies and ID ledger, one region's bucket to another's) stays above this (seconds, maximum over 5 minutes, 3 periods in a row). Until a body arrives, the read region reads it from the home bucket."
  type        = number
  default     = 900
}

variable "region_alarm_sns_topic_arns" {
  description = "With several regions: an SNS topic per region other than the first, for the alarms that live there (CloudWatch alarms notify topics of their own region only): the function's errors and 5xx in that region and the replication from it. A region missing here gets alarms without actions. The first region's alarms use alarm_sns_topic_arn."
  type        = map(string)
  default     = {}
}
