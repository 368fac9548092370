//! Output cursor tests (`read`): one byte sequence shared by stdout and stderr,
//! lossless chained reads, eviction and `truncated`, `capped`, `tail_lines`, stream selection,
//! and UTF-8 handling at read boundaries.

use serde_json::{json, Value};

use crate::support::{is_error, process_id, Server};

const LINES: u64 = 100_000;

fn expected_streams() -> (String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    for i in 1..=LINES {
        if i % 2 == 1 {
            out.push_str(&format!("out {i}\n"));
        } else {
            err.push_str(&format!("err {i}\n"));
        }
    }
    (out, err)
}

fn text(result: &Value, field: &str) -> String {
    result[field].as_str().unwrap_or_default().to_owned()
}

fn seq(result: &Value, field: &str) -> u64 {
    result[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} is not an integer: {result}"))
}

#[test]
fn chained_reads_return_every_line_once_in_order() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_BUFFER_BYTES", "16777216")]);
    let command = format!(
        "awk 'BEGIN {{ for (i = 1; i <= {LINES}; i++) {{ if (i % 2) print \"out \" i; \
         else print \"err \" i > \"/dev/stderr\" }} }}'"
    );
    let id = server.spawn_bg(&command);
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let mut next = 1;
    let mut reads = 0;
    loop {
        reads += 1;
        assert!(reads < 5000, "too many reads; at seq {next}");
        let r = server.call_ok(
            "read",
            json!({"process_id": id, "since_seq": next, "max_output_bytes": 7777}),
        );
        let (out, err) = (text(&r, "stdout"), text(&r, "stderr"));
        assert_eq!(seq(&r, "start_seq"), next, "no gap, no repeat: {r}");
        assert_eq!(r["truncated"], false, "nothing was evicted: {r}");
        assert!(out.len() + err.len() <= 7777, "max_output_bytes: {r}");
        assert_eq!(
            seq(&r, "next_seq") - next,
            (out.len() + err.len()) as u64,
            "next_seq advances by the bytes returned"
        );
        next = seq(&r, "next_seq");
        stdout.push_str(&out);
        stderr.push_str(&err);
        if out.is_empty() && err.is_empty() {
            if r["status"] != "running" {
                assert_eq!(r["capped"], false, "{r}");
                break;
            }
            // Nothing new yet: block until the command ends (its answer, head and tail
            // around a marker, is not part of the chain), then read on from `next`.
            server.call_ok(
                "wait",
                json!({"process_id": id, "since_seq": next, "max_output_bytes": 7777,
                       "timeout_ms": 10000}),
            );
        }
    }
    let (expected_out, expected_err) = expected_streams();
    assert_eq!(stdout.len(), expected_out.len(), "stdout byte count");
    assert_eq!(stderr.len(), expected_err.len(), "stderr byte count");
    assert!(stdout == expected_out, "stdout lines differ");
    assert!(stderr == expected_err, "stderr lines differ");
    let total = (expected_out.len() + expected_err.len()) as u64;
    assert_eq!(next, total + 1, "one position per byte, starting at 1");
    let entry = server.ps_entry(&id).expect("listed");
    assert_eq!(entry["stdout_bytes"], expected_out.len(), "{entry}");
    assert_eq!(entry["stderr_bytes"], expected_err.len(), "{entry}");
}

#[test]
fn both_streams_share_one_sequence() {
    let server = Server::ready();
    let result = server.sh("echo a; sleep 0.3; echo bb >&2; sleep 0.3; echo ccc");
    assert_eq!(result["next_seq"], 10, "2 + 3 + 4 bytes: {result}");
    let id = process_id(&result);
    let r = server.call_ok("read", json!({"process_id": id, "since_seq": 3}));
    assert_eq!(r["stdout"], "ccc\n", "{r}");
    assert_eq!(r["stderr"], "bb\n", "{r}");
    assert_eq!(r["start_seq"], 3, "{r}");
    assert_eq!(r["next_seq"], 10, "{r}");
    let r = server.call_ok("read", json!({"process_id": id, "since_seq": 6}));
    assert_eq!(r["stdout"], "ccc\n", "{r}");
    assert_eq!(r["stderr"], "", "{r}");
    let r = server.call_ok("read", json!({"process_id": id, "since_seq": 10}));
    assert_eq!(r["stdout"], "", "{r}");
    assert_eq!(r["stderr"], "", "{r}");
    assert_eq!(r["next_seq"], 10, "{r}");
    assert_eq!(r["capped"], false, "{r}");
}

