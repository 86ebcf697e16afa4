# Subjects, versions, ID bindings, the ID counter, config and mode. Key schema: table.json.
resource "aws_dynamodb_table" "registry" {
  name                        = local.prefix
  billing_mode                = local.table.BillingMode
  hash_key                    = local.hash_key
  range_key                   = local.range_key
  deletion_protection_enabled = true

  dynamic "attribute" {
    for_each = local.table.AttributeDefinitions
    content {
      name = attribute.value.AttributeName
      type = attribute.value.AttributeType
    }
  }

  point_in_time_recovery {
    enabled = true
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = aws_kms_key.registry.arn
  }

  tags = local.tags
}
