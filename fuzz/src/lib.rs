//! Fuzz targets of brink (`cargo fuzz`; run them with `scripts/fuzz MINUTES`).
//!
//! What the targets share: loading with every error formatted (message building is code
//! that can panic too), and a bundled scenario with `--set` overrides read from the input.

use brink::scenario::{Loader, Override, Scenario, ScenarioError, bundled};

/// The most overrides and variants tried per input: enough to combine, few enough that an
/// input stays fast.
const MAX_SETS: usize = 16;

/// Formats `e` and checks what every message must have: a place and a key path. With
/// `BRINK_FUZZ_SHOW` set in the environment, prints it (to see what an input does).
pub fn check_error(e: &ScenarioError) {
    let msg = e.to_string();
    if std::env::var_os("BRINK_FUZZ_SHOW").is_some() {
        eprintln!("error: {msg}");
    }
    assert!(!msg.is_empty());
    if let ScenarioError::Invalid { place, path, .. } = e {
        assert!(!place.is_empty(), "no place in {msg}");
        assert!(!path.is_empty(), "no key path in {msg}");
    }
}

/// Loads with `variant` and `sets`; an error is formatted and checked.
pub fn load(loader: &Loader, variant: Option<&str>, sets: &[Override]) -> Option<Scenario> {
    match loader.load(variant, sets) {
        Ok(sc) => Some(sc),
        Err(e) => {
            check_error(&e);
            None
        }
    }
}

/// The sections of sweeps. Every bundled scenario has a `[tipping]` section whose window
/// `load` checks against the trigger's times, so an override that moves the trigger is
/// mostly refused there; without them the fuzzer reaches far more of validation and model.
const SWEEPS: [&str; 4] = ["tipping", "phase", "collapse", "hysteresis"];

/// Reads the input as: a byte choosing a bundled scenario, a byte choosing its variant
/// (low 7 bits, 0: none; the high bit drops the scenario's sweep sections), then `--set`
/// arguments, one a line. Loads the scenario with them.
pub fn bundled_with_sets(data: &[u8]) -> Option<Scenario> {
    let [which, variant, rest @ ..] = data else {
        return None;
    };
    let all = bundled::all();
    let b = &all[*which as usize % all.len()];
    let loader = if variant & 0x80 == 0 {
        Loader::bundled(b)
    } else {
        let mut table: toml::Table = toml::from_str(b.text).expect("a bundled scenario parses");
        for s in SWEEPS {
            table.remove(s);
        }
        let text = toml::to_string(&table).expect("a table serializes");
        Loader::from_text(&b.file(), b.name, text)
    }
    .expect("a bundled scenario parses");
    let names = loader.variant_names();
    let variant = match (variant & 0x7f) as usize % (names.len() + 1) {
        0 => None,
        i => Some(names[i - 1].as_str()),
    };
    let text = String::from_utf8_lossy(rest);
    let mut sets = Vec::new();
    for line in text.lines().take(MAX_SETS) {
        match Override::parse(line) {
            Ok(o) => sets.push(o),
            Err(e) => check_error(&e),
        }
    }
    let _ = loader.raw_value(sets.first().map_or("duration", |o| o.path.as_str()));
    load(&loader, variant, &sets)
}

/// Loads scenario text as a file, then with each of its first variants.
pub fn text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let loader = match Loader::from_text("fuzz.toml", "fuzz", text.to_string()) {
        Ok(l) => l,
        Err(e) => return check_error(&e),
    };
    load(&loader, None, &[]);
    for v in loader.variant_names().iter().take(MAX_SETS) {
        load(&loader, Some(v), &[]);
    }
}
