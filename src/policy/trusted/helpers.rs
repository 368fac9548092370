//! Programs a reviewed program starts by itself: GNU tar's compressors (`-z`, `-j`, `-J`,
//! `--zstd`, `--lzip`, `--lzma`, `--lzop`, `-Z`, and `-a` by the archive's suffix).
//!
//! A helper runs only when it is on the allowlist, as a stage's own program would: a call
//! whose helper is not is refused before anything runs, naming the helper and
//! `ALLOW_COMMANDS`. tar starts a decompressor itself (`execvp`, no shell), which the kernel
//! sandbox lets run because every allowlisted program is executable in the call's domain.
//! To compress, GNU tar up to 1.34 starts its compressor through `/bin/sh -c`, and no shell
//! is ever executable in a domain: with the kernel sandbox on, such a call runs as the
//! pipeline tar would have made, tar writing the archive to its stdout (`-f -`) and the
//! compressor as a stage of its own, its stdout redirected to the archive (opened by the
//! server beneath the working directory, as `>` is). tar's verbose listing then goes to
//! stderr, as with `-f -`.

use super::rules::{tar, PREFIX};
use super::tokenize::{Pipeline, Redirect};
use super::Policy;

/// The names judged as GNU tar (bsdtar compresses with libarchive in its own process).
const GNU_TARS: &[&str] = &["tar", "gtar"];

impl Policy {
    /// Refuses a stage whose program would start a helper that is not allowlisted, and with
    /// the kernel sandbox on, makes tar's compressor a stage of its own (see the module).
    pub(super) fn split_helpers(&self, pipeline: &mut Pipeline) -> Result<(), String> {
        let mut i = 0;
        while i < pipeline.stages.len() {
            let argv = &pipeline.stages[i];
            i += 1;
            let name = argv[0].rsplit('/').next().unwrap_or_default();
            if !GNU_TARS.contains(&name) {
                continue;
            }
            let Some(c) = tar::compression(&argv[1..]) else {
                continue;
            };
            let what = format!("tar {} runs {}", c.option, c.program);
            if self.allow.check(c.program).is_err() {
                return Err(format!(
                    "{PREFIX}{what} itself, and {} is not on the allowlist: ask the operator \
                     to add {} to ALLOW_COMMANDS, or make or read the archive without \
                     compression",
                    c.program, c.program
                ));
            }
            if self.resolve(&[c.program.to_string()]).is_err() {
                return Err(format!(
                    "{what} itself, and {} is not installed in the safe PATH ({}): make or \
                     read the archive without compression, or with a compressor installed \
                     there",
                    c.program,
                    self.path_text()
                ));
            }
            if !(c.create && self.writes_confined) {
                continue;
            }
            let instead = format!(
                "write the archive to stdout and compress it in a stage of its own: tar -cf - \
                 ... | {} > ARCHIVE",
                c.program
            );
            let (Some(rest), Some(archive)) = (c.uncompressed, c.archive) else {
                return Err(format!(
                    "{what} through a shell, which the kernel sandbox does not let run, and the \
                     server cannot make the compressor a stage of its own for these arguments \
                     (name the archive once with -f, spell options out): {instead}"
                ));
            };
            let mut tar_argv = vec![argv[0].clone()];
            tar_argv.extend(rest);
            pipeline.stages[i - 1] = tar_argv;
            pipeline.stages.insert(i, vec![c.program.to_string()]);
            if archive != "-" {
                if i + 1 != pipeline.stages.len() || pipeline.stdout.is_some() {
                    return Err(format!(
                        "{what} through a shell, which the kernel sandbox does not let run; the \
                         server runs the compressor as a stage that writes the archive, which \
                         it can do only when tar is the last stage and its output is not \
                         redirected: {instead}"
                    ));
                }
                super::check_redirect_path(&archive).map_err(|e| {
                    format!(
                        "{what} through a shell, which the kernel sandbox does not let run; \
                         the server writes the compressed archive itself, as a redirection, \
                         and: {e}"
                    )
                })?;
                pipeline.stdout = Some(Redirect {
                    path: archive,
                    append: false,
                });
            }
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::tar::{compression, Compression};

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    fn c(line: &str) -> Option<Compression> {
        compression(&args(line))
    }

    #[test]
    fn each_option_names_its_compressor() {
        for (line, program, option) in [
            ("-czf out.tgz src", "gzip", "-z"),
            ("-cjf out.tbz src", "bzip2", "-j"),
            ("-cJf out.txz src", "xz", "-J"),
            ("-cZf out.taZ src", "compress", "-Z"),
            ("--zstd -cf out.tzst src", "zstd", "--zstd"),
            ("--lzip -cf out.tlz src", "lzip", "--lzip"),
            ("--lzma -cf out.lzma src", "lzma", "--lzma"),
            ("--lzop -cf out.lzo src", "lzop", "--lzop"),
            ("--gz -cf out src", "gzip", "--gzip"),
            ("-caf out.tar.xz src", "xz", "-a"),
            ("--auto-compress -cf out.tar.zst src", "zstd", "-a"),
            ("czf out.tgz src", "gzip", "-z"),
            ("-xzf in.tgz", "gzip", "-z"),
        ] {
            let got = c(line).unwrap_or_else(|| panic!("{line}: no compressor"));
            assert_eq!(
                (got.program, got.option.as_str()),
                (program, option),
                "{line}"
            );
        }
        // No compression, -a on a plain name or when reading, conflicting compressors.
        for line in [
            "-cf out.tar src",
            "-caf out.tar src",
            "-xaf in.tar.gz",
            "-czjf out src",
            "-caf out.txz --no-auto-compress src",
        ] {
            assert_eq!(c(line), None, "{line}");
        }
    }

    #[test]
    fn creation_is_written_again_with_the_archive_on_stdout() {
        let got = c("cvzf out.tgz -C sub --exclude=*.o --totals=USR1 a b").expect("gzip");
        assert!(got.create);
        assert_eq!(got.archive.as_deref(), Some("out.tgz"));
        assert_eq!(
            got.uncompressed,
            Some(args("-f - -c -v -C sub --exclude *.o --totals=USR1 a b"))
        );
        let got = c("-x -z --file in.tgz").expect("gzip");
        assert!(!got.create);
        // An operand after `--` that looks like an option, an archive named twice, an
        // ambiguous abbreviation: not written again.
        assert_eq!(c("-czf o.tgz -- -odd").and_then(|c| c.uncompressed), None);
        assert_eq!(
            c("-czf a.tgz -f b.tgz d").and_then(|c| c.uncompressed),
            None
        );
        assert_eq!(c("-czf a.tgz --no d").and_then(|c| c.uncompressed), None);
    }
}
