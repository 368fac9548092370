//! Footprint: the size and linking of the release binaries, and the server's memory under
//! hostile input and big reads.
//!
//! Binaries: size (target at most 2 MiB) and whether each is static (no `PT_INTERP` program
//! header, no `DT_NEEDED` entry), read from the ELF headers.
//!
//! Memory (see `memory` below): for every shape of hostile `ping` line (16, 32 and 60 MiB),
//! a fresh server's peak RSS above its idle RSS (target at most twice the line) and its RSS
//! one second later (target within 4 MiB of idle); and the peak RSS while 20 MB and 100 MB
//! of output are read back in 1 MiB pages with the default ring (target at most 8 MiB).
//! Each build found is measured: the bench's own binary (glibc), the musl release build
//! when it exists, and any listed in `YS_FOOTPRINT_BINS` (`label=path,label=path`, for a
//! before/after comparison).
//!
//! This bench builds nothing. It looks for the binaries that the README's commands build:
//! `target/x86_64-unknown-linux-musl/dist/yieldshell` (static, musl, as `scripts/build-release.sh`
//! builds it; `release/` too when present),
//! `target/x86_64-unknown-linux-gnu/release/yieldshell` (static with glibc when built with
//! `RUSTFLAGS="-C target-feature=+crt-static"`) and `target/release/yieldshell` (the
//! default build, dynamic against glibc), and says how to build a missing one. A binary
//! older than the newest source file is flagged as stale. `scripts/check-static.sh` is the
//! CI check that builds the static binary and fails when it is dynamic or too big.
#![allow(clippy::print_stdout)]

mod common;
#[path = "footprint/memory.rs"]
mod memory;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::{Figure, Report, Target};

const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    let mut report = Report::new("footprint");
    binaries(&mut report);
    memory::run(&mut report);
}

/// Size and linking of the release binaries.
fn binaries(report: &mut Report) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let newest_source = newest_mtime(&root.join("src"));
    let dynamic_size = fs::metadata(target.join("release/yieldshell"))
        .map(|m| m.len())
        .ok();

    let candidates = [
        (
            "x86_64-unknown-linux-musl/dist/yieldshell",
            "rustup target add x86_64-unknown-linux-musl && \
             cargo build --profile dist --target x86_64-unknown-linux-musl",
        ),
        (
            "x86_64-unknown-linux-musl/release/yieldshell",
            "rustup target add x86_64-unknown-linux-musl && \
             cargo build --release --target x86_64-unknown-linux-musl",
        ),
        (
            "x86_64-unknown-linux-gnu/release/yieldshell",
            "RUSTFLAGS=\"-C target-feature=+crt-static\" \
             cargo build --release --target x86_64-unknown-linux-gnu",
        ),
        ("release/yieldshell", "cargo build --release"),
    ];
    for (rel, how) in candidates {
        let path = target.join(rel);
        let Ok(bytes) = fs::read(&path) else {
            report.info(&format!("target/{rel}: not built: run `{how}`"));
            continue;
        };
        let size = bytes.len() as f64 / MIB;
        let stale = if mtime(&path) < newest_source {
            " (STALE: older than the sources; rebuild for a current figure)"
        } else {
            ""
        };
        let mut f = Figure::new(&format!("size of target/{rel}"), "MiB", size)
            .target(Target::AtMost(2.0))
            .note(format!("{} bytes{stale}", bytes.len()));
        if let (Some(d), false) = (dynamic_size, rel == "release/yieldshell") {
            f = f.baseline(d as f64 / MIB, "default dynamic release build");
        }
        report.add(f);
        match elf_linking(&bytes) {
            Ok(link) => {
                let note = match (&link.interp, link.needed.is_empty()) {
                    (None, true) if link.has_dynamic => {
                        "static-pie: no interpreter, no DT_NEEDED".to_string()
                    }
                    (None, true) => "static: no interpreter, no dynamic section".to_string(),
                    _ => format!(
                        "dynamic: interpreter {:?}, needs {:?}",
                        link.interp.as_deref().unwrap_or("-"),
                        link.needed
                    ),
                };
                let is_static = link.interp.is_none() && link.needed.is_empty();
                // The default build links glibc dynamically by design: report it, hold only
                // the static builds to the target.
                let target = if rel == "release/yieldshell" {
                    Target::None
                } else {
                    Target::AtLeast(1.0)
                };
                report.add(
                    Figure::new(
                        &format!("static target/{rel} (1 = yes)"),
                        "",
                        if is_static { 1.0 } else { 0.0 },
                    )
                    .target(target)
                    .note(note),
                );
            }
            Err(e) => report.info(&format!("target/{rel}: cannot read its ELF headers: {e}")),
        }
    }
}

