//! Protected paths (Linux): a child of a spawn puts itself in a private mount namespace (a
//! user namespace first when the server is not root), makes every mount private so that
//! nothing propagates back to the server's namespace, and bind-mounts each protected path
//! read-only onto itself. A bind mount can be neither written beneath nor renamed, removed
//! or replaced (its name is a mount point: `EBUSY`), and the Landlock domain the child
//! enters next forbids `mount` and `umount`. Directories between a writable root and a
//! protected path are bound onto themselves too (not read-only), so that no process of the
//! call can rename them away and put a directory of its own in their place.
//!
//! Each path is opened in the child without following any symbolic link, and its device
//! and inode must be the ones the server found when it planned the call: a path swapped
//! since then fails the spawn instead of protecting something else.

use super::*;
#[cfg(target_os = "linux")]
use std::ffi::c_int;
use std::ffi::CString;
use std::path::PathBuf;

/// The kernel's new mount calls (the same numbers on every architecture since Linux 5.2).
#[cfg(target_os = "linux")]
const SYS_OPEN_TREE: libc::c_long = 428;
#[cfg(target_os = "linux")]
const SYS_MOVE_MOUNT: libc::c_long = 429;
#[cfg(target_os = "linux")]
const SYS_MOUNT_SETATTR: libc::c_long = 442;
#[cfg(target_os = "linux")]
const OPEN_TREE_CLONE: libc::c_uint = 1;
#[cfg(target_os = "linux")]
const AT_RECURSIVE: libc::c_uint = 0x8000;
#[cfg(target_os = "linux")]
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
#[cfg(target_os = "linux")]
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
#[cfg(target_os = "linux")]
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// The kernel's `struct open_how` for `openat2`.
#[cfg(target_os = "linux")]
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// The kernel's `struct mount_attr`.
#[cfg(target_os = "linux")]
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// One path a child binds onto itself: read-only (protected) or not (an ancestor kept
/// from being renamed).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct ProtectedPath {
    path: CString,
    id: (u64, u64),
    read_only: bool,
}

/// What a child applies before it confines itself: the namespaces and the bind mounts.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Protect {
    /// The user namespace the child enters first (`UserNamespace`), when the server is
    /// not root.
    user: Option<std::sync::Arc<OwnedFd>>,
    paths: Vec<ProtectedPath>,
}

/// A user namespace in which the server's user and group are mapped to themselves, made
/// once by a helper process (`hold_user_namespace`) and kept open by its descriptor: a
/// call's child enters it (`setns`) to make its mount namespace when the server is not
/// root. The child cannot make one of its own: it shares the server's memory, which is
/// not dumpable, so its `/proc/self/uid_map` belongs to root and cannot be written.
#[derive(Clone, Debug)]
pub struct UserNamespace(std::sync::Arc<OwnedFd>);

impl UserNamespace {
    /// The user namespace of process `pid` (the helper, which made it).
    pub fn of(pid: u32) -> io::Result<UserNamespace> {
        let file = File::open(format!("/proc/{pid}/ns/user"))?;
        Ok(UserNamespace(std::sync::Arc::new(OwnedFd::from(file))))
    }
}

/// The helper's work: a new user namespace for this process, with its user and group
/// mapped to themselves (`setgroups` refused, as an unprivileged writer must).
#[cfg(target_os = "linux")]
pub fn hold_user_namespace() -> io::Result<()> {
    // SAFETY: plain getters without arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: a plain system call on flags.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } == -1 {
        return Err(io::Error::last_os_error());
    }
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// No user namespaces outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn hold_user_namespace() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "user namespaces are a Linux feature",
    ))
}

impl Protect {
    /// The plan for `paths`: each an absolute path with no symbolic link in it, the
    /// device and inode it has now, and whether it is made read-only. The child enters
    /// `user` first, when given (the server is not root).
    pub fn new(
        paths: &[(PathBuf, (u64, u64), bool)],
        user: Option<&UserNamespace>,
    ) -> io::Result<Protect> {
        let user = user.map(|u| u.0.clone());
        let paths = paths
            .iter()
            .map(|(p, id, read_only)| {
                Ok(ProtectedPath {
                    path: CString::new(p.as_os_str().as_encoded_bytes())?,
                    id: *id,
                    read_only: *read_only,
                })
            })
            .collect::<io::Result<_>>()?;
        Ok(Protect { user, paths })
    }

    /// True when the child makes a user namespace (whose creator gets a full bounding set
    /// again, to be emptied).
    #[cfg(target_os = "linux")]
    pub(super) fn new_user(&self) -> bool {
        self.user.is_some()
    }
}

/// Outside Linux there are no mount namespaces.
#[cfg(not(target_os = "linux"))]
pub fn namespaces_available(_user: Option<&UserNamespace>) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "mount namespaces are a Linux feature",
    ))
}

/// True when the server runs as root (then a call needs no user namespace).
#[cfg(unix)]
pub fn is_root() -> bool {
    // SAFETY: a plain getter.
    unsafe { libc::geteuid() == 0 }
}

/// No root and no namespaces on Windows.
#[cfg(windows)]
pub fn is_root() -> bool {
    false
}

