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
  # still names the row it removed and a change can be told from a rewrite of the same value. A
  # global table (several regions) replicates through it too: multi-Region eventual consistency
  # needs the stream, with both images, on every replica.
  stream_enabled   = local.exporter || local.multi_region
  stream_view_type = local.exporter || local.multi_region ? "NEW_AND_OLD_IMAGES" : null

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

  # A replica in every further region (regions.tf): a global table, version 2019.11.21, with
  # multi-Region eventual consistency. Not strong consistency: MRSC global tables refuse
  # TransactWriteItems, and every registration, delete and ID allocation is one (docs/multi-region.md
  # "What AWS guarantees"). Writes stay in the home region, so last-writer-wins between regions never
  # has two writers to choose from. Each replica has what a table needs on its own: point-in-time
  # recovery, deletion protection and its region's key (neither is inherited from this table).
  dynamic "replica" {
    for_each = local.extra_regions
    content {
      region_name                 = replica.value
      kms_key_arn                 = aws_kms_key.replica[replica.value].arn
      point_in_time_recovery      = true
      deletion_protection_enabled = true
      propagate_tags              = true
      consistency_mode            = "EVENTUAL"
    }
  }

  tags = local.tags

  lifecycle {
    # The table (and the bucket and function next to it) stay where they always were: the provider's
    # region must be the first of regions, or this table would be planned somewhere it is not.
    precondition {
      # A conditional, not `||`: Terraform before 1.12 evaluates both sides, and regions[0] of [] fails.
      condition     = length(var.regions) == 0 ? true : var.regions[0] == data.aws_region.current.region
      error_message = "The first of regions must be the AWS provider's region (where the table, bucket and function already are)."
    }
  }
}
