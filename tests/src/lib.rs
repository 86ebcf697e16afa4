//! API test harness (skeleton).
