//! The trusted-mode command-line parser (`exec` in trusted mode) and the argv form of
//! `shell_execute`.
//!
//! Properties:
//! - `tokenize`, `parse` and `from_argv` never panic.
//! - A successful `parse` has at least one stage and no empty stage, and agrees with
//!   `tokenize` (both succeed, or `parse` fails only on structure).
//! - No shell syntax slips through: when the input contains no quoting character (`'`, `"`,
//!   `\`), no word of a successful parse contains `;`, `&`, a backtick, `$(`, a newline, a
//!   carriage return or NUL, and no word is an operator (`|`, `<`, `>`, `>>`).
//! - No word of any successful parse contains a newline, carriage return or NUL.
//! - Round trip: quoting every word of a parsed pipeline and writing it back out parses to the
//!   same pipeline; handing the same words to `from_argv` (when no word is itself an operator
//!   text) gives the same pipeline.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use yieldshell::internals::trusted::tokenize::{from_argv, parse, tokenize, Pipeline};

#[derive(Arbitrary, Debug)]
struct Input {
    line: String,
    argv: Vec<String>,
}

/// Quotes a word so that the parser reads it back verbatim.
fn quote(word: &str) -> String {
    if !word.contains('\'') {
        return format!("'{word}'");
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Writes a pipeline back as a command line, every word quoted.
fn render(p: &Pipeline) -> String {
    let last = p.stages.len() - 1;
    let mut parts: Vec<String> = Vec::new();
    for (i, stage) in p.stages.iter().enumerate() {
        if i > 0 {
            parts.push("|".into());
        }
        parts.extend(stage.iter().map(|w| quote(w)));
        if i == 0 {
            if let Some(path) = &p.stdin_path {
                parts.push("<".into());
                parts.push(quote(path));
            }
        }
        if i == last {
            if let Some(r) = &p.stdout {
                parts.push(if r.append { ">>" } else { ">" }.into());
                parts.push(quote(&r.path));
            }
        }
    }
    parts.join(" ")
}

/// The same pipeline as `shell_execute`'s argv.
fn to_argv(p: &Pipeline) -> Vec<String> {
    let last = p.stages.len() - 1;
    let mut argv = Vec::new();
    for (i, stage) in p.stages.iter().enumerate() {
        if i > 0 {
            argv.push("|".to_string());
        }
        argv.extend(stage.iter().cloned());
        if i == 0 {
            if let Some(path) = &p.stdin_path {
                argv.push("<".into());
                argv.push(path.clone());
            }
        }
        if i == last {
            if let Some(r) = &p.stdout {
                argv.push(if r.append { ">>" } else { ">" }.into());
                argv.push(r.path.clone());
            }
        }
    }
    argv
}

fn words(p: &Pipeline) -> impl Iterator<Item = &String> {
    p.stages
        .iter()
        .flatten()
        .chain(p.stdin_path.iter())
        .chain(p.stdout.iter().map(|r| &r.path))
}

fn check_pipeline_shape(p: &Pipeline, origin: &str) {
    assert!(!p.stages.is_empty(), "no stage from {origin:?}");
    for stage in &p.stages {
        assert!(!stage.is_empty(), "empty stage from {origin:?}: {p:?}");
    }
    if let Some(path) = &p.stdin_path {
        assert!(!path.is_empty(), "empty < target from {origin:?}");
    }
    if let Some(r) = &p.stdout {
        assert!(!r.path.is_empty(), "empty > target from {origin:?}");
    }
}

fuzz_target!(|input: Input| {
    let line = input.line.as_str();
    let tokens = tokenize(line);
    let parsed = parse(line);
    if tokens.is_err() {
        assert!(
            parsed.is_err(),
            "parse accepted what tokenize refused: {line:?}"
        );
    }
    if let Err(e) = &tokens {
        assert!(
            e.offset() <= line.len(),
            "error offset past the end: {e} in {line:?}"
        );
    }
    if let Ok(p) = &parsed {
        check_pipeline_shape(p, line);
        let unquoted = !line.contains(['\'', '"', '\\']);
        for w in words(p) {
            assert!(
                !w.contains(['\n', '\r', '\0']),
                "control character in word {w:?} from {line:?}"
            );
            if unquoted {
                assert!(
                    !w.contains([';', '&', '`']) && !w.contains("$("),
                    "shell syntax in word {w:?} from unquoted {line:?}"
                );
                assert!(
                    !matches!(w.as_str(), "|" | "<" | ">" | ">>"),
                    "operator as word {w:?} from unquoted {line:?}"
                );
            }
        }

        let again = render(p);
        match parse(&again) {
            Ok(q) => assert_eq!(&q, p, "{line:?} re-rendered as {again:?}"),
            Err(e) => panic!("{line:?} re-rendered as {again:?} does not parse: {e}"),
        }

        let operator_like =
            |w: &String| matches!(w.as_str(), "|" | "<" | ">" | ">>" | ";" | "&&" | "||" | "&");
        if !words(p).any(operator_like) {
            let argv = to_argv(p);
            match from_argv(&argv) {
                Ok(q) => assert_eq!(&q, p, "{line:?} as argv {argv:?}"),
                Err(e) => panic!("{line:?} as argv {argv:?} is refused: {e}"),
            }
        }
    }

    // shell_execute's argv form.
    if let Ok(p) = from_argv(&input.argv) {
        check_pipeline_shape(&p, &format!("{:?}", input.argv));
        for w in words(&p) {
            assert!(
                input.argv.contains(w),
                "word {w:?} is not an element of {:?}",
                input.argv
            );
        }
        // Every element is either an operator or one word of the pipeline, verbatim.
        let operators = input
            .argv
            .iter()
            .filter(|a| matches!(a.as_str(), "|" | "<" | ">" | ">>"))
            .count();
        assert_eq!(words(&p).count() + operators, input.argv.len());
    }
});
