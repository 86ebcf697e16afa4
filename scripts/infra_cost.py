#!/usr/bin/env python3
"""The cost estimate of the Terraform module's README ("What it costs"), computed from two small
tables: AWS calls per registry operation and list prices. Change a count or a price here, run
`python3 scripts/infra_cost.py > /tmp/cost.md`, and paste it between the README's cost markers;
scripts/infra_check.py fails while the README and this output differ.
"""

# AWS calls per operation on a cold instance (nothing in memory yet), measured on the emulator through
# the registry itself by registry-store-aws's `calls` test (BENCHMARKS.md: [5, 1, 2, 2, 2]). The split
# into S3 and DynamoDB calls, and into reads and writes, is read off the store code. A DynamoDB write
# call is one transaction; it is priced by the items it writes (docs/dynamodb.md, "create_version,
# new id"), 2 write units each (transactional, items under 1 KB); its condition checks are not
# counted. The usage marker (one conditional write per subject per day per instance, by lookups and
# re-registrations whose subject has no version registered that day) is left out: it is not per
# request.
COUNTS_SOURCE = "BENCHMARKS.md, cold instance: register new 5, re-register 1, lookup 2, get by ID 2, get by guid 2"
# A new schema's registration writes the ID counter, the fingerprint and ID bindings, the guid item,
# the version row, the ID's edge, the subject index item and the subject's record of its live version.
NEW_REGISTRATION_ITEMS = 8
OPERATIONS = [
    # name, DynamoDB reads, DynamoDB write calls, S3 GETs, S3 PUTs, answered from memory when warm
    # Write context with the schema's bindings, the subject's rows; one transaction; S3: the body and the ID ledger claim.
    ("register a new schema", 2, 1, 0, 2, False),
    # Write context with the schema's bindings (the guid index check) and the subject's record of its live version
    # (no rows read; the answer's body is the posted one). A subject whose record is missing or untrusted (written
    # before records existed, or since a delete) reads its rows and writes the record once: 3 calls, then 1.
    ("re-register (already registered)", 1, 0, 0, 0, False),
    # The subject's rows, the subject and global configs in one read (the answer's body is the posted one).
    ("lookup (`POST /subjects/{s}`)", 2, 0, 0, 0, True),
    ("get by ID", 1, 0, 1, 0, True),
    ("get by guid", 1, 0, 1, 0, True),  # the guid item carries the ID while a row does
]

# Lambda time per operation: the calls run one after another; assumed latencies (not measured here).
MS_PER_DYNAMODB_CALL = 8
MS_PER_S3_CALL = 20
MS_IN_PROCESS = 2
MEMORY_GB = 0.25  # memory_mb = 256

