//! shrink
