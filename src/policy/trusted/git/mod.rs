//! git in trusted mode: a program runner whose programs are named by the files it reads,
//! kept from running anything it was not asked to.
//!
//! `argv` reads git's global options once, into the value `rules` and `guard` both read;
//! `rules` reads git's argv with its own grammar (option tables in `tables`) and refuses an
//! option its subcommand's table in `options` does not have; `guard` gives
//! every git stage its environment and checks every git directory it will use right before
//! the spawn, reading configuration and index files as git does (`files`) and refusing the
//! keys that name a program (`keys`) and the git directories kept in work trees
//! (`places`); `lock` keeps git
//! apart from any program that may write in the same tree while it runs.
//!
//! May import: the rest of `policy::trusted` and `base`.

pub mod argv;
pub mod files;
pub mod guard;
pub mod keys;
pub mod lock;
pub mod options;
pub mod places;
pub mod rules;
pub mod send_email;
pub mod tables;
pub mod writers;