# List prices, us-east-1, USD. Each with where and when it was listed.
PRICES = {
    "lambda_request": (0.20 / 1e6, "Lambda requests, $0.20 per 1M (AWS Lambda pricing, 2024-2025)"),
    "lambda_gb_s": (0.0000133334, "Lambda duration on Arm, $0.0000133334 per GB-second (AWS Lambda pricing, 2024-2025)"),
    "dynamodb_read": (0.125 / 1e6, "DynamoDB on-demand reads, $0.125 per 1M read request units (since 2024-11-01)"),
    "dynamodb_write": (0.625 / 1e6, "DynamoDB on-demand writes, $0.625 per 1M write request units (since 2024-11-01)"),
    "s3_get": (0.0004 / 1e3, "S3 Standard GET, $0.0004 per 1,000 (S3 pricing, 2025)"),
    "s3_put": (0.005 / 1e3, "S3 Standard PUT, $0.005 per 1,000 (S3 pricing, 2025)"),
    "cloudfront_request": (0.01 / 1e4, "CloudFront HTTPS requests, $0.0100 per 10,000 in North America and Europe, after 10M free per month (CloudFront pricing, 2025)"),
    "kms_key_month": (1.00, "KMS customer-managed key, $1 per month (KMS pricing, March 2026)"),
    "secret_month": (0.40, "Secrets Manager, $0.40 per secret per month (2025)"),
    "alarm_metric_month": (0.10, "CloudWatch standard-resolution alarm, $0.10 per alarm metric per month, first 10 free per account (CloudWatch pricing, 2025)"),
    "custom_metric_month": (0.30, "CloudWatch custom metric (EMF included), $0.30 per metric per month for the first 10,000, prorated by the hours it receives data (CloudWatch pricing, 2025)"),
    "log_ingest_gb": (0.50, "CloudWatch Logs ingestion (standard class), $0.50 per GB (CloudWatch pricing, 2025)"),
    "log_store_gb_month": (0.03, "CloudWatch Logs storage, $0.03 per GB-month, compressed (CloudWatch pricing, 2025)"),
}
# Several regions (regions.tf, docs/multi-region.md): what each region beyond the first adds.
PRICES.update({
    "dynamodb_replicated_write": (0.625 / 1e6, "DynamoDB global tables, on-demand replicated writes, $0.625 per 1M replicated write request units, as a single-region write (since 2024-11-01)"),
    "dynamodb_storage_gb_month": (0.25, "DynamoDB Standard storage, $0.25 per GB-month, per replica (DynamoDB pricing, 2025)"),
    "dynamodb_pitr_gb_month": (0.20, "DynamoDB point-in-time recovery, $0.20 per GB-month, per replica (DynamoDB pricing, 2025)"),
    "s3_storage_gb_month": (0.023, "S3 Standard storage, $0.023 per GB-month, first 50 TB (S3 pricing, 2025)"),
    "inter_region_gb": (0.02, "Data transfer between regions, $0.02 per GB out of us-east-1 (DynamoDB replication and S3 replication alike; more out of some regions, Asia Pacific and South America among them: check the pair) (AWS data transfer pricing, 2025)"),
    "kms_request": (0.03 / 1e4, "KMS requests, $0.03 per 10,000 after 20,000 free per month (KMS pricing, 2025)"),
})
# Sizes crossing regions: a replicated item (a version row, binding or index item; the schema text
# lives in S3) and a new schema's body (the canonical text as JSON) and ledger entry.
REPLICATED_ITEM_KB = 0.5
NEW_SCHEMA_OBJECT_KB = {"body": 2.0, "ledger": 0.1}
# S3 replication metrics, per rule (one rule per destination): ReplicationLatency,
# BytesPendingReplication, OperationsPendingReplication, OperationsFailedReplication, billed as custom
# metrics for the hours they receive data (an upper bound: all month).
S3_REPLICATION_METRICS_PER_RULE = 4
# Alarms a region adds (regions.tf, alarms.tf): its function's 5xx and errors and the reads its
# replica missed (HomeFallbacks: every region but the home has one, and the home moves), and for every
# ordered pair of regions, DynamoDB and S3 replication latency and S3 failed replication. With
# ack_regions, every region's function also alarms on its ReplicationAckTimeouts.
REGION_FUNCTION_ALARMS = 3
REPLICATION_ALARMS_PER_PAIR = 3
ACK_TIMEOUT_ALARMS_PER_REGION = 1
# A registration through a read region is committed in the home region: each of its calls crosses
# regions (assumed round trip, e.g. ap-south-1 to ap-southeast-1) and carries about this much.
CROSS_REGION_RTT_MS = 70
CROSS_REGION_CALL_KB = 3.0
# RPO 0 (ack_regions): the home waits until the acknowledging region shows the registration, polling
# its replica (one BatchGetItem of the row and the ID binding, eventually consistent: 1 read unit) every
# 50 ms and then reading the body from its bucket once. Assumed replication lag while it waits.
ACK_LAG_MS = 1000
ACK_POLL_MS = 50


