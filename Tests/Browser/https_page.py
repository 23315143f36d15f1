"""Serves a folder over HTTPS on 127.0.0.1: the page of another origin, for the mixed-content tests.

Usage: https_page.py FOLDER PORT CERTIFICATE KEY
"""
import functools
import http.server
import ssl
import sys

folder, port, certificate, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
handler.log_message = lambda *args: None
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(certificate, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("listening", flush=True)
server.serve_forever()
