//! registry-store-local (skeleton).
