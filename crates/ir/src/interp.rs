//! Reference interpreter (filled in below).
