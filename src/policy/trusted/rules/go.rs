//! go: its command line is read as the go command reads it. `go [-C dir] <subcommand> [flags]
//! [operands]`, each subcommand with its own flags (Go's flag package: one or two dashes, no
//! clusters, no abbreviations, `-name=value`, or `-name value` for a flag that is not a
//! boolean). Only the subcommands that build, format, list and manage modules are accepted,
//! each with the flags `go help <subcommand>` documents; an unknown subcommand or flag is
//! refused, since a newer go may run a program with it.
//!
//! Refused as running programs: the subcommands that run the code they build or other tools
//! (`run`, `test`, `generate`, `tool`, `vet`) and `bug` (it opens a browser); `-toolexec`,
//! `-exec`, `-vettool`, `-overlay` (it replaces source files, cgo's among them, with others),
//! `-compiler`/`-gccgoflags` (gccgo and its flags name programs), any argument naming the
//! external linker (`-ldflags=-extld=PROG`, `-extldflags`), the linker flags that name a
//! program or where the linker works (`-extar`, the archiver of `-buildmode=c-archive`;
//! `-tmpdir`) in the values of `-ldflags`, `-gcflags` and `-asmflags` (also in their
//! `pattern=flags` form and quoted lists), and `go env -w`/`-u`, which persist flags
//! (`GOFLAGS=-toolexec=...`) for every later go command. The compiler's and assembler's own
//! flags name no program: they read and write files only.

use crate::policy::trusted::words::Words;

/// Flags' names (without dashes), each followed by `=` when it takes a value (is not a
/// boolean).
type Flags = Words;

/// The build flags (`go help build`) but the refused ones, shared by build, install, list,
/// clean, get and fix.
#[rustfmt::skip]
pub(crate) const BUILD: Flags = Words(
    "C= a n p= race msan asan cover covermode= coverpkg= v work x asmflags= buildmode= buildvcs
     gcflags= installsuffix= json ldflags= linkshared mod= modcacherw modfile= pgo= pkgdir= tags=
     trimpath",
);

/// No flags.
pub(crate) const NONE: Flags = Words("");

/// The flags every `go mod` and `go work` subcommand takes.
pub(crate) const MODULE: Flags = Words("modcacherw modfile=");

/// Flags refused in every subcommand: they run programs or replace the files a build reads.
const RUNS_FLAGS: &[&str] = &[
    "toolexec",
    "exec",
    "vettool",
    "overlay",
    "compiler",
    "gccgoflags",
];

const RUNS: &str = "go command that runs programs";

/// The build flags whose value is a list of flags for the compiler, assembler or linker.
const TOOL_FLAG_LISTS: &[&str] = &["ldflags", "gcflags", "asmflags"];

/// Flags of `go tool link` (and, refused alike, of compile and asm) that name a program the
/// linker runs (`-extld`, `-extar`), its flags (`-extldflags`: `-fuse-ld=`, `-B`), or the
/// directory the linker and that program work in (`-tmpdir`).
const TOOL_RUNS_FLAGS: &[&str] = &["extld", "extldflags", "extar", "tmpdir"];