#[test]
fn eviction_sets_truncated_and_reads_from_the_oldest_byte() {
    // The ring alone: no head kept beside it (section 13's head is tested in agents.rs).
    let server = Server::ready_with_env(&[
        ("YIELDSHELL_MAX_BUFFER_BYTES", "4096"),
        ("YIELDSHELL_MAX_OUTPUT_BYTES", "100000"),
        ("YIELDSHELL_HEAD_BYTES", "0"),
    ]);
    let expected: String = (1..=20_000).map(|i| format!("{i}\n")).collect();
    let total = expected.len() as u64;
    let result = server.exec(json!({"command": "seq 1 20000", "yield_ms": 20000}));
    assert_eq!(result["status"], "completed", "{result}");
    let id = process_id(&result);
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "since_seq": 1, "max_output_bytes": 100000}),
    );
    let out = text(&r, "stdout");
    // A marker line says where (and how much) was evicted.
    let out = strip_dropped_marker(&out);
    let start = seq(&r, "start_seq");
    assert_eq!(r["truncated"], true, "{r}");
    assert!(start > 1, "the start was evicted: {r}");
    assert!(
        out.len() <= 4096,
        "at most the buffer size: {} bytes",
        out.len()
    );
    assert!(!out.is_empty(), "the newest output is retained");
    assert_eq!(
        out,
        expected[(start - 1) as usize..],
        "the read starts at the oldest retained byte (start_seq {start})"
    );
    assert_eq!(seq(&r, "next_seq"), total + 1, "{start}");
    assert_eq!(r["capped"], false);
    // A later read inside the retained range is not truncated.
    let r = server.call_ok("read", json!({"process_id": id, "since_seq": total - 9}));
    assert_eq!(text(&r, "stdout"), expected[(total - 10) as usize..], "{r}");
    assert_eq!(r["truncated"], false, "{r}");
    // Without since_seq: where the last answer stopped, here the end.
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "max_output_bytes": 100000}),
    );
    assert_eq!(seq(&r, "start_seq"), total + 1, "{r}");
    assert_eq!(text(&r, "stdout"), "");
}

/// The text without the marker line of an eviction, which must be there.
fn strip_dropped_marker(out: &str) -> String {
    let start = out.find("[… ").expect("a marker line at the gap");
    let end = out[start..].find(" …]\n").expect("the marker's end") + start + " …]\n".len();
    assert!(out[start..end].contains("dropped"), "{}", &out[start..end]);
    format!("{}{}", &out[..start], &out[end..])
}

#[test]
fn capped_when_more_output_is_available() {
    let server = Server::ready();
    let expected: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    let id = process_id(&server.sh("seq 1 1000"));
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "since_seq": 1, "max_output_bytes": 100}),
    );
    assert_eq!(r["capped"], true, "{r}");
    assert_eq!(text(&r, "stdout"), expected[..100], "{r}");
    assert_eq!(r["next_seq"], 101, "{r}");
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "since_seq": 101, "max_output_bytes": 20000}),
    );
    assert_eq!(r["capped"], false, "{r}");
    assert_eq!(text(&r, "stdout"), expected[100..], "{r}");
    // max_output_bytes is capped by YIELDSHELL_MAX_OUTPUT_BYTES (default 20000).
    let id = process_id(&server.exec(json!({"command": "seq 1 10000", "max_output_bytes": 50})));
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "since_seq": 1, "max_output_bytes": 1_000_000}),
    );
    assert!(text(&r, "stdout").len() <= 20000, "default cap");
    assert_eq!(r["capped"], true, "48894 bytes > 20000: {}", r["next_seq"]);
}

#[test]
fn exec_result_of_an_ended_command_is_head_marker_tail() {
    // An answer that reports the end shows the start and the end of a long
    // stream around one marker, and the cursor moves to the end.
    let server = Server::ready();
    let result = server.exec(json!({"command": "seq 1 1000", "max_output_bytes": 400}));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["capped"], false, "{result}");
    let out = text(&result, "stdout");
    assert!(out.starts_with("1\n2\n"), "{result}");
    assert!(out.ends_with("999\n1000\n"), "{result}");
    assert_eq!(out.matches("[… ").count(), 1, "{result}");
    assert!(
        out.contains("bytes omitted; read with since_seq="),
        "{result}"
    );
    assert_eq!(result["next_seq"], 3894, "{result}");
    let omitted = &result["omitted"]["stdout"];
    assert!(omitted["bytes"].as_u64().unwrap() > 3000, "{result}");
}

