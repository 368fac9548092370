//! Smaller rules: fd, rg, split, diff3/sdiff and wget, each refusing the option that runs a
//! command given in the arguments. Each is a closed grammar read as the program reads its
//! options (`getopt`): an option it does not know is refused, naming it.

use crate::policy::trusted::getopt::{Arg, Grammar, Item, Longs};

/// fd 10's options, from its `clap` definition (`src/cli.rs`): every long option and alias
/// (clap takes no abbreviations: `check_fd` refuses one as unknown), the hidden negations (`--no-hidden`, `--ignore`, …) and `-1`. Values are attached
/// (`-d3`, `--max-depth=3`) or the next argument; clap reads a
/// separate value that starts with `-` as a new option and reports the missing value.
#[rustfmt::skip]
pub(crate) const FD: Grammar = Grammar {
    short: &[
        ('H', Arg::No), ('I', Arg::No), ('u', Arg::No), ('s', Arg::No), ('i', Arg::No),
        ('g', Arg::No), ('F', Arg::No), ('a', Arg::No), ('l', Arg::No), ('L', Arg::No),
        ('p', Arg::No), ('0', Arg::No), ('1', Arg::No), ('q', Arg::No), ('h', Arg::No),
        ('V', Arg::No), ('d', Arg::Required), ('E', Arg::Required), ('t', Arg::Required),
        ('e', Arg::Required), ('S', Arg::Required), ('o', Arg::Required), ('c', Arg::Required),
        ('j', Arg::Required), ('C', Arg::Required), ('x', Arg::Required), ('X', Arg::Required),
    ],
    long: Longs::words(
        "hidden no-hidden no-ignore ignore no-ignore-vcs ignore-vcs no-require-git require-git
         no-ignore-parent ignore-parent no-global-ignore-file unrestricted case-sensitive
         ignore-case glob regex fixed-strings literal exact and= absolute-path relative-path
         list-details follow dereference no-follow full-path print0 max-depth= maxdepth=
         min-depth= mindepth= exact-depth= exclude= prune type= extension= size= changed-within=
         change-newer-than= newer= changed-after= changed-before= change-older-than= older=
         owner= format= exec= exec-batch= batch-size= ignore-file= color= hyperlink? hyper?
         ignore-contain= threads= max-buffer-time= max-results= quiet has-results show-errors
         base-directory= path-separator= search-path= strip-cwd-prefix? one-file-system mount
         xdev gen-completions? help version",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const FD_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-e", "rs", "src"],
        &["-H", "pattern"],
        &["--", "-x"],
        &["-tf", "-E", "target", "--max-depth=3", "x"],
        &["-HI", "-d3", "--changed-within", "2weeks", "x", "src"],
        &["--format", "{/}", "--strip-cwd-prefix=always", "."],
        &["-l", "x"],
    ],
    refuse: &[
        &["-x", "sh"],
        &["-Hx", "sh"],
        &["-Xsh"],
        &["--exec", "sh"],
        &["--exec-batch=sh"],
        &["--exec-b", "sh"],
        &["--ex", "sh"],
        &["-tf", "-X", "rm"],
        &["--some-future-option", "x"],
        &["-K", "x"],
        &["--max-d", "--exec=sh"],
        &["--hid", "x"],
    ],
};

/// fd: `-x`/`-X`/`--exec`/`--exec-batch` run a command for each match (or for all of them);
/// an option the grammar does not have is refused. `-l` runs `ls` from the `PATH` the
/// server sets, not a program the caller names.
pub fn check_fd(args: &[String]) -> Result<(), String> {
    super::closed("fd", &FD, args, |item| {
        if item.short_is(&['x', 'X']) || item.long_is(&["exec", "exec-batch"]) {
            Some("fd --exec".to_string())
        } else {
            abbreviation("fd", item)
        }
    })
}

