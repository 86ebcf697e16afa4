#!/usr/bin/env python3
"""The restore runbook of infra/modules/schema-registry/README.md ("Restoring the table"), walked
through on the AWS emulator (moto) as far as it runs without Terraform providers: a registry on table
OLD issues IDs, OLD is restored into NEW at a point before the last ones, `registry restore-check`
raises NEW's counter past the ledger, and a registration on NEW gets a fresh ID, never a reissued one.
The Terraform steps (state rm, import, plan, apply) are not run here: scripts/terraform_emulator.py runs the
whole runbook, Terraform included, on the example it applies. This prints what the restore dropped (point-
in-time recovery, deletion protection, tags) and what the apply puts back.

Needs the registry binary (cargo build -p registry; found through `cargo metadata`) and the emulator (scripts/emulator-start.sh).
Usage: .venv/bin/python scripts/restore_walkthrough.py   (prints each step; exits 1 on a failed check)
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import boto3

# `registry serve` on a free port and the pass/fail lines, as the multi-region walkthrough runs them.
from runbook_walkthrough import ENDPOINT, FAILURES, REGISTRY, Server, check

AWS_ENV = {"AWS_ENDPOINT_URL": ENDPOINT, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}


def env(table: str, bucket: str) -> dict:
    return {**os.environ, **AWS_ENV, "REGISTRY_BACKEND": "aws", "REGISTRY_TABLE": table, "REGISTRY_BUCKET": bucket, "RUST_LOG": "warn"}


def registry(args: list[str], table: str, bucket: str) -> str:
    result = subprocess.run([str(REGISTRY), *args], env=env(table, bucket), capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"registry {' '.join(args)} failed: {result.stderr}")
    return result.stdout + result.stderr


def main() -> int:
    suffix = uuid.uuid4().hex[:8]
    old, new, bucket = f"walk-old-{suffix}", f"walk-new-{suffix}", f"walk-bodies-{suffix}"
    dynamodb = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")

    print(f"0. a registry on {old} (bucket {bucket})")
    registry(["aws-init"], old, bucket)
    dynamodb.update_continuous_backups(TableName=old, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    server = Server(env(old, bucket))
    before = [server.register(f"s{n}-value", f"f{n}") for n in range(3)]
    print(f"   IDs issued before the restore point: {before}")

    # moto restores a table as it is when asked, whatever the restore time: restoring now and issuing
    # the later IDs afterwards gives NEW exactly the state a real restore to this point would.
    print(f"1. restore {old} into {new} at this point")
    dynamodb.restore_table_to_point_in_time(SourceTableName=old, TargetTableName=new, UseLatestRestorableTime=True)
    dynamodb.get_waiter("table_exists").wait(TableName=new)
    after = [server.register(f"late{n}-value", f"g{n}") for n in range(2)]
    print(f"   IDs {old} issued after the restore point (already in Kafka, say): {after}")
    server.stop()
    pitr = dynamodb.describe_continuous_backups(TableName=new)["ContinuousBackupsDescription"]
    status = pitr.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus")
    protected = dynamodb.describe_table(TableName=new)["Table"].get("DeletionProtectionEnabled", False)
    print(f"   the restored table: point-in-time recovery {status}, deletion protection {protected} (step 3's apply turns both on)")

    print("2. restore-check on the restored table, dry run, then for real, then again")
    dry = registry(["restore-check", "--dry-run"], new, bucket)
    print("   " + dry.strip().replace("\n", "\n   "))
    real = registry(["restore-check"], new, bucket)
    print("   " + real.strip().replace("\n", "\n   "))
    again = registry(["restore-check"], new, bucket)
    print("   " + again.strip().replace("\n", "\n   "))
    check(f"the dry run finds the counter at {max(before)} and would raise it to {max(after)}", f"id counter before: {max(before)}" in dry and f"counter would be raised to: {max(after)}" in dry)
    check(f"the check raises the counter to the ledger's highest ID {max(after)}", f"counter raised to: {max(after)}" in real)
    check("a second run finds nothing above the counter", "highest ledger id above the counter: 0" in again)

    print("3. terraform state rm / import / apply: not run here; scripts/terraform_emulator.py runs them on the applied example")

    print(f"4. the registry on {new} issues a fresh ID")
    server = Server(env(new, bucket))
    fresh = server.register("after-restore-value", "h0")
    server.stop()
    check(f"a new schema on the restored table gets ID {fresh}, above every ID issued ({max(after)})", fresh > max(after))

    for table in (old, new):
        dynamodb.delete_table(TableName=table)
    print(f"{'all checks passed' if not FAILURES else f'{len(FAILURES)} failed'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
