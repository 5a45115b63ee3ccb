#!/usr/bin/env python3
"""A loopback HTTP proxy that adds `Authorization: Bearer KEY` to every request it
forwards to UPSTREAM (host:port), streaming each response back as it arrives (SSE
included). For tools that cannot send headers, such as the MCP conformance suite.

    mcp-auth-proxy.py UPSTREAM KEY     (prints the address it listens on)
"""

import http.client
import http.server
import sys

UPSTREAM, KEY = sys.argv[1], sys.argv[2]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Authorization"] = f"Bearer {KEY}"
        headers["Host"] = UPSTREAM
        upstream = http.client.HTTPConnection(UPSTREAM, timeout=300)
        upstream.request(self.command, self.path, body=body, headers=headers)
        resp = upstream.getresponse()
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True
        upstream.close()

    do_GET = do_POST = do_DELETE = forward

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print(f"127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
