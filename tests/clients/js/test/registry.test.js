// @kafkajs/confluent-schema-registry against the registry at REGISTRY_URL (set by
// scripts/clients-test.sh): register, encode, decode for Avro, JSON Schema and Protobuf, and
// getLatestSchemaId. Every decode uses a fresh client, so the writer schema is fetched by ID.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { randomUUID } = require('node:crypto')
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry')

const host = process.env.REGISTRY_URL
if (!host) {
  throw new Error('REGISTRY_URL is not set: run the suite through scripts/clients-test.sh')
}

const newClient = () => new SchemaRegistry({ host })
const uniqueSubject = (name) => `${name}-${randomUUID().slice(0, 12)}-value`

// Confluent framing: magic byte 0x00, then the schema ID as 4 big-endian bytes.
function wireId (buffer) {
  assert.ok(buffer.length >= 5, 'framed payload too short')
  assert.equal(buffer[0], 0, 'magic byte')
  return buffer.readInt32BE(1)
}

const paymentV1 = {
  type: 'record',
  name: 'Payment',
  namespace: 'shop.events',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'method', type: { type: 'enum', name: 'Method', symbols: ['CARD', 'CASH'] } },
    { name: 'note', type: ['null', 'string'], default: null }
  ]
}
const paymentV2 = { ...paymentV1, fields: [...paymentV1.fields, { name: 'currency', type: 'string', default: 'EUR' }] }
const paymentV3 = { ...paymentV2, fields: [...paymentV2.fields, { name: 'merchant', type: 'string' }] }

test('Avro: register, encode, decode with the ID the registry gave', async () => {
  const subject = uniqueSubject('payments')
  const registry = newClient()
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(paymentV1) }, { subject })
  assert.ok(Number.isInteger(id) && id > 0)

  const payment = { id: 'p-1', amount: 12.5, method: 'CARD', note: null }
  const encoded = await registry.encode(id, payment)
  assert.equal(wireId(encoded), id)
  assert.deepEqual({ ...(await newClient().decode(encoded)) }, payment)

  assert.equal(await newClient().getLatestSchemaId(subject), id)
  const again = await newClient().register({ type: SchemaType.AVRO, schema: JSON.stringify(paymentV1) }, { subject })
  assert.equal(again.id, id, 're-registering returns the same ID')
})

test('Avro: v2 with a default reads v1 bytes; incompatible v3 is refused', async () => {
  const subject = uniqueSubject('payments')
  const registry = newClient()
  const v1 = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(paymentV1) }, { subject })
  const v2 = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(paymentV2) }, { subject })
  assert.notEqual(v1.id, v2.id)
  assert.equal(await newClient().getLatestSchemaId(subject), v2.id)

  const v1Bytes = await registry.encode(v1.id, { id: 'p-2', amount: 3, method: 'CASH', note: 'x' })
  const read = await newClient().decode(v1Bytes, { [SchemaType.AVRO]: { readerSchema: paymentV2 } })
  assert.deepEqual({ ...read }, { id: 'p-2', amount: 3, method: 'CASH', note: 'x', currency: 'EUR' })

  await assert.rejects(
    registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(paymentV3) }, { subject }),
    (error) => {
      assert.equal(error.status, 409)
      return true
    }
  )
  assert.equal(await newClient().getLatestSchemaId(subject), v2.id)
})

test('JSON Schema: register, encode, decode, validation', async () => {
  const subject = uniqueSubject('orders')
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Order',
    type: 'object',
    properties: { id: { type: 'string' }, amount: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['id', 'amount'],
    additionalProperties: false
  }
  const registry = newClient()
  const { id } = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(schema) }, { subject })

  const order = { id: 'o-1', amount: 9.5, tags: ['gift'] }
  const encoded = await registry.encode(id, order)
  assert.equal(wireId(encoded), id)
  assert.deepEqual(JSON.parse(encoded.subarray(5).toString('utf8')), order)
  assert.deepEqual(await newClient().decode(encoded), order)
  assert.equal(await newClient().getLatestSchemaId(subject), id)

  await assert.rejects(registry.encode(id, { id: 'o-2' }), /invalid payload/i)
})

