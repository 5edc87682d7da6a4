//! A slab: fixed-size records reused through a free list, so the hot path allocates
//! nothing once the run has reached its largest population. Requests and jobs live in one.

/// Records of type `T` addressed by `u32` slot; freed slots are reused last-in first-out.
#[derive(Clone)]
pub struct Slab<T> {
    slots: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores a record and returns its slot.
    #[inline]
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                debug_assert!((i as usize) < self.slots.len());
                // SAFETY: a free slot is one `insert` returned, and `slots` never shrinks.
                unsafe { *self.slots.get_unchecked_mut(i as usize) = value };
                i
            }
            None => {
                self.slots.push(value);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Frees a slot (its record stays readable until the slot is reused). The caller has
    /// already made every event that names the slot stale.
    #[inline]
    pub fn remove(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }

    /// Records allocated: the most in use at once so far.
    pub fn held(&self) -> usize {
        self.slots.len()
    }

    /// Records in use.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Every record, in slot order, free slots' too (a free slot's record is overwritten
    /// when it is reused): for a change that must reach every record in use, rarely.
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut()
    }

    /// The records in use, in slot order.
    pub fn iter_live(&self) -> impl Iterator<Item = &T> {
        let mut is_free = vec![false; self.slots.len()];
        for &f in &self.free {
            is_free[f as usize] = true;
        }
        self.slots
            .iter()
            .zip(is_free)
            .filter_map(|(r, free)| (!free).then_some(r))
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: u32) -> &T {
        debug_assert!((i as usize) < self.slots.len());
        // SAFETY: the slab is private to the model, which indexes it only with slots that
        // `insert` returned (carried by events and records), and `slots` never shrinks.
        unsafe { self.slots.get_unchecked(i as usize) }
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: u32) -> &mut T {
        debug_assert!((i as usize) < self.slots.len());
        // SAFETY: as for `index`.
        unsafe { self.slots.get_unchecked_mut(i as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_freed_slots_and_counts_live_records() {
        let mut s = Slab::default();
        let a = s.insert('a');
        let b = s.insert('b');
        s.remove(a);
        assert_eq!(s.live(), 1);
        let c = s.insert('c');
        assert_eq!(c, a, "a freed slot is reused");
        assert_eq!(s[b], 'b');
        assert_eq!(s.iter_live().copied().collect::<Vec<_>>(), vec!['c', 'b']);
    }
}
