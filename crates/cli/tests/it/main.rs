//! The `adc` binary's tests, one test binary: commands, exit codes and
//! `--json` (`cli`), values on the command line (`cli_values`), object
//! files linked with `cc` (`objects`), bad or extreme input (`robust`),
//! the whole text of usage errors and help (`usage_messages`), `adc tape`
//! (`tape`), `--jacobian`/`--hessian` of generated functions
//! (`generated_jacobians`), and the documentation's examples (`docs`).

mod common;

mod cli;
mod cli_values;
mod docs;
mod generated_jacobians;
mod objects;
mod robust;
mod tape;
mod usage_messages;
