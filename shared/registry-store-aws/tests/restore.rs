//! A restore of the table to an earlier state rewinds the ID counter; the ID ledger in the bucket
//! (`ids/<id>`) keeps every ID ever issued, so the registry over the restored table never issues
//! an ID again, neither at its first allocation nor after `restore_check`.

mod support;

use aws_config::SdkConfig;
use registry_core::testkit::StoreTestExt;
use registry_core::{Context, SchemaId, Store, StoreError};
use registry_store_aws::{AwsStore, AwsStoreConfig, RestoreCheck};
use support::{body, with_store};

/// Registers the body `text` and allocates its ID as the registry does (retrying a lost race).
async fn allocate(store: &AwsStore, text: &str) -> SchemaId {
    let schema = body(text);
    let fingerprint = schema.fingerprint();
    store.put_body(&fingerprint, &schema).await.unwrap_or_else(|e| panic!("{e}"));
    loop {
        match store.allocate_id(&fingerprint).await {
            Ok(id) => return id,
            Err(StoreError::Conflict(_)) => continue,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A backup of `store`'s table as it is now.
async fn backup(sdk: &SdkConfig, store: &AwsStore) -> String {
    let dynamo = aws_sdk_dynamodb::Client::new(sdk);
    let made = dynamo.create_backup().table_name(store.config().table).backup_name("before").send().await;
    let made = made.unwrap_or_else(|e| panic!("CreateBackup: {e}"));
    made.backup_details().map(|d| d.backup_arn().to_string()).unwrap_or_else(|| panic!("no backup ARN"))
}

/// The backup restored into a new table (DynamoDB always restores into a new table, which the
/// registry is then pointed at), over the same bucket; `run` gets a store over it, then the table
/// is deleted.
async fn with_restored<F, Fut>(sdk: &SdkConfig, store: &AwsStore, backup: &str, name: &str, run: F)
where
    F: FnOnce(AwsStore) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dynamo = aws_sdk_dynamodb::Client::new(sdk);
    let table = format!("{}-{name}", store.config().table);
    let restored = dynamo.restore_table_from_backup().target_table_name(&table).backup_arn(backup).send().await;
    restored.unwrap_or_else(|e| panic!("RestoreTableFromBackup: {e}"));
    let config = AwsStoreConfig { table: table.clone(), bucket: store.config().bucket };
    run(AwsStore::with_path_style(sdk, config, true)).await;
    dynamo.delete_table().table_name(&table).send().await.unwrap_or_else(|e| panic!("DeleteTable: {e}"));
}

#[tokio::test]
async fn a_restored_table_never_issues_an_id_again() {
    with_store(|store, sdk| async move {
        let early = [allocate(&store, "\"a\"").await, allocate(&store, "\"b\"").await];
        let backup = backup(&sdk, &store).await;
        let late = [allocate(&store, "\"c\"").await, allocate(&store, "\"d\"").await];
        assert_eq!((early, late), ([SchemaId(1), SchemaId(2)], [SchemaId(3), SchemaId(4)]));

        with_restored(&sdk, &store, &backup, "first", |restored| async move {
            assert_eq!(restored.max_id().await.unwrap_or_else(|e| panic!("{e}")), Some(SchemaId(2)), "rewound");
            let fresh = allocate(&restored, "\"e\"").await;
            assert_eq!(fresh, SchemaId(5), "IDs 3 and 4 may be in Kafka already: the next ID is past them");
            let c = restored.id_for_fingerprint(&body("\"c\"").fingerprint()).await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c, Some(SchemaId(3)), "the allocation passing the ledger's claims bound them again: c keeps 3");
        })
        .await;

        with_restored(&sdk, &store, &backup, "checked", |restored| async move {
            let found = restored.restore_check(false).await.unwrap_or_else(|e| panic!("{e}"));
            let expected_max = Some(SchemaId(5));
            assert_eq!(found, RestoreCheck { counter: Some(SchemaId(2)), ledger_max: expected_max, raised: false });
            assert_eq!(restored.max_id().await.unwrap_or_else(|e| panic!("{e}")), Some(SchemaId(2)), "dry run");
            let applied = restored.restore_check(true).await.unwrap_or_else(|e| panic!("{e}"));
            assert!(applied.raised);
            assert_eq!(restored.max_id().await.unwrap_or_else(|e| panic!("{e}")), expected_max);
            assert_eq!(allocate(&restored, "\"f\"").await, SchemaId(6));
            let clean = restored.restore_check(true).await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(clean, RestoreCheck { counter: Some(SchemaId(6)), ledger_max: None, raised: false });
        })
        .await;
    })
    .await;
}

/// Allocates the body `text`'s ID in `context`.
async fn allocate_in(store: &AwsStore, context: &Context, text: &str) -> SchemaId {
    let schema = body(text);
    store.put_body(&schema.fingerprint(), &schema).await.unwrap_or_else(|e| panic!("{e}"));
    store.allocate_id_in(context, &schema.fingerprint()).await.unwrap_or_else(|e| panic!("{e}"))
}

/// A named context's counter is checked against its own ledger (`ids/<context>:<id>`), found by
/// listing the ledger even when the restored table holds nothing of the context.
#[tokio::test]
async fn restore_check_raises_every_context_past_its_own_ledger() {
    with_store(|store, sdk| async move {
        let team = Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        let backup = backup(&sdk, &store).await;
        let issued = [allocate_in(&store, &team, "\"t1\"").await, allocate_in(&store, &team, "\"t2\"").await];
        assert_eq!(issued, [SchemaId(1), SchemaId(2)]);
        with_restored(&sdk, &store, &backup, "contexts", |restored| async move {
            let found = restored.restore_check_contexts(true).await.unwrap_or_else(|e| panic!("{e}"));
            let nothing = RestoreCheck { counter: None, ledger_max: None, raised: false };
            let raised = RestoreCheck { counter: None, ledger_max: Some(SchemaId(2)), raised: true };
            assert_eq!(found, vec![(Context::DEFAULT, nothing), (team.clone(), raised)]);
            assert_eq!(restored.max_id_in(&team).await.unwrap_or_else(|e| panic!("{e}")), Some(SchemaId(2)));
            assert_eq!(
                restored.max_id().await.unwrap_or_else(|e| panic!("{e}")),
                None,
                "the default context untouched"
            );
            let listed = restored.list_contexts().await.unwrap_or_else(|e| panic!("{e}"));
            assert!(listed.is_empty(), "the check lists no context");
            assert_eq!(allocate_in(&restored, &team, "\"t3\"").await, SchemaId(3));
        })
        .await;
    })
    .await;
}
