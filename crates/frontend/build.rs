//! Generates the LALRPOP parser from `src/grammar.lalrpop`.
fn main() {
    lalrpop::process_src().expect("invariant: the grammar is valid LALRPOP");
}
