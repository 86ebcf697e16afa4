#!/usr/bin/env python3
"""The multi-region runbooks of docs/multi-region.md and the module README, walked through on the AWS
emulator (moto) with the `registry` binary, as restore_walkthrough.py walks the single-region restore:

  adding   "Adding a region": a registry serving from HOME gains REGION; the existing bodies and
           ledger entries are copied into REGION's bucket with the documented shell loop (run as
           written, by bash and the aws CLI), and REGION's replica then shows every issued ID
  failover "Failover and failback runbook": with HOME lost (its server stopped, nothing of it read
           again), `registry failover --to REGION` with REGION's environment only (the table and
           bucket names recorded outside the state); REGION's process follows the marker with no
           restart, and a registration there gets an ID above the counter printed
  restore  "Restoring a multi-region table": the table restored at a point before the failback
           carries that point's HOME/MARKER (REGION, epoch 1); the runbook's failover on the restored
           table puts the marker back to the current home at a higher epoch and jumps the counter
           past the ledger, and the home then issues a fresh ID there
  failback the same command naming HOME once replication from REGION has caught up

One moto server holds both regions (the SigV4 region tells them apart). Global tables and S3
replication are stood in for by `replicate()` (every item and every missing object copied, when the
walkthrough says), since moto replicates nothing: the walkthrough decides what has replicated when.
What needs AWS itself is named as not run: the Terraform apply, S3 Batch Replication,
StopReplicationToReplica (moto 5.2.5 has no such call), DNS and CloudFront.

Needs the `registry` binary (cargo build -p registry; found through `cargo metadata`) and the emulator
(scripts/emulator-start.sh). Usage: .venv/bin/python scripts/runbook_walkthrough.py [STEP...]
(default: all, in the order above; prints each step; exits 1 on a failed check).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent
ENDPOINT = os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
HOME, REGION = "us-east-1", "eu-west-1"
TTL_MS = 500


def target_directory() -> Path:
    metadata = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT, capture_output=True, text=True, check=True)
    return Path(json.loads(metadata.stdout)["target_directory"])


REGISTRY = target_directory() / "debug" / "registry"
FAILURES: list[str] = []


def check(label: str, ok: bool):
    print(f"{'ok  ' if ok else 'FAIL'} {label}", flush=True)
    if not ok:
        FAILURES.append(label)


def client(service: str, region: str):
    return boto3.client(service, endpoint_url=ENDPOINT, region_name=region, aws_access_key_id="test", aws_secret_access_key="test",
                        config=boto3.session.Config(s3={"addressing_style": "path"}))


class Deployment:
    """What the operator recorded outside Terraform's state at deploy time (the state's backend may be
    in the lost region): the table name, each region's bucket, the home."""

    def __init__(self):
        suffix = uuid.uuid4().hex[:8]
        self.table = f"runbook-{suffix}"
        self.buckets = {HOME: f"runbook-{suffix}-{HOME}", REGION: f"runbook-{suffix}-{REGION}"}

    def env(self, region: str, table: str | None = None, follow: bool = True) -> dict:
        """A function's environment in `region` as the module writes it (regions.tf, lambda.tf)."""
        env = {**os.environ, "AWS_ENDPOINT_URL": ENDPOINT, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": "test",
               "AWS_SECRET_ACCESS_KEY": "test", "REGISTRY_BACKEND": "aws", "REGISTRY_TABLE": table or self.table,
               "REGISTRY_BUCKET": self.buckets[region], "RUST_LOG": "warn"}
        if follow:
            env.update({"REGISTRY_HOME_REGION": HOME, "REGISTRY_HOME_BUCKET": self.buckets[HOME],
                        "REGISTRY_REGION_BUCKETS": ",".join(f"{r}={b}" for r, b in self.buckets.items()),
                        "REGISTRY_HOME_MARKER_TTL_MS": str(TTL_MS)})
        return env

    def operator(self, region: str, table: str | None = None) -> dict:
        """The operator's environment for `registry failover`/`restore-check` in `region` only."""
        return {**os.environ, "AWS_ENDPOINT_URL": ENDPOINT, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "REGISTRY_BACKEND": "aws", "REGISTRY_TABLE": table or self.table,
                "REGISTRY_BUCKET": self.buckets[region], "RUST_LOG": "warn"}


def registry(args: list[str], env: dict) -> str:
    print("   $ registry " + " ".join(args) + f"   (AWS_REGION={env['AWS_REGION']}, REGISTRY_TABLE={env['REGISTRY_TABLE']})", flush=True)
    result = subprocess.run([str(REGISTRY), *args], env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"registry {' '.join(args)} failed: {result.stderr}")
    output = result.stdout + result.stderr
    print("   " + output.strip().replace("\n", "\n   "), flush=True)
    return output