/// ripgrep's flags (14 and 15, from `crates/core/flags/defs.rs`, without the build-time
/// `unstable-index` ones): each flag's long name, aliases, negation and short letter. rg's
/// parser (lexopt) takes no abbreviations: `check_rg` refuses one as unknown.
/// `RIPGREP_CONFIG_PATH` (a file of flags) is the environment's, which a
/// call cannot set.
#[rustfmt::skip]
pub(crate) const RG: Grammar = Grammar {
    short: &[
        ('A', Arg::Required), ('B', Arg::Required), ('b', Arg::No), ('s', Arg::No),
        ('C', Arg::Required), ('c', Arg::No), ('E', Arg::Required), ('f', Arg::Required),
        ('l', Arg::No), ('F', Arg::No), ('L', Arg::No), ('g', Arg::Required), ('h', Arg::No),
        ('.', Arg::No), ('i', Arg::No), ('v', Arg::No), ('n', Arg::No), ('N', Arg::No),
        ('x', Arg::No), ('M', Arg::Required), ('m', Arg::Required), ('d', Arg::Required),
        ('U', Arg::No), ('0', Arg::No), ('o', Arg::No), ('P', Arg::No), ('p', Arg::No),
        ('q', Arg::No), ('e', Arg::Required), ('r', Arg::Required), ('z', Arg::No),
        ('S', Arg::No), ('a', Arg::No), ('j', Arg::Required), ('t', Arg::Required),
        ('T', Arg::Required), ('u', Arg::No), ('V', Arg::No), ('H', Arg::No), ('I', Arg::No),
        ('w', Arg::No),
    ],
    long: Longs::words(
        "after-context= auto-hybrid-regex no-auto-hybrid-regex before-context= binary no-binary
         block-buffered no-block-buffered byte-offset no-byte-offset case-sensitive color=
         colors= column no-column context= context-separator= no-context-separator count
         count-matches crlf no-crlf debug dfa-size-limit= encoding= no-encoding engine=
         field-context-separator= field-match-separator= file= files files-with-matches
         files-without-match fixed-strings no-fixed-strings follow no-follow generate= glob=
         glob-case-insensitive no-glob-case-insensitive heading no-heading help hidden no-hidden
         hostname-bin= hyperlink-format= iglob= ignore-case ignore-file=
         ignore-file-case-insensitive no-ignore-file-case-insensitive include-zero
         no-include-zero invert-match no-invert-match json no-json line-buffered no-line-buffered
         line-number no-line-number line-regexp max-columns= max-columns-preview
         no-max-columns-preview max-count= max-depth= maxdepth= max-filesize= mmap no-mmap
         multiline no-multiline multiline-dotall no-multiline-dotall no-config no-ignore ignore
         no-ignore-dot ignore-dot no-ignore-exclude ignore-exclude no-ignore-files ignore-files
         no-ignore-global ignore-global no-ignore-messages ignore-messages no-ignore-parent
         ignore-parent no-ignore-vcs ignore-vcs no-messages messages no-pcre2-unicode
         pcre2-unicode no-require-git require-git no-unicode unicode null null-data
         one-file-system no-one-file-system only-matching path-separator= passthru passthrough
         pcre2 no-pcre2 pcre2-version pre= no-pre pre-glob= pretty quiet regex-size-limit=
         regexp= replace= search-zip no-search-zip smart-case sort-files no-sort-files sort=
         sortr= stats no-stats stop-on-nonmatch text no-text threads= trace trim no-trim type=
         type-add= type-clear= type-not= type-list unrestricted version vimgrep with-filename
         no-filename word-regexp",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const RG_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-n", "TODO", "src"],
        &["--", "--pre"],
        &["-g", "*.rs", "x"],
        &["-e", "--pre=sh", "x"],
        &["--no-pre", "-z", "x"],
        &["-inA2", "--type", "rust", "--glob=!target", "x"],
        &["--pre-glob", "*.gz", "-l", "x"],
        &["--json", "--no-ignore", "-uu", "x", "."],
    ],
    refuse: &[
        &["--pre", "sh", "x"],
        &["--pre=sh", "x"],
        &["--pr", "sh", "x"],
        &["-n", "x", "--pre", "sh"],
        &["--hostname-bin", "sh", "x"],
        &["--hostname-bin=sh", "x"],
        &["--hostname", "sh", "x"],
        &["--some-future-option", "x"],
        &["-K", "x"],
        &["--max-c", "--pre=sh", "x"],
        &["--hid", "x"],
    ],
};

/// rg: `--pre COMMAND` runs a preprocessor on every searched file, `--hostname-bin COMMAND`
/// a program that prints the host name (ripgrep 14 runs it for hyperlinks); an option the
/// grammar does not have is refused. `-z` runs decompressors from the server's `PATH`, not
/// programs the caller names.
pub fn check_rg(args: &[String]) -> Result<(), String> {
    super::closed("rg", &RG, args, |item| {
        if item.long_is(&["pre"]) {
            Some("rg --pre".to_string())
        } else if item.long_is(&["hostname-bin"]) {
            Some("rg --hostname-bin".to_string())
        } else {
            abbreviation("rg", item)
        }
    })
}

