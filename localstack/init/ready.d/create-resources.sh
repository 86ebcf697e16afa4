#!/usr/bin/env bash
# LocalStack ready hook: creates the registry's DynamoDB table and S3 bucket if missing.
# Key schema and billing come from table.json (infra/modules/schema-registry/table.json),
# the same file the Terraform module reads; registry-store-aws's provision test checks it.
set -euo pipefail

TABLE="${REGISTRY_TABLE:-schema-registry}"
BUCKET="${REGISTRY_BUCKET:-schema-registry-bodies}"
DEFINITION="${REGISTRY_TABLE_DEFINITION:-/etc/localstack/registry/table.json}"

if ! awslocal dynamodb describe-table --table-name "$TABLE" >/dev/null 2>&1; then
  awslocal dynamodb create-table --table-name "$TABLE" --cli-input-json "file://$DEFINITION"
  awslocal dynamodb wait table-exists --table-name "$TABLE"
fi

if ! awslocal s3api head-bucket --bucket "$BUCKET" >/dev/null 2>&1; then
  awslocal s3api create-bucket --bucket "$BUCKET"
fi

echo "registry resources ready: table=$TABLE bucket=$BUCKET"
