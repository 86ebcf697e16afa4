# Optional custom domain: CloudFront in front of the Function URL. Nothing is cached (every
# answer is forwarded), because mutable answers must never be stale; CloudFront only terminates
# TLS on the team's own name. DNS for the name stays with the caller (output cloudfront_domain).
locals {
  custom_domain = var.custom_domain != ""
  url_host      = trimsuffix(trimprefix(aws_lambda_function_url.registry.function_url, "https://"), "/")
}

data "aws_cloudfront_cache_policy" "disabled" {
  count = local.custom_domain ? 1 : 0
  name  = "Managed-CachingDisabled"
}

data "aws_cloudfront_origin_request_policy" "all_but_host" {
  count = local.custom_domain ? 1 : 0
  name  = "Managed-AllViewerExceptHostHeader"
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
    origin_id   = "function-url"
    domain_name = local.url_host
    custom_origin_config {
      http_port              = 80
      https_port             = 443
      origin_protocol_policy = "https-only"
      origin_ssl_protocols   = ["TLSv1.2"]
      origin_read_timeout    = 60
    }
  }

  default_cache_behavior {
    target_origin_id         = "function-url"
    viewer_protocol_policy   = "https-only"
    allowed_methods          = ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"]
    cached_methods           = ["GET", "HEAD"]
    cache_policy_id          = data.aws_cloudfront_cache_policy.disabled[0].id
    origin_request_policy_id = data.aws_cloudfront_origin_request_policy.all_but_host[0].id
    compress                 = true
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
}
