//! `list_subjects`: keyset paging over the `SUBJECTS` partition with Query, never Scan.
//!
//! Each subject has one index item (sort key = subject name) with `total` and `live` row counts,
//! maintained in the same transactions that write the rows. The live/deleted filter is a
//! FilterExpression on those counts; the page continues until `limit` subjects match or the
//! prefix range ends.
//!
//! `subjects_with_config` pages the `CONFIG` partition the same way.
//!
//! [`AwsStore::query_pages`] is the Query pager of every listing, the key store's included.

use crate::AwsStore;
use crate::errors::{AwsError, classify};
use crate::items::{Item, ItemExt, attr, s};
use crate::keys::{PK, SK, SUBJECTS_PK};
use crate::settings::CONFIG;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;
use registry_core::{DeletedFilter, Subject};
use std::collections::HashMap;

/// Items read per Query page.
const PAGE_ITEMS: i32 = 500;

impl AwsStore {
    pub(crate) async fn subjects_page(
        &self,
        prefix: &str,
        filter: DeletedFilter,
        after: Option<&Subject>,
        limit: usize,
    ) -> Result<Vec<Subject>, AwsError> {
        let mut page = Vec::new();
        if limit == 0 {
            return Ok(page);
        }
        // Every name with the prefix sorts after `after` when `after` sorts before the prefix,
        // so the range starts at the prefix; otherwise it starts strictly after `after`.
        let after = after.map(Subject::as_str).filter(|after| *after >= prefix);
        let (condition, bound) = match after {
            Some(after) => ("#pk = :pk AND #sk > :bound", Some(after)),
            None if prefix.is_empty() => ("#pk = :pk", None),
            None => ("#pk = :pk AND begins_with(#sk, :bound)", Some(prefix)),
        };
        let (filter_expression, counts): (&str, &[&str]) = match filter {
            DeletedFilter::LiveOnly => ("#live > :zero", &[attr::LIVE]),
            DeletedFilter::IncludeDeleted => ("#total > :zero", &[attr::TOTAL]),
            DeletedFilter::DeletedOnly => ("#total > :zero AND #live = :zero", &[attr::TOTAL, attr::LIVE]),
        };
        let mut names = HashMap::from([("#pk".to_string(), PK.to_string())]);
        let mut values = HashMap::from([
            (":pk".to_string(), AttributeValue::S(SUBJECTS_PK.to_string())),
            (":zero".to_string(), AttributeValue::N("0".to_string())),
        ]);
        if let Some(bound) = bound {
            names.insert("#sk".into(), SK.into());
            values.insert(":bound".into(), AttributeValue::S(bound.to_string()));
        }
        for count in counts {
            names.insert(format!("#{count}"), count.to_string());
        }
        let query = self
            .dynamo
            .query()
            .table_name(&self.table)
            .key_condition_expression(condition)
            .filter_expression(filter_expression)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .limit(PAGE_ITEMS);
        self.query_pages("Query(subjects)", query, |item| {
            let name = item.string(SK)?;
            if !name.starts_with(prefix) {
                return Ok(false);
            }
            page.push(Subject::new(name).map_err(|e| AwsError::Corrupt(format!("subject index: {e}")))?);
            Ok(page.len() < limit)
        })
        .await?;
        Ok(page)
    }

    /// One page of the subjects holding a config: keyset paging over the `CONFIG` partition, whose
    /// subject items sort as `S#<subject>` (the global item and a context's own, at a name that is
    /// no subject, are skipped).
    pub(crate) async fn configured_subjects_page(
        &self,
        prefix: &str,
        after: Option<&Subject>,
        limit: usize,
    ) -> Result<Vec<Subject>, AwsError> {
        let mut page = Vec::new();
        if limit == 0 {
            return Ok(page);
        }
        let range = match after.map(Subject::as_str).filter(|after| *after >= prefix) {
            Some(after) => SortRange::After(format!("S#{after}")),
            None => SortRange::From(format!("S#{prefix}")),
        };
        self.query_range("Query(configs)", CONFIG.to_string(), range, true, PAGE_ITEMS, |item| {
            let Some(name) = item.string(SK)?.strip_prefix("S#") else { return Ok(false) };
            if !name.starts_with(prefix) {
                return Ok(false);
            }
            page.extend(Subject::new(name).ok());
            Ok(page.len() < limit)
        })
        .await?;
        Ok(page)
    }

    /// Runs `query` strongly consistent, page after page, handing each item to `take` until it
    /// answers false or the items end: one Query call per page read.
    pub(crate) async fn query_pages(
        &self,
        op: &'static str,
        query: QueryFluentBuilder,
        mut take: impl FnMut(&Item) -> Result<bool, AwsError>,
    ) -> Result<(), AwsError> {
        let mut start: Option<Item> = None;
        loop {
            let output = query
                .clone()
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| classify(op, e))?;
            for item in output.items.unwrap_or_default() {
                if !take(&item)? {
                    return Ok(());
                }
            }
            match output.last_evaluated_key {
                Some(last) if !last.is_empty() => start = Some(last),
                _ => return Ok(()),
            }
        }
    }

    /// Pages of a strongly consistent Query of `pk` with sort keys in `range`, in `forward`
    /// order, `page_items` at a time, handing each item to `take` until it answers false.
    pub(crate) async fn query_range(
        &self,
        op: &'static str,
        pk: String,
        range: SortRange,
        forward: bool,
        page_items: i32,
        take: impl FnMut(&Item) -> Result<bool, AwsError>,
    ) -> Result<(), AwsError> {
        let mut names = HashMap::from([("#pk".to_string(), PK.to_string())]);
        let mut values = HashMap::from([(":pk".to_string(), s(pk))]);
        let condition = match range {
            SortRange::All => "#pk = :pk",
            SortRange::After(after) => {
                values.insert(":after".into(), s(after));
                "#pk = :pk AND #sk > :after"
            }
            SortRange::From(from) => {
                values.insert(":from".into(), s(from));
                "#pk = :pk AND #sk >= :from"
            }
            SortRange::Between(from, to) => {
                values.insert(":from".into(), s(from));
                values.insert(":to".into(), s(to));
                "#pk = :pk AND #sk BETWEEN :from AND :to"
            }
        };
        if condition.contains("#sk") {
            names.insert("#sk".into(), SK.into());
        }
        let query = self
            .dynamo
            .query()
            .table_name(&self.table)
            .key_condition_expression(condition)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .scan_index_forward(forward)
            .limit(page_items);
        self.query_pages(op, query, take).await
    }
}

/// Which sort keys of a partition a Query reads.
pub(crate) enum SortRange {
    All,
    /// Strictly after this key.
    After(String),
    /// From this key on, itself included.
    From(String),
    /// From and to these keys, both included.
    Between(String, String),
}