/// The accepted subcommands (with the second word of `go mod` and `go work`) and their own
/// flags; `go help` takes any topic.
#[rustfmt::skip]
pub(crate) const SUBCOMMANDS: &[(&str, Option<&str>, Flags, Flags)] = &[
    ("build", None, BUILD, Words("o=")),
    ("install", None, BUILD, Words("")),
    ("list", None, BUILD, Words(
        "compiled deps e export f= find m retracted reuse= test u versions",
    )),
    ("clean", None, BUILD, Words("i r cache testcache modcache fuzzcache")),
    ("get", None, BUILD, Words("d t u tool")),
    ("fix", None, BUILD, Words("fix= diff")),
    ("fmt", None, NONE, Words("n x mod=")),
    ("doc", None, NONE, Words("all c cmd short src u")),
    ("env", None, NONE, Words("json changed")),
    ("version", None, NONE, Words("m v json")),
    ("help", None, NONE, Words("")),
    ("mod", Some("download"), MODULE, Words("json x reuse=")),
    ("mod", Some("edit"), MODULE, Words(
        "fmt json print module= go= toolchain= require= droprequire= exclude= dropexclude=
         replace= dropreplace= retract= dropretract= godebug= dropgodebug= tool= droptool=
         ignore= dropignore=",
    )),
    ("mod", Some("graph"), MODULE, Words("go= x")),
    ("mod", Some("init"), MODULE, Words("")),
    ("mod", Some("tidy"), MODULE, Words("e v x diff go= compat=")),
    ("mod", Some("vendor"), MODULE, Words("e v o=")),
    ("mod", Some("verify"), MODULE, Words("")),
    ("mod", Some("why"), MODULE, Words("m vendor")),
    ("work", Some("edit"), MODULE, Words(
        "fmt json print go= toolchain= godebug= dropgodebug= use= dropuse= replace= dropreplace=",
    )),
    ("work", Some("init"), MODULE, Words("")),
    ("work", Some("sync"), MODULE, Words("")),
    ("work", Some("use"), MODULE, Words("r")),
    ("work", Some("vendor"), MODULE, Words("e v o=")),
];

/// Subcommands that run the code they build, other tools, or a browser (`bug`).
const RUNNING: &[&str] = &["run", "test", "generate", "tool", "vet", "bug"];

/// Accepted and refused examples, walked by `harden`'s tests.
#[cfg(test)]
pub const GO_EXAMPLES: super::Examples = super::Examples {
    accept: &[
        &[],
        &["build", "./..."],
        &["version"],
        &["env", "GOPATH"],
        &["env", "-json"],
        &["fmt", "./..."],
        &["mod", "tidy"],
        &["mod", "download", "-x"],
        &["-C", "sub", "build", "-o", "out", "."],
        &[
            "build",
            "-ldflags",
            "-s -w",
            "-trimpath",
            "-o",
            "bin/x",
            "./cmd/x",
        ],
        &["build", "--race=true", "-tags=netgo", "."],
        &["list", "-m", "-json", "all"],
        &["list", "-f", "{{.Dir}}", "./..."],
        &["help", "build"],
        &["get", "golang.org/x/text@v0.14.0"],
        &["clean", "-cache"],
        &["doc", "fmt.Println"],
        &["work", "use", "-r", "."],
        &["mod", "edit", "-replace", "a=../a"],
    ],
    refuse: &[
        &["run", "."],
        &["test", "./..."],
        &["generate"],
        &["tool", "x"],
        &["bug"],
        &["-C", "sub", "run", "."],
        &["-C=sub", "test", "."],
        &["build", "-toolexec=sh", "."],
        &["build", "--toolexec", "sh", "."],
        &["build", ".", "-exec", "x"],
        &["env", "-w", "GOFLAGS=-toolexec=sh"],
        &["env", "-u", "GOFLAGS"],
        &["vet", "./..."],
        &["build", "-ldflags=-linkmode=external -extld=./x", "."],
        &["build", "-ldflags", "-extldflags=-B./x", "."],
        &["build", "-compiler=gccgo", "-gccgoflags=-wrapper=x", "."],
        &["build", "-overlay=o.json", "."],
        &[
            "build",
            "-buildmode=c-archive",
            "-ldflags=-extar=/x",
            "-o",
            "x.a",
        ],
        &["build", "-ldflags", "all='-s' \"-extar\" /x", "."],
        &["build", "-gcflags=./...=-tmpdir=t", "."],
        &["doc", "-http=:8080", "fmt"],
        &["build", "-future", "."],
        &["build", "---x", "."],
        &["telemetry", "on"],
        &["mod", "future"],
        &["mod"],
        &["-x", "build"],
    ],
};

