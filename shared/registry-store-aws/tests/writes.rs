//! Every DynamoDB write the store sends, intercepted (the store's call counter keeps a copy of each
//! request, `CallCounter::record_writes`) while the registry goes through every write path, and
//! checked against the transaction matrix of docs/dynamodb.md: the revision step of each subject
//! it writes, the settings checks, the referenced-row and binding guards, and that no write deletes
//! a subject index item or touches a subject's items outside a transaction.

mod support;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use registry_core::{
    ConfigRecord, Context, Mode, NewSchema, RegisterOptions, Registry, RegistrySettings, SchemaId, SchemaReference,
    Scope, Store, Subject, Version, VersionSelector,
};
use registry_dek::{DekAlgorithm, Expect, KekGuard, KeyStore};
use registry_store_aws::{AwsStore, SentWrite, keys};
use std::collections::HashMap;
use std::sync::Arc;
use support::with_store;

/// What `rev` rises by in a write that keeps the subject's live-version records true.
const KEEPING: u64 = 1 << 32;

/// One action of a transaction, read back from the request.
#[derive(Debug, Clone)]
struct Action {
    kind: &'static str,
    pk: String,
    sk: String,
    update: String,
    condition: String,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Action {
    fn of(item: &TransactWriteItem) -> Action {
        let text = |v: Option<&AttributeValue>| v.and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
        // Every kind of item carries its key (a put, its whole item), a condition and the names
        // and values of its expressions; an update also its update expression.
        macro_rules! read {
            ($kind:literal, $action:expr, $key:expr, $condition:expr, $update:expr) => {
                Action {
                    kind: $kind,
                    pk: text($key.get(keys::PK)),
                    sk: text($key.get(keys::SK)),
                    update: $update,
                    condition: $condition.to_string(),
                    names: $action.expression_attribute_names().cloned().unwrap_or_default(),
                    values: $action.expression_attribute_values().cloned().unwrap_or_default(),
                }
            };
        }
        if let Some(put) = item.put() {
            read!("Put", put, put.item(), put.condition_expression().unwrap_or_default(), String::new())
        } else if let Some(update) = item.update() {
            let expression = update.update_expression().to_string();
            read!("Update", update, update.key(), update.condition_expression().unwrap_or_default(), expression)
        } else if let Some(delete) = item.delete() {
            read!("Delete", delete, delete.key(), delete.condition_expression().unwrap_or_default(), String::new())
        } else if let Some(check) = item.condition_check() {
            read!("Check", check, check.key(), check.condition_expression(), String::new())
        } else {
            panic!("a transaction item with no action: {item:?}")
        }
    }

    fn at(&self, pk: &str, sk: &str) -> bool {
        self.pk == pk && self.sk == sk
    }

    /// The number bound to `placeholder` in the expression values.
    fn number(&self, placeholder: &str) -> Option<u64> {
        self.values.get(placeholder).and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok())
    }

    /// The placeholder of `attribute`'s value in an `ADD` of the update expression.
    fn added(&self, attribute: &str) -> Option<u64> {
        let name = self.names.iter().find(|(_, a)| *a == attribute).map(|(n, _)| n.clone())?;
        let add = self.update.split("ADD").nth(1)?;
        let add = add.split("SET").next().unwrap_or(add);
        let placeholder = add.split(',').find_map(|part| part.trim().strip_prefix(&format!("{name} ")))?;
        self.number(placeholder.trim())
    }

    /// Whether the condition tests `attribute` (by its `#name`).
    fn conditions(&self, attribute: &str) -> bool {
        self.names.iter().any(|(name, a)| a == attribute && self.condition.contains(name.as_str()))
    }
}

/// A subject's revision as one transaction moves it.
#[derive(Debug, PartialEq, Eq)]
enum Revised {
    /// `ADD rev <step>`, conditioned on the revision read (`true`) or not.
    Raised { step: u64, conditioned: bool },
    /// A ConditionCheck of it.
    Checked,
}

/// A transaction's actions, with the subjects whose revision it moves.
#[derive(Debug)]
struct Transaction {
    actions: Vec<Action>,
}

impl Transaction {
    fn revised(&self, subject: &str) -> Vec<Revised> {
        self.actions
            .iter()
            .filter(|a| a.at(keys::SUBJECTS_PK, subject))
            .map(|a| match a.kind {
                "Update" => Revised::Raised {
                    step: a.added("rev").unwrap_or_else(|| panic!("index update without ADD rev: {a:?}")),
                    conditioned: a.conditions("rev"),
                },
                "Check" => {
                    assert!(a.conditions("rev"), "a check of the index item is a check of its revision: {a:?}");
                    Revised::Checked
                }
                other => panic!("{other} of the subject index item {subject}: {a:?}"),
            })
            .collect()
    }

