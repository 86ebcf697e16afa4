//! Store conformance suite: the same cases for every backend. (Skeleton: filled in with the registry service.)