def region_costs(regions=2):
    """What the `regions`-th region adds: (per month while idle, per 1M new registrations, per 1M
    registrations through a read region, per 1M registrations waiting for it with ack_regions, alarms,
    S3 replication metrics per month), in dollars."""
    pairs_added = 2 * (regions - 1)  # to and from each region already there
    alarms = REGION_FUNCTION_ALARMS + REPLICATION_ALARMS_PER_PAIR * pairs_added
    metrics = S3_REPLICATION_METRICS_PER_RULE * pairs_added * price("custom_metric_month")
    idle = price("kms_key_month") + price("secret_month") + alarms * price("alarm_metric_month")
    # A new registration reaches the region: its items as replicated writes, the body and ledger entry
    # as S3 replication requests (billed as PUTs in the destination), and their bytes across regions.
    replicated = NEW_REGISTRATION_ITEMS * price("dynamodb_replicated_write") + 2 * price("s3_put")
    kilobytes = NEW_REGISTRATION_ITEMS * REPLICATED_ITEM_KB + sum(NEW_SCHEMA_OBJECT_KB.values())
    replicated += kilobytes / 1e6 * price("inter_region_gb")
    # Through a read region: the same calls, each a round trip away, and their bytes across regions.
    calls = sum(OPERATIONS[0][1:5])
    through = calls * CROSS_REGION_RTT_MS / 1000 * MEMORY_GB * price("lambda_gb_s") + calls * CROSS_REGION_CALL_KB / 1e6 * price("inter_region_gb")
    # Waiting for an acknowledging region: the home's function waits, and polls.
    polls = ACK_LAG_MS // ACK_POLL_MS
    ack = ACK_LAG_MS / 1000 * MEMORY_GB * price("lambda_gb_s") + polls * price("dynamodb_read") + price("s3_get")
    return idle, replicated * 1e6, through * 1e6, ack * 1e6, alarms, metrics


# 5xx, 4xx, errors, throttles, concurrency, p99 duration, DynamoDB reads + writes, churn, ID growth;
# the exporter's iterator age, errors and failure queue (exporter_enabled, on by default).
ALARM_METRICS = 13

# The exporter (exporter.tf). Lambda's reads of the table's stream are free; records the stream filters
# drop invoke nothing. Per change exported: the subject's rows (one Query), the body (one S3 GET), the
# exporter's offset (one write) and about two requests to the destination (its own cost, not counted),
# assumed 50 ms each. A batch of up to exporter_batch_size changes is one invocation: a lone change
# pays the request price alone.
EXPORTER_CHANGE = {"reads": 1, "writes": 1, "s3_gets": 1, "destination_requests": 2, "ms_per_destination_request": 50}
# Scheduled catch-up runs (exporter_catch_up_minutes = 15): one Query of the exporters' items each,
# about 20 ms when they are level.
EXPORTER_RUNS_PER_MONTH = 30 * 24 * 60 // 15
EXPORTER_RUN_MS = 20
SQS_REQUEST = 0.40 / 1e6  # SQS standard requests, $0.40 per 1M after 1M free (SQS pricing, 2025)

# Log bytes per request (CloudWatch bills the event plus 26 bytes): the EMF line, which is also the
# request's access line (registry_lambda::emf: about 500 bytes for a read, 750 for a registration that
# declares its counters), and no platform lines (START, END, REPORT: about 700 bytes more each request
# at the INFO system log level; the module sets WARN).
LOG_BYTES = {"read": 500 + 26, "registration": 750 + 26}
PLATFORM_LOG_BYTES_AT_INFO = 700
LOG_RETENTION_MONTHS = 12  # log_retention_days = 365
LOG_COMPRESSION = 0.15  # stored size over ingested size (CloudWatch compresses stored logs)

