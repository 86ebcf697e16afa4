//! [`HookedStore`]: a store that asks a [`StoreHook`] before forwarding each call to an inner store.
//! The one place tests inject faults or count calls, so a new [`Store`] method is forwarded once.

use crate::model::{ConfigRecord, Context, Guid, SchemaBody, SchemaId, Scope, Subject, Version, VersionRow};
use crate::store::{
    CommitHints, ConfiguredPage, GuidCarried, HardDeletion, IdRowsPage, LayeredContext, NewVersion, Preconditions,
    Revision, SettingKind, SettingWrite, SoftDeletion, Store, StoreResult, SubjectsPage, VersionsPage,
    assign_id_in_steps,
};
use async_trait::async_trait;
use registry_schema::Fingerprint;
use std::fmt;
use std::sync::Arc;

/// Declares [`StoreCall`] from [`crate::store::for_each_store_method!`]: one variant per method.
macro_rules! declare_store_call {
    ($($kind:ident $method:ident($($arg:ident: $ty:ty),*) -> $answer:ty
        => $variant:ident $({ $($field:ident: $field_ty:ty = $value:expr),* })?;)*) => {
        /// Which [`Store`] method is being called, with the arguments hooks look at.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum StoreCall {
            $(
                #[doc = concat!("[`Store::", stringify!($method), "`].")]
                $variant $({ $($field: $field_ty),* })?,
            )*
        }

        impl StoreCall {
            /// Whether the call changes stored state.
            pub fn is_write(self) -> bool {
                match self {
                    $(StoreCall::$variant { .. } => stringify!($kind) == "write",)*
                }
            }
        }
    };
}

crate::store::for_each_store_method!(declare_store_call);

/// Decides, before each call, whether it reaches the inner store. Closures are hooks.
pub trait StoreHook: Send + Sync {
    /// Called before `call` is forwarded; an `Err` is returned to the caller instead, and the
    /// inner store is not called.
    fn before(&self, call: StoreCall) -> StoreResult<()>;

    /// How often the caller yields to other tasks before `call` is forwarded (0: never), so a
    /// hook can make an in-memory store interleave like a networked one.
    fn yields(&self, _call: StoreCall) -> usize {
        0
    }

    /// Called when a forwarded `call` returned, with whether it succeeded (not for refused calls).
    fn after(&self, _call: StoreCall, _ok: bool) {}

    /// Work to run to its end before `call` is asked about and forwarded (`None`: nothing): how a
    /// case puts a whole other operation between a decision's reads and its commit.
    fn interleave(&self, _call: StoreCall) -> Option<Interleaved> {
        None
    }
}

/// Work a [`StoreHook`] runs before a call ([`StoreHook::interleave`]).
pub type Interleaved = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

impl<F: Fn(StoreCall) -> StoreResult<()> + Send + Sync> StoreHook for F {
    fn before(&self, call: StoreCall) -> StoreResult<()> {
        self(call)
    }
}

/// Forwards every [`Store`] call to `inner` after [`StoreHook::before`] allowed it. Batch writes
/// are forwarded as one call, so a hook sees them as the single atomic write they are.
pub struct HookedStore<H> {
    inner: Arc<dyn Store>,
    hook: H,
    /// Whether [`Store::create_version_assigning_id`] runs as its separate steps through the hook
    /// (see [`HookedStore::assigning_ids_in_steps`]) instead of as one forwarded call.
    assign_in_steps: bool,
    /// Whether version commits reach `inner` with every hint dropped (see
    /// [`HookedStore::dropping_hints`]).
    drop_hints: bool,
}

impl<H: StoreHook> HookedStore<H> {
    /// Wraps `inner`; keep a clone of `inner` to inspect the state behind the hook.
    pub fn new(inner: Arc<dyn Store>, hook: H) -> Self {
        Self { inner, hook, assign_in_steps: false, drop_hints: false }
    }

    /// Runs [`Store::create_version_assigning_id`] as the separate calls of
    /// [`assign_id_in_steps`] through the hook, so a fault can be injected between them. This is
    /// what a store without its own atomic version (memory, SQLite) does anyway; a store with one
    /// (DynamoDB) would be exercised on its other methods instead.
    pub fn assigning_ids_in_steps(mut self) -> Self {
        self.assign_in_steps = true;
        self
    }

    /// Hands `inner` every version commit with [`CommitHints::default()`] instead of the caller's
    /// hints: a store must stay correct when it ignores them ([`CommitHints`]), which the
    /// conformance cases check through this wrapper.
    pub fn dropping_hints(mut self) -> Self {
        self.drop_hints = true;
        self
    }

    /// The hints `inner` gets: the caller's, or none when dropping them.
    fn passed<'a>(&self, hints: &'a CommitHints) -> &'a CommitHints {
        static NONE: CommitHints = CommitHints { bindings_seen: None, sole_live_fingerprint: false };
        if self.drop_hints { &NONE } else { hints }
    }

    /// The wrapped store (calls on it bypass the hook).
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// The hook, for the counts it keeps.
    pub fn hook(&self) -> &H {
        &self.hook
    }
}

impl<H> fmt::Debug for HookedStore<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookedStore").field("inner", &self.inner).finish_non_exhaustive()
    }
}

