//! generate
