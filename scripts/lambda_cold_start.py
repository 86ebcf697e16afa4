#!/usr/bin/env python3
"""Lambda init and first-request figures under the project's Runtime API emulator (BENCHMARKS.md,
"Lambda cold start"). Prints figures, asserts nothing. Run through scripts/lambda-cold-start.sh,
which builds the binaries; needs an emulator at AWS_ENDPOINT_URL (scripts/emulator-start.sh).

For each table size (no other subjects, then --subjects other subjects) it creates a table and
bucket (`registry aws-init`), registers one schema through the function (subject `seed-value`,
ID 1), writes the other subjects' items straight into the table with BatchWriteItem (a version
row, the subject index item and the rows-by-ID edge each, all carrying ID 1: the layout of
shared/registry-store-aws/src/lib.rs), then, for each function binary, starts `lambda-emulator`
--runs times: each start spawns a fresh instance (its init time: spawn to the first
`GET /runtime/invocation/next`, printed by lambda-emulator) and sends it one first request, timed
at the client (Function URL request to the answer's last byte).
"""

import argparse
import concurrent.futures
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

import boto3

BATCH = 25  # BatchWriteItem's limit
FIRST_REQUESTS = [
    ("GET /schemas/ids/1", "GET", "/schemas/ids/1", None),
    ("GET /subjects/seed-value/versions/latest", "GET", "/subjects/seed-value/versions/latest", None),
]
SEED_SCHEMA = json.dumps({"type": "record", "name": "Seed", "fields": [{"name": "id", "type": "string"}]})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/vnd.schemaregistry.v1+json")
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as answer:
        payload = answer.read()
        status = answer.status
    return status, payload, (time.perf_counter() - started) * 1e3


class Function:
    """One lambda-emulator process (one function instance started eagerly), stopped by its PID."""

    def __init__(self, emulator, binary, env):
        self.port = free_port()
        self.process = subprocess.Popen(
            [emulator, "--port", str(self.port), "--instances", "1", binary],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        line = self.process.stderr.readline()
        found = re.search(r"first /runtime/invocation/next: ([0-9.]+) ms", line)
        if not found:
            self.stop()
            sys.exit(f"lambda-emulator did not start: {line.strip()}")
        self.init_ms = float(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def seed_subjects(dynamo, table, count, fingerprint):
    """`count` subjects `load-<i>-value`, version 1 each, all carrying ID 1, written in parallel."""

    def items(i):
        subject = f"load-{i:07d}-value"
        row = {
            "pk": {"S": f"S#{subject}"}, "sk": {"S": "V#0000000001"}, "subject": {"S": subject},
            "version": {"N": "1"}, "id": {"N": "1"}, "fingerprint": {"S": fingerprint},
            "deleted": {"BOOL": False}, "ts": {"N": str(1_700_000_000_000 + i)},
        }
        index = {"pk": {"S": "SUBJECTS"}, "sk": {"S": subject}, "total": {"N": "1"}, "live": {"N": "1"}, "rev": {"N": "1"}}
        edge = {"pk": {"S": "ID#0000000001"}, "sk": {"S": f"R#{subject}\u0001" + "0000000001"},
                "subject": {"S": subject}, "version": {"N": "1"}}
        return [row, index, edge]

    def write(start):
        batch = [item for i in range(start, min(start + BATCH // 3, count)) for item in items(i)]
        pending = {table: [{"PutRequest": {"Item": item}} for item in batch]}
        while pending:
            pending = dynamo.batch_write_item(RequestItems=pending).get("UnprocessedItems") or None

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(0, count, BATCH // 3)))
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--registry", required=True, help="the registry binary (for aws-init)")
    parser.add_argument("--emulator", required=True, help="the lambda-emulator binary")
    parser.add_argument("--function", action="append", required=True, help="NAME=PATH of a registry-lambda build")
    parser.add_argument("--subjects", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    functions = [f.split("=", 1) for f in args.function]
    if "AWS_ENDPOINT_URL" not in os.environ:
        sys.exit("set AWS_ENDPOINT_URL to an emulator (scripts/emulator-start.sh)")
    base_env = dict(os.environ, RUST_LOG="warn")
    dynamo = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                          region_name=os.environ.get("AWS_REGION", "us-east-1"))
    stamp = f"{os.getpid()}-{int(time.time())}"
    rows = []
    for size in [0, args.subjects]:
        table, bucket = f"coldstart-{stamp}-{size}", f"coldstart-{stamp}-{size}"
        env = dict(base_env, REGISTRY_TABLE=table, REGISTRY_BUCKET=bucket)
        subprocess.run([args.registry, "aws-init"], env=env, check=True, stdout=subprocess.DEVNULL)
        seeder = Function(args.emulator, functions[0][1], env)
        request(f"{seeder.url}/subjects/seed-value/versions", "POST", {"schema": SEED_SCHEMA})
        seeder.stop()
        seed_row = dynamo.get_item(TableName=table, Key={"pk": {"S": "S#seed-value"}, "sk": {"S": "V#0000000001"}},
                                   ConsistentRead=True)["Item"]
        seconds = seed_subjects(dynamo, table, size, seed_row["fingerprint"]["S"]) if size else 0.0
        print(f"table with {size} other subjects ready (seeded in {seconds:.1f} s)", file=sys.stderr)
        for name, binary in functions:
            inits = []
            for label, method, path, body in FIRST_REQUESTS:
                firsts, seconds_ = [], []
                for _ in range(args.runs):
                    function = Function(args.emulator, binary, env)
                    inits.append(function.init_ms)
                    status, _, first = request(function.url + path, method, body)
                    _, _, second = request(function.url + path, method, body)
                    function.stop()
                    if status != 200:
                        sys.exit(f"{label}: {status}")
                    firsts.append(first)
                    seconds_.append(second)
                rows.append((f"first request after a cold start, {label}, {size} other subjects, {name} build "
                             f"(median of {args.runs}; the same request warm)",
                             f"{statistics.median(firsts):.1f} ms (warm {statistics.median(seconds_):.1f} ms)"))
            rows.append((f"Lambda init, {name} build, {size} other subjects (spawn → first GET /runtime/invocation/next, "
                         f"median of {len(inits)})", f"{statistics.median(inits):.1f} ms"))
        dynamo.delete_table(TableName=table)
    print("| figure | value |")
    print("|---|---|")
    for figure, value in sorted(rows, key=lambda r: (not r[0].startswith("Lambda init"), r[0])):
        print(f"| {figure} | {value} |")


if __name__ == "__main__":
    main()