/// Implements [`Store`] for [`HookedStore`] from [`crate::store::for_each_store_method!`]: every
/// method asks the hook with its [`StoreCall`], then forwards its arguments to the inner store
/// unchanged ([`HookedStore::forward`]); a version commit may instead run in steps through the hook.
macro_rules! hooked_store {
    ($($kind:ident $method:ident($($arg:ident: $ty:ty),*) -> $answer:ty
        => $variant:ident $({ $($field:ident: $field_ty:ty = $value:expr),* })?;)*) => {
        #[async_trait]
        impl<H: StoreHook> Store for HookedStore<H> {
            $(
                async fn $method(&self, $($arg: $ty),*) -> StoreResult<$answer> {
                    let call = StoreCall::$variant $({ $($field: $value),* })?;
                    hooked_call!(self, call, $method($($arg),*))
                }
            )*

            fn cache_stats(&self) -> Option<crate::CacheStats> {
                self.inner.cache_stats()
            }
        }
    };
}

/// One [`HookedStore`] method: [`Store::create_version_assigning_id`] runs as its separate steps
/// when asked ([`HookedStore::assigning_ids_in_steps`]); every call is forwarded after the hook.
macro_rules! hooked_call {
    ($self:ident, $call:ident, create_version_assigning_id($version:ident)) => {{
        if $self.assign_in_steps {
            return assign_id_in_steps($self, $version).await;
        }
        let version = NewVersion { hints: $self.passed($version.hints), ..$version };
        $self.forward($call, $self.inner.create_version_assigning_id(version)).await
    }};
    ($self:ident, $call:ident, create_version($row:ident, $preconditions:ident, $hints:ident)) => {
        $self.forward($call, $self.inner.create_version($row, $preconditions, $self.passed($hints))).await
    };
    ($self:ident, $call:ident, $method:ident($($arg:ident),*)) => {
        $self.forward($call, $self.inner.$method($($arg),*)).await
    };
}

crate::store::for_each_store_method!(hooked_store);

impl<H: StoreHook> HookedStore<H> {
    /// Yields as the hook asks, asks [`StoreHook::before`], then runs `answer` (the inner store's
    /// call, not started before) and reports it to [`StoreHook::after`].
    async fn forward<T>(&self, call: StoreCall, answer: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
        for _ in 0..self.hook.yields(call) {
            tokio::task::yield_now().await;
        }
        if let Some(work) = self.hook.interleave(call) {
            work.await;
        }
        self.hook.before(call)?;
        let answer = answer.await;
        self.hook.after(call, answer.is_ok());
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryStore;
    use crate::model::{DeletedFilter, UnassignedRow};
    use crate::store::StoreError;
    use crate::testkit::{StoreTestExt, record_body, unique_subject};

    #[tokio::test]
    async fn a_refused_call_never_reaches_the_inner_store() {
        let inner: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let store = HookedStore::new(inner.clone(), |call: StoreCall| {
            if call == StoreCall::PutBody { Err(StoreError::Unavailable("refused".into())) } else { Ok(()) }
        });
        let body = record_body("hooked");
        let fingerprint = body.fingerprint();
        assert!(matches!(store.put_body(&fingerprint, &body).await, Err(StoreError::Unavailable(_))));
        assert_eq!(inner.get_body(&fingerprint).await.unwrap(), None);
        assert_eq!(store.get_body(&fingerprint).await.unwrap(), None, "other calls pass");
    }

    #[tokio::test]
    async fn the_hook_sees_each_call_and_its_page_limit() {
        #[derive(Default)]
        struct Seen(std::sync::Mutex<Vec<StoreCall>>);
        impl StoreHook for Seen {
            fn before(&self, call: StoreCall) -> StoreResult<()> {
                self.0.lock().unwrap().push(call);
                Ok(())
            }
        }
        let store = HookedStore::new(Arc::new(MemoryStore::new()), Seen::default());
        let subject = unique_subject("hooked");
        store
            .list_subjects(SubjectsPage { prefix: "", filter: DeletedFilter::LiveOnly, after: None, limit: 7 })
            .await
            .unwrap();
        store.mark_used(&subject, 3).await.unwrap();
        let preconditions = Preconditions::default();
        store
            .soft_delete_versions(SoftDeletion { subject: &subject, versions: &[], preconditions: &preconditions })
            .await
            .unwrap();
        let seen = store.hook().0.lock().unwrap().clone();
        assert_eq!(seen, [StoreCall::ListSubjects { limit: 7 }, StoreCall::MarkUsed, StoreCall::SoftDeleteVersions]);
        assert!(seen.iter().skip(1).all(|call| call.is_write()) && !seen[0].is_write());
    }

    #[tokio::test]
    async fn assigning_in_steps_shows_the_hook_each_step() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = {
            let seen = seen.clone();
            move |call: StoreCall| {
                seen.lock().unwrap().push(call);
                Ok(())
            }
        };
        let store = HookedStore::new(Arc::new(MemoryStore::new()), record).assigning_ids_in_steps();
        let body = record_body("steps");
        let row = UnassignedRow {
            subject: unique_subject("steps"),
            version: Version(1),
            fingerprint: body.fingerprint(),
            references: vec![],
            registered_at_ms: 1_700_000_000_000,
        };
        let guid = Guid::of(&body);
        let preconditions = Preconditions::default();
        let version =
            NewVersion { row: &row, guid: &guid, preconditions: &preconditions, hints: &CommitHints::default() };
        let (id, allocated) = store.create_version_assigning_id(version).await.unwrap();
        assert!(allocated);
        assert_eq!(store.inner().fingerprint_for_id(id).await.unwrap(), Some(body.fingerprint()));
        let seen = seen.lock().unwrap().clone();
        let steps = [StoreCall::BindGuid, StoreCall::IdForFingerprint, StoreCall::AllocateId, StoreCall::CreateVersion];
        assert_eq!(seen, steps);
    }
}