/// An abbreviated long option, for the programs that take none (fd's clap, rg's lexopt): the
/// program reads the name exactly, so a newer version's option of that name could take no
/// value where the abbreviated one takes the next argument, and hide an option there.
fn abbreviation(program: &str, item: &Item<'_>) -> Option<String> {
    match item {
        Item::Long {
            candidates,
            written,
            ..
        } if !candidates.is_empty() && !candidates.contains(written) => Some(
            crate::policy::trusted::rules::not_known(&format!("{program} option --{written}")),
        ),
        _ => None,
    }
}

/// GNU split's options (coreutils 9.1's `--help` and optstring, with the obsolete `-NUM` as
/// digit letters and the hidden `---io-blksize`).
#[rustfmt::skip]
pub(crate) const SPLIT: Grammar = Grammar {
    short: &[
        ('a', Arg::Required), ('b', Arg::Required), ('C', Arg::Required), ('d', Arg::No),
        ('e', Arg::No), ('l', Arg::Required), ('n', Arg::Required), ('t', Arg::Required),
        ('u', Arg::No), ('x', Arg::No), ('0', Arg::No), ('1', Arg::No), ('2', Arg::No),
        ('3', Arg::No), ('4', Arg::No), ('5', Arg::No), ('6', Arg::No), ('7', Arg::No),
        ('8', Arg::No), ('9', Arg::No),
    ],
    long: Longs::words(
        "suffix-length= additional-suffix= bytes= line-bytes= numeric-suffixes? hex-suffixes?
         elide-empty-files filter= lines= number= separator= unbuffered verbose -io-blksize= help
         version",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SPLIT_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-l", "100", "f", "part-"],
        &["-b", "1M", "f"],
        &["-d", "-a3", "--additional-suffix=.txt", "-n", "l/4", "f"],
        &["-1000", "f"],
        &["-t", "--filter=x", "f"],
        &["--", "--filter=sh"],
    ],
    refuse: &[
        &["--filter=sh", "f"],
        &["--fil", "sh", "f"],
        &["--f=sh", "f"],
        &["-l", "1", "--filter", "id", "f"],
        &["f", "--filter=id"],
        &["--some-future-option", "f"],
        &["-z", "f"],
    ],
};

/// split: `--filter=COMMAND` pipes every chunk through a shell command; an option the grammar
/// does not have is refused.
pub fn check_split(args: &[String]) -> Result<(), String> {
    super::closed("split", &SPLIT, args, |item| {
        item.long_is(&["filter"])
            .then(|| "split --filter".to_string())
    })
}

