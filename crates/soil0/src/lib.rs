//! `soil0`: The soil0 library facade (print, check, run, test) and the soil0 binary.
