# The mocked AWS provider of the module's terraform tests: values that the module's own
# expressions and the provider's argument checks (which run even when mocked) need to be real
# shapes, an ARN where an ARN goes. Every other attribute is a random string.

mock_data "aws_region" {
  defaults = {
    region = "eu-west-1"
  }
}

mock_data "aws_caller_identity" {
  defaults = {
    account_id = "123456789012"
  }
}

mock_data "aws_partition" {
  defaults = {
    partition = "aws"
  }
}

# The provider checks policies are JSON even when mocked; plan.tftest.hcl plans the real documents.
mock_data "aws_iam_policy_document" {
  defaults = {
    json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
  }
}

mock_resource "aws_kms_key" {
  defaults = {
    arn = "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000"
  }
}

mock_resource "aws_iam_role" {
  defaults = {
    arn = "arn:aws:iam::123456789012:role/mock"
  }
}

mock_resource "aws_sqs_queue" {
  defaults = {
    arn = "arn:aws:sqs:eu-west-1:123456789012:mock"
  }
}

mock_resource "aws_lambda_function" {
  defaults = {
    arn           = "arn:aws:lambda:eu-west-1:123456789012:function:mock"
    invoke_arn    = "arn:aws:apigateway:eu-west-1:lambda:path/2015-03-31/functions/arn:aws:lambda:eu-west-1:123456789012:function:mock/invocations"
    qualified_arn = "arn:aws:lambda:eu-west-1:123456789012:function:mock:1"
    version       = "1"
  }
}

mock_resource "aws_lambda_alias" {
  defaults = {
    arn = "arn:aws:lambda:eu-west-1:123456789012:function:mock:live"
  }
}

mock_resource "aws_cloudwatch_log_group" {
  defaults = {
    arn = "arn:aws:logs:eu-west-1:123456789012:log-group:mock"
  }
}

mock_resource "aws_s3_bucket" {
  defaults = {
    arn = "arn:aws:s3:::mock"
  }
}

mock_resource "aws_secretsmanager_secret" {
  defaults = {
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:mock"
  }
}

mock_resource "aws_sns_topic" {
  defaults = {
    arn = "arn:aws:sns:eu-west-1:123456789012:mock"
  }
}

mock_resource "aws_dynamodb_table" {
  defaults = {
    arn        = "arn:aws:dynamodb:eu-west-1:123456789012:table/mock"
    stream_arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/mock/stream/2026-01-01T00:00:00.000"
  }
}

mock_resource "aws_cloudwatch_event_rule" {
  defaults = {
    arn = "arn:aws:events:eu-west-1:123456789012:rule/mock"
  }
}

mock_resource "aws_cloudfront_distribution" {
  defaults = {
    arn = "arn:aws:cloudfront::123456789012:distribution/MOCK"
  }
}
