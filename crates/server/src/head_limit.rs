//! The answer to a request head over `api.maxHeaderBytes`: hyper refuses it itself,
//! before any route runs, with a bare 431 and no body. This wrapper of the connection's
//! socket recognises that answer as hyper writes it and sends loci's instead: the same
//! status with the error envelope (`headers_too_large`, naming the limit), then the
//! connection closes as hyper intends. Every other byte passes through untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use loci_api::{ApiError, ErrorKind};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection's socket whose 431 answer carries the error envelope.
pub struct HeadLimitAnswer<S> {
    inner: S,
    answer: Vec<u8>,
    /// Once hyper's 431 began: how much of `answer` is written.
    replacing: Option<usize>,
}

impl<S> HeadLimitAnswer<S> {
    /// `inner`, answering a head over `max_header_bytes` with the envelope.
    pub fn new(inner: S, max_header_bytes: usize) -> HeadLimitAnswer<S> {
        HeadLimitAnswer {
            inner,
            answer: answer(max_header_bytes),
            replacing: None,
        }
    }
}

/// The whole HTTP answer: status line, headers and the envelope.
fn answer(max_header_bytes: usize) -> Vec<u8> {
    let error = ApiError::new(
        ErrorKind::HeadersTooLarge,
        format!(
            "the request's head (request line and headers) is larger than api.maxHeaderBytes ({max_header_bytes} bytes)"
        ),
    )
    .hint("send fewer or shorter headers, or raise api.maxHeaderBytes (LOCI_API_MAX_HEADER_BYTES)");
    let body = serde_json::to_vec(&error.envelope()).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Whether `buf` starts hyper's own 431 answer (routes never answer 431).
fn is_hypers_431(buf: &[u8]) -> bool {
    buf.len() >= 13 && buf.starts_with(b"HTTP/1.") && &buf[8..13] == b" 431 "
}

impl<S: AsyncWrite + Unpin> HeadLimitAnswer<S> {
    /// Writes what is left of the envelope answer, if one was started.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(written) = self.replacing
            && written < self.answer.len()
        {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.answer[written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.replacing = Some(written + n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HeadLimitAnswer<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for HeadLimitAnswer<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.replacing.is_none() && is_hypers_431(buf) {
            self.replacing = Some(0);
        }
        if self.replacing.is_some() {
            // hyper's own answer is dropped: the envelope answer stands for it.
            ready!(self.poll_answer(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_answer(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_answer(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn hypers_bare_431_becomes_the_envelope_and_the_rest_passes() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let mut wrapped = HeadLimitAnswer::new(server, 8192);
        wrapped
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .await
            .unwrap();
        wrapped
            .write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
        wrapped.shutdown().await.unwrap();
        drop(wrapped);
        let mut seen = String::new();
        let mut client = client;
        client.read_to_string(&mut seen).await.unwrap();
        let (first, second) = seen.split_at(seen.find("HTTP/1.1 431").unwrap());
        assert_eq!(first, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        let body = second.split_once("\r\n\r\n").unwrap().1;
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["kind"], "headers_too_large");
        assert!(v["error"]["message"].as_str().unwrap().contains("8192"));
        assert!(second.contains(&format!("content-length: {}\r\n", body.len())));
    }
}