# Custom metrics of one registry serving traffic all month (registry_lambda::emf): Requests and
# Latency by status class (2xx and 4xx: 4; 5xx and 3xx add 2 each when they occur), register_schema's
# latency (1), and the counters that moved (NewSchemaIds, NewVersions: 2; churn and throttles only
# when they happen). The dimensions replaced, [Registry, Operation, Status], made one series per
# operation and status seen: ~50 operations x a few statuses x 2 metrics.
CUSTOM_METRICS = 4 + 1 + 2
CUSTOM_METRICS_BEFORE = (25, 80)  # operation-and-status pairs an [Operation, Status] scheme reached, low and high


def price(name):
    return PRICES[name][0]


def operation_cost(reads, writes, s3_gets, s3_puts):
    """(Lambda ms, Lambda $, storage $) of one operation."""
    ms = (reads + writes) * MS_PER_DYNAMODB_CALL + (s3_gets + s3_puts) * MS_PER_S3_CALL + MS_IN_PROCESS
    lambda_cost = price("lambda_request") + ms / 1000 * MEMORY_GB * price("lambda_gb_s")
    items = writes * NEW_REGISTRATION_ITEMS
    storage = reads * price("dynamodb_read") + items * 2 * price("dynamodb_write")
    storage += s3_gets * price("s3_get") + s3_puts * price("s3_put")
    return ms, lambda_cost, storage


def money(value):
    return f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def exporter_costs():
    """(per change exported in a batch, per lone change, catch-up runs per month), in dollars."""
    change = EXPORTER_CHANGE
    ms = (change["reads"] + change["writes"]) * MS_PER_DYNAMODB_CALL + change["s3_gets"] * MS_PER_S3_CALL
    ms += change["destination_requests"] * change["ms_per_destination_request"]
    duration = ms / 1000 * MEMORY_GB * price("lambda_gb_s")
    storage = change["reads"] * price("dynamodb_read") + change["writes"] * price("dynamodb_write") + change["s3_gets"] * price("s3_get")
    runs = EXPORTER_RUNS_PER_MONTH * (price("lambda_request") + EXPORTER_RUN_MS / 1000 * MEMORY_GB * price("lambda_gb_s") + price("dynamodb_read"))
    return duration + storage, duration + storage + price("lambda_request"), runs


