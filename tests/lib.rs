//! Integration tests, one file per feature.