class Server:
    """`registry serve` with a function's environment, on a free port."""

    def __init__(self, env: dict):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        # Its warnings (RUST_LOG=warn) kept: whether it kept the last known home for a marker read
        # that failed or was slow (`followed_in_time`).
        self.log = Path(tempfile.mkstemp(prefix=f"registry-{self.port}-", suffix=".log")[1])
        with self.log.open("w") as log:
            self.process = subprocess.Popen([str(REGISTRY), "serve", "--backend", "aws", "--bind", "127.0.0.1", "--port", str(self.port)],
                                            env=env, stdout=subprocess.DEVNULL, stderr=log)
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("registry serve did not start")

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def register(self, subject: str, field: str, retries: int = 40) -> int:
        """A registration, sent again on 50002 (fenced while the process follows a failover)."""
        schema = json.dumps({"type": "record", "name": "R", "fields": [{"name": field, "type": "string"}]})
        for _ in range(retries):
            status, answer = self.call("POST", f"/subjects/{subject}/versions", {"schema": schema})
            if status == 200:
                return answer["id"]
            time.sleep(0.2)
        raise SystemExit(f"registration of {subject} kept failing: {status} {answer}")

    def marker_reads_kept_the_old_home(self) -> bool:
        """Whether the process logged a marker read that failed or took longer than its read timeout
        (routing then stays with the home last known for another time to live, as documented)."""
        text = self.log.read_text()
        return "cannot read the home marker" in text or "no home marker read in time" in text

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.log.unlink(missing_ok=True)


def replicate(table: str, source: str, destination: str, buckets: dict, destination_table: str | None = None):
    """Global tables and S3 replication, caught up once: every item of `source`'s replica copied to
    `destination`'s (and items gone there removed), every object missing in the destination bucket copied."""
    src, dst = client("dynamodb", source), client("dynamodb", destination)
    destination_table = destination_table or table
    items = [item for page in src.get_paginator("scan").paginate(TableName=table) for item in page["Items"]]
    keys = {(item["pk"]["S"], item["sk"]["S"]) for item in items}
    for item in items:
        dst.put_item(TableName=destination_table, Item=item)
    for page in dst.get_paginator("scan").paginate(TableName=destination_table):
        for item in page["Items"]:
            if (item["pk"]["S"], item["sk"]["S"]) not in keys:
                dst.delete_item(TableName=destination_table, Key={"pk": item["pk"], "sk": item["sk"]})
    s3_src, s3_dst = client("s3", source), client("s3", destination)
    have = {o["Key"] for page in s3_dst.get_paginator("list_objects_v2").paginate(Bucket=buckets[destination]) for o in page.get("Contents", [])}
    for page in s3_src.get_paginator("list_objects_v2").paginate(Bucket=buckets[source]):
        for listed in page.get("Contents", []):
            if listed["Key"] not in have:
                body = s3_src.get_object(Bucket=buckets[source], Key=listed["Key"])["Body"].read()
                s3_dst.put_object(Bucket=buckets[destination], Key=listed["Key"], Body=body, IfNoneMatch="*")


@contextlib.contextmanager
def replicating(table: str, source: str, destination: str, buckets: dict):
    """Replication from `source` to `destination` running in a thread while the block runs: a write
    through a read region is acknowledged only once that region's replica shows it."""
    stop = threading.Event()

    def run():
        while not stop.is_set():
            replicate(table, source, destination, buckets)
            stop.wait(0.2)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def marker(table: str, region: str) -> dict | None:
    item = client("dynamodb", region).get_item(TableName=table, Key={"pk": {"S": "HOME"}, "sk": {"S": "MARKER"}}, ConsistentRead=True).get("Item")
    return {name: next(iter(value.values())) for name, value in item.items()} if item else None


def doc_block(path: str, heading: str) -> str:
    """The first ```sh block under `heading` in `path`: the commands the walkthrough runs as written."""
    text = (ROOT / path).read_text()
    start = text.index(heading)
    match = re.search(r"```sh\n(.*?)```", text[start:], re.S)
    if not match:
        raise SystemExit(f"no sh block under {heading!r} in {path}")
    return match.group(1)


def counter_printed(output: str) -> int:
    counters = [int(n) for n in re.findall(r"counter[^0-9\n]*?(\d+)\s*$", output, re.M)]
    if not counters:
        raise SystemExit(f"no counter in the failover's output:\n{output}")
    return max(counters)


