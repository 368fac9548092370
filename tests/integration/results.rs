//! What the model reads: head, marker and tail in answers that report an
//! end, contiguous pages, a cursor that goes on where the last answer stopped, and bounded
//! `shell_execute` results whose whole capture stays readable.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{is_error, process_id, Server};

fn text(result: &Value, field: &str) -> String {
    result[field].as_str().unwrap_or_default().to_owned()
}

// See: issues/17
#[test]
fn a_long_log_shows_its_last_line_and_its_error_with_a_marker() {
    let server = Server::ready();
    // About 1.3 MB of log, then an error on stderr and a last line.
    let r = server.exec(json!({
        "command": "seq -f 'log line %g of the build' 1 45000; echo 'error: linking failed' >&2; echo 'BUILD FAILED'",
        "yield_ms": 30000}));
    assert_eq!(r["status"], "completed", "{}", r["status"]);
    let out = text(&r, "stdout");
    assert!(
        out.starts_with("log line 1 of the build\n"),
        "{}",
        &out[..80]
    );
    assert!(
        out.ends_with("log line 45000 of the build\nBUILD FAILED\n"),
        "the last line"
    );
    assert_eq!(text(&r, "stderr"), "error: linking failed\n");
    assert_eq!(out.matches("[… ").count(), 1, "one marker");
    let omitted = &r["omitted"]["stdout"];
    let bytes = omitted["bytes"].as_u64().expect("omitted bytes");
    assert!(bytes > 1_200_000, "{omitted}");
    assert!(out.contains(" bytes omitted"), "{out:.200}");
    assert!(
        out.len() <= 20_200,
        "within max_output_bytes: {}",
        out.len()
    );
    // Lines are whole on both sides of the marker.
    for line in out.lines() {
        assert!(
            line.starts_with("log line ") && line.ends_with(" of the build")
                || line.starts_with("[… ")
                || line == "BUILD FAILED",
            "a cut line: {line:?}"
        );
    }
    // The cursor moved to the end: a read without since_seq has nothing new.
    let id = process_id(&r);
    let again = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(
        (text(&again, "stdout"), text(&again, "stderr")),
        (String::new(), String::new())
    );
    // The omitted range still buffered is paged from the marker's since_seq.
    let since = omitted["since_seq"]
        .as_u64()
        .expect("since_seq of the buffered part");
    let page = server.call_ok("read", json!({"process_id": id, "since_seq": since}));
    assert!(text(&page, "stdout").starts_with("log line "), "{page}");
}

#[test]
fn pages_joined_with_next_seq_give_the_output_back_exactly() {
    let server = Server::ready_with_env(&[("YIELDSHELL_MAX_BUFFER_BYTES", "1048576")]);
    // 168,894 + 10 bytes: about 169 KB.
    let r =
        server.exec(json!({"command": "seq 100001 125127; echo 'the end.'", "yield_ms": 30000}));
    let id = process_id(&r);
    let mut expected: String = (100001..=125127).map(|i| format!("{i}\n")).collect();
    expected.push_str("the end.\n");
    assert!(expected.len() > 169_000, "{}", expected.len());
    let mut got = String::new();
    let mut since = 1;
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages < 100);
        let p = server.call_ok("read", json!({"process_id": id, "since_seq": since}));
        let out = text(&p, "stdout");
        assert!(!out.contains("[… "), "no marker where bytes are buffered");
        got.push_str(&out);
        since = p["next_seq"].as_u64().unwrap();
        if p["capped"] != true {
            break;
        }
        assert!(
            text(&p, "message").contains("next page"),
            "{}",
            p["message"]
        );
    }
    assert!(
        got == expected,
        "joined pages differ ({} vs {})",
        got.len(),
        expected.len()
    );
    assert!(pages >= 9, "20000-byte pages: {pages}");
}