    /// The subjects whose rows, records or edges the transaction writes.
    fn written_subjects(&self) -> Vec<String> {
        let mut subjects: Vec<String> = Vec::new();
        for action in self.actions.iter().filter(|a| a.kind != "Check") {
            let subject = if let Some(subject) = action.pk.strip_prefix("S#") {
                (action.sk.starts_with(keys::VERSION_SK_PREFIX) || action.sk.starts_with("FP#"))
                    .then(|| subject.to_string())
            } else if let Some(edge) = action.sk.strip_prefix(keys::EDGE_SK_PREFIX) {
                edge.split(keys::EDGE_SEPARATOR).next().map(str::to_string)
            } else {
                None
            };
            if let Some(subject) = subject.filter(|s| !subjects.contains(s)) {
                subjects.push(subject);
            }
        }
        subjects
    }

    fn find(&self, kind: &str, pk: &str, sk: &str) -> Option<&Action> {
        self.actions.iter().find(|a| a.kind == kind && a.at(pk, sk))
    }

    fn has(&self, kind: &str, pk: &str, sk: &str) -> bool {
        self.find(kind, pk, sk).is_some()
    }

    /// Whether every settings item a decision at `scope` reads is checked, or written under a
    /// condition (the written one).
    fn checks_settings_of(&self, scope: &Scope) -> bool {
        scope.settings_read().iter().all(|at| {
            ["CONFIG", "MODE"].iter().all(|kind| {
                let (pk, sk) = keys::scoped(kind, at);
                self.actions.iter().any(|a| a.at(&pk, &sk) && (a.kind == "Check" || !a.condition.is_empty()))
            })
        })
    }

    /// Whether it is a live-version record's write: the record and a check of the revision.
    fn is_record_write(&self) -> bool {
        self.actions.len() == 2
            && self.actions.iter().any(|a| a.kind == "Put" && a.sk.starts_with("FP#") && a.pk.starts_with("S#"))
            && self.actions.iter().any(|a| a.kind == "Check" && a.pk == keys::SUBJECTS_PK)
    }
}

