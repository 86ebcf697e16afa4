//! Service tests: `Registry` over `MemoryStore`, Given/When/Then, one module per concern.

mod common;
mod compatibility;
mod concurrency;
mod config_mode;
mod deletes;
mod guids;
mod live_ids;
mod reads;
mod recent_lookups;
mod reference_fan_out;
mod references;
mod register;
