//! The tests' one random number generator: SplitMix64 (Steele, Lea and Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014). Small, fast, any seed works, and the same
//! seed gives the same sequence on every machine, so a failure reproduces. Each test keeps its
//! own helpers for the distributions it needs on top of [`splitmix64`].

/// Advances `state` and returns the next 64 random bits.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