/// The rules every write keeps, whatever its path (docs/dynamodb.md, "Rules every subject
/// transaction keeps"); answers the transactions.
fn check_rules(path: &str, writes: &[SentWrite]) -> Vec<Transaction> {
    let mut transactions = Vec::new();
    for write in writes {
        let (pk, sk, what) = match write {
            SentWrite::Transaction(input) => {
                let actions: Vec<Action> = input.transact_items().iter().map(Action::of).collect();
                transactions.push(Transaction { actions });
                continue;
            }
            SentWrite::Put(put) => {
                (put.item().and_then(|i| i.get(keys::PK)), put.item().and_then(|i| i.get(keys::SK)), "PutItem")
            }
            SentWrite::Update(update) => {
                (update.key().and_then(|k| k.get(keys::PK)), update.key().and_then(|k| k.get(keys::SK)), "UpdateItem")
            }
            SentWrite::Delete(delete) => {
                (delete.key().and_then(|k| k.get(keys::PK)), delete.key().and_then(|k| k.get(keys::SK)), "DeleteItem")
            }
        };
        let (pk, sk) = (pk.and_then(|v| v.as_s().ok()), sk.and_then(|v| v.as_s().ok()));
        let (pk, sk) = (pk.map_or("", String::as_str), sk.map_or("", String::as_str));
        // A single-item write never touches a subject's index item, rows, records or edges.
        assert!(pk != keys::SUBJECTS_PK, "{path}: {what} of the subject index item {sk}");
        assert!(
            !(pk.starts_with("S#") && (sk.starts_with(keys::VERSION_SK_PREFIX) || sk.starts_with("FP#"))),
            "{path}: {what} of {pk}/{sk} outside a transaction"
        );
        assert!(!sk.starts_with(keys::EDGE_SK_PREFIX), "{path}: {what} of the edge {pk}/{sk} outside a transaction");
    }
    for transaction in &transactions {
        assert!(transaction.actions.len() <= 100, "{path}: {} items in one transaction", transaction.actions.len());
        for action in &transaction.actions {
            assert!(
                !(action.kind == "Delete" && action.pk == keys::SUBJECTS_PK),
                "{path}: a subject index item deleted: {action:?}"
            );
        }
        // Each subject it writes has its revision raised (or checked, for a record alone), once.
        for subject in transaction.written_subjects() {
            let revised = transaction.revised(&subject);
            assert_eq!(revised.len(), 1, "{path}: {subject}'s revision in {transaction:#?}");
            let record = transaction
                .actions
                .iter()
                .any(|a| a.kind == "Put" && a.pk == format!("S#{subject}") && a.sk.starts_with("FP#"));
            match &revised[0] {
                Revised::Raised { step, conditioned } => {
                    assert!(*step == 1 || *step == KEEPING, "{path}: {subject}'s revision raised by {step}");
                    // A keeping step exactly when its record is written, and only under a condition.
                    assert_eq!(*step == KEEPING, record, "{path}: {subject}: step {step}, record written: {record}");
                    assert!(!record || *conditioned, "{path}: {subject}'s record written without a revision condition");
                }
                Revised::Checked => assert!(transaction.is_record_write(), "{path}: rows written under a check only"),
            }
        }
        // A subject raised without a write of its own is a referenced one: keeping, and its
        // referenced row is checked live in the same transaction; or a named context's
        // pseudo-subject a first row of one of its subjects raises by 1, unconditioned.
        for action in transaction.actions.iter().filter(|a| a.kind == "Update" && a.pk == keys::SUBJECTS_PK) {
            if transaction.written_subjects().contains(&action.sk) {
                continue;
            }
            if is_context_pseudo_subject(&action.sk) {
                assert_eq!(action.added("rev"), Some(1), "{path}: context {} raised", action.sk);
                assert!(!action.conditions("rev"), "{path}: context {} raised under a condition", action.sk);
                let of_context = transaction.written_subjects().iter().any(|s| s.starts_with(action.sk.as_str()));
                assert!(of_context, "{path}: context {} raised by no row of its subjects", action.sk);
                continue;
            }
            assert_eq!(action.added("rev"), Some(KEEPING), "{path}: referenced subject {} bumped", action.sk);
            let row_checked = transaction
                .actions
                .iter()
                .any(|a| a.kind == "Check" && a.pk == format!("S#{}", action.sk) && a.conditions("deleted"));
            assert!(row_checked, "{path}: {} bumped without its referenced row checked live", action.sk);
        }
    }
    transactions
}

/// Whether `subject` is a named context's settings pseudo-subject (`:.ctx:`).
fn is_context_pseudo_subject(subject: &str) -> bool {
    subject.strip_prefix(":.").and_then(|rest| rest.strip_suffix(':')).is_some_and(|name| !name.contains(':'))
}

/// The one transaction of `transactions` that writes `subject`'s rows or records.
fn writing<'t>(path: &str, transactions: &'t [Transaction], subject: &str) -> &'t Transaction {
    let mut found = transactions.iter().filter(|t| t.written_subjects().iter().any(|s| s == subject));
    let first = found.next().unwrap_or_else(|| panic!("{path}: no transaction writes {subject}: {transactions:#?}"));
    assert!(found.next().is_none(), "{path}: more than one transaction writes {subject}");
    first
}

fn schema(text: &str) -> NewSchema {
    NewSchema { schema: Some(text.to_string()), ..NewSchema::default() }
}

