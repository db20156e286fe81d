//! `trellis-lock`: Per-definition locks and soil.lock: model, canonical writer, validating reader, invariants, atomic writes.