def main(steps: list[str]) -> int:
    if shutil.which("aws") is None:
        raise SystemExit("runbook-walkthrough: the aws CLI is not on PATH (the documented copy runs as written, with it)")
    deployment = Deployment()
    home_env = deployment.env(HOME)
    print(f"0. a registry in {HOME} ({deployment.table}), single-region")
    registry(["aws-init"], deployment.operator(HOME))
    home = Server(deployment.env(HOME, follow=False))
    early = [home.register(f"early{n}-value", f"e{n}") for n in range(3)]
    print(f"   IDs issued before {REGION} is added: {early}")
    home.stop()

    print(f"1. adding {REGION} (docs/multi-region.md \"Adding a region\")")
    # The apply: REGION's replica (DynamoDB fills it with the table's items before it is active) and
    # an empty bucket with its replication rule (S3 replicates only objects written afterwards).
    registry(["aws-init"], deployment.operator(REGION))
    dynamodb_home, dynamodb_region = client("dynamodb", HOME), client("dynamodb", REGION)
    for page in dynamodb_home.get_paginator("scan").paginate(TableName=deployment.table):
        for item in page["Items"]:
            dynamodb_region.put_item(TableName=deployment.table, Item=item)
    check(f"{REGION}'s new bucket holds none of the bodies and ledger entries written before",
          "Contents" not in client("s3", REGION).list_objects_v2(Bucket=deployment.buckets[REGION]))
    copy = doc_block("docs/multi-region.md", "**copy the existing objects.**")
    print("   the documented copy, run by bash as written:\n   " + copy.strip().replace("\n", "\n   "))
    shell_env = {**os.environ, "AWS_ENDPOINT_URL": ENDPOINT, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                 "AWS_DEFAULT_REGION": HOME, "FROM_BUCKET": deployment.buckets[HOME], "TO_BUCKET": deployment.buckets[REGION],
                 "NEW_REGION": REGION, "HOME_REGION": HOME}
    copied = subprocess.run(["bash", "-euo", "pipefail", "-c", copy], env=shell_env, capture_output=True, text=True, timeout=600)
    print("   " + (copied.stdout + copied.stderr).strip().replace("\n", "\n   "))
    check("the copy exits 0", copied.returncode == 0)
    keys = lambda region: sorted(o["Key"] for o in client("s3", region).list_objects_v2(Bucket=deployment.buckets[region]).get("Contents", []))
    check(f"{REGION}'s bucket now holds every body and ledger entry of {HOME}'s ({len(keys(HOME))})", keys(HOME) == keys(REGION))
    again = subprocess.run(["bash", "-euo", "pipefail", "-c", copy], env=shell_env, capture_output=True, text=True, timeout=600)
    check("running the copy again is harmless (objects present are left as they are)", again.returncode == 0 and keys(HOME) == keys(REGION))

    print(f"2. both regions serve, {HOME} home; the marker is absent until a failover")
    home, read = Server(home_env), Server(deployment.env(REGION))
    served = [home.register(f"two{n}-value", f"t{n}") for n in range(2)]
    with replicating(deployment.table, HOME, REGION, deployment.buckets):
        served.append(read.register("via-read-value", "r0"))  # acknowledged once REGION's replica shows it
    replicate(deployment.table, HOME, REGION, deployment.buckets)
    issued = early + served
    late = home.register("late-value", "l0")  # committed at HOME, never replicated: the lost window
    issued.append(late)
    print(f"   IDs issued: {issued} (ID {late} never reached {REGION})")

    if "failover" in steps:
        print(f"3. {HOME} is lost: its process stopped, nothing read from {HOME} from here on")
        home.stop()
        # A lost region cannot be reached: the failover refuses unless the loss is accepted.
        out = registry(["failover", "--to", REGION, "--gap", "100", "--accept-loss"], deployment.operator(REGION))
        check("the failover says the old home was not reached", "not reached (--accept-loss)" in out)
        counter = counter_printed(out)
        check(f"the failover jumps {REGION}'s counter past every ID it saw, by the gap ({counter} > {max(issued)})", counter > max(issued))
        check(f"the marker names {REGION} at epoch 1", (marker(deployment.table, REGION) or {}).get("region") == REGION and (marker(deployment.table, REGION) or {}).get("epoch") == "1")
        # The documented bound: a process follows a failover within the marker's time to live (its
        # replication aside: here the marker is written in this replica). Before that, its writes
        # still go to the old home, which here is reachable (a lost region would refuse them).
        time.sleep(TTL_MS / 1000)
        new_id = read.register("after-failover-value", "f0")
        attempt = 0
        while new_id <= counter and read.marker_reads_kept_the_old_home() and attempt < 20:
            # Only a marker read that failed or was slow (a loaded machine) keeps the old routing
            # past the time to live; the next read after another period follows.
            attempt += 1
            print(f"   ID {new_id} committed through the old routing after a slow marker read; again after the time to live")
            time.sleep(TTL_MS / 1000)
            new_id = read.register(f"after-failover-{attempt}-value", "f0")
        check(f"{REGION}'s process follows the marker with no restart: a new schema gets ID {new_id}, above the counter {counter}", new_id > counter)
        issued.append(new_id)
        restore_point = {"issued": list(issued)}

        if "restore" in steps:
            restored = f"{deployment.table}-r1"
            print(f"4. restore (module README \"Restoring a multi-region table\"): {deployment.table} restored into {restored} "
                  f"in {HOME} at a point while {REGION} was home (the restore runs in the provider's region, the first of regions)")
            # moto restores a table as it is when asked, whatever the time: restoring HOME's replica now,
            # after bringing it to the state of this point, gives the restored table what a restore to
            # this point would.
            replicate(deployment.table, REGION, HOME, deployment.buckets)
            dynamodb_home.update_continuous_backups(TableName=deployment.table, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
            dynamodb_home.restore_table_to_point_in_time(SourceTableName=deployment.table, TargetTableName=restored, UseLatestRestorableTime=True)
            dynamodb_home.get_waiter("table_exists").wait(TableName=restored)
            described = dynamodb_home.describe_table(TableName=restored)["Table"]
            check(f"the restored table is a single-region table (no replicas: {described.get('Replicas', [])}): the apply that adopts it adds them",
                  not described.get("Replicas"))
            stale = marker(restored, HOME) or {}
            check(f"the restored table carries the restore point's HOME/MARKER ({stale})", stale.get("region") == REGION and stale.get("epoch") == "1")
            restored_table = restored
        read.stop()

        print(f"5. failback: {HOME} is back; replication from {REGION} to it has caught up")
        replicate(deployment.table, REGION, HOME, deployment.buckets)
        home = Server(home_env)
        out = registry(["failover", "--to", HOME, "--gap", "100"], deployment.operator(HOME))
        counter = counter_printed(out)
        check(f"the failback writes the marker in {REGION}'s replica too (the interim home is reachable)",
              f"{REGION}: marker written there" in out and (marker(deployment.table, REGION) or {}).get("epoch") == "2")
        replicate(deployment.table, HOME, REGION, deployment.buckets)
        check(f"the marker names {HOME} at epoch 2", (marker(deployment.table, HOME) or {}).get("epoch") == "2")
        back = home.register("after-failback-value", "b0")
        check(f"{HOME} issues ID {back}, above the failback's counter {counter}", back > counter)
        issued.append(back)
        home.stop()

        if "restore" in steps:
            print(f"6. the restored table {restored_table} adopted: its marker says {REGION}, the registry's home is {HOME}")
            # The runbook's step: before anything serves the restored table, the failover command on it
            # names the current home: it raises the counters past the ledger (what restore-check does)
            # and writes the marker at the next epoch.
            out = registry(["failover", "--to", HOME, "--gap", "100"], deployment.operator(HOME, restored_table))
            counter = counter_printed(out)
            check(f"{REGION} holds no replica of the restored table, so the failover has no old home to fence there",
                  f"{REGION}: holds no replica of this table" in out)
            fixed = marker(restored_table, HOME) or {}
            check(f"the restored table's marker names {HOME} at epoch 2 ({fixed})", fixed.get("region") == HOME and fixed.get("epoch") == "2")
            check(f"its counter ({counter}) is above every ID the ledger holds, those issued after the restore point included ({max(issued)})",
                  counter > max(issued))
            dry = registry(["restore-check", "--dry-run"], deployment.operator(HOME, restored_table))
            check("restore-check afterwards finds nothing above the counter", "highest ledger id above the counter: 0" in dry)
            serving = Server(deployment.env(HOME, table=restored_table))
            fresh = serving.register("after-restore-value", "x0")
            serving.stop()
            check(f"the home serving the restored table issues ID {fresh}, never one issued before ({sorted(set(issued) - set(restore_point['issued']))} came after the restore point)",
                  fresh > max(issued))
            dynamodb_home.delete_table(TableName=restored_table)
    else:
        home.stop()
        read.stop()

    for region in (HOME, REGION):
        client("dynamodb", region).delete_table(TableName=deployment.table)
    print("all checks passed" if not FAILURES else f"{len(FAILURES)} failed: {FAILURES}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["adding", "failover", "restore", "failback"]
    sys.exit(main(chosen))
