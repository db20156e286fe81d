//! `soil-rt`: Soil runtime values, the canonical JSON codec and the F64 total order.
