#!/usr/bin/env python3
"""The Terraform example applied for real on the AWS emulator (moto), and the registry served from
what Terraform created.

1. scripts/tf-provider-compat.py copies infra/ and rewrites the reviewed list of 6.x-only arguments
   (this machine holds hashicorp/aws 5.100.0 only; the copy prints what it did not check).
2. infra/examples/two-teams is applied with `terraform apply` on the emulator at AWS_ENDPOINT_URL:
   the provider's endpoint overrides sit in an override file (moto_override.tf), with one input of the
   example changed (INPUT_OVERRIDES: logistics' default_compatibility, BACKWARD as the API suite
   assumes, instead of FULL_TRANSITIVE). The modules and resources named in TF_EMULATOR_SKIP are left out (-target on
   every other planned resource), each with its reason printed (SKIP_REASONS); everything else of
   the example is applied, and the state is checked to hold all of it.
3. The API function's configuration is read back from the emulator's Lambda API
   (GetFunctionConfiguration) and written to a stack file; `cargo nextest` then runs the API suite's
   lambda cases with API_DEPLOYED_STACK naming it (tests/src/deployed.rs): the real registry-lambda,
   under the Runtime API emulator, with exactly that environment, over Terraform's table and bucket.

4. The runbooks' Terraform steps on the applied example: the module README's "Restoring the table"
   (restore, restore-check, state rm, import, a plan that changes the table in place, apply, the
   check again), and docs/multi-region.md's home_region step (refused alone by the example's
   ack_regions, planned with ack_regions = [] under -refresh=false -target) and "Stopping the old
   home's function" (a reservation made by hand is taken away by the next apply).

The zip Terraform uploads is a placeholder (moto stores a function's code and never runs it; the
debug registry-lambda is 110 MB and x86-64, the module's function arm64): what serves is the
registry-lambda binary cargo built, found through `cargo metadata`'s target_directory.

Env: AWS_ENDPOINT_URL (the emulator), TF_EMULATOR_SKIP (space-separated addresses of modules or
resources left out, each needing a reason in SKIP_REASONS; default DEFAULT_SKIP), TF_EMULATOR_CASES (a nextest filter on the lambda cases; default all of them but EXCLUDED_CASES,
each left out for a setting of the module it contradicts; "none": the suite is not run),
TF_EMULATOR_KEEP=1 keeps the work directory. Exits non-zero when the apply, the read-back or a case
fails. Usage: .venv/bin/python scripts/terraform_emulator.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import boto3

from runbook_walkthrough import Server, target_directory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "two-teams"
# The example's provider region (its variable "region" default) and the API function applied there.
FUNCTION = "module.logistics.aws_lambda_function.registry"

# Why each top-level object of the example may be left out on the emulator. A skip not listed here is
# refused: every skip says why.
SKIP_REASONS = {
    "module.payments": (
        "a two-region registry: its table is a global table whose replica the provider adds with "
        "UpdateTable ReplicaUpdates, which moto 5.2.5 ignores (UpdateTable reads no ReplicaUpdates), so "
        "DescribeTable never lists the replica and the provider waits on it until its create timeout "
        "(measured: the table was still 'creating' after minutes, every DescribeTable without Replicas). "
        "Nor could provider 5.100.0 place the second region's resources: the per-resource region "
        "argument is 6.x-only and stripped in the copy, so they would land in the first region"
    ),
    "aws_kms_key.registry_alarms_second": "the second region's alarm topic key, used only by module.payments",
    "aws_sns_topic.registry_alarms_second": "the second region's alarm topic, used only by module.payments",
    "module.logistics.aws_s3_bucket_policy.bodies": (
        "moto evaluates bucket policies, and its endpoint is plain HTTP: the policy's DenyInsecureTransport "
        "statement (aws:SecureTransport false) then refuses every request, the registry's PutObject "
        "included (measured: 403 on every key), as AWS would refuse HTTP. Its DenyBodyOverwrites "
        "statement is therefore not exercised here"
    ),
}
DEFAULT_SKIP = "module.payments module.logistics.aws_s3_bucket_policy.bodies"

# The one input of the example the harness changes, in the override file: the API suite's cases assume
# the server default compatibility BACKWARD (Confluent's default, and the module's), which the example's
# logistics registry sets to FULL_TRANSITIVE. Everything else is the example's.
INPUT_OVERRIDES = {"logistics": {"default_compatibility": "BACKWARD"}}

# API cases left out on the deployed registry, each for a setting of the module the case contradicts
# (the same cases pass on every other backend). Each name is checked to exist before the run.
LOCAL_KMS = ("the case creates DEKs under a KEK of kmsType local-kms, the test-only KMS (REGISTRY_LOCAL_KMS_SECRET) the "
             "deployed function does not have: the module sets REGISTRY_KMS_KEY_ARNS = \"none\" without kms_key_arns")
EXCLUDED_CASES = {
    "deks::lambda::concurrent_dek_creates_have_one_winner": LOCAL_KMS,
    "deks::lambda::shared_kek_generates_deks": LOCAL_KMS,
}

OVERRIDE = """\
# Written by scripts/terraform_emulator.py: the provider aimed at the emulator, and INPUT_OVERRIDES.
provider "aws" {{
  region                      = var.region
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  s3_use_path_style           = true
  endpoints {{
{endpoints}
  }}
}}
"""
SERVICES = ["cloudwatch", "dynamodb", "events", "iam", "kms", "lambda", "logs", "s3", "secretsmanager", "sns", "sqs", "sts"]


def run(args: list[str], cwd: Path, env: dict | None = None, capture: bool = False) -> str:
    print("$ " + " ".join(args), flush=True)
    result = subprocess.run(args, cwd=cwd, env=env, text=True, capture_output=capture)
    if result.returncode != 0:
        if capture:
            sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"terraform-emulator: {args[0]} {args[1] if len(args) > 1 else ''} failed (exit {result.returncode})")
    return result.stdout if capture else ""


def skipped_by(address: str, skip: list[str]) -> str | None:
    """The entry of `skip` that covers `address` (itself, a module or a resource of it), if any."""
    return next((name for name in skip if address == name or address.startswith((name + ".", name + "["))), None)


def restore_runbook(example: Path, env: dict, variables: list[str], target_args: list[str], session, endpoint: str, function_env: dict,
                    function_name: str) -> list[str]:
    """The module README's "Restoring the table", steps 1-4, on the applied example, Terraform
    included: restore into NEW under the module's key, restore-check, table_name = NEW with the
    state moved (state rm, import), a plan that changes the table in place only, the apply, and the
    check that the function now serves NEW with point-in-time recovery and deletion protection back."""
    failures: list[str] = []

    def check(label: str, ok: bool):
        print(f"{'ok  ' if ok else 'FAIL'} {label}", flush=True)
        if not ok:
            failures.append(label)

    old, bucket = function_env["REGISTRY_TABLE"], function_env["REGISTRY_BUCKET"]
    new = f"{old}-r1"
    region = session.region_name
    dynamodb = session.client("dynamodb", endpoint_url=endpoint)
    key = next(k for k in session.client("kms", endpoint_url=endpoint).list_aliases()["Aliases"] if k["AliasName"] == function_env["REGISTRY_EXPORTER_KMS_KEY"])["TargetKeyId"]
    registry = target_directory() / "debug" / "registry"
    operator = {**os.environ, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "REGISTRY_BACKEND": "aws", "REGISTRY_TABLE": new, "REGISTRY_BUCKET": bucket, "RUST_LOG": "warn"}
    print(f"restore runbook: 0. schemas registered on {old}")
    server = Server({**operator, "REGISTRY_TABLE": old})
    before = [server.register(f"before{n}-value", f"b{n}") for n in range(2)]
    print(f"restore runbook: 1. restore {old} into {new} under the module's key")
    # moto restores a table as it is when asked, whatever the time: IDs issued after the restore call
    # are the ones a real restore to this point would have lost.
    dynamodb.restore_table_to_point_in_time(SourceTableName=old, TargetTableName=new, UseLatestRestorableTime=True,
                                            SSESpecificationOverride={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": key})
    dynamodb.get_waiter("table_exists").wait(TableName=new)
    after = server.register("after-value", "a0")
    server.stop()
    print(f"   IDs issued before the restore point {before}, after it {after}")
    print("restore runbook: 2. restore-check, dry run then for real")
    for args in (["restore-check", "--dry-run"], ["restore-check"]):
        result = subprocess.run([str(registry), *args], env=operator, capture_output=True, text=True, timeout=120)
        print("   " + (result.stdout + result.stderr).strip().replace("\n", "\n   "))
        check(f"registry {' '.join(args)} exits 0", result.returncode == 0)
    check(f"the check raised {new}'s counter to the ledger's highest ID {after}", f"counter raised to: {after}" in result.stdout + result.stderr)
    print(f"restore runbook: 3. table_name = \"{new}\" in the module call, the state moved, plan, apply")
    (example / "restore_override.tf").write_text(f'module "logistics" {{\n  table_name = "{new}"\n}}\n')
    run(["terraform", "state", "rm", "-no-color", "module.logistics.aws_dynamodb_table.registry"], cwd=example, env=env, capture=True)
    run(["terraform", "import", "-no-color", *variables, "module.logistics.aws_dynamodb_table.registry", new], cwd=example, env=env, capture=True)
    run(["terraform", "plan", "-no-color", "-out=restore.plan", *variables, *target_args], cwd=example, env=env, capture=True)
    planned = json.loads(run(["terraform", "show", "-json", "restore.plan"], cwd=example, env=env, capture=True))
    changes = {c["address"]: c["change"]["actions"] for c in planned.get("resource_changes", []) if c["change"]["actions"] != ["no-op"]}
    for address, actions in sorted(changes.items()):
        print(f"   plan: {address}: {'/'.join(actions)}")
    check("the plan changes the table in place", changes.get("module.logistics.aws_dynamodb_table.registry") == ["update"])
    replaced = sorted(address for address, actions in changes.items() if "delete" in actions)
    expected_replaced = ["module.logistics.aws_lambda_event_source_mapping.exporter[0]"]
    check(f"the plan destroys nothing but the exporter's stream mapping (the restored table's stream is a new one): {replaced}",
          replaced == expected_replaced)
    run(["terraform", "apply", "-no-color", "restore.plan"], cwd=example, env=env, capture=True)
    print("restore runbook: 4. the check again; what the restore dropped is back")
    result = subprocess.run([str(registry), "restore-check"], env=operator, capture_output=True, text=True, timeout=120)
    check("registry restore-check exits 0 and finds nothing above the counter",
          result.returncode == 0 and "highest ledger id above the counter: 0" in result.stdout + result.stderr)
    server = Server({**operator})
    fresh = server.register("after-adoption-value", "c0")
    server.stop()
    check(f"a new schema on {new} gets ID {fresh}, above every ID issued on {old} ({after})", fresh > after)
    pitr = dynamodb.describe_continuous_backups(TableName=new)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"]
    check(f"point-in-time recovery on {new}: {pitr}", pitr == "ENABLED")
    protected = dynamodb.describe_table(TableName=new)["Table"].get("DeletionProtectionEnabled")
    check(f"deletion protection on {new}: {protected}", protected is True)
    serving = session.client("lambda", endpoint_url=endpoint).get_function_configuration(FunctionName=function_name)
    check(f"the function's REGISTRY_TABLE is {new}", serving["Environment"]["Variables"].get("REGISTRY_TABLE") == new)
    still = dynamodb.describe_table(TableName=old)["Table"]["TableStatus"]
    check(f"{old} is forgotten by Terraform, not deleted ({still})", still == "ACTIVE")
    return failures


def home_region_step(example: Path, env: dict, variables: list[str]) -> list[str]:
    """docs/multi-region.md, "Terraform during and after a failover": on the example's two-region
    registry, home_region set to the second region alone is refused by the example's own ack_regions;
    together with ack_regions = [] it plans, with -refresh=false and -target as the page says."""
    failures: list[str] = []
    override = example / "failover_override.tf"
    for body, should_plan, label in (
        ("  home_region = var.second_region\n", False, "home_region alone is refused: ack_regions names the new home"),
        ("  home_region = var.second_region\n  ack_regions = []\n", True, "home_region with ack_regions = [] plans"),
    ):
        override.write_text(f'module "payments" {{\n{body}}}\n')
        args = ["terraform", "plan", "-no-color", "-refresh=false", "-target=module.payments", *variables]
        print("$ " + " ".join(args) + f"   ({body.strip()})", flush=True)
        result = subprocess.run(args, cwd=example, env=env, capture_output=True, text=True)
        output = result.stdout + result.stderr
        ok = result.returncode == 0 if should_plan else (result.returncode != 0 and "ack_regions must be regions other than the home region" in output)
        print(f"{'ok  ' if ok else 'FAIL'} {label}", flush=True)
        if not ok:
            sys.stderr.write(output[-3000:])
            failures.append(label)
    override.unlink()
    return failures


def stopped_function_step(example: Path, env: dict, variables: list[str], target_args: list[str], session, endpoint: str,
                          function_name: str) -> list[str]:
    """docs/multi-region.md, "Stopping the old home's function": reserved concurrency 0 set by hand
    stops a function, and the next apply of the module takes it away again (unset by default)."""
    failures: list[str] = []
    lambda_api = session.client("lambda", endpoint_url=endpoint)
    # The runbook sets 0. moto 5.2.5 leaves a reservation of 0 out of GetFunction (it tests the value's
    # truth), so the provider would read "no reservation" and plan nothing; a reservation of 1 set by
    # hand is what the provider sees here, and the module treats every hand-made value alike.
    stopped = 1
    lambda_api.put_function_concurrency(FunctionName=function_name, ReservedConcurrentExecutions=stopped)
    run(["terraform", "plan", "-no-color", "-out=stop.plan", *variables, *target_args], cwd=example, env=env, capture=True)
    planned = json.loads(run(["terraform", "show", "-json", "stop.plan"], cwd=example, env=env, capture=True))
    change = next((c["change"] for c in planned.get("resource_changes", []) if c["address"] == "module.logistics.aws_lambda_function.registry"), {})
    before = (change.get("before") or {}).get("reserved_concurrent_executions")
    after = (change.get("after") or {}).get("reserved_concurrent_executions")
    print(f"   plan after put-function-concurrency {stopped}: reserved_concurrent_executions {before} -> {after}")
    run(["terraform", "apply", "-no-color", "stop.plan"], cwd=example, env=env, capture=True)
    left = lambda_api.get_function_concurrency(FunctionName=function_name).get("ReservedConcurrentExecutions")
    ok = before == stopped and after != stopped and left is None
    print(f"{'ok  ' if ok else 'FAIL'} the next apply undoes the stop (reserved concurrency after it: {left})", flush=True)
    if not ok:
        failures.append("the next apply undoes the stop")
    return failures


def main() -> int:
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        raise SystemExit("terraform-emulator: AWS_ENDPOINT_URL is unset (start the emulator: scripts/emulator-start.sh)")
    skip = os.environ.get("TF_EMULATOR_SKIP", DEFAULT_SKIP).split()
    unexplained = [name for name in skip if name not in SKIP_REASONS]
    if unexplained:
        raise SystemExit(f"terraform-emulator: no reason recorded for skipping {unexplained} (SKIP_REASONS)")
    # What only module.payments uses goes with it.
    if "module.payments" in skip:
        skip += [name for name in ("aws_kms_key.registry_alarms_second", "aws_sns_topic.registry_alarms_second") if name not in skip]

    work = Path(tempfile.mkdtemp(prefix="terraform-emulator."))
    try:
        run([sys.executable, str(ROOT / "scripts" / "tf-provider-compat.py"), str(work)], cwd=ROOT)
        example = work / "infra" / "examples" / EXAMPLE
        endpoints = "\n".join(f"    {service:<14} = \"{endpoint}\"" for service in SERVICES)
        overrides = "".join(f'module "{name}" {{\n' + "".join(f'  {key} = "{value}"\n' for key, value in inputs.items()) + "}\n"
                            for name, inputs in INPUT_OVERRIDES.items())
        (example / "moto_override.tf").write_text(OVERRIDE.format(endpoints=endpoints) + overrides)
        for name, inputs in INPUT_OVERRIDES.items():
            print(f"OVERRIDDEN module.{name}: {inputs} (the API suite assumes the default compatibility BACKWARD)")
        placeholder = work / "bootstrap.zip"
        with zipfile.ZipFile(placeholder, "w") as archive:
            archive.writestr("bootstrap", "placeholder: the emulator stores a function's code and never runs it\n")
        cli_config = work / "terraform.rc"
        cli_config.write_text('provider_installation {\n  filesystem_mirror {\n    path = "/opt/tf-plugins"\n  }\n}\n')
        env = {**os.environ, "TF_CLI_CONFIG_FILE": str(cli_config), "TF_IN_AUTOMATION": "1", "TF_INPUT": "0",
               "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
        variables = ["-var", f"lambda_zip_path={placeholder}"]

        run(["terraform", "init", "-no-color"], cwd=example, env=env, capture=True)
        run(["terraform", "plan", "-no-color", "-out=all.plan", *variables], cwd=example, env=env, capture=True)
        planned = json.loads(run(["terraform", "show", "-json", "all.plan"], cwd=example, env=env, capture=True))
        everything = [change["address"] for change in planned.get("resource_changes", []) if change.get("mode") == "managed"]
        targets = [address for address in everything if not skipped_by(address, skip)]
        for name in skip:
            count = sum(1 for address in everything if skipped_by(address, skip) == name)
            print(f"SKIPPED {name} ({count} resources planned, not applied): {SKIP_REASONS[name]}")
        print(f"applying {len(targets)} of the {len(everything)} resources planned (every one not skipped above)")
        target_args = [f"-target={name}" for name in targets]
        run(["terraform", "apply", "-no-color", "-auto-approve", "-parallelism=4", *variables, *target_args], cwd=example, env=env, capture=True)
        state = json.loads(run(["terraform", "show", "-json"], cwd=example, env=env, capture=True))
        resources = [r for module in [state["values"]["root_module"], *state["values"]["root_module"].get("child_modules", [])] for r in module.get("resources", [])]
        applied = [r["address"] for r in resources if r.get("mode") == "managed"]
        missing = sorted(set(targets) - set(applied))
        if missing:
            raise SystemExit(f"terraform-emulator: planned but not in the state after apply: {missing}")
        print(f"applied: {len(applied)} resources in the state, every one planned and not skipped")
        function = next(r for r in resources if r["address"] == FUNCTION)
        region = planned["variables"]["region"]["value"]

        session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name=region)
        configuration = session.client("lambda", endpoint_url=endpoint).get_function_configuration(FunctionName=function["values"]["function_name"])
        configuration.pop("ResponseMetadata", None)
        variables_written = configuration.get("Environment", {}).get("Variables", {})
        print(f"the function's environment as the emulator's Lambda API answers it ({len(variables_written)} variables):")
        for name, value in sorted(variables_written.items()):
            print(f"  {name}={value}")
        table, bucket = variables_written["REGISTRY_TABLE"], variables_written["REGISTRY_BUCKET"]
        dynamodb = session.client("dynamodb", endpoint_url=endpoint)
        pitr = dynamodb.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"]
        described = dynamodb.describe_table(TableName=table)["Table"]
        s3 = session.client("s3", endpoint_url=endpoint, config=boto3.session.Config(s3={"addressing_style": "path"}))
        versioning = s3.get_bucket_versioning(Bucket=bucket).get("Status")
        print(f"table {table}: point-in-time recovery {pitr}, stream {described.get('StreamSpecification')}, "
              f"deletion protection {described.get('DeletionProtectionEnabled')}; bucket {bucket}: versioning {versioning}")
        stack = work / "stack.json"
        stack.write_text(json.dumps(configuration, default=str))

        binaries = target_directory() / "debug"
        function_binary = os.environ.get("REGISTRY_LAMBDA_BIN") or str(binaries / "registry-lambda")
        for path in (Path(function_binary), binaries / "lambda-emulator"):
            if not path.exists():
                raise SystemExit(f"terraform-emulator: {path} is missing (cargo build -p registry-lambda -p api-tests)")
        cases = os.environ.get("TF_EMULATOR_CASES", "all()")
        if cases == "none":
            print("TF_EMULATOR_CASES=none: the API suite is not run")
            failures = restore_runbook(example, env, variables, target_args, session, endpoint, variables_written,
                                       function["values"]["function_name"])
            failures += home_region_step(example, env, variables)
            failures += stopped_function_step(example, env, variables, target_args, session, endpoint, function["values"]["function_name"])
            return 1 if failures else 0
        # --workspace, as make test's build: `-p api-tests` would build the workspace's crates again with
        # that package's features and relink lambda-emulator in cargo's debug directory while other steps run it.
        listed = run(["cargo", "nextest", "list", "--workspace", "-E", "package(api-tests) and binary(api) and test(/::lambda::/)"], cwd=ROOT, env=os.environ.copy(), capture=True)
        unknown = [name for name in EXCLUDED_CASES if f" {name}" not in listed]
        if unknown:
            raise SystemExit(f"terraform-emulator: excluded cases that no longer exist: {unknown}")
        for name, reason in EXCLUDED_CASES.items():
            print(f"EXCLUDED {name}: {reason}")
        excluded = " | ".join(f"test(={name})" for name in EXCLUDED_CASES)
        test_env = {**os.environ, "API_DEPLOYED_STACK": str(stack), "AWS_REGION": region, "AWS_DEFAULT_REGION": region,
                    "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
        # One case at a time: they share Terraform's one table and bucket.
        nextest = ["cargo", "nextest", "run", "--workspace", "--no-fail-fast", "--test-threads", "1",
                   "-E", f"package(api-tests) and binary(api) and test(/::lambda::/) and ({cases}) and not ({excluded})"]
        print("$ API_DEPLOYED_STACK=" + str(stack) + " " + " ".join(nextest), flush=True)
        suite = subprocess.run(nextest, cwd=ROOT, env=test_env).returncode
        failures = restore_runbook(example, env, variables, target_args, session, endpoint, variables_written,
                                   function["values"]["function_name"])
        failures += home_region_step(example, env, variables)
        failures += stopped_function_step(example, env, variables, target_args, session, endpoint, function["values"]["function_name"])
        print(f"API suite on the Terraform-deployed registry: {'passed' if suite == 0 else 'FAILED'}; "
              f"runbooks with Terraform: {'passed' if not failures else f'{len(failures)} failed: {failures}'}")
        return 1 if suite != 0 or failures else 0
    finally:
        if os.environ.get("TF_EMULATOR_KEEP") == "1":
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
