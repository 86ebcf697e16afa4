//! registry-store-aws (skeleton).
