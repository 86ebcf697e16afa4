//! Records written conditionally on their revision, for the ports that keep records beside the
//! registry's rows (the DEK registry's key store, the exporter store): what a store hands out
//! ([`Stored`]) and what a conditional write expects of the record it replaces ([`Expect`]).

/// A record with the revision the store gave it (1 when created, +1 on every write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored<T> {
    pub value: T,
    pub revision: u64,
}

/// What a conditional write expects of the record it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The record must not exist (create).
    Absent,
    /// The record must exist at this revision (update, delete).
    Revision(u64),
}
