"""Schema linking with a real client: confluent-kafka's Avro serializer writes against the SOURCE
registry (REGISTRY_URL), an exporter of the source copies the subject into a context of a second,
DESTINATION registry, and confluent-kafka's Avro deserializer configured with the destination's
context URL (`http://host:port/contexts/.team-...`, as Confluent's clients address a context)
decodes the records, resolving the writer's ID there.

No Kafka broker runs here: the records are serialized and deserialized through the client's own
AvroSerializer and AvroDeserializer with a SerializationContext (the exact calls a
SerializingProducer and a DeserializingConsumer make per message), not produced to a topic.

The destination is a `registry serve --backend memory` this module starts (REGISTRY_BIN, default
the debug build cargo made) on a free loopback port, stopped by its PID when the module ends. The source
exports with the runner of `registry serve` (embedded or aws backend). On the Lambda run
(LAMBDA_EMULATOR set) the exporter is the stream-driven exporter function, which the Runtime API
emulator does not feed with the table's stream: the module skips there, and
functions/registry-lambda/tests/exporter_stream.rs drives that function from the emulator's stream."""

import json
import os
import time
import urllib.error
import urllib.request
import uuid

import pytest
from conftest import free_port, payment_schema, registry_binary, serving, wire_id
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer


# Far above what a pass takes (the source's runner passes every second and after each write), so
# only an exporter that never delivers fails here.
PATIENCE_SECONDS = 120

V1 = payment_schema()
V2 = payment_schema({"name": "note", "type": ["null", "string"], "default": None})


def _call(method: str, url: str, body: dict | None = None) -> tuple[int, object]:
    """Status and JSON answer of a request, also for error statuses."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/vnd.schemaregistry.v1+json"} if body is not None else {}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _wait_for(what: str, check, status_url: str):
    """Polls `check` until it answers something truthy; fails with the exporter's status if never."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not exported within {PATIENCE_SECONDS} s; exporter status: {_call('GET', status_url)}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def destination_url(tmp_path_factory) -> str:
    if os.environ.get("LAMBDA_EMULATOR"):
        pytest.skip("the Lambda run's exporter is the stream-driven function, which the Runtime API emulator does not feed")
    binary = registry_binary()
    work = tmp_path_factory.mktemp("destination")
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "REGISTRY_BIND": "127.0.0.1",
        "REGISTRY_DATA_DIR": str(work / "data"),
        "RUST_LOG": os.environ.get("RUST_LOG", "warn"),
    }
    env.pop("REGISTRY_USERS_FILE", None)
    env.pop("REGISTRY_USERS", None)
    url = f"http://127.0.0.1:{port}"
    with serving([binary, "serve", "--backend", "memory"], env, url, work / "server.log", "the destination registry"):
        yield url


def test_records_written_at_the_source_decode_at_the_destination_context(
    registry_url, destination_url, topic, subject, value_ctx
):
    context = f".team-{uuid.uuid4().hex[:8]}"
    name = f"link-{uuid.uuid4().hex[:8]}"
    source = SchemaRegistryClient({"url": registry_url})
    first = {"id": "p-1", "amount": 12.5}
    data_v1 = AvroSerializer(source, json.dumps(V1))(first, value_ctx)

    exporter = {
        "name": name,
        "contextType": "CUSTOM",
        "context": context,
        "subjects": [f"{topic}-*"],
        "config": {"schema.registry.url": destination_url},
    }
    assert _call("POST", f"{registry_url}/exporters", exporter) == (200, {"name": name})
    status_url = f"{registry_url}/exporters/{name}/status"
    try:
        qualified = f":{context}:{subject}"
        versions_url = f"{destination_url}/subjects/{qualified}/versions"
        _wait_for("version 1", lambda: _call("GET", versions_url) == (200, [1]), status_url)

        # A consumer of the destination context, its cache empty: the writer's ID resolves there.
        consumer = AvroDeserializer(SchemaRegistryClient({"url": f"{destination_url}/contexts/{context}"}))
        assert consumer(data_v1, value_ctx) == first
        at_destination = SchemaRegistryClient({"url": destination_url}).get_latest_version(qualified)
        assert at_destination.schema_id == wire_id(data_v1), "the exporter keeps the source's ID"

        # A new version at the source follows, and its records decode at the destination too.
        second = {"id": "p-2", "amount": 3.0, "note": "v2"}
        data_v2 = AvroSerializer(source, json.dumps(V2))(second, value_ctx)
        assert wire_id(data_v2) != wire_id(data_v1)
        _wait_for("version 2", lambda: _call("GET", versions_url) == (200, [1, 2]), status_url)
        fresh = AvroDeserializer(SchemaRegistryClient({"url": f"{destination_url}/contexts/{context}"}))
        assert fresh(data_v2, value_ctx) == second
        assert fresh(data_v1, value_ctx) == first, "read with its writer's schema (no reader schema given)"

        status = _call("GET", status_url)
        assert status[0] == 200 and status[1]["state"] == "RUNNING", status
    finally:
        assert _call("DELETE", f"{registry_url}/exporters/{name}")[0] == 200
