//! Outputs: an output that is an input, a closed stdout, `-o -`, thread counts and panics.