fn record(name: &str) -> String {
    format!(r#"{{"type":"record","name":"{name}","fields":[{{"name":"v","type":"int"}}]}}"#)
}

fn scope(name: &str) -> Scope {
    Scope::Subject(Subject::new(name).unwrap_or_else(|e| panic!("{e}")))
}

/// Runs `op` and answers the transactions it sent, checked against [`check_rules`].
async fn sent<T, E: std::fmt::Debug>(
    store: &AwsStore,
    path: &str,
    op: impl std::future::Future<Output = Result<T, E>>,
) -> Vec<Transaction> {
    sent_answer(store, path, op).await.1
}

/// [`sent`] with what `op` answered.
async fn sent_answer<T, E: std::fmt::Debug>(
    store: &AwsStore,
    path: &str,
    op: impl std::future::Future<Output = Result<T, E>>,
) -> (T, Vec<Transaction>) {
    store.calls().take_writes();
    let answer = op.await.unwrap_or_else(|e| panic!("{path}: {e:?}"));
    (answer, check_rules(path, &store.calls().take_writes()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_path_raises_the_revision_by_its_step_under_its_guards() {
    with_store(|store, _| async move {
        store.calls().record_writes();
        let registry = Registry::new(Arc::new(store.clone()), RegistrySettings::default());
        let options = RegisterOptions::default;

        // Registration of a new schema: a new ID, the first row of a new subject, its record.
        let path = "registration, new ID";
        let written = sent(&store, path, registry.register("a", schema(&record("A")), options())).await;
        let t = writing(path, &written, "a");
        assert_eq!(t.revised("a"), [Revised::Raised { step: KEEPING, conditioned: true }], "{path}");
        assert!(t.checks_settings_of(&scope("a")), "{path}: settings checks {t:#?}");
        assert!(t.actions.iter().any(|a| a.pk == keys::COUNTER_PK), "{path}: the allocation");
        let guid = t.actions.iter().find(|a| a.pk.starts_with("GUID#")).unwrap_or_else(|| panic!("{path}: guid"));
        assert!(guid.update.contains("SET") && guid.names.values().any(|n| n == "id"), "{path}: guid id {guid:?}");

        // The same schema under another subject: the bound ID, its use stamp raised.
        let path = "registration, bound ID";
        let written = sent(&store, path, registry.register("b", schema(&record("A")), options())).await;
        let t = writing(path, &written, "b");
        assert_eq!(t.revised("b"), [Revised::Raised { step: KEEPING, conditioned: true }], "{path}");
        assert!(t.checks_settings_of(&scope("b")), "{path}: settings checks");
        let binding = t.actions.iter().find(|a| a.pk.starts_with("FP#")).unwrap_or_else(|| panic!("{path}: binding"));
        assert!(binding.added("uses") == Some(1) && binding.conditions("id"), "{path}: use stamp {binding:?}");

        // A second version, then its soft delete: rows change, records stop being trusted.
        let path = "registration, second version";
        let widened = r#"{"type":"record","name":"A","fields":[{"name":"v","type":"int"},{"name":"w","type":"int","default":0}]}"#;
        let written = sent(&store, path, registry.register("a", schema(widened), options())).await;
        assert_eq!(writing(path, &written, "a").revised("a"), [Revised::Raised { step: KEEPING, conditioned: true }]);
        let path = "soft delete";
        let written = sent(&store, path, registry.delete_version("a", VersionSelector::Number(Version(2)), false)).await;
        let t = writing(path, &written, "a");
        assert_eq!(t.revised("a"), [Revised::Raised { step: 1, conditioned: true }], "{path}");
        assert!(t.checks_settings_of(&scope("a")), "{path}: settings checks");

        // Re-registration: the rows answer (the record is stale), and what they said is recorded.
        let path = "re-registration record";
        let written = sent(&store, path, registry.register("a", schema(&record("A")), options())).await;
        let t = writing(path, &written, "a");
        assert!(t.is_record_write(), "{path}: {t:#?}");
        assert_eq!(t.revised("a"), [Revised::Checked], "{path}");

        // A referrer: its own row keeps records; the referenced subject is bumped by a keeping step.
        let path = "registration with a reference (referrer bump)";
        let referrer = NewSchema {
            schema: Some(r#"{"type":"record","name":"R","fields":[{"name":"a","type":"A"}]}"#.into()),
            references: vec![SchemaReference { name: "A".into(), subject: "a".into(), version: 1 }],
            ..NewSchema::default()
        };
        let (registered, written) = sent_answer(&store, path, registry.register("r", referrer, options())).await;
        let freed = registered.id;
        let t = writing(path, &written, "r");
        assert_eq!(t.revised("r"), [Revised::Raised { step: KEEPING, conditioned: true }], "{path}");
        assert_eq!(t.revised("a"), [Revised::Raised { step: KEEPING, conditioned: false }], "{path}");
        assert!(t.has("Check", "S#a", &keys::version_sk(Version(1))), "{path}: referenced row");

        // Settings: a config decides on the settings alone (no revision); the global one has none.
        let path = "settings, subject";
        let config = ConfigRecord { compatibility_level: Some(registry_core::CompatibilityLevel::None), ..Default::default() };
        let written = sent(&store, path, registry.set_config(&scope("a"), config.clone())).await;
        let [t] = written.as_slice() else { panic!("{path}: one transaction: {written:#?}") };
        assert_eq!(t.revised("a"), [], "{path}");
        assert!(t.checks_settings_of(&scope("a")), "{path}: settings checks");
        assert!(t.find("Put", "CONFIG", "S#a").is_some_and(|a| !a.condition.is_empty()), "{path}: conditioned put");
        let path = "settings, global";
        let written = sent(&store, path, registry.set_config(&Scope::Global, config)).await;
        let [t] = written.as_slice() else { panic!("{path}: one transaction: {written:#?}") };
        assert!(t.actions.iter().all(|a| a.pk != keys::SUBJECTS_PK), "{path}: no subject revision");
        assert!(t.checks_settings_of(&Scope::Global), "{path}: settings checks");

        // Hard delete of the referrer: its rows, edges and settings go; its schema's ID is carried
        // by no row any more: the binding goes under its use stamp, with the guid item's ID.
        let path = "soft delete of a subject";
        let written = sent(&store, path, registry.delete_subject("r", false)).await;
        assert_eq!(writing(path, &written, "r").revised("r"), [Revised::Raised { step: 1, conditioned: true }]);
        let path = "hard delete";
        let written = sent(&store, path, registry.delete_subject("r", true)).await;
        let t = writing(path, &written, "r");
        assert_eq!(t.revised("r"), [Revised::Raised { step: 1, conditioned: true }], "{path}");
        assert!(t.checks_settings_of(&scope("r")), "{path}: settings checks");
        let binding = t.actions.iter().find(|a| a.kind == "Delete" && a.pk.starts_with("FP#"));
        assert!(binding.is_some_and(|b| b.conditions("uses") && b.conditions("id")), "{path}: binding delete {t:#?}");
        assert!(t.actions.iter().any(|a| a.pk.starts_with("GUID#") && a.update.starts_with("REMOVE")), "{path}: guid");

        // IMPORT mode on an empty subject decided on its rows: their revision is checked.
        let path = "IMPORT mode";
        let written = sent(&store, path, registry.set_mode(&scope("imp"), Mode::Import, false)).await;
        let [t] = written.as_slice() else { panic!("{path}: one transaction: {written:#?}") };
        assert_eq!(t.revised("imp"), [Revised::Checked], "{path}");
        // IMPORT of the freed ID with another schema: the rebind (no subject), then the row under
        // the ID binding's import stamp.
        let path = "IMPORT with rebind";
        let imported = NewSchema { id: Some(freed.0), version: Some(1), ..schema(&record("I")) };
        let written = sent(&store, path, registry.register("imp", imported, options())).await;
        let rebind = written.iter().find(|t| t.actions.iter().any(|a| a.pk == keys::id_pk(&Context::DEFAULT, freed)
            && a.kind == "Update" && a.update.starts_with("SET")));
        let rebind = rebind.unwrap_or_else(|| panic!("{path}: no rebind: {written:#?}"));
        assert!(rebind.actions.iter().all(|a| a.pk != keys::SUBJECTS_PK), "{path}: the rebind moves no revision");
        let moved = rebind.find("Update", &keys::id_pk(&Context::DEFAULT, freed), keys::ID_BINDING_SK);
        assert!(moved.is_some_and(|m| m.conditions("carried") && m.added("carried") == Some(1)), "{path}: {rebind:#?}");
        let t = writing(path, &written, "imp");
        assert!(matches!(t.revised("imp")[..], [Revised::Raised { conditioned: true, .. }]), "{path}");
        assert!(t.checks_settings_of(&scope("imp")), "{path}: settings checks");
        let stamp = t.find("Update", &keys::id_pk(&Context::DEFAULT, freed), keys::ID_BINDING_SK);
        assert!(stamp.is_some_and(|s| s.added("carried") == Some(1) && s.conditions("fingerprint")), "{path}: {t:#?}");

        // IMPORT of a fresh ID: bound outside the table's transactions, the row under its stamp.
        let path = "IMPORT";
        let imported = NewSchema { id: Some(500), version: Some(2), ..schema(&record("J")) };
        let written = sent(&store, path, registry.register("imp", imported, options())).await;
        let t = writing(path, &written, "imp");
        assert!(matches!(t.revised("imp")[..], [Revised::Raised { conditioned: true, .. }]), "{path}");
        let id_key = keys::id_pk(&Context::DEFAULT, SchemaId(500));
        assert!(t.find("Update", &id_key, keys::ID_BINDING_SK).is_some_and(|s| s.added("carried") == Some(1)));

        // IMPORT over the taken version 2: the old row goes in the new row's transaction, with its
        // ID edge and, its ID carried by no other row, its fingerprint binding (under its stamp).
        let path = "IMPORT replacing a version";
        let imported = NewSchema { id: Some(501), version: Some(2), ..schema(&record("K")) };
        let written = sent(&store, path, registry.register("imp", imported, options())).await;
        let t = writing(path, &written, "imp");
        assert_eq!(t.revised("imp"), [Revised::Raised { step: 1, conditioned: true }], "{path}");
        assert!(t.checks_settings_of(&scope("imp")), "{path}: settings checks");
        let over = t.find("Put", "S#imp", &keys::version_sk(Version(2)));
        assert!(over.is_some_and(|put| put.conditions("deleted")), "{path}: the row put over the one read: {t:#?}");
        let imp = Subject::new("imp").unwrap_or_else(|e| panic!("{e}"));
        let old_edge = keys::edge_sk(&imp, Version(2));
        assert!(t.has("Delete", &keys::id_pk(&Context::DEFAULT, SchemaId(500)), &old_edge), "{path}: old ID edge");
        let binding = t.actions.iter().find(|a| a.kind == "Delete" && a.pk.starts_with("FP#"));
        assert!(binding.is_some_and(|b| b.conditions("uses") && b.conditions("id")), "{path}: binding delete {t:#?}");

        // The first row of a subject of a named context raises the context's revision (its
        // allocation lists the context); the context's delete is conditioned on that revision.
        let path = "first registration in a named context";
        let written = sent(&store, path, registry.register(":.w:s", schema(&record("W")), options())).await;
        let t = writing(path, &written, ":.w:s");
        assert_eq!(t.revised(":.w:"), [Revised::Raised { step: 1, conditioned: false }], "{path}");
        assert_eq!(t.actions.iter().filter(|a| a.pk == keys::COUNTER_PK).count(), 1, "{path}: one counter write");
        let w = Context::parse(".w").unwrap_or_else(|e| panic!("{e}"));
        let in_w = |name: &str| Subject::new(w.qualify(name)).unwrap_or_else(|e| panic!("{e}"));
        let fingerprint = Store::versions(&store, &in_w("s")).await.unwrap_or_else(|e| panic!("{e}"))[0].fingerprint;
        let path = "context emptied";
        sent(&store, path, registry.delete_subject(":.w:s", false)).await;
        sent(&store, path, registry.delete_subject(":.w:s", true)).await;
        let path = "context delete";
        let written = sent(&store, path, registry.delete_context(".w")).await;
        let [t] = written.as_slice() else { panic!("{path}: one transaction: {written:#?}") };
        assert_eq!(t.revised(":.w:"), [Revised::Checked], "{path}");
        let unlisting = t.find("Update", keys::COUNTER_PK, &keys::counter_sk(&w));
        assert!(unlisting.is_some_and(|u| u.update.starts_with("REMOVE")), "{path}: {t:#?}");
        // A first row again, under an ID bound there (no allocation): it lists the context again.
        let path = "first registration in an unlisted context";
        let bound = Store::allocate_id_in(&store, &w, &fingerprint).await;
        assert!(bound.is_ok(), "{path}: {bound:?}");
        let written = sent(&store, path, registry.register(":.w:t", schema(&record("W")), options())).await;
        let t = writing(path, &written, ":.w:t");
        assert_eq!(t.revised(":.w:"), [Revised::Raised { step: 1, conditioned: false }], "{path}");
        let listing = t.find("Update", keys::COUNTER_PK, &keys::counter_sk(&w));
        assert!(listing.is_some_and(|u| u.update.starts_with("SET") && u.condition.is_empty()), "{path}: {t:#?}");

        // A DEK under a live KEK: no subject; the KEK's own revision rises by one, guarded live.
        let path = "DEK guard";
        let kek = registry_dek::testkit::kek("k");
        let kek_written = KeyStore::put_kek(&store, &kek, Expect::Absent).await;
        assert!(kek_written.is_ok(), "{path}: {kek_written:?}");
        let dek = registry_dek::testkit::dek("k", "orders-value", DekAlgorithm::Aes256Gcm, 1);
        let written = sent(&store, path, KeyStore::put_dek(&store, &dek, Expect::Absent, KekGuard::Live)).await;
        let [t] = written.as_slice() else { panic!("{path}: one transaction: {written:#?}") };
        assert!(t.actions.iter().all(|a| a.pk != keys::SUBJECTS_PK), "{path}: no subject revision");
        let guard = t.find("Update", "KEK", "k").unwrap_or_else(|| panic!("{path}: no KEK guard: {t:#?}"));
        assert!(guard.conditions("deleted") && guard.update.contains("#rev + :one"), "{path}: {guard:?}");
        assert_eq!(guard.number(":one"), Some(1), "{path}");
    })
    .await;
}