/// GNU diff3's options (diffutils 3.8's `--help` and optstring).
#[rustfmt::skip]
pub(crate) const DIFF3: Grammar = Grammar {
    short: &[
        ('a', Arg::No), ('e', Arg::No), ('i', Arg::No), ('m', Arg::No), ('v', Arg::No),
        ('x', Arg::No), ('3', Arg::No), ('A', Arg::No), ('E', Arg::No), ('L', Arg::Required),
        ('T', Arg::No), ('X', Arg::No),
    ],
    long: Longs::words(
        "text strip-trailing-cr show-all ed diff-program= show-overlap label= merge initial-tab
         overlap-only easy-only version help",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// GNU sdiff's options (diffutils 3.8's `--help` and optstring).
#[rustfmt::skip]
pub(crate) const SDIFF: Grammar = Grammar {
    short: &[
        ('a', Arg::No), ('b', Arg::No), ('B', Arg::No), ('d', Arg::No), ('E', Arg::No),
        ('H', Arg::No), ('i', Arg::No), ('I', Arg::Required), ('l', Arg::No),
        ('o', Arg::Required), ('s', Arg::No), ('t', Arg::No), ('v', Arg::No),
        ('w', Arg::Required), ('W', Arg::No), ('Z', Arg::No),
    ],
    long: Longs::words(
        "output= ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change
         ignore-all-space ignore-blank-lines ignore-matching-lines= strip-trailing-cr text width=
         left-column suppress-common-lines expand-tabs tabsize= minimal speed-large-files
         diff-program= help version",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Why `--diff-program` is refused.
const DIFF_PROGRAM: &str = "external diff program";

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const DIFF_PROGRAM_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b", "c"],
        &["-m", "a", "b", "c"],
        &["-mL", "mine", "-L", "base", "--label=theirs", "a", "b", "c"],
        &["-E", "-i", "--strip-trailing-cr", "a", "b", "c"],
        &["-L", "--diff-program=sh", "a", "b", "c"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b", "c"],
        &["--diff-p", "sh", "a", "b", "c"],
        &["--d=sh", "a", "b", "c"],
        &["a", "b", "c", "--diff-program", "sh"],
        &["--some-future-option", "a", "b", "c"],
        &["-Z", "a", "b", "c"],
    ],
};

/// diff3: `--diff-program=PROGRAM` runs the named program; an option the grammar does not
/// have is refused.
pub fn check_diff_program(args: &[String]) -> Result<(), String> {
    super::closed("diff3", &DIFF3, args, |item| {
        item.long_is(&["diff-program"])
            .then(|| DIFF_PROGRAM.to_string())
    })
}

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const SDIFF_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["a", "b"],
        &["-s", "-w", "80", "a", "b"],
        &["-sw80", "a", "b"],
        &["-I", "-o", "a", "b"],
        &["--ignore-all-space", "--tabsize=4", "-l", "a", "b"],
    ],
    refuse: &[
        &["--diff-program=sh", "a", "b"],
        &["--diff", "sh", "a", "b"],
        &["-o", "out", "a", "b"],
        &["-so", "out", "a", "b"],
        &["-sout", "a", "b"],
        &["--output=out", "a", "b"],
        &["--out", "out", "a", "b"],
        &["--some-future-option", "a", "b"],
        &["-x", "a", "b"],
    ],
};

/// sdiff: `--diff-program` runs the named program; with `-o`/`--output` it merges
/// interactively, and its `e` commands start an editor (`ed` by default, which runs shell
/// commands from the same stdin); an option the grammar does not have is refused.
pub fn check_sdiff(args: &[String]) -> Result<(), String> {
    super::closed("sdiff", &SDIFF, args, |item| {
        if item.long_is(&["diff-program"]) {
            Some(DIFF_PROGRAM.to_string())
        } else if item.long_is(&["output"]) || item.short_is(&['o']) {
            Some("interactive merge (its e command starts an editor)".to_string())
        } else {
            None
        }
    })
}

/// GNU wget's options, from its option table (`option_data` in wget 1.21's `src/main.c`, with
/// the TLS, c-ares, metalink and zlib ones): a value option takes a value, a boolean one an
/// optional `=value` and has a `--no-` form, and `-n` takes its letters as a value (`-nv`,
/// `-nc`).
#[rustfmt::skip]
pub(crate) const WGET: Grammar = Grammar {
    short: &[
        ('4', Arg::No), ('6', Arg::No), ('A', Arg::Required), ('B', Arg::Required),
        ('D', Arg::Required), ('E', Arg::No), ('F', Arg::No), ('H', Arg::No), ('I', Arg::Required),
        ('K', Arg::No), ('L', Arg::No), ('N', Arg::No), ('O', Arg::Required), ('P', Arg::Required),
        ('Q', Arg::Required), ('R', Arg::Required), ('S', Arg::No), ('T', Arg::Required),
        ('U', Arg::Required), ('V', Arg::No), ('X', Arg::Required), ('Y', Arg::Required),
        ('a', Arg::Required), ('b', Arg::No), ('c', Arg::No), ('d', Arg::No), ('e', Arg::Required),
        ('h', Arg::No), ('i', Arg::Required), ('k', Arg::No), ('l', Arg::Required), ('m', Arg::No),
        ('n', Arg::Required), ('o', Arg::Required), ('p', Arg::No), ('q', Arg::No), ('r', Arg::No),
        ('t', Arg::Required), ('v', Arg::No), ('w', Arg::Required), ('x', Arg::No),
    ],
    long: Longs::words(
        "accept= accept-regex= adjust-extension? append-output= ask-password? auth-no-challenge?
         background? backup-converted? backups? base= bind-address= bind-dns-address= body-data=
         body-file= ca-certificate= ca-directory= cache? certificate= certificate-type=
         check-certificate? ciphers= clobber? compression= config= connect-timeout=
         content-disposition? content-on-error? continue? convert-file-only? convert-links?
         cookies? crl-file= cut-dirs= debug? default-page= delete-after? directories?
         directory-prefix= dns-cache? dns-servers= dns-timeout= domains= dont-remove-listing
         dot-style= egd-file= exclude-directories= exclude-domains= execute= follow-ftp?
         follow-tags= force-directories? force-html? ftp-password= ftp-stmlf? ftp-user=
         ftps-clear-data-connection? ftps-fallback-to-ftp? ftps-implicit? ftps-resume-ssl? glob?
         header= help host-directories? hsts? hsts-file= html-extension? htmlify?
         http-keep-alive? http-passwd= http-password= http-user= https-only? if-modified-since?
         ignore-case? ignore-length? ignore-tags= include-directories= inet4-only? inet6-only?
         input-file= input-metalink= iri? keep-badhash? keep-session-cookies? level= limit-rate=
         load-cookies= local-encoding= max-redirect= metalink-index= metalink-over-http? method=
         mirror? netrc? no= no-adjust-extension no-ask-password no-auth-no-challenge
         no-background no-backup-converted no-backups no-cache no-check-certificate no-clobber?
         no-config? no-content-disposition no-content-on-error no-continue no-convert-file-only
         no-convert-links no-cookies no-debug no-delete-after no-directories no-dns-cache
         no-follow-ftp no-force-directories no-force-html no-ftp-stmlf
         no-ftps-clear-data-connection no-ftps-fallback-to-ftp no-ftps-implicit
         no-ftps-resume-ssl no-glob no-host-directories no-hsts no-html-extension no-htmlify
         no-http-keep-alive no-https-only no-if-modified-since no-ignore-case no-ignore-length
         no-inet4-only no-inet6-only no-iri no-keep-badhash no-keep-session-cookies
         no-metalink-over-http no-mirror no-netrc no-no-clobber no-no-config no-no-parent
         no-page-requisites no-parent? no-passive-ftp no-preserve-permissions
         no-protocol-directories no-proxy no-quiet no-random-wait no-recursive no-relative
         no-remove-listing no-report-speed no-restrict-file-names no-retr-symlinks
         no-retry-connrefused no-retry-on-host-error no-save-headers no-server-response
         no-show-progress no-span-hosts no-spider no-strict-comments no-timestamping
         no-trust-server-names no-unlink no-use-server-timestamps no-verbose no-warc-cdx
         no-warc-compression no-warc-digests no-warc-keep-log no-wdebug no-xattr output-document=
         output-file= page-requisites? parent? passive-ftp? password= pinnedpubkey= post-data=
         post-file= prefer-family= preferred-location= preserve-permissions? private-key=
         private-key-type= progress= protocol-directories? proxy? proxy-passwd= proxy-password=
         proxy-user= proxy__compat= quiet? quota= random-file= random-wait? read-timeout=
         recursive? referer= regex-type= reject= reject-regex= rejected-log= relative?
         remote-encoding= remove-listing? report-speed? restrict-file-names? retr-symlinks?
         retry-connrefused? retry-on-host-error? retry-on-http-error= save-cookies= save-headers?
         secure-protocol= server-response? show-progress? span-hosts? spider? start-pos=
         strict-comments? timeout= timestamping? tries= trust-server-names? unlink? use-askpass=
         use-server-timestamps? user= user-agent= verbose? version wait= waitretry= warc-cdx?
         warc-compression? warc-dedup= warc-digests? warc-file= warc-header= warc-keep-log?
         warc-max-size= warc-tempdir= wdebug? xattr?",
    ),
    stop_at_operand: false,
    w_long: false,
    negation: false,
    ambiguous_takes_value: true,
};

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const WGET_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &["-q", "-O", "out.html", "https://example.com"],
        &["https://example.com/f"],
        &["-Oe", "https://example.com"],
        &[
            "-nv",
            "-c",
            "--tries=3",
            "--no-check-certificate",
            "https://example.com",
        ],
        &[
            "-r",
            "-np",
            "-nH",
            "--cut-dirs=2",
            "-A",
            "*.tar.gz",
            "https://example.com/d/",
        ],
        &[
            "--no-config",
            "--header",
            "--execute=x",
            "https://example.com",
        ],
        &["-U", "-e", "https://example.com"],
    ],
    refuse: &[
        &["--use-askpass=sh", "https://example.com"],
        &["--use-a", "sh", "https://example.com"],
        &["-e", "use_askpass=sh", "https://example.com"],
        &["--execute", "x=y"],
        &["--exec=x=y"],
        &["--config", "rc", "https://example.com"],
        &["--conf=rc", "https://example.com"],
        &["-qe", "x=y"],
        &["-qex=y"],
        &["https://example.com", "-e", "x=y"],
        &["--some-future-option", "https://example.com"],
        &["-j", "https://example.com"],
    ],
};

/// wget: `--use-askpass=COMMAND` runs a command; `-e`/`--execute` runs wgetrc commands (which
/// include `use_askpass`), and `--config` reads a wgetrc file; an option the grammar does not
/// have is refused. `WGETRC` (a wgetrc file) and `HOME` (`.wgetrc`) are the environment's,
/// which a call cannot set.
pub fn check_wget(args: &[String]) -> Result<(), String> {
    super::closed("wget", &WGET, args, |item| {
        (item.long_is(&["use-askpass", "execute", "config"]) || item.short_is(&['e']))
            .then(|| "wget command option".to_string())
    })
}
