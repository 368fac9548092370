//! Which stages of a trusted-mode call may execute the dynamic loader.
//!
//! The loader (an ELF interpreter the allowlisted programs name) must be executable for a
//! dynamic program to start, and once executable it runs any program it is handed as an
//! argument, mapping it without an `execve` Landlock could judge. A stage whose own program
//! is statically linked does not need it, so its domain leaves it out: such a program, even
//! one that runs whatever it is told, can then start only the allowed static programs, and
//! a dynamic one it starts fails to load. The rest of the domain is the call's.
//!
//! Only calls with a static stage pay for this (a second kept ruleset); every other stage
//! keeps the call's domain, loader included.

use std::path::Path;

use super::plan::Rules;
use super::resolve::{ExecFile, Resolver};
use crate::policy::trusted::Stage;

/// The loaders' grants of a call's rules, and which of its stages run without them.
#[derive(Debug)]
pub(super) struct Loaders {
    /// Indices of the loaders' grants in the call's rules (the exec grants come first).
    grants: Vec<usize>,
    /// Per stage: its program is static.
    pub(super) static_stages: Vec<bool>,
}

impl Loaders {
    /// `None` when every stage needs the call's loaders, or there are none.
    pub(super) fn find(
        resolver: &Resolver,
        files: &[ExecFile],
        stages: &[Stage],
    ) -> Option<Loaders> {
        let grants: Vec<usize> = files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.loader.then_some(i))
            .collect();
        if grants.is_empty() {
            return None;
        }
        let static_stages: Vec<bool> = stages
            .iter()
            .map(|s| resolver.is_static(Path::new(&s.program)))
            .collect();
        static_stages.contains(&true).then_some(Loaders {
            grants,
            static_stages,
        })
    }

    /// `rules` (whose identities found so far are `known`) without the loaders' grants.
    pub(super) fn without(&self, rules: &Rules, known: &[(u64, u64)]) -> (Rules, Vec<(u64, u64)>) {
        let mut out = rules.clone();
        out.grants = rules
            .grants
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.grants.contains(i))
            .map(|(_, g)| g.clone())
            .collect();
        let known = known
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.grants.contains(i))
            .map(|(_, id)| *id)
            .collect();
        (out, known)
    }
}
