"""A context base URL, as Schema Linking and Confluent Cloud clients use it: a serializer and a
deserializer configured with `.../contexts/.team-...` work unchanged; their subject lands in that
context, qualified (`:.team-...:topic-value`), and a consumer with an empty cache resolves the
writer's ID in the same context."""

import json
import uuid

from conftest import wire_id
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

SCHEMA = {
    "type": "record",
    "name": "Shipment",
    "namespace": "shop.events",
    "fields": [{"name": "id", "type": "string"}, {"name": "weight", "type": "double"}],
}
RECORD = {"id": "s-1", "weight": 2.5}


def test_a_context_base_url_round_trips(registry_url, subject, value_ctx):
    context = f".team-{uuid.uuid4().hex[:8]}"
    base_url = f"{registry_url}/contexts/{context}"

    data = AvroSerializer(SchemaRegistryClient({"url": base_url}), json.dumps(SCHEMA))(RECORD, value_ctx)

    plain = SchemaRegistryClient({"url": registry_url})
    qualified = f":{context}:{subject}"
    registered = plain.get_latest_version(qualified)
    assert registered.version == 1
    assert wire_id(data) == registered.schema_id
    listed = plain.get_subjects()
    assert qualified in listed and subject not in listed, "registered in the context only"

    decoded = AvroDeserializer(SchemaRegistryClient({"url": base_url}))(data, value_ctx)
    assert decoded == RECORD