#[test]
fn tail_lines_returns_the_newest_lines() {
    let server = Server::ready();
    let result = server.exec(json!({"command": "seq 1 10", "tail_lines": 3}));
    assert_eq!(result["stdout"], "8\n9\n10\n", "{result}");
    let id = process_id(&result);
    let r = server.call_ok("read", json!({"process_id": id, "tail_lines": 3}));
    assert_eq!(r["stdout"], "8\n9\n10\n", "{r}");
    assert_eq!(r["next_seq"], 22, "the cursor is after the last byte: {r}");
    let r = server.call_ok("read", json!({"process_id": id, "tail_lines": 1}));
    assert_eq!(r["stdout"], "10\n", "{r}");
    let r = server.call_ok("read", json!({"process_id": id, "tail_lines": 100}));
    assert_eq!(text(&r, "stdout").lines().count(), 10, "{r}");
    let waited = server.call_ok("wait", json!({"process_id": id, "tail_lines": 2}));
    assert_eq!(waited["stdout"], "9\n10\n", "{waited}");
}

#[test]
fn tail_lines_never_drops_the_newest_output_to_fit_the_budget() {
    let server = Server::ready();
    // stdout's last line starts before stderr's output and ends after it.
    let result = server.exec(json!({
        "command": "head -c 30000 /dev/zero | tr '\\0' a; sleep 0.2; \
                    head -c 30000 /dev/zero | tr '\\0' b >&2; sleep 0.2; echo end",
        "tail_lines": 1, "max_output_bytes": 1000, "yield_ms": 20000}));
    let out = text(&result, "stdout");
    let err = text(&result, "stderr");
    assert!(
        out.ends_with("end\n"),
        "the newest bytes (stdout's \"end\") are kept; got stdout of {} bytes, stderr of {}",
        out.len(),
        err.len()
    );
    assert!(
        out.len() + err.len() <= 1000,
        "{} + {}",
        out.len(),
        err.len()
    );
    assert_eq!(result["next_seq"], 60005, "{}", result["next_seq"]);
}

#[test]
fn tail_lines_without_final_newline() {
    let server = Server::ready();
    let id = process_id(&server.sh("printf 'a\\nb\\nc\\nd'"));
    let r = server.call_ok("read", json!({"process_id": id, "tail_lines": 2}));
    assert_eq!(r["stdout"], "c\nd", "{r}");
}

#[test]
fn tail_lines_and_since_seq_are_exclusive() {
    let server = Server::ready();
    let id = process_id(&server.sh("seq 1 10"));
    let result = server.call(
        "read",
        json!({"process_id": id, "tail_lines": 3, "since_seq": 1}),
    );
    assert!(is_error(&result), "{result}");
    let message = crate::support::tool_text(&result);
    assert!(
        message.contains("tail_lines") && message.contains("since_seq"),
        "{message}"
    );
}

fn chain_stdout(server: &Server, id: &str, max: u64) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut next = 1;
    for _ in 0..100 {
        let r = server.call_ok(
            "read",
            json!({"process_id": id, "since_seq": next, "max_output_bytes": max}),
        );
        let out = text(&r, "stdout");
        let advanced = seq(&r, "next_seq") - next;
        assert_eq!(advanced, out.len() as u64, "next_seq counts bytes: {r}");
        next = seq(&r, "next_seq");
        if out.is_empty() {
            assert_eq!(r["capped"], false, "no progress although capped: {r}");
            return chunks;
        }
        chunks.push(out);
    }
    panic!("no end after 100 reads: {chunks:?}");
}

#[test]
fn reads_never_split_a_utf8_character() {
    let server = Server::ready();
    let id = process_id(&server.sh("printf 'ééééé'"));
    let chunks = chain_stdout(&server, &id, 3);
    assert_eq!(chunks, vec!["é"; 5], "3 bytes hold one 2-byte character");
    let chunks = chain_stdout(&server, &id, 4);
    assert_eq!(chunks, vec!["éé", "éé", "é"]);
    let chunks = chain_stdout(&server, &id, 1);
    assert_eq!(
        chunks,
        vec!["é"; 5],
        "a read makes progress by one whole character"
    );

    let id = process_id(&server.sh("printf 'a\\303\\251\\342\\202\\254\\360\\237\\230\\200z'"));
    let chunks = chain_stdout(&server, &id, 2);
    assert_eq!(chunks.concat(), "aé€😀z");
    assert!(chunks.iter().all(|c| !c.contains('\u{FFFD}')), "{chunks:?}");
    let result = server.exec(json!({"command": "printf 'ééééé'", "max_output_bytes": 3}));
    assert!(!text(&result, "stdout").contains('\u{FFFD}'), "{result}");
}

