"""confluent-kafka's SchemaRegistryClient and Avro serdes authenticating with `basic.auth.user.info`
against a `registry serve` with HTTP Basic on.

The module starts its own server: users created with `registry passwd` in a temporary users file
(REGISTRY_USERS_FILE), on a free loopback port, stopped by its PID when the module ends, also on
failure. Binary: REGISTRY_BIN (default the debug build cargo made). Backend: REGISTRY_BACKEND as
scripts/clients-test.sh sets it per run (with the AWS variables for `aws`), `memory` when unset;
the data directory is a fresh temporary one. With LAMBDA_EMULATOR set (the Lambda run), the
server is that Runtime API emulator running the registry-lambda function, with the same users
file, instead of `registry serve`."""

import json
import urllib.error
import urllib.request
import uuid
from email.message import Message

import pytest
from conftest import payment_schema, serving_with_basic_auth, wire_id, write_users
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext


# user -> (role, password, subject prefixes). The reader's password holds a ':' (only the first
# ':' of basic.auth.user.info separates user from password) and a space.
USERS = {
    "writer": ("write", "w-secret-1", []),
    "reader": ("read", "r:secret 2", []),
    "admin": ("admin", "a-secret-3", []),
    "team-a": ("write", "t-secret-4", ["team-a."]),
}

PAYMENT = payment_schema({"name": "note", "type": ["null", "string"], "default": None})
RECORD = {"id": "p-1", "amount": 12.5, "note": "auth"}


def _get(url: str, headers: dict | None = None) -> tuple[int, Message, bytes]:
    """Status, headers (case-insensitive) and body of a GET, also for error statuses."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.fixture(scope="module")
def auth_url(tmp_path_factory) -> str:
    work = tmp_path_factory.mktemp("auth")
    users_file = work / "users.json"
    write_users(users_file, USERS)
    stored = users_file.read_text(encoding="utf-8")
    for _, password, _ in USERS.values():
        assert password not in stored, "the users file must hold hashes, never passwords"
    with serving_with_basic_auth(work, users_file, "auth") as url:
        yield url


@pytest.fixture
def as_user(auth_url: str):
    """A factory of clients (fresh caches) authenticating as a user of USERS, or with `password`."""

    def make(user: str, password: str | None = None) -> SchemaRegistryClient:
        secret = USERS[user][1] if password is None else password
        return SchemaRegistryClient({"url": auth_url, "basic.auth.user.info": f"{user}:{secret}"})

    return make


@pytest.fixture
def subject() -> str:
    return f"payments-{uuid.uuid4().hex[:12]}-value"


def avro(schema: dict = PAYMENT) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


def refused(call, status: int, error_code: int) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as raised:
        call()
    assert (raised.value.http_status_code, raised.value.error_code) == (status, error_code), raised.value
    return raised.value


def test_write_user_registers_and_reads(as_user, subject):
    schema_id = as_user("writer").register_schema(subject, avro())
    assert schema_id > 0

    reader = as_user("writer")
    assert json.loads(reader.get_schema(schema_id).schema_str) == PAYMENT
    latest = reader.get_latest_version(subject)
    assert (latest.schema_id, latest.version) == (schema_id, 1)
    assert reader.get_versions(subject) == [1]
    assert reader.lookup_schema(subject, avro()).schema_id == schema_id
    assert subject in reader.get_subjects()


def test_read_user_reads_but_cannot_register_or_delete(as_user, subject):
    schema_id = as_user("writer").register_schema(subject, avro())

    reader = as_user("reader")
    assert reader.get_latest_version(subject).schema_id == schema_id
    assert json.loads(reader.get_schema(schema_id).schema_str) == PAYMENT
    assert reader.lookup_schema(subject, avro()).schema_id == schema_id
    assert reader.test_compatibility(subject, avro()) is True

    v2 = {**PAYMENT, "fields": PAYMENT["fields"] + [{"name": "currency", "type": "string", "default": "EUR"}]}
    error = refused(lambda: reader.register_schema(subject, avro(v2)), 403, 40301)
    assert subject in error.error_message
    refused(lambda: reader.delete_subject(subject), 403, 40301)
    assert as_user("writer").get_versions(subject) == [1], "refused calls change nothing"


@pytest.mark.parametrize(
    "user, password",
    [("writer", "not-the-password"), ("reader", "r"), ("nobody", "w-secret-1"), ("writer", "")],
    ids=["wrong password", "password prefix", "unknown user", "empty password"],
)
def test_bad_credentials_are_401(as_user, subject, user, password):
    client = as_user(user, password)
    refused(client.get_subjects, 401, 40101)
    refused(lambda: client.register_schema(subject, avro()), 401, 40101)
    assert as_user("writer").get_subjects().count(subject) == 0, "nothing was registered"


def test_no_credentials_are_401_with_a_basic_challenge(auth_url, subject):
    client = SchemaRegistryClient({"url": auth_url})
    refused(client.get_subjects, 401, 40101)
    refused(lambda: client.register_schema(subject, avro()), 401, 40101)

    status, headers, body = _get(auth_url + "/subjects")
    assert status == 401
    assert headers.get("WWW-Authenticate", "").startswith("Basic ")
    assert json.loads(body)["error_code"] == 40101
    assert _get(auth_url + "/")[0] == 200, "GET / stays open for health checks"


def test_avro_serializer_round_trip_with_auth(as_user, subject):
    topic = subject.removesuffix("-value")
    ctx = SerializationContext(topic, MessageField.VALUE)
    data = AvroSerializer(as_user("writer"), json.dumps(PAYMENT))(RECORD, ctx)
    registered = as_user("reader").get_latest_version(subject)
    assert wire_id(data) == registered.schema_id

    # A consumer with only read rights fetches the writer schema by ID.
    assert AvroDeserializer(as_user("reader"))(data, ctx) == RECORD

    # A read-only producer serializes with the registered schema, but cannot auto-register.
    latest = AvroSerializer(
        as_user("reader"), json.dumps(PAYMENT), conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    assert wire_id(latest(RECORD, ctx)) == registered.schema_id
    other = SerializationContext(f"{topic}-other", MessageField.VALUE)
    refused(lambda: AvroSerializer(as_user("reader"), json.dumps(PAYMENT))(RECORD, other), 403, 40301)


def test_config_and_hard_delete_need_admin(as_user, subject):
    writer, admin = as_user("writer"), as_user("admin")
    writer.register_schema(subject, avro())
    refused(lambda: writer.set_compatibility(subject, "FULL"), 403, 40301)
    admin.set_compatibility(subject, "FULL")
    assert as_user("reader").get_compatibility(subject) == "FULL"

    assert writer.delete_subject(subject) == [1]
    refused(lambda: writer.delete_subject(subject, permanent=True), 403, 40301)
    assert admin.delete_subject(subject, permanent=True) == [1]
    refused(lambda: as_user("reader").get_versions(subject), 404, 40401)


def test_subject_prefix_scopes_a_user(as_user):
    own, foreign = f"team-a.{uuid.uuid4().hex[:12]}-value", f"team-b.{uuid.uuid4().hex[:12]}-value"
    team_a = as_user("team-a")
    schema_id = team_a.register_schema(own, avro())
    assert team_a.get_latest_version(own).schema_id == schema_id

    refused(lambda: team_a.register_schema(foreign, avro()), 403, 40301)
    as_user("writer").register_schema(foreign, avro())
    refused(lambda: team_a.get_latest_version(foreign), 403, 40301)
    visible = team_a.get_subjects()
    assert own in visible and foreign not in visible
    assert all(name.startswith("team-a.") for name in visible)
