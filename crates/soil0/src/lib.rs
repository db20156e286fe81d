//! `soil0` is the Soil toolchain as a library with a thin binary over it: the
//! daemon calls [`cli`] in process and the `soil0` binary is the oracle for the
//! same behaviour. It sits above the Soil crates (syntax, types, evaluation) and
//! reaches files only through the [`cli::Host`] port, so the library itself does
//! no I/O of its own.

pub mod cli;
