//! Handles under the names of std's Unix descriptor types, with the method name the layers
//! above call (`as_fd`).

pub use std::os::windows::io::{BorrowedHandle as BorrowedFd, OwnedHandle as OwnedFd};

/// `AsFd` under its Unix name: a handle borrowed from its owner.
pub trait AsFd {
    /// The borrowed handle.
    fn as_fd(&self) -> BorrowedFd<'_>;
}

impl<T: std::os::windows::io::AsHandle> AsFd for T {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.as_handle()
    }
}
