"""Creates or deletes the DynamoDB table and S3 bucket the AWS backend needs, on the emulator.

Usage: aws_resources.py create TABLE_JSON | aws_resources.py delete
Reads REGISTRY_TABLE, REGISTRY_BUCKET, AWS_ENDPOINT_URL, AWS_REGION and the dummy credentials from
the environment. The table definition is infra/modules/schema-registry/table.json, the same file
Terraform and LocalStack use.
"""

import json
import os
import sys

import boto3


def main() -> int:
    table = os.environ["REGISTRY_TABLE"]
    bucket = os.environ["REGISTRY_BUCKET"]
    dynamo = boto3.client("dynamodb")
    s3 = boto3.client("s3")
    if sys.argv[1] == "create":
        with open(sys.argv[2], encoding="utf-8") as f:
            definition = json.load(f)
        dynamo.create_table(TableName=table, **definition)
        dynamo.get_waiter("table_exists").wait(TableName=table)
        s3.create_bucket(Bucket=bucket)
        return 0
    if sys.argv[1] == "delete":
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=item["Key"])
        s3.delete_bucket(Bucket=bucket)
        dynamo.delete_table(TableName=table)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
