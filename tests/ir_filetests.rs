//! IR text round-trip tests (filled in later).
