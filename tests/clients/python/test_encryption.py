"""Client-side field-level encryption through the registry's DEK registry: confluent-kafka's
Avro serializer with a data-contract ENCRYPT rule on a field tagged PII.

- With the client's own local KMS driver (LocalKmsDriver): the client creates the KEK and wraps
  the DEK itself; the registry stores the wrapped key only.
- With a shared `local-kms` KEK: the registry generates the DEK and wraps it with its own
  `local-kms` (REGISTRY_LOCAL_KMS_SECRET, set by scripts/clients-test.sh); the client never
  touches a KMS.

Either way the tagged field is ciphertext in the serialized bytes and decrypts back to the
plaintext on deserialization."""

import base64
import json
import os
import uuid

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry
from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import DekRegistryClient
from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import FieldEncryptionExecutor
from confluent_kafka.schema_registry.rules.encryption.localkms.local_client import LocalKmsClient
from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver
from confluent_kafka.schema_registry.schema_registry_client import Rule, RuleKind, RuleMode, RuleParams, RuleSet
from tink import aead, daead

aead.register()
daead.register()
LocalKmsDriver.register()

SECRET_FIELD = "ssn-123-45-6789"
SCHEMA = {
    "type": "record",
    "name": "Customer",
    "namespace": "shop.people",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "ssn", "type": "string", "confluent:tags": ["PII"]},
    ],
}
RECORD = {"id": 7, "name": "Ada", "ssn": SECRET_FIELD}


def encrypt_rule(kek_name: str, algorithm: str = "AES256_GCM") -> Rule:
    params = {
        "encrypt.kek.name": kek_name,
        "encrypt.kms.type": "local-kms",
        "encrypt.kms.key.id": "local-kms://registry-tests",
        "encrypt.dek.algorithm": algorithm,
    }
    return Rule("encrypt-pii", "", RuleKind.TRANSFORM, RuleMode.WRITEREAD, "ENCRYPT", ["PII"], RuleParams(params),
                None, None, "ERROR,NONE", False)


def register_with_rule(client, subject: str, rule: Rule) -> None:
    schema = Schema(json.dumps(SCHEMA), "AVRO", [], None, RuleSet(None, [rule]))
    client.register_schema(subject, schema)


def rules(rule_conf: dict) -> tuple:
    """A rule registry of its own per serde (the global one keeps the first configuration)."""
    registry = RuleRegistry()
    registry.register_executor(FieldEncryptionExecutor())
    return registry, rule_conf


def round_trip(client, fresh_client, value_ctx, rule_conf: dict) -> bytes:
    registry, conf = rules(rule_conf)
    serializer = AvroSerializer(client, None, conf={"auto.register.schemas": False, "use.latest.version": True},
                                rule_conf=conf, rule_registry=registry)
    data = serializer(dict(RECORD), value_ctx)  # the serializer encrypts the record's fields in place
    assert b"Ada" in data, "untagged fields stay plaintext"
    assert SECRET_FIELD.encode() not in data, "the PII field is ciphertext in the bytes"

    registry, conf = rules(rule_conf)
    deserializer = AvroDeserializer(fresh_client(), rule_conf=conf, rule_registry=registry)
    assert deserializer(data, value_ctx) == RECORD
    return data


def test_client_local_kms_round_trip(client, fresh_client, registry_url, subject, value_ctx):
    kek_name = f"client-kek-{uuid.uuid4().hex[:8]}"
    register_with_rule(client, subject, encrypt_rule(kek_name))
    round_trip(client, fresh_client, value_ctx, {"secret": "client-side-secret"})

    deks = DekRegistryClient({"url": registry_url})
    kek = deks.get_kek(kek_name)
    assert (kek.kms_type, kek.shared) == ("local-kms", False)
    dek = deks.get_dek(kek_name, subject)
    assert dek.version == 1 and dek.encrypted_key_material
    assert dek.key_material is None, "a non-shared KEK's DEK is never answered in plaintext"
    wrapped = base64.b64decode(dek.encrypted_key_material)
    key = LocalKmsClient("client-side-secret").get_aead("local-kms://registry-tests").decrypt(wrapped, b"")
    assert key[:2] == b"\x1a\x20", "the client's Tink AES256-GCM key, wrapped by its own KMS"


def test_shared_local_kms_kek_round_trip(client, fresh_client, registry_url, subject, value_ctx):
    secret = os.environ.get("REGISTRY_LOCAL_KMS_SECRET")
    if not secret:
        pytest.fail("REGISTRY_LOCAL_KMS_SECRET is not set: run the suite through scripts/clients-test.sh")
    kek_name = f"shared-kek-{uuid.uuid4().hex[:8]}"
    deks = DekRegistryClient({"url": registry_url})
    deks.register_kek(kek_name, "local-kms", "local-kms://registry-tests", shared=True)
    register_with_rule(client, subject, encrypt_rule(kek_name, "AES256_SIV"))
    # No secret on the client: the registry generates the DEK and hands it over unwrapped.
    round_trip(client, fresh_client, value_ctx, {})

    dek = DekRegistryClient({"url": registry_url}).get_dek(kek_name, subject, algorithm="AES256_SIV")
    key = base64.b64decode(dek.key_material)
    assert key[:2] == b"\x12\x40", "a Tink AES256-SIV key generated by the registry"
    wrapped = base64.b64decode(dek.encrypted_key_material)
    unwrapped = LocalKmsClient(secret).get_aead("local-kms://registry-tests").decrypt(wrapped, b"")
    assert unwrapped == key, "stored wrapped by the registry's local-kms, as the client's driver wraps"
