//! The scenario loader from bytes: parse, variants, validation, interventions, and the
//! messages of every error. Never a panic, an abort or a hang.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| brink_fuzz::text(data));
