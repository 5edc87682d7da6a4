//! `structure.svg`: the system drawn, its edges labelled with a run's measured rates and
//! the loop that sustains its failure highlighted ([`crate::report::structure`] lays it
//! out and draws it).

use crate::report::structure::{Diagram, svg};

/// The bytes of `structure.svg`.
pub fn structure_svg(d: &Diagram) -> Vec<u8> {
    svg(d).into_bytes()
}