test('Protobuf: register, encode, decode', async () => {
  const subject = uniqueSubject('shipments')
  const proto = [
    'syntax = "proto3";',
    'package shop.logistics;',
    '',
    'message Shipment {',
    '  string id = 1;',
    '  int32 parcels = 2;',
    '  repeated string stops = 3;',
    '  Address to = 4;',
    '}',
    'message Address {',
    '  string city = 1;',
    '}',
    ''
  ].join('\n')
  const registry = newClient()
  const { id } = await registry.register({ type: SchemaType.PROTOBUF, schema: proto }, { subject })

  const shipment = { id: 's-1', parcels: 3, stops: ['Lyon', 'Turin'], to: { city: 'Milan' } }
  const encoded = await registry.encode(id, shipment)
  assert.equal(wireId(encoded), id)
  const decoded = await newClient().decode(encoded)
  assert.deepEqual(decoded.toJSON(), shipment)
  assert.equal(await newClient().getLatestSchemaId(subject), id)
})

// register resolves to the registry's answer; a refusal rejects with the HTTP status.
async function assertRefused (promise, status) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.status, status)
    return true
  })
}

test('JSON Schema: a compatible v2 is accepted; an incompatible v3 is refused with 409', async () => {
  const subject = uniqueSubject('orders')
  const order = (coupon) => ({
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Order',
    type: 'object',
    properties: { id: { type: 'string' }, amount: { type: 'number' }, ...(coupon ? { coupon } : {}) },
    required: ['id', 'amount'],
    additionalProperties: false
  })
  const registry = newClient()
  const v1 = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(order()) }, { subject })
  const v2 = await registry.register(
    { type: SchemaType.JSON, schema: JSON.stringify(order({ type: 'string' })) },
    { subject }
  )
  assert.notEqual(v1.id, v2.id)
  // coupon string -> integer: v2 data no longer validates (Confluent: TYPE_CHANGED).
  await assertRefused(
    registry.register({ type: SchemaType.JSON, schema: JSON.stringify(order({ type: 'integer' })) }, { subject }),
    409
  )
  assert.equal(await newClient().getLatestSchemaId(subject), v2.id)
})

test('Protobuf: a new field is accepted; a changed field type is refused with 409', async () => {
  const subject = uniqueSubject('shipments')
  const proto = (parcels, extra = []) => [
    'syntax = "proto3";',
    'package shop.logistics;',
    '',
    'message Shipment {',
    '  string id = 1;',
    `  ${parcels} parcels = 2;`,
    ...extra,
    '}',
    ''
  ].join('\n')
  const registry = newClient()
  const v1 = await registry.register({ type: SchemaType.PROTOBUF, schema: proto('int32') }, { subject })
  const v2 = await registry.register(
    { type: SchemaType.PROTOBUF, schema: proto('int32', ['  double weight_kg = 3;']) },
    { subject }
  )
  assert.notEqual(v1.id, v2.id)
  const encoded = await registry.encode(v1.id, { id: 's-1', parcels: 3 })
  assert.deepEqual((await newClient().decode(encoded)).toJSON(), { id: 's-1', parcels: 3 })
  // Field 2 from int32 to string: old bytes no longer read (Confluent: FIELD_SCALAR_KIND_CHANGED).
  await assertRefused(
    registry.register({ type: SchemaType.PROTOBUF, schema: proto('string', ['  double weight_kg = 3;']) }, { subject }),
    409
  )
  assert.equal(await newClient().getLatestSchemaId(subject), v2.id)
})

test('getLatestSchemaId of an unknown subject is a 404 from the registry', async () => {
  await assert.rejects(newClient().getLatestSchemaId(uniqueSubject('missing')), (error) => {
    assert.equal(error.status, 404)
    return true
  })
})
