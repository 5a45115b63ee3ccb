//! The child side of worker mode: what `loci worker` runs. One guarded
//! connection, requests read as JSON lines, answers written as JSON lines on
//! stdout. A reader thread keeps reading while a statement runs, so a
//! `cancel` line interrupts it at once; statements run on an executor thread
//! with the stack every SQL thread gets. When stdin ends the worker leaves at
//! once, running statement or not.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loci_store::rusqlite::Row;

use crate::error::QueryError;
use crate::exec::{self, Query, QueryId, Ran, RowSink};
use crate::in_process::{InProcess, SQL_THREAD_STACK};
use crate::protocol::{Failed, Op, Request};
use crate::value::{Params, write_json};

/// Rows per streamed batch: the parent decodes one batch while the worker
/// produces the next.
const BATCH_ROWS: usize = 1_024;
/// Bytes per streamed batch at most (about; one row may overshoot).
const BATCH_BYTES: usize = 256 * 1024;

type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn send(out: &Out, value: &impl serde::Serialize) {
    let mut line = serde_json::to_vec(value).expect("responses always serialize");
    line.push(b'\n');
    write_line(out, &line);
}

fn write_line(out: &Out, line: &[u8]) {
    let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
    // A parent that went away is noticed on the next read (EOF); nothing
    // useful can be done with a write error here.
    let _ = w.write_all(line).and_then(|_| w.flush());
}

/// Runs the worker protocol on `db`, reading requests from `input` and
/// answering on `output`, until `input` ends; then it interrupts a running
/// statement, fails queued ones and returns without waiting for them (the
/// process is expected to exit). Returns an error only when the database
/// cannot be opened (after reporting it on `output`).
pub fn serve(
    db: &Path,
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<(), QueryError> {
    let out: Out = Arc::new(Mutex::new(Box::new(output)));
    let engine = match InProcess::open_on_caller(db) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            send(&out, &Failed::new(0, &e));
            return Err(e);
        }
    };
    send(
        &out,
        &serde_json::json!({ "id": 0, "ok": true, "ready": true }),
    );

    let (tx, rx) = mpsc::channel::<Request>();
    let exec_engine = engine.clone();
    let exec_out = out.clone();
    let executor = std::thread::Builder::new()
        .name("loci-worker-exec".into())
        .stack_size(SQL_THREAD_STACK)
        .spawn(move || {
            for req in rx {
                run_query(&exec_engine, &exec_out, req);
            }
        })
        .map_err(|e| QueryError::Worker(format!("cannot start the executor thread: {e}")))?;

    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.ends_with(b"\n") {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let req: Request = match serde_json::from_slice(&line) {
            Ok(r) => r,
            Err(e) => {
                let id = serde_json::from_slice::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_u64()))
                    .unwrap_or(0);
                let err = QueryError::Worker(format!("bad request line: {e}"));
                send(&out, &Failed::new(id, &err));
                continue;
            }
        };
        match req.op {
            Op::Query => {
                if tx.send(req).is_err() {
                    break;
                }
            }
            Op::Cancel => {
                let cancelled = req.target.is_some_and(|t| engine.cancel(QueryId(t)));
                send(
                    &out,
                    &serde_json::json!({ "id": req.id, "ok": true, "cancelled": cancelled }),
                );
            }
            Op::Ping => send(&out, &serde_json::json!({ "id": req.id, "ok": true })),
        }
    }
    // Input ended: the parent closed our stdin, or died (the kernel closes
    // its end). Nobody is left to read answers, so leave now, even while a
    // statement runs: close the engine (the running statement is
    // interrupted, queued ones fail) and return without waiting for the
    // executor; the process exits and takes every thread with it.
    engine.close();
    drop(tx);
    drop(executor);
    Ok(())
}

/// Encodes rows straight into JSON and sends a batch line every
/// [`BATCH_ROWS`] rows or [`BATCH_BYTES`] bytes, so the parent decodes one
/// batch while the next is produced.
struct Streamer {
    id: u64,
    out: Out,
    /// The rows of the pending batch, comma-separated, without brackets.
    buf: Vec<u8>,
    rows: usize,
}

impl Streamer {
    fn flush_batch(&mut self) {
        let mut line = Vec::with_capacity(self.buf.len() + 64);
        line.extend_from_slice(
            format!("{{\"id\":{},\"ok\":true,\"more\":true,\"rows\":[", self.id).as_bytes(),
        );
        line.extend_from_slice(&self.buf);
        line.extend_from_slice(b"]}\n");
        write_line(&self.out, &line);
        self.buf.clear();
        self.rows = 0;
    }

    fn finish(self, ran: &Ran, elapsed: Duration) {
        let mut line = Vec::with_capacity(self.buf.len() + 256);
        line.extend_from_slice(format!("{{\"id\":{},\"ok\":true,\"columns\":", self.id).as_bytes());
        serde_json::to_writer(&mut line, &ran.columns).expect("strings serialize");
        line.extend_from_slice(
            format!(
                ",\"truncated\":{},\"elapsed_us\":{},\"rows\":[",
                ran.truncated,
                elapsed.as_micros()
            )
            .as_bytes(),
        );
        line.extend_from_slice(&self.buf);
        line.extend_from_slice(b"]}\n");
        write_line(&self.out, &line);
    }
}

impl RowSink for Streamer {
    fn row(&mut self, row: &Row<'_>, ncol: usize) -> Result<(), QueryError> {
        if self.rows > 0 {
            self.buf.push(b',');
        }
        self.buf.push(b'[');
        for i in 0..ncol {
            if i > 0 {
                self.buf.push(b',');
            }
            let v = row
                .get_ref(i)
                .map_err(|e| QueryError::Sqlite(e.to_string()))?;
            write_json(&mut self.buf, v);
        }
        self.buf.push(b']');
        self.rows += 1;
        if self.rows >= BATCH_ROWS || self.buf.len() >= BATCH_BYTES {
            self.flush_batch();
        }
        Ok(())
    }
}

fn run_query(engine: &InProcess, out: &Out, req: Request) {
    let id = req.id;
    let started = Instant::now();
    let mut streamer = Streamer {
        id,
        out: out.clone(),
        buf: Vec::new(),
        rows: 0,
    };
    let result = (|| {
        let sql = req
            .sql
            .ok_or_else(|| QueryError::Worker("a query request needs \"sql\"".into()))?;
        let params = Params::from_json_value(req.params).map_err(QueryError::InvalidParams)?;
        let mut q = Query::new(sql).params(params);
        q.id = QueryId(id);
        if let Some(ms) = req.timeout_ms {
            q.timeout = Duration::from_millis(ms);
        }
        if let Some(n) = req.max_rows {
            q.max_rows = n;
        }
        if let Some(n) = req.max_bytes {
            q.max_bytes = n;
        }
        // The statement runs on this thread (the engine was opened on the
        // caller, whose stack is SQL_THREAD_STACK), streaming batches as it
        // goes; the final line (or the error) is written below.
        let query = q.clone();
        engine.submit(&q, started, move |conn, deadline| {
            let ran = exec::run(conn, &query, deadline, &mut streamer)?;
            Ok((ran, streamer))
        })
    })();
    match result {
        Ok((ran, streamer)) => streamer.finish(&ran, started.elapsed()),
        Err(e) => send(out, &Failed::new(id, &e)),
    }
}

/// What `loci worker --db PATH` runs: requests from stdin (a stream the
/// supervisor keeps open, see `docs/query.md`), answers on stdout.
pub fn run_worker(db: &Path) -> Result<(), QueryError> {
    serve(db, std::io::stdin(), std::io::stdout())
}
