//! `loci mcp`'s stdio transport: newline-delimited JSON-RPC over the pipes the host
//! gives the process (rmcp's non-blocking `stdio_pipes`), with what the SDK's own line
//! transport lacks:
//!
//! - each request is screened first ([`crate::protocol::screen`]): malformed params of
//!   a served method are answered invalid params (-32602) with the request's id; a line
//!   that is not JSON is a parse error (-32700), a message that is not JSON-RPC an
//!   invalid request (-32600, with its id when it has one); the session goes on;
//! - a line is at most [`MAX_LINE_BYTES`]; a longer one is skipped and refused;
//! - the end of stdin is signalled ([`StdioTransport::eof`]), so the process can stop
//!   at once instead of waiting for in-flight calls to drain.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};

use crate::protocol::{self, INVALID_REQUEST, PARSE_ERROR};

/// The longest message line read (a longer one is refused, not buffered).
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// The transport over a reader and a writer (stdin and stdout).
pub struct StdioTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    eof: Arc<Notify>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport over `reader` and `writer`.
    pub fn new(reader: R, writer: W) -> StdioTransport<R, W> {
        StdioTransport {
            reader: BufReader::new(reader),
            writer: Arc::new(Mutex::new(writer)),
            eof: Arc::new(Notify::new()),
        }
    }

    /// Notified once the reader has ended (stdin closed).
    pub fn eof(&self) -> Arc<Notify> {
        self.eof.clone()
    }

    /// One line, without its newline; `None` at the end; `Some(None)` for a line over
    /// the limit (skipped).
    async fn line(&mut self) -> std::io::Result<Option<Option<Vec<u8>>>> {
        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            return Ok(Some(Some(buf)));
        }
        if (buf.len() as u64) <= MAX_LINE_BYTES {
            // The last line, without a newline.
            return Ok(Some(Some(buf)));
        }
        // Over the limit: skip the rest of the line, bounded memory.
        loop {
            let mut rest = Vec::new();
            let n = (&mut self.reader)
                .take(1 << 16)
                .read_until(b'\n', &mut rest)
                .await?;
            if n == 0 || rest.last() == Some(&b'\n') {
                return Ok(Some(None));
            }
        }
    }
}

/// Writes one answer of this transport's own (a screened request's error).
async fn write_line<W: AsyncWrite + Unpin>(writer: Arc<Mutex<W>>, message: Value) {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    let mut w = writer.lock().await;
    let _ = w.write_all(&line).await;
    let _ = w.flush().await;
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let line = serde_json::to_vec(&item);
        async move {
            let mut line = line.map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut w = writer.lock().await;
            w.write_all(&line).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = match self.line().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => {
                    self.eof.notify_one();
                    return None;
                }
            };
            let Some(line) = line else {
                let e = format!("a message line is over {MAX_LINE_BYTES} bytes");
                write_line(
                    self.writer.clone(),
                    protocol::error(Value::Null, INVALID_REQUEST, e),
                )
                .await;
                continue;
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value: Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(e) => {
                    let e = format!("the line is not JSON: {e}");
                    write_line(
                        self.writer.clone(),
                        protocol::error(Value::Null, PARSE_ERROR, e),
                    )
                    .await;
                    continue;
                }
            };
            if let Some(answer) = protocol::screen(&value) {
                write_line(self.writer.clone(), answer).await;
                continue;
            }
            match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
                Ok(message) => return Some(message),
                Err(e) => {
                    let id = protocol::id_of(&value);
                    // A notification or response that does not parse gets no answer.
                    if value.get("method").is_some() && !id.is_null() {
                        let e = format!("not a JSON-RPC request this server reads: {e}");
                        write_line(self.writer.clone(), protocol::error(id, INVALID_REQUEST, e))
                            .await;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
