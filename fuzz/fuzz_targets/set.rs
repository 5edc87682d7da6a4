//! `--set` overrides (and a variant) applied to a bundled scenario. Input: a byte choosing
//! the scenario, a byte choosing the variant (0: none), then one `path=value` a line.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    brink_fuzz::bundled_with_sets(data);
});
