//! registry-http (skeleton).