#[test]
fn polling_without_since_seq_reads_each_line_once() {
    let server = Server::ready();
    let started = server.exec(json!({
        "command": "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.2; done", "yield_ms": 0
    }));
    assert_eq!(started["status"], "backgrounded", "{started}");
    let id = crate::support::process_id(&started);
    // exec's own answer may already hold the first line (and it moves the cursor past it).
    let mut got = text(&started, "stdout");
    let mut reads = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the loop never saw the end: {got:?}"
        );
        reads += 1;
        let r = server.call_ok("read", json!({"process_id": id}));
        got.push_str(&text(&r, "stdout"));
        if r["status"] != "running" {
            // One more read after the end: nothing new.
            let last = server.call_ok("read", json!({"process_id": id}));
            got.push_str(&text(&last, "stdout"));
            break;
        }
        // Polling (not synchronising): the loop ends on the process's end.
        std::thread::sleep(Duration::from_millis(50));
    }
    let expected: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    assert_eq!(got, expected, "8 lines, each once, in {reads} reads");
}

#[test]
fn wait_moves_the_cursor_too() {
    let server = Server::ready();
    let id = server.spawn_bg_with(json!({"command": "echo first; read x; echo second",
                                         "close_stdin": false}));
    // "first" may come in exec's own answer (the command asks for input at once) or in
    // this wait's: either answer moves the cursor past it.
    let first = server.wait_for_output(&id, "first");
    assert!(!text(&first, "stdout").contains("second"), "{first}");
    server.call_ok(
        "write",
        json!({"process_id": id, "input": "go", "newline": true}),
    );
    let w = server.wait_exit_of(&id);
    assert!(text(&w, "stdout").contains("second"), "{w}");
    let r = server.call_ok("read", json!({"process_id": id}));
    assert_eq!(
        text(&r, "stdout"),
        "",
        "wait's answer moved the cursor: {r}"
    );
}

fn trusted(env: &[(&str, &str)]) -> Server {
    let mut all = vec![("ALLOW_COMMANDS", "cat,seq,head")];
    all.extend_from_slice(env);
    Server::ready_with_env(&all)
}

#[test]
fn shell_execute_of_a_680_kb_file_is_bounded_and_the_rest_readable() {
    let server = trusted(&[]);
    let dir = std::env::temp_dir().join(format!("ys-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.txt");
    let content: String = (1..=68_000).map(|i| format!("row {i:>5}\n")).collect();
    std::fs::write(&file, &content).unwrap();
    let r = server.call_with_deadline(
        "shell_execute",
        json!({"command": ["cat", file.to_str().unwrap()]}),
        Duration::from_secs(30),
    );
    assert!(!is_error(&r), "{r}");
    let total: usize = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().len())
        .sum();
    assert!(total <= 20_200, "the text is bounded: {total}");
    let s = &r["structuredContent"];
    let out = s["stdout"].as_str().unwrap();
    assert!(
        out.starts_with("row     1\n") && out.ends_with("row 68000\n"),
        "head and tail"
    );
    let id = s["process_id"]
        .as_str()
        .expect("process_id to read the rest");
    assert!(
        out.contains(&format!("read with process_id={id} and since_seq=")),
        "{out:.300}"
    );
    let (stdout, _) = server.read_all(id);
    assert!(
        stdout == content,
        "the whole capture stays readable ({} bytes)",
        stdout.len()
    );
    let small = server.call_with_deadline(
        "shell_execute",
        json!({"command": ["seq", "1", "3000"], "max_output_bytes": 1000}),
        Duration::from_secs(30),
    );
    let out = small["structuredContent"]["stdout"].as_str().unwrap();
    assert!(
        out.len() < 1100 && out.ends_with("3000\n"),
        "per-call budget: {out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ps_with_many_records_stays_under_64_kib() {
    let server = Server::ready();
    let long = format!("true {}", "x".repeat(3000));
    for _ in 0..60 {
        server.sh(&long);
    }
    let r = server.call("ps", json!({}));
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.len() < 64 * 1024, "ps text is {} bytes", text.len());
}

#[test]
fn control_bytes_do_not_blow_the_result_over_64_kib() {
    let server = Server::ready();
    // Each \x01 is six bytes of JSON text: 20,000 of them would be 120 KB.
    let r = server.call(
        "exec",
        json!({"command": "head -c 200000 /dev/zero | tr '\\0' '\\1'", "side_effects": ["NONE"]}),
    );
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.len() < 64 * 1024, "exec text is {} bytes", text.len());
    let id = process_id(&server.result_object(&r));
    let r = server.call("read", json!({"process_id": id, "since_seq": 1}));
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.len() < 64 * 1024, "read text is {} bytes", text.len());
}