/// Checks go's arguments.
pub fn check_go(args: &[String]) -> Result<(), String> {
    // The external linker and its flags name programs the build runs, in any argument.
    if args.iter().any(|a| a.contains("extld")) {
        return Err(RUNS.to_string());
    }
    let mut rest = args;
    // `-C dir` is only ever the first argument; it changes directory before anything else.
    match rest.first().map(String::as_str) {
        Some("-C" | "--C") => rest = rest.get(2..).unwrap_or(&[]),
        Some(a) if a.starts_with("-C=") || a.starts_with("--C=") => rest = &rest[1..],
        _ => (),
    }
    let Some((sub, after)) = rest.split_first() else {
        return Ok(());
    };
    let sub = sub.as_str();
    if RUNNING.contains(&sub) {
        return Err(RUNS.to_string());
    }
    let (second, after) = match sub {
        "mod" | "work" => match after.split_first() {
            Some((second, after)) => (Some(second.as_str()), after),
            None => return Err(format!("go {sub} without a subcommand")),
        },
        _ => (None, after),
    };
    let Some((_, _, common, own)) = SUBCOMMANDS
        .iter()
        .find(|(s, t, _, _)| *s == sub && *t == second)
    else {
        let shown = second.map_or(sub.to_string(), |t| format!("{sub} {t}"));
        return Err(crate::policy::trusted::rules::not_known(&format!(
            "go subcommand {shown}"
        )));
    };
    check_flags(sub, after, *common, *own)
}

/// Checks a subcommand's flags. Go stops reading flags at the first operand or `--`; every
/// later argument that looks like a flag is judged as one too, which only refuses more.
fn check_flags(sub: &str, args: &[String], common: Flags, own: Flags) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" || arg == "-" || !arg.starts_with('-') {
            continue;
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        if RUNS_FLAGS.contains(&name) || (sub == "env" && ["w", "u"].contains(&name)) {
            return Err(RUNS.to_string());
        }
        let known = own
            .iter()
            .chain(common.iter())
            .find_map(|flag| flag_takes_value(flag, name))
            .filter(|_| !name.starts_with('-'));
        let value = match known {
            None => {
                return Err(crate::policy::trusted::rules::not_known(&format!(
                    "go {sub} flag -{name}"
                )))
            }
            Some(true) if value.is_none() => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            Some(_) => value,
        };
        if TOOL_FLAG_LISTS.contains(&name) {
            check_tool_flags(value.unwrap_or(""))?;
        }
    }
    Ok(())
}

/// Whether the flag `name` takes a value, when `word` (of a [`Flags`] table) is that flag.
fn flag_takes_value(word: &str, name: &str) -> Option<bool> {
    match word.strip_suffix('=') {
        Some(flag) => (flag == name).then_some(true),
        None => (word == name).then_some(false),
    }
}

/// A word of a [`Flags`] table, for its test: the flag's name.
#[cfg(test)]
pub(crate) fn flag_name(word: &'static str) -> Option<&'static str> {
    crate::policy::trusted::words::plain_name(word.strip_suffix('=').unwrap_or(word))
}

/// Checks the value of `-ldflags`, `-gcflags` or `-asmflags`: `[pattern=]flags`, the flags a
/// list split at white space where a quoted field may hold spaces. Quotes are dropped and
/// every field, and what follows the `=` of a field that is not a flag (the pattern), is
/// judged as a flag: a flag's value that looks like a refused flag is refused too, which
/// only refuses more.
fn check_tool_flags(value: &str) -> Result<(), String> {
    let unquoted: String = value.chars().filter(|c| !matches!(c, '\'' | '"')).collect();
    for field in unquoted.split_whitespace() {
        let mut candidates = vec![field];
        if !field.starts_with('-') {
            if let Some((_, after)) = field.split_once('=') {
                candidates.push(after);
            }
        }
        for flag in candidates {
            let Some(body) = flag.strip_prefix('-') else {
                continue;
            };
            let body = body.strip_prefix('-').unwrap_or(body);
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            if TOOL_RUNS_FLAGS.contains(&name) {
                return Err(format!("{RUNS} (linker flag -{name})"));
            }
        }
    }
    Ok(())
}
