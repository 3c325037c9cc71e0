//! Minimal reproducers of bugs the random-program tester found, ignored
//! until they are fixed (issue 10).
