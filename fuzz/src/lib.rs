//! Fuzz targets of brink (`cargo fuzz`; run them with `scripts/fuzz MINUTES`).
//!
//! What the targets share: loading with every error formatted (message building is code
//! that can panic too), and a bundled scenario with `--set` overrides read from the input.

use brink::scenario::{Loader, Override, Scenario, ScenarioError, bundled};

/// The most overrides and variants tried per input: enough to combine, few enough that an
/// input stays fast.
const MAX_SETS: usize = 16;

/// Formats `e` and checks what every message must have: a place and a key path.
pub fn check_error(e: &ScenarioError) {
    let msg = e.to_string();
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

/// Reads the input as: a byte choosing a bundled scenario, a byte choosing its variant
/// (0: none), then `--set` arguments, one a line. Loads the scenario with them.
pub fn bundled_with_sets(data: &[u8]) -> Option<Scenario> {
    let [which, variant, rest @ ..] = data else {
        return None;
    };
    let all = bundled::all();
    let b = &all[*which as usize % all.len()];
    let loader = Loader::bundled(b).expect("a bundled scenario parses");
    let names = loader.variant_names();
    let variant = match *variant as usize % (names.len() + 1) {
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
