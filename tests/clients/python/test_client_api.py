"""SchemaRegistryClient calls against the registry: what an application or tool written with
confluent-kafka sees, including the client's own error type for registry errors."""

import json

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}
V2 = {**V1, "fields": V1["fields"] + [{"name": "qty", "type": "int", "default": 1}]}
V3_INCOMPATIBLE = {**V1, "fields": V1["fields"] + [{"name": "price", "type": "double"}]}
# Confluent answers error_code 409 up to CP 8.0.3 and 40901 from 8.0.4 on; clients accept both.
INCOMPATIBLE_CODES = (409, 40901)


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


def test_register_then_read_back_by_id_version_and_latest(client, fresh_client, subject):
    schema_id = client.register_schema(subject, avro(V1))
    assert isinstance(schema_id, int) and schema_id > 0
    assert client.register_schema(subject, avro(V1)) == schema_id, "re-registering is idempotent"

    reader = fresh_client()
    by_id = reader.get_schema(schema_id)
    assert by_id.schema_type == "AVRO"
    assert json.loads(by_id.schema_str) == V1

    latest = reader.get_latest_version(subject)
    assert (latest.schema_id, latest.subject, latest.version) == (schema_id, subject, 1)
    assert json.loads(latest.schema.schema_str) == V1

    first = reader.get_version(subject, 1)
    assert (first.schema_id, first.version) == (schema_id, 1)

    found = reader.lookup_schema(subject, avro(V1))
    assert (found.schema_id, found.subject, found.version) == (schema_id, subject, 1)

    assert subject in reader.get_subjects()
    assert reader.get_versions(subject) == [1]


def test_same_schema_in_two_subjects_shares_the_id(client, subject):
    other = subject.replace("-value", "-key")
    assert client.register_schema(subject, avro(V1)) == client.register_schema(other, avro(V1))


def test_unknown_subject_version_and_id_raise_the_clients_error(fresh_client, subject):
    client = fresh_client()
    with pytest.raises(SchemaRegistryError) as missing_subject:
        client.get_latest_version(subject)
    assert (missing_subject.value.http_status_code, missing_subject.value.error_code) == (404, 40401)

    client.register_schema(subject, avro(V1))
    with pytest.raises(SchemaRegistryError) as missing_version:
        client.get_version(subject, 7)
    assert (missing_version.value.http_status_code, missing_version.value.error_code) == (404, 40402)

    with pytest.raises(SchemaRegistryError) as missing_id:
        client.get_schema(2_000_000_000)
    assert (missing_id.value.http_status_code, missing_id.value.error_code) == (404, 40403)

    with pytest.raises(SchemaRegistryError) as not_registered:
        client.lookup_schema(subject, avro(V2))
    assert (not_registered.value.http_status_code, not_registered.value.error_code) == (404, 40403)


def test_invalid_schema_is_refused_with_42201(client, subject):
    with pytest.raises(SchemaRegistryError) as invalid:
        client.register_schema(subject, Schema('{"type": "record", "name": "X"}', "AVRO"))
    assert (invalid.value.http_status_code, invalid.value.error_code) == (422, 42201)


def test_delete_version_soft_then_permanent(client, fresh_client, subject):
    first = client.register_schema(subject, avro(V1))
    second = client.register_schema(subject, avro(V2))
    assert first != second
    assert client.get_versions(subject) == [1, 2]

    assert client.delete_version(subject, 2) == 2
    assert client.get_versions(subject) == [1]
    assert client.get_versions(subject, deleted=True) == [1, 2]
    assert fresh_client().get_latest_version(subject).version == 1
    assert fresh_client().get_schema(second) is not None, "a soft-deleted version's id still resolves"

    assert client.delete_version(subject, 2, permanent=True) == 2
    assert client.get_versions(subject, deleted=True) == [1]
    with pytest.raises(SchemaRegistryError) as gone:
        fresh_client().get_version(subject, 2, deleted=True)
    assert gone.value.error_code == 40402


def test_delete_subject_soft_then_permanent(client, fresh_client, subject):
    client.register_schema(subject, avro(V1))
    client.register_schema(subject, avro(V2))

    with pytest.raises(SchemaRegistryError) as not_soft_deleted:
        client.delete_subject(subject, permanent=True)
    assert not_soft_deleted.value.error_code == 40405, "permanent delete needs a soft delete first"

    assert client.delete_subject(subject) == [1, 2]
    assert subject not in client.get_subjects()
    assert subject in client.get_subjects(deleted=True)
    with pytest.raises(SchemaRegistryError) as soft_deleted:
        fresh_client().get_latest_version(subject)
    assert soft_deleted.value.error_code == 40401

    assert client.delete_subject(subject, permanent=True) == [1, 2]
    assert subject not in client.get_subjects(deleted=True)
    with pytest.raises(SchemaRegistryError) as gone:
        client.get_versions(subject, deleted=True)
    assert gone.value.error_code == 40401


def test_compatibility_level_per_subject(client, subject):
    client.register_schema(subject, avro(V1))
    assert client.set_compatibility(subject, "FULL_TRANSITIVE") == {"compatibility": "FULL_TRANSITIVE"}
    assert client.get_compatibility(subject) == "FULL_TRANSITIVE"
    assert client.set_compatibility(subject, "NONE") == {"compatibility": "NONE"}
    assert client.get_compatibility(subject) == "NONE"

    with pytest.raises(SchemaRegistryError) as bad_level:
        client.set_compatibility(subject, "SIDEWAYS")
    assert (bad_level.value.http_status_code, bad_level.value.error_code) == (422, 42203)


def test_global_compatibility_is_readable(client):
    assert client.get_compatibility() in {
        "BACKWARD",
        "BACKWARD_TRANSITIVE",
        "FORWARD",
        "FORWARD_TRANSITIVE",
        "FULL",
        "FULL_TRANSITIVE",
        "NONE",
    }


def test_test_compatibility_against_latest_and_all(client, subject):
    client.register_schema(subject, avro(V1))
    client.set_compatibility(subject, "BACKWARD")
    assert client.test_compatibility(subject, avro(V2)) is True
    assert client.test_compatibility(subject, avro(V3_INCOMPATIBLE)) is False
    assert client.test_compatibility(subject, avro(V2), version=1) is True
    assert client.test_compatibility_all_versions(subject, avro(V3_INCOMPATIBLE)) is False
    assert client.get_versions(subject) == [1], "testing registers nothing"


def test_incompatible_registration_is_refused_with_409(client, subject):
    client.register_schema(subject, avro(V1))
    client.set_compatibility(subject, "BACKWARD")
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, avro(V3_INCOMPATIBLE))
    assert refused.value.http_status_code == 409
    assert refused.value.error_code in INCOMPATIBLE_CODES
    assert client.get_versions(subject) == [1]


def test_schema_types_and_subjects_by_id(client, subject):
    assert set(client.get_schema_types()) == {"AVRO", "JSON", "PROTOBUF"}
    unique = {**V1, "doc": f"only in {subject}"}
    schema_id = client.register_schema(subject, avro(unique))
    assert client.get_subjects_by_schema_id(schema_id) == [subject]
    versions = client.get_schema_versions(schema_id)
    assert [(v.subject, v.version) for v in versions] == [(subject, 1)]