#[test]
fn eviction_never_leaves_half_a_character() {
    // An odd buffer size makes byte-wise eviction stop inside a 2-byte character.
    for size in ["4095", "4097"] {
        let server = Server::ready_with_env(&[
            ("YIELDSHELL_MAX_BUFFER_BYTES", size),
            ("YIELDSHELL_MAX_OUTPUT_BYTES", "100000"),
            ("YIELDSHELL_HEAD_BYTES", "0"),
        ]);
        let result = server.exec(json!({
            "command": "yes é | head -n 3000 | tr -d '\\n'", "yield_ms": 20000}));
        assert_eq!(result["status"], "completed", "{}", result["status"]);
        let exec_out = text(&result, "stdout");
        assert!(
            !exec_out.contains('\u{FFFD}'),
            "buffer {size}: exec output starts inside a character: {:?}",
            exec_out.chars().take(4).collect::<String>()
        );
        let id = process_id(&result);
        let r = server.call_ok(
            "read",
            json!({"process_id": id, "since_seq": 1, "max_output_bytes": 100000}),
        );
        let out = strip_dropped_marker(&text(&r, "stdout"));
        assert_eq!(r["truncated"], true, "buffer {size}");
        assert!(
            !out.contains('\u{FFFD}'),
            "buffer {size}: a read split a character (start_seq {}): {:?}",
            r["start_seq"],
            out.chars().take(4).collect::<String>()
        );
        assert!(out.chars().all(|c| c == 'é'), "buffer {size}");
        assert!(out.len() <= 4097, "buffer {size}: {} bytes", out.len());
        assert_eq!(seq(&r, "next_seq"), 6001, "buffer {size}");
        assert_eq!(
            seq(&r, "next_seq") - seq(&r, "start_seq"),
            out.len() as u64,
            "buffer {size}: start_seq is the first returned byte"
        );
    }
}

#[test]
fn a_cursor_inside_a_character_never_returns_half_of_it() {
    let server = Server::ready();
    let id = process_id(&server.sh("printf 'aé€'"));
    for since in [3, 5, 6] {
        let r = server.call_ok("read", json!({"process_id": id, "since_seq": since}));
        let out = text(&r, "stdout");
        assert!(
            !out.contains('\u{FFFD}'),
            "since_seq {since} is inside a character; got {out:?}"
        );
        assert_eq!(r["next_seq"], 7, "{r}");
    }
}

#[test]
fn invalid_utf8_becomes_replacement_character() {
    let server = Server::ready();
    let result = server.sh("printf 'a\\377b'");
    assert_eq!(result["stdout"], "a\u{FFFD}b", "{result}");
    let result = server.sh("printf 'x\\303'");
    assert_eq!(
        result["stdout"], "x\u{FFFD}",
        "a truncated sequence at the end: {result}"
    );
    let result = server.sh("printf '\\377' >&2");
    assert_eq!(result["stderr"], "\u{FFFD}", "{result}");
}

#[test]
fn a_character_written_in_two_pieces_stays_whole() {
    let server = Server::ready();
    let result = server.sh("printf '\\303'; sleep 0.3; printf '\\251'");
    assert_eq!(result["stdout"], "é", "{result}");
}

#[test]
fn streams_selects_the_output() {
    let server = Server::ready();
    let id = process_id(&server.sh("echo out; echo err >&2"));
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "streams": "stdout", "since_seq": 1}),
    );
    assert_eq!(r["stdout"], "out\n", "{r}");
    assert_eq!(r["stderr"], "", "stderr not selected: {r}");
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "streams": "stderr", "since_seq": 1}),
    );
    assert_eq!(r["stderr"], "err\n", "{r}");
    assert_eq!(r["stdout"], "", "stdout not selected: {r}");
    let r = server.call_ok(
        "read",
        json!({"process_id": id, "streams": "both", "since_seq": 1}),
    );
    assert_eq!(r["stdout"], "out\n", "{r}");
    assert_eq!(r["stderr"], "err\n", "{r}");
}

#[test]
fn cursors_chain_within_one_stream() {
    let server = Server::ready();
    let id = process_id(&server.sh("for i in 1 2 3 4 5 6; do echo o$i; echo e$i >&2; done"));
    for (stream, prefix) in [("stdout", 'o'), ("stderr", 'e')] {
        let mut collected = String::new();
        let mut next = 1;
        for _ in 0..100 {
            let r = server.call_ok(
                "read",
                json!({"process_id": id, "since_seq": next, "streams": stream,
                       "max_output_bytes": 5}),
            );
            let chunk = text(&r, stream);
            next = seq(&r, "next_seq");
            if chunk.is_empty() && r["capped"] != true {
                break;
            }
            collected.push_str(&chunk);
        }
        let expected: String = (1..=6).map(|i| format!("{prefix}{i}\n")).collect();
        assert_eq!(collected, expected, "{stream}");
    }
}
