"""Deletes the DynamoDB table and S3 bucket a client run created on the emulator (created by
`registry aws-init`), so runs against a long-lived emulator leave nothing behind.

Usage: aws_resources.py delete
Reads REGISTRY_TABLE, REGISTRY_BUCKET, AWS_ENDPOINT_URL, AWS_REGION and the dummy credentials.
"""

import os
import sys

import boto3


def main() -> int:
    if sys.argv[1:] != ["delete"]:
        print(__doc__, file=sys.stderr)
        return 2
    table = os.environ["REGISTRY_TABLE"]
    bucket = os.environ["REGISTRY_BUCKET"]
    # botocore reads AWS_DEFAULT_REGION only; the registry (Rust SDK) and scripts set AWS_REGION.
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    s3 = boto3.client("s3", region_name=region)
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=item["Key"])
    s3.delete_bucket(Bucket=bucket)
    boto3.client("dynamodb", region_name=region).delete_table(TableName=table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
