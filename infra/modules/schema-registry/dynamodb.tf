# Subjects, versions, ID bindings, the ID counter, config and mode. Key schema: table.json.
#
# After a restore (README "Restoring the table") the table is the restored one: DynamoDB restores
# into a new name and a table cannot be renamed, so table_name names it and the runbook imports it
# here. Applying then puts back what a restore leaves out: point-in-time recovery, deletion
# protection, the module's KMS key and the tags.
resource "aws_dynamodb_table" "registry" {
  name                        = var.table_name == "" ? local.prefix : var.table_name
  billing_mode                = local.table.BillingMode
  hash_key                    = local.hash_key
  range_key                   = local.range_key
  deletion_protection_enabled = true
  # The change stream the exporter function reads (exporter.tf): old and new images, so a delete
  # still names the row it removed and a change can be told from a rewrite of the same value.
  stream_enabled   = local.exporter
  stream_view_type = local.exporter ? "NEW_AND_OLD_IMAGES" : null

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