def section():
    read_logs = LOG_BYTES["read"] / 1e9 * price("log_ingest_gb")
    lines = [
        "**An estimate, not a quote**: list prices for us-east-1 (below, with their dates), without free tiers",
        f"unless stated, and the AWS call counts of {COUNTS_SOURCE}. Lambda time assumes "
        f"{MS_PER_DYNAMODB_CALL} ms per DynamoDB call, {MS_PER_S3_CALL} ms per S3 call and {MS_IN_PROCESS} ms in",
        f"process, one call after another, at `memory_mb = {int(MEMORY_GB * 1024)}`. Regenerate with `scripts/infra_cost.py`.",
        "",
        "Every figure includes the request's CloudWatch Logs ingestion (the last column shows it alone).",
        "",
        "| operation | AWS calls (DynamoDB reads + writes, S3) | Lambda ms | per 1M, cold | per 1M, warm (from memory) | per 1,000, cold | of which logs, per 1M |",
        "|---|---|---|---|---|---|---|",
    ]
    warm_ms = MS_IN_PROCESS
    warm = price("lambda_request") + warm_ms / 1000 * MEMORY_GB * price("lambda_gb_s")
    for name, reads, writes, s3_gets, s3_puts, from_memory in OPERATIONS:
        ms, lambda_cost, storage = operation_cost(reads, writes, s3_gets, s3_puts)
        logs = (LOG_BYTES["registration"] if writes else LOG_BYTES["read"]) / 1e9 * price("log_ingest_gb")
        total = lambda_cost + storage + logs
        calls = f"{reads} + {writes}, {s3_gets + s3_puts}"
        warm_cell = money((warm + logs) * 1e6) if from_memory else "n/a (reads the store)"
        lines.append(f"| {name} | {calls} | {ms} | {money(total * 1e6)} | {warm_cell} | {money(total * 1e3)} | {money(logs * 1e6)} |")
    idle = PRICES["kms_key_month"][0] + PRICES["secret_month"][0] + ALARM_METRICS * PRICES["alarm_metric_month"][0]
    metrics_month = CUSTOM_METRICS * price("custom_metric_month")
    before_low, before_high = (count * 2 * price("custom_metric_month") for count in CUSTOM_METRICS_BEFORE)
    stored_per_million = LOG_BYTES["read"] * 1e6 / 1e9 * LOG_COMPRESSION * price("log_store_gb_month") * LOG_RETENTION_MONTHS
    platform = PLATFORM_LOG_BYTES_AT_INFO / 1e9 * price("log_ingest_gb")
    lines += [
        "",
        f"- **Idle** (no traffic): about {money(idle)} a month: the KMS key ({money(price('kms_key_month'))}), the users",
        f"  secret ({money(price('secret_month'))}; the JWKS secret adds as much), {ALARM_METRICS} alarm metrics "
        f"({money(ALARM_METRICS * price('alarm_metric_month'))}, free within an account's",
        "  first 10), plus storage: DynamoDB $0.25 and point-in-time recovery $0.20 per GB-month, S3 $0.023 per",
        "  GB-month, logs. Lambda, the Function URL, on-demand DynamoDB and the custom metrics (billed only for",
        "  hours they receive data) cost nothing while idle.",
        f"- **Custom metrics** (per registry-month with traffic): about {CUSTOM_METRICS} EMF metrics, {money(metrics_month)}:",
        "  requests and latency by status class, registration latency, the ID and version counters (see",
        "  `registry_lambda::emf`). A 5xx or 3xx class, churn or throttling adds $0.30-0.60 each in the months they",
        f"  occur. Per operation and status they were {money(before_low)}-{money(before_high)}.",
        f"- **Logs**: about {(LOG_BYTES['read'] + LOG_BYTES['registration']) // 2 / 1000:.1f} KB per request (the EMF line, which is also the request's access line),",
        f"  {money(read_logs * 1e6)}-{money(LOG_BYTES['registration'] / 1e9 * price('log_ingest_gb') * 1e6)} per 1M requests to ingest, more than a warm read's Lambda cost; kept",
        f"  {LOG_RETENTION_MONTHS} months (`log_retention_days`, 365) they add about {money(stored_per_million)} of storage per 1M requests. The",
        f"  function's system log level is WARN: at INFO the START/END/REPORT lines would add {money(platform * 1e6)} per 1M.",
        f"- **The caches.** A warm instance answers repeated by-ID reads and lookups from memory: only the Lambda",
        f"  request and about {warm_ms} ms are paid, {money(warm * 1e6)} per 1M (plus its logs) instead of the cold figures above. "
        "A Kafka Connect rebalance",
        "  is mostly such repeats. With a custom domain every request also pays CloudFront "
        f"({money(price('cloudfront_request') * 1e6)} per 1M after the free 10M);",
        "  an ID answered from the edge cache (auth off, see Caching at the edge) then costs only that: the edge",
        "  saves Lambda time and concurrency more than money.",
        "- Registrations are dominated by the S3 PUT of the body and the DynamoDB writes, not by Lambda.",
        f"- **Exporter** (`exporter_enabled`, schema linking): Lambda's reads of the table's stream are free and",
        f"  filtered-out records invoke nothing. A change exported costs about {money(exporter_costs()[0] * 1e3)} per 1,000 in a batch",
        f"  ({money(exporter_costs()[1] * 1e3)} per 1,000 as lone changes, one invocation each): its rows, body and offset, and",
        f"  {EXPORTER_CHANGE['destination_requests']} requests to the destination ({EXPORTER_CHANGE['ms_per_destination_request']} ms each assumed), which bills them as its own traffic. The",
        f"  catch-up run every 15 minutes costs about {money(exporter_costs()[2])} a month; the failure queue costs nothing while empty",
        f"  ({money(SQS_REQUEST * 1e6)} per 1M messages). Its 3 alarms are counted above.",
        "- Per cold start: one `GetSecretValue` per secret ($0.05 per 10,000) and a few KMS requests (20,000 free",
        "  a month, then $0.03 per 10,000); then one `GetSecretValue` per secret per `auth_reload_seconds` while the",
        "  instance serves (about $0.22 a month for an instance serving all month at 60 s).",
        f"- A new schema's registration is one transaction of {NEW_REGISTRATION_ITEMS} items ({NEW_REGISTRATION_ITEMS * 2} write units), priced as such above.",
    ]
    idle, replicated, through, ack, alarms, metrics = region_costs(2)
    third = region_costs(3)
    gb_month = price("dynamodb_storage_gb_month") + price("dynamodb_pitr_gb_month")
    lines += [
        "",
        "**Each further region** (`regions`, [docs/multi-region.md](../../../docs/multi-region.md)): reads there cost what",
        "the table above says (they are answered from the region's own replica and bucket, by its own function);",
        "what the region adds:",
        "",
        "| what | the second region | why |",
        "|---|---|---|",
        f"| idle, per month | {money(idle)} | its KMS key, the users secret's replica (billed as a secret; the JWKS secret's adds as much), {alarms} alarm metrics (its function's 5xx, errors and reads answered by the home region, and {REPLICATION_ALARMS_PER_PAIR} per direction of replication); with `ack_regions`, {ACK_TIMEOUT_ALARMS_PER_REGION} more in every region (its writes whose wait ran out) |",
        f"| S3 replication metrics, per month | up to {money(metrics)} | {S3_REPLICATION_METRICS_PER_RULE} metrics per replication rule, one rule each way, billed for the hours they receive data |",
        f"| storage, per GB-month of table | {money(gb_month)} | the replica and its point-in-time recovery; bodies add {money(price('s3_storage_gb_month'))} per GB-month in its bucket |",
        f"| per 1M new schemas registered anywhere | {money(replicated)} | {NEW_REGISTRATION_ITEMS} replicated writes, 2 S3 replication requests (body and ledger entry, billed as PUTs) and about {NEW_REGISTRATION_ITEMS * REPLICATED_ITEM_KB + sum(NEW_SCHEMA_OBJECT_KB.values()):.1f} KB across regions |",
        f"| per 1M registrations sent to a read region | +{money(through)} | committed in the home region: {sum(OPERATIONS[0][1:5])} calls a round trip away ({CROSS_REGION_RTT_MS} ms assumed each: Lambda time) and about {CROSS_REGION_CALL_KB:.0f} KB each across regions |",
        f"| per 1M registrations with `ack_regions` naming it | +{money(ack)} | the home's function waits for the region's replica ({ACK_LAG_MS} ms of lag assumed), polling it every {ACK_POLL_MS} ms, then reads the body there once |",
        f"| the function, its URL, logs and custom metrics | as the first region's | per request (the table above) and per registry-month with traffic (custom metrics), and {money(price('custom_metric_month'))} a month for `HomeFallbacks` in a month its replica lagged (`ReplicationAckTimeouts` too, in a month a wait ran out); nothing while idle |",
        "",
        f"A third region adds {money(third[0])} a month idle ({third[4]} alarm metrics: replication to and from both",
        f"regions already there), up to {money(third[5])} of S3 replication metrics, and its own {money(third[1])} per 1M new schemas.",
        "Re-registrations, lookups and config reads write nothing and replicate nothing. KMS: replication",
        "decrypts each object in its source region and encrypts it in the destination; the buckets' S3 Bucket",
        f"Keys make that a request per bucket key period rather than per object (without them, up to 4 requests",
        f"per new schema, {money(4 * price('kms_request') * 1e6)} per 1M).",
        "",
        "Prices used:",
    ]
    lines += [f"- {source}" for _, source in PRICES.values()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(section())
