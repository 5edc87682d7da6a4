//! The starting file `brink new NAME` writes: a commented scenario with one open-loop
//! class, one pool, one trigger and a `[tipping]` sweep, every key explained.

/// The starter scenario's text (`src/scenario/starter.toml`).
pub const STARTER: &str = include_str!("starter.toml");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Loader;

    /// The starter loads as written, with its sweep.
    #[test]
    fn the_starter_is_a_valid_scenario() {
        let sc = Loader::from_text("starter.toml", "starter", STARTER.to_string())
            .unwrap()
            .load(None, &[])
            .unwrap();
        assert!(sc.tipping.is_some());
    }
}
