# Optional custom domain: CloudFront in front of the Function URL, terminating TLS on the team's
# own name (DNS stays with the caller: output cloudfront_domain).
#
# Caching (README "Caching at the edge"): only the immutable answers under /schemas/ids/* and
# /schemas/guids/*, only when the registry's own auth is off, and only as long as the registry's
# Cache-Control allows (default TTL 0: an answer without Cache-Control, or with no-store or private,
# is never kept). With auth on every request reaches the function: the registry marks its answers
# private then, and a cache keyed on Authorization would keep serving a revoked credential.
locals {
  custom_domain         = var.custom_domain != ""
  origin_access_control = local.custom_domain && var.cloudfront_origin_access_control
  # CloudFront adds the origin header; the function refuses requests without it (auth_origin.rs).
  # Whether a secret is set is not the secret: nonsensitive() lets it decide for_each (auth.tf),
  # which Terraform refuses on sensitive values.
  origin_secret  = local.custom_domain && nonsensitive(var.cloudfront_origin_secret != "")
  edge_cache_ids = local.custom_domain && var.edge_cache_ids && !local.registry_auth
  url_host       = trimsuffix(trimprefix(aws_lambda_function_url.registry.function_url, "https://"), "/")
  # Answers that never change for a given path, query and Accept header.
  immutable_paths = ["/schemas/ids/*", "/schemas/guids/*"]
}

data "aws_cloudfront_cache_policy" "disabled" {
  count = local.custom_domain ? 1 : 0
  name  = "Managed-CachingDisabled"
}

# Forwards the client's headers, Authorization included (CloudFront forwards it through an origin
# request policy only where caching is disabled, which is every path when auth is on).
data "aws_cloudfront_origin_request_policy" "all_but_host" {
  count = local.custom_domain ? 1 : 0
  name  = "Managed-AllViewerExceptHostHeader"
}

resource "aws_cloudfront_cache_policy" "immutable" {
  count   = local.edge_cache_ids ? 1 : 0
  name    = "${local.prefix}-immutable"
  comment = "${local.prefix}: schema-by-ID answers, as long as their Cache-Control allows"
  min_ttl = 0
  # No Cache-Control from the registry: not cached.
  default_ttl = 0
  max_ttl     = 31536000

  parameters_in_cache_key_and_forwarded_to_origin {
    # The answer's media type follows Accept; format, subject and fetchMaxId are query parameters.
    headers_config {
      header_behavior = "whitelist"
      headers {
        items = ["Accept"]
      }
    }
    query_strings_config {
      query_string_behavior = "all"
    }
    cookies_config {
      cookie_behavior = "none"
    }
    enable_accept_encoding_gzip   = true
    enable_accept_encoding_brotli = true
  }
}

# With origin access control CloudFront signs every origin request (SigV4), so the Function URL
# (auth type AWS_IAM) answers this distribution only and its WAF cannot be bypassed. The function's
# policy lets CloudFront call the URL (lambda.tf, local.url_callers).
resource "aws_cloudfront_origin_access_control" "registry" {
  count                             = local.origin_access_control ? 1 : 0
  name                              = local.prefix
  description                       = "${local.prefix}: CloudFront signs requests to the Function URL"
  origin_access_control_origin_type = "lambda"
  signing_behavior                  = "always"
  signing_protocol                  = "sigv4"
}

resource "aws_cloudfront_distribution" "registry" {
  # checkov:skip=CKV_AWS_305: an API, not a website: GET / is answered by the registry itself.
  # checkov:skip=CKV_AWS_86: access logs need a log bucket the caller owns; Lambda logs already record every request.
  # checkov:skip=CKV_AWS_310: one origin (the Function URL); failover has nowhere to go.
  # checkov:skip=CKV_AWS_374: a registry serves clients worldwide; geo restriction is the caller's policy.
  # checkov:skip=CKV2_AWS_47: the Log4j rule set targets Java origins; attach any WAF via var.web_acl_arn.
  # checkov:skip=CKV2_AWS_32: response headers policies are for browsers; registry clients are programs.
  # checkov:skip=CKV_AWS_68: WAF is optional through var.web_acl_arn.
  # checkov:skip=CKV2_AWS_42: a custom certificate is used whenever a custom domain is (this resource exists only then).
  count           = local.custom_domain ? 1 : 0
  enabled         = true
  comment         = "${local.prefix}: ${var.custom_domain}"
  aliases         = [var.custom_domain]
  web_acl_id      = var.web_acl_arn == "" ? null : var.web_acl_arn
  is_ipv6_enabled = true
  price_class     = "PriceClass_100"

  origin {
    origin_id                = "function-url"
    domain_name              = local.url_host
    origin_access_control_id = local.origin_access_control ? aws_cloudfront_origin_access_control.registry[0].id : null
    dynamic "custom_header" {
      for_each = local.origin_secret ? [var.cloudfront_origin_secret] : []
      content {
        name  = "x-registry-origin"
        value = custom_header.value
      }
    }
    custom_origin_config {
      http_port              = 80
      https_port             = 443
      origin_protocol_policy = "https-only"
      origin_ssl_protocols   = ["TLSv1.2"]
      origin_read_timeout    = 60
    }
  }

  # Everything mutable (subjects, versions, lookups, config, mode, registrations): never cached.
  default_cache_behavior {
    target_origin_id         = "function-url"
    viewer_protocol_policy   = "https-only"
    allowed_methods          = ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"]
    cached_methods           = ["GET", "HEAD"]
    cache_policy_id          = data.aws_cloudfront_cache_policy.disabled[0].id
    origin_request_policy_id = data.aws_cloudfront_origin_request_policy.all_but_host[0].id
    compress                 = true
  }

  dynamic "ordered_cache_behavior" {
    for_each = local.edge_cache_ids ? local.immutable_paths : []
    content {
      path_pattern             = ordered_cache_behavior.value
      target_origin_id         = "function-url"
      viewer_protocol_policy   = "https-only"
      allowed_methods          = ["GET", "HEAD", "OPTIONS"]
      cached_methods           = ["GET", "HEAD"]
      cache_policy_id          = aws_cloudfront_cache_policy.immutable[0].id
      origin_request_policy_id = data.aws_cloudfront_origin_request_policy.all_but_host[0].id
      compress                 = true
    }
  }

  # A 404 (an ID not registered yet) or a 5xx must not stick at the edge past what the registry says.
  dynamic "custom_error_response" {
    for_each = [404, 500, 502, 503, 504]
    content {
      error_code            = custom_error_response.value
      error_caching_min_ttl = 0
    }
  }

  restrictions {
    geo_restriction {
      restriction_type = "none"
    }
  }

  viewer_certificate {
    acm_certificate_arn      = var.certificate_arn
    ssl_support_method       = "sni-only"
    minimum_protocol_version = "TLSv1.2_2021"
  }

  tags = local.tags

  lifecycle {
    precondition {
      condition     = !(var.url_auth_type == "AWS_IAM" && !var.cloudfront_origin_access_control)
      error_message = "custom_domain with url_auth_type = \"AWS_IAM\" needs cloudfront_origin_access_control = true: CloudFront does not sign its requests otherwise, and the Function URL answers every one with 403."
    }
  }
}