/// The namespaces: the held user namespace first (when `user` is given: the server's
/// user owns it, so the child gets every capability there), then a mount namespace whose
/// every mount is private.
#[cfg(target_os = "linux")]
fn enter_namespaces(user: Option<&OwnedFd>) -> bool {
    if let Some(fd) = user {
        // SAFETY: a plain system call on an open namespace descriptor.
        if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWUSER) } == -1 {
            return false;
        }
    }
    // SAFETY: a plain system call on flags.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } == -1 {
        return false;
    }
    // SAFETY: static NUL-terminated strings; no data argument.
    unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == 0
    }
}

/// Binds `p` onto itself (read-only when asked), found without following links and
/// checked to be the file the server planned for. Raw calls only.
#[cfg(target_os = "linux")]
fn bind(p: &ProtectedPath) -> bool {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: raw system calls on a NUL-terminated path, live structs of the kernel's
    // layouts whose sizes are passed, and descriptors opened here and closed here.
    unsafe {
        let fd = libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            p.path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        ) as c_int;
        if fd < 0 {
            return false;
        }
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) == -1 || (st.st_dev as u64, st.st_ino as u64) != p.id {
            libc::close(fd);
            *libc::__errno_location() = libc::ESTALE;
            return false;
        }
        let empty = c"".as_ptr();
        let tree = libc::syscall(
            SYS_OPEN_TREE,
            fd,
            empty,
            OPEN_TREE_CLONE
                | AT_RECURSIVE
                | libc::AT_EMPTY_PATH as libc::c_uint
                | libc::O_CLOEXEC as libc::c_uint,
        ) as c_int;
        if tree < 0 {
            libc::close(fd);
            return false;
        }
        let attr = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        let ok = (!p.read_only
            || libc::syscall(
                SYS_MOUNT_SETATTR,
                tree,
                empty,
                AT_RECURSIVE | libc::AT_EMPTY_PATH as libc::c_uint,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ) == 0)
            && libc::syscall(
                SYS_MOVE_MOUNT,
                tree,
                empty,
                fd,
                empty,
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            ) == 0;
        libc::close(tree);
        libc::close(fd);
        ok
    }
}

/// The child's step: namespaces, then every bind. False on failure (errno tells why).
/// Raw system calls only: the child shares the server's memory.
#[cfg(target_os = "linux")]
pub(super) fn apply(protect: &Protect) -> bool {
    enter_namespaces(protect.user.as_deref()) && protect.paths.iter().all(bind)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::super::{spawn, ChildSetup, SpawnSpec};
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;

    fn id(p: &std::path::Path) -> (u64, u64) {
        let m = std::fs::symlink_metadata(p).expect("stat");
        (m.dev(), m.ino())
    }

    /// A child writes nothing beneath a protected directory, cannot rename it, nor a bound
    /// ancestor, and still writes beside them; the server's mount table is unchanged.
    #[test]
    fn a_child_sees_protected_paths_read_only_and_the_server_sees_no_mount() {
        let base = std::env::temp_dir().join(format!("ys-protect-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("sub/.git/hooks")).expect("mkdir");
        let before = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        let git = base.join("sub/.git");
        let protect = Protect::new(
            &[
                (base.join("sub"), id(&base.join("sub")), false),
                (git.clone(), id(&git), true),
            ],
            None,
        )
        .expect("plan");
        let setup = ChildSetup {
            protect: Some(&protect),
            ..ChildSetup::default()
        };
        let script = "echo x > sub/.git/hooks/pre-commit 2>/dev/null && echo wrote; \
                      mv sub/.git sub/g 2>/dev/null && echo renamed; \
                      mv sub s2 2>/dev/null && echo moved; \
                      echo y > sub/file && echo beside";
        let args = ["-c".to_string(), script.to_string()];
        let env = [("PATH".into(), "/usr/bin:/bin".into())];
        let spawned = spawn(SpawnSpec {
            program: "/bin/sh",
            arg0: None,
            args: &args,
            env: &env,
            cwd: &base,
            stdin_pipe: false,
            stdout: None,
            stdin_file: None,
            stderr: None,
            join_group: None,
            terminal: None,
            setup: Some(&setup),
        })
        .expect("spawn");
        let mut out = String::new();
        spawned
            .stdout
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        assert_eq!(out, "beside\n");
        assert!(!git.join("hooks/pre-commit").exists());
        let after = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        assert_eq!(before, after);
        // A path that is not the planned file fails the spawn.
        let stale = Protect::new(&[(git.clone(), (1, 1), true)], None).expect("plan");
        let setup = ChildSetup {
            protect: Some(&stale),
            ..ChildSetup::default()
        };
        let e = spawn(SpawnSpec {
            program: "/bin/true",
            arg0: None,
            args: &[],
            env: &env,
            cwd: &base,
            stdin_pipe: false,
            stdout: None,
            stdin_file: None,
            stderr: None,
            join_group: None,
            terminal: None,
            setup: Some(&setup),
        })
        .err()
        .expect("a changed path fails");
        assert_eq!(
            super::super::SpawnError::of(&e).map(|e| (e.step, e.errno)),
            Some((super::super::SpawnStep::Protect, libc::ESTALE)),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn namespaces_can_be_made_here() {
        super::super::namespaces_available(None).expect("namespaces");
    }
}
