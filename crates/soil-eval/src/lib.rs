//! `soil-eval`: The Soil interpreter: resolved programs, the builtin prelude, World and capability ports, runtime panics.
