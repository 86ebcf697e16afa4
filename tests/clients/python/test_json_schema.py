"""JSONSerializer / JSONDeserializer through the registry: auto-registration with `$schema` drafts,
use.latest.version, the wire prefix, evolution, and an incompatible change refused."""

import json

import pytest
from conftest import wire_id
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import SerializationError


def order_schema(draft: str, extra: dict | None = None, required: list | None = None) -> dict:
    properties = {
        "id": {"type": "string"},
        "amount": {"type": "number"},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
        **(extra or {}),
    }
    return {
        "$schema": draft,
        "title": "Order",
        "type": "object",
        "properties": properties,
        "required": required or ["id", "amount"],
        "additionalProperties": False,
    }


DRAFT_07 = "http://json-schema.org/draft-07/schema#"
V1 = order_schema(DRAFT_07)
V2 = order_schema(DRAFT_07, extra={"coupon": {"type": "string"}})
V3_INCOMPATIBLE = order_schema(DRAFT_07, extra={"coupon": {"type": "integer"}})
ORDER = {"id": "o-1", "amount": 9.5, "lines": [{"sku": "x"}]}


@pytest.mark.parametrize(
    "draft",
    [
        "http://json-schema.org/draft-04/schema#",
        DRAFT_07,
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    ],
)
def test_auto_register_round_trip_per_draft(fresh_client, subject, value_ctx, draft):
    schema = order_schema(draft)
    data = JSONSerializer(json.dumps(schema), fresh_client())(ORDER, value_ctx)

    registered = fresh_client().get_latest_version(subject)
    assert registered.schema.schema_type == "JSON"
    assert json.loads(registered.schema.schema_str)["$schema"] == draft
    assert wire_id(data) == registered.schema_id
    assert json.loads(data[5:]) == ORDER, "the payload after the prefix is the JSON document"

    assert JSONDeserializer(None, schema_registry_client=fresh_client())(data, value_ctx) == ORDER


def test_serializer_validates_against_the_schema(fresh_client, value_ctx):
    serializer = JSONSerializer(json.dumps(V1), fresh_client())
    with pytest.raises(SerializationError):
        serializer({"id": "o-2"}, value_ctx)


def test_use_latest_version(client, fresh_client, subject, value_ctx):
    schema_id = client.register_schema(subject, Schema(json.dumps(V1), "JSON"))
    serializer = JSONSerializer(
        json.dumps(V1), fresh_client(), conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    data = serializer(ORDER, value_ctx)
    assert wire_id(data) == schema_id
    assert JSONDeserializer(None, schema_registry_client=fresh_client())(data, value_ctx) == ORDER
    assert client.get_versions(subject) == [1]


def test_evolution_v1_bytes_read_with_the_v2_reader(client, fresh_client, subject, value_ctx):
    v1_bytes = JSONSerializer(json.dumps(V1), fresh_client())(ORDER, value_ctx)
    v2_order = {**ORDER, "coupon": "SPRING"}
    v2_bytes = JSONSerializer(json.dumps(V2), fresh_client())(v2_order, value_ctx)
    assert client.get_versions(subject) == [1, 2]
    assert wire_id(v1_bytes) == client.get_version(subject, 1).schema_id
    assert wire_id(v2_bytes) == client.get_version(subject, 2).schema_id

    v2_reader = JSONDeserializer(json.dumps(V2), schema_registry_client=fresh_client())
    assert v2_reader(v1_bytes, value_ctx) == ORDER
    assert v2_reader(v2_bytes, value_ctx) == v2_order


def test_incompatible_v3_is_refused(client, fresh_client, subject, value_ctx):
    JSONSerializer(json.dumps(V1), fresh_client())(ORDER, value_ctx)
    JSONSerializer(json.dumps(V2), fresh_client())({**ORDER, "coupon": "SPRING"}, value_ctx)
    v3 = JSONSerializer(json.dumps(V3_INCOMPATIBLE), fresh_client())
    with pytest.raises(SchemaRegistryError) as refused:
        v3({**ORDER, "coupon": 5}, value_ctx)
    assert refused.value.http_status_code == 409
    assert refused.value.error_code in (409, 40901)
    assert client.get_versions(subject) == [1, 2]