/// What an ELF file needs at load time.
struct Linking {
    /// `PT_INTERP`: the dynamic loader, if any.
    interp: Option<String>,
    /// `DT_NEEDED`: shared libraries.
    needed: Vec<String>,
    /// Whether there is a `PT_DYNAMIC` header at all (static-pie has one).
    has_dynamic: bool,
}

/// Parses the program headers and the dynamic section of a little-endian ELF64 file.
fn elf_linking(b: &[u8]) -> Result<Linking, String> {
    let u16_at = |o: usize| b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|s| u32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
    };
    let u64_at = |o: usize| {
        b.get(o..o + 8)
            .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
    };
    if b.get(..4) != Some(b"\x7fELF") || b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err("not a little-endian ELF64 file".into());
    }
    let bad = || "truncated ELF header".to_string();
    let phoff = u64_at(0x20).ok_or_else(bad)? as usize;
    let phentsize = u16_at(0x36).ok_or_else(bad)? as usize;
    let phnum = u16_at(0x38).ok_or_else(bad)? as usize;
    let mut interp = None;
    let mut dynamic = None;
    let mut loads = Vec::new(); // (vaddr, offset, filesz)
    for i in 0..phnum {
        let h = phoff + i * phentsize;
        let p_type = u32_at(h).ok_or_else(bad)?;
        let offset = u64_at(h + 8).ok_or_else(bad)? as usize;
        let vaddr = u64_at(h + 16).ok_or_else(bad)?;
        let filesz = u64_at(h + 32).ok_or_else(bad)? as usize;
        match p_type {
            1 => loads.push((vaddr, offset, filesz)),
            2 => dynamic = Some((offset, filesz)),
            3 => {
                let raw = b.get(offset..offset + filesz).ok_or_else(bad)?;
                let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
                interp = Some(String::from_utf8_lossy(&raw[..end]).into_owned());
            }
            _ => (),
        }
    }
    let mut needed = Vec::new();
    if let Some((offset, size)) = dynamic {
        let mut names = Vec::new();
        let mut strtab = None;
        for e in (offset..offset + size).step_by(16) {
            let tag = u64_at(e).ok_or_else(bad)?;
            let val = u64_at(e + 8).ok_or_else(bad)?;
            match tag {
                0 => break,
                1 => names.push(val as usize),
                5 => strtab = Some(val),
                _ => (),
            }
        }
        // DT_STRTAB is an address: map it to a file offset through the PT_LOAD headers.
        let strtab = strtab.and_then(|addr| {
            loads
                .iter()
                .find(|(v, _, len)| addr >= *v && addr < v + *len as u64)
                .map(|(v, off, _)| (addr - v) as usize + off)
        });
        for n in names {
            let name = strtab
                .and_then(|s| b.get(s + n..))
                .map(|raw| {
                    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
                    String::from_utf8_lossy(&raw[..end]).into_owned()
                })
                .unwrap_or_else(|| format!("<string at {n}>"));
            needed.push(name);
        }
    }
    Ok(Linking {
        interp,
        needed,
        has_dynamic: dynamic.is_some(),
    })
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn newest_mtime(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    let Ok(entries) = fs::read_dir(dir) else {
        return newest;
    };
    for e in entries.flatten() {
        let p = e.path();
        let t = if p.is_dir() {
            newest_mtime(&p)
        } else {
            mtime(&p)
        };
        newest = newest.max(t);
    }
    newest
}
