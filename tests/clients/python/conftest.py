"""Fixtures for the confluent-kafka suite: the registry under test (REGISTRY_URL, set by
scripts/clients-test.sh), a fresh SchemaRegistryClient per test (no cache shared between tests) and
unique subject/topic names, so tests never see each other's subjects on the one server."""

import os
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext


def payment_schema(*fields: dict) -> dict:
    """The Avro record `shop.events.Payment` the suites register: `id`, `amount`, then `fields`."""
    base = [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]
    return {"type": "record", "name": "Payment", "namespace": "shop.events", "fields": [*base, *fields]}


def wire_id(data: bytes) -> int:
    """The schema ID in Confluent framing: magic byte 0x00, then the ID as 4 big-endian bytes."""
    assert len(data) >= 5, f"framed payload too short: {data!r}"
    assert data[0] == 0, f"magic byte must be 0x00, got {data[0]:#04x}"
    return int.from_bytes(data[1:5], "big")


@pytest.fixture(scope="session")
def registry_url() -> str:
    url = os.environ.get("REGISTRY_URL")
    if not url:
        pytest.fail("REGISTRY_URL is not set: run the suite through scripts/clients-test.sh")
    return url


@pytest.fixture
def client(registry_url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry_url})


@pytest.fixture
def fresh_client(registry_url: str):
    """A factory of clients with empty caches, so a read really goes to the registry."""
    return lambda: SchemaRegistryClient({"url": registry_url})


@pytest.fixture
def topic() -> str:
    return f"orders-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def value_ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


@pytest.fixture
def subject(topic: str) -> str:
    """The subject TopicNameStrategy gives the value of `topic`."""
    return f"{topic}-value"

