"""AvroSerializer / AvroDeserializer through the registry: auto-registration, use.latest.version,
the wire prefix, schema evolution with a reader schema, and an incompatible change refused."""

import json

import pytest
from conftest import payment_schema, wire_id
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError

V1 = payment_schema(
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "method", "type": {"type": "enum", "name": "Method", "symbols": ["CARD", "CASH"]}},
    {"name": "note", "type": ["null", "string"], "default": None},
)
V2 = {**V1, "fields": V1["fields"] + [{"name": "currency", "type": "string", "default": "EUR"}]}
V3_INCOMPATIBLE = {**V2, "fields": V2["fields"] + [{"name": "merchant", "type": "string"}]}

RECORD = {"id": "p-1", "amount": 12.5, "tags": ["a", "b"], "method": "CARD", "note": None}


def test_auto_register_round_trip_carries_the_registry_id(client, fresh_client, subject, value_ctx):
    serializer = AvroSerializer(client, json.dumps(V1))
    data = serializer(RECORD, value_ctx)

    registered = fresh_client().get_latest_version(subject)
    assert registered.version == 1
    assert wire_id(data) == registered.schema_id

    # A consumer with no reader schema and an empty cache fetches the writer schema by ID.
    decoded = AvroDeserializer(fresh_client())(data, value_ctx)
    assert decoded == RECORD


def test_use_latest_version_serializes_with_the_registered_schema(client, fresh_client, subject, value_ctx):
    schema_id = client.register_schema(subject, Schema(json.dumps(V1), "AVRO"))
    serializer = AvroSerializer(
        fresh_client(), json.dumps(V1), conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    data = serializer(RECORD, value_ctx)
    assert wire_id(data) == schema_id
    assert AvroDeserializer(fresh_client())(data, value_ctx) == RECORD
    assert client.get_versions(subject) == [1], "use.latest.version registers nothing"


def test_without_auto_register_an_unknown_schema_fails(fresh_client, value_ctx):
    serializer = AvroSerializer(fresh_client(), json.dumps(V1), conf={"auto.register.schemas": False})
    with pytest.raises(SchemaRegistryError) as missing:
        serializer(RECORD, value_ctx)
    assert missing.value.error_code == 40401


def test_evolution_v1_bytes_read_with_the_v2_reader(client, fresh_client, subject, value_ctx):
    v1_bytes = AvroSerializer(fresh_client(), json.dumps(V1))(RECORD, value_ctx)
    v2_record = {**RECORD, "currency": "USD"}
    v2_bytes = AvroSerializer(fresh_client(), json.dumps(V2))(v2_record, value_ctx)

    assert client.get_versions(subject) == [1, 2]
    v1_id = client.get_version(subject, 1).schema_id
    v2_id = client.get_version(subject, 2).schema_id
    assert (wire_id(v1_bytes), wire_id(v2_bytes)) == (v1_id, v2_id)
    assert v1_id != v2_id

    reader = AvroDeserializer(fresh_client(), json.dumps(V2))
    assert reader(v1_bytes, value_ctx) == {**RECORD, "currency": "EUR"}, "the v2 default fills the new field"
    assert reader(v2_bytes, value_ctx) == v2_record


def test_incompatible_v3_is_refused_by_the_serializer(client, fresh_client, subject, value_ctx):
    AvroSerializer(fresh_client(), json.dumps(V1))(RECORD, value_ctx)
    AvroSerializer(fresh_client(), json.dumps(V2))({**RECORD, "currency": "USD"}, value_ctx)

    v3 = AvroSerializer(fresh_client(), json.dumps(V3_INCOMPATIBLE))
    with pytest.raises(SchemaRegistryError) as refused:
        v3({**RECORD, "currency": "USD", "merchant": "m"}, value_ctx)
    assert refused.value.http_status_code == 409
    assert refused.value.error_code in (409, 40901), "40901 from CP 8.0.4 on, 409 before"
    assert client.get_versions(subject) == [1, 2]


def test_primitive_key_schema(client, fresh_client, topic):
    from confluent_kafka.serialization import MessageField, SerializationContext

    key_ctx = SerializationContext(topic, MessageField.KEY)
    data = AvroSerializer(client, '"string"')("order-42", key_ctx)
    assert wire_id(data) == fresh_client().get_latest_version(f"{topic}-key").schema_id
    assert AvroDeserializer(fresh_client())(data, key_ctx) == "order-42"
