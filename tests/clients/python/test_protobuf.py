"""ProtobufSerializer / ProtobufDeserializer through the registry. The serializer registers the
schema as a base64 FileDescriptorProto and the deserializer fetches it back with
`format=serialized`; message classes are built at run time from descriptors (no protoc needed)."""

import pytest
from conftest import wire_id
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

F = descriptor_pb2.FieldDescriptorProto


def shipment_file(package: str, extra_fields: tuple = ()) -> descriptor_pb2.FileDescriptorProto:
    """shipments.proto: a Shipment with scalars, a repeated field, a nested message, a map, an
    enum, a oneof and a well-known import; `extra_fields` are (name, number, type) to append."""
    file = descriptor_pb2.FileDescriptorProto(
        name=f"{package}/shipment.proto",
        package=package,
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    shipment = file.message_type.add(name="Shipment")
    fields = [
        ("id", 1, F.TYPE_STRING, None, F.LABEL_OPTIONAL),
        ("parcels", 2, F.TYPE_INT32, None, F.LABEL_OPTIONAL),
        ("stops", 3, F.TYPE_STRING, None, F.LABEL_REPEATED),
        ("to", 4, F.TYPE_MESSAGE, f".{package}.Shipment.Address", F.LABEL_OPTIONAL),
        ("labels", 5, F.TYPE_MESSAGE, f".{package}.Shipment.LabelsEntry", F.LABEL_REPEATED),
        ("priority", 6, F.TYPE_ENUM, f".{package}.Priority", F.LABEL_OPTIONAL),
        ("shipped_at", 7, F.TYPE_MESSAGE, ".google.protobuf.Timestamp", F.LABEL_OPTIONAL),
    ]
    for name, number, kind, type_name, label in fields:
        field = shipment.field.add(name=name, number=number, type=kind, label=label)
        if type_name:
            field.type_name = type_name
    for name, number, kind in extra_fields:
        shipment.field.add(name=name, number=number, type=kind, label=F.LABEL_OPTIONAL)
    shipment.oneof_decl.add(name="carrier")
    shipment.field.add(name="truck", number=8, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    shipment.field.add(name="ship", number=9, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    address = shipment.nested_type.add(name="Address")
    address.field.add(name="city", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry = shipment.nested_type.add(name="LabelsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    priority = file.enum_type.add(name="Priority")
    priority.value.add(name="PRIORITY_NORMAL", number=0)
    priority.value.add(name="PRIORITY_EXPRESS", number=1)
    return file


def message_class(file: descriptor_pb2.FileDescriptorProto):
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{file.package}.Shipment"))


def sample(cls):
    message = cls(id="s-1", parcels=3, stops=["Lyon", "Turin"], priority=1, truck="TR-9")
    message.to.city = "Milan"
    message.labels["fragile"] = "yes"
    message.shipped_at.seconds = 1_700_000_000
    return message


@pytest.fixture
def package(topic: str) -> str:
    return "logistics_" + topic.replace("-", "_")


def test_auto_register_round_trip_carries_the_registry_id(client, fresh_client, subject, value_ctx, package):
    cls = message_class(shipment_file(package))
    data = ProtobufSerializer(cls, fresh_client(), conf={"use.deprecated.format": False})(sample(cls), value_ctx)

    registered = fresh_client().get_latest_version(subject)
    assert registered.schema.schema_type == "PROTOBUF"
    assert "message Shipment" in registered.schema.schema_str, "stored as .proto text, as Confluent does"
    assert wire_id(data) == registered.schema_id
    assert data[5] == 0, "message index [0] is the single byte 0 after the ID"

    decoded = ProtobufDeserializer(cls, {"use.deprecated.format": False}, fresh_client())(data, value_ctx)
    assert decoded == sample(cls)

    again = ProtobufSerializer(cls, fresh_client())(sample(cls), value_ctx)
    assert wire_id(again) == registered.schema_id, "re-registering the same descriptor finds the same ID"
    assert client.get_versions(subject) == [1]


def test_use_latest_version(client, fresh_client, subject, value_ctx, package):
    cls = message_class(shipment_file(package))
    first = ProtobufSerializer(cls, fresh_client())(sample(cls), value_ctx)
    serializer = ProtobufSerializer(
        cls, fresh_client(), conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    data = serializer(sample(cls), value_ctx)
    assert wire_id(data) == wire_id(first) == client.get_latest_version(subject).schema_id
    deserializer = ProtobufDeserializer(cls, {"use.latest.version": True}, fresh_client())
    assert deserializer(data, value_ctx) == sample(cls)


def test_lookup_without_auto_register(fresh_client, subject, value_ctx, package):
    cls = message_class(shipment_file(package))
    ProtobufSerializer(cls, fresh_client())(sample(cls), value_ctx)
    lookup_only = ProtobufSerializer(cls, fresh_client(), conf={"auto.register.schemas": False})
    data = lookup_only(sample(cls), value_ctx)
    assert wire_id(data) == fresh_client().get_latest_version(subject).schema_id


def test_evolution_v1_bytes_read_with_the_v2_reader(client, fresh_client, subject, value_ctx, package):
    v1 = message_class(shipment_file(package))
    v2 = message_class(shipment_file(package, extra_fields=(("weight_kg", 10, F.TYPE_DOUBLE),)))
    v1_bytes = ProtobufSerializer(v1, fresh_client())(sample(v1), value_ctx)
    v2_message = sample(v2)
    v2_message.weight_kg = 2.5
    v2_bytes = ProtobufSerializer(v2, fresh_client())(v2_message, value_ctx)
    assert client.get_versions(subject) == [1, 2]
    assert wire_id(v1_bytes) == client.get_version(subject, 1).schema_id
    assert wire_id(v2_bytes) == client.get_version(subject, 2).schema_id

    reader = ProtobufDeserializer(v2, {}, fresh_client())
    old = reader(v1_bytes, value_ctx)
    assert old.weight_kg == 0.0 and old.id == "s-1" and old.to.city == "Milan"
    assert reader(v2_bytes, value_ctx) == v2_message


def test_incompatible_v3_is_refused(client, fresh_client, subject, value_ctx, package):
    v1 = message_class(shipment_file(package))
    ProtobufSerializer(v1, fresh_client())(sample(v1), value_ctx)
    # Field 2 changes from int32 to string: old bytes no longer read (Confluent: FIELD_KIND_CHANGED).
    changed = shipment_file(package)
    changed.message_type[0].field[1].type = F.TYPE_STRING
    cls = message_class(changed)
    with pytest.raises(SchemaRegistryError) as refused:
        ProtobufSerializer(cls, fresh_client())(cls(id="s-2", parcels="three"), value_ctx)
    assert refused.value.http_status_code == 409
    assert refused.value.error_code in (409, 40901)
    assert client.get_versions(subject) == [1]
