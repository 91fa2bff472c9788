#!/usr/bin/python3
# h2hostile.py — a hostile HTTP/2 server over TLS on loopback, for test_h2_hostile.c
# (python3-h2, Debian's; run it with /usr/bin/python3).
#
#   h2hostile.py CERT KEY MODE [USER:PASSWORD]
#
# Listens on 127.0.0.1 (a port of its own), prints "https://127.0.0.1:PORT/" and a
# newline once it listens, then serves each connection in a thread of its own. The
# page "/" links to /a/0 ... /a/9; what the other requests get depends on MODE:
#
#   headers  a header list that never ends: HEADERS, then CONTINUATION frames
#            without end, each byte an HPACK index of one header field
#   data     a 200 whose DATA never ends (flow control obeyed)
#   rst      every stream reset (RST_STREAM), then a thousand more RST_STREAMs
#   push     a thousand PUSH_PROMISEs (the client said no push), then a 200
#   window0  SETTINGS_INITIAL_WINDOW_SIZE 0, and the response head without a body
#   goaway   each connection answers one request and then says GOAWAY
#   digest   not hostile: every page (not /robots.txt) behind HTTP digest auth (RFC 7616,
#            MD5, qop=auth) for USER:PASSWORD: a 401 with a challenge, unless the
#            request answers one this server made; /a/N is then a 200 without links
#
# Every loop ends when the peer goes away; the process ends on SIGTERM or when its
# stdin is closed (the test's end).
import hashlib
import os
import re
import secrets
import socket
import ssl
import struct
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

ROOT = b'<html><body>' + b''.join(b'<a href="/a/%d">%d</a>' % (i, i) for i in range(10)) \
    + b'</body></html>'


def frame(ftype, flags, stream, payload):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) \
        + struct.pack('>I', stream & 0x7fffffff) + payload


def send_root(conn, sock, sid):
    conn.send_headers(sid, [(':status', '200'), ('content-type', 'text/html'),
                            ('content-length', str(len(ROOT)))])
    conn.send_data(sid, ROOT, end_stream=True)
    sock.sendall(conn.data_to_send())


def endless_headers(conn, sock, sid):
    sock.sendall(conn.data_to_send())
    # :status 200 (static index 8), then x-a: b added to the dynamic table (index 62)
    block = b'\x88' + b'\x40\x03x-a\x01b'
    sock.sendall(frame(0x1, 0x0, sid, block))  # HEADERS, no END_HEADERS
    more = frame(0x9, 0x0, sid, b'\xbe' * 16384)  # CONTINUATION: 16,384 fields each
    while True:
        sock.sendall(more)


def endless_data(conn, sock, sid):
    conn.send_headers(sid, [(':status', '200'), ('content-type', 'text/html')])
    sock.sendall(conn.data_to_send())
    chunk = b'<p>' + b'x' * 16000 + b'</p>'
    while True:
        room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
        if room > 0:
            conn.send_data(sid, chunk[:room])
            sock.sendall(conn.data_to_send())
            continue
        data = sock.recv(65536)  # a WINDOW_UPDATE, or the end
        if not data:
            return
        for ev in conn.receive_data(data):
            if isinstance(ev, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                return
        sock.sendall(conn.data_to_send())


def reset_flood(conn, sock, sid):
    conn.reset_stream(sid)
    sock.sendall(conn.data_to_send())
    rst = frame(0x3, 0x0, sid, struct.pack('>I', 2))  # RST_STREAM INTERNAL_ERROR, again
    sock.sendall(rst * 1000)


def push_flood(conn, sock, sid):
    sock.sendall(conn.data_to_send())
    # PUSH_PROMISE (END_HEADERS) of GET https://127.0.0.1/ (static indexes 2, 7, 4 and
    # :authority with a literal value), promised streams 2, 4, 6, ...; then the answer
    block = b'\x82\x87\x84\x41\x09127.0.0.1'
    sock.sendall(b''.join(frame(0x5, 0x4, sid, struct.pack('>I', 2 * k) + block)
                          for k in range(1, 1001)))
    conn.send_headers(sid, [(':status', '200'), ('content-length', '2')])
    conn.send_data(sid, b'ok', end_stream=True)
    sock.sendall(conn.data_to_send())


REALM = 'h2hostile'
NONCES = set()  # the challenges made (every connection's): an answer must be to one


def md5(text):
    return hashlib.md5(text.encode()).hexdigest()


def digest_ok(headers, method, path, login):
    """Whether the Authorization field answers a challenge of ours for login."""
    field = headers.get('authorization', '')
    if not field.startswith('Digest '):
        return False
    p = dict((k, v1 or v2) for k, v1, v2 in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', field))
    user, password = login.split(':', 1)
    if p.get('username') != user or p.get('realm') != REALM or p.get('uri') != path \
            or p.get('nonce') not in NONCES or p.get('qop') != 'auth':
        return False
    ha1 = md5('%s:%s:%s' % (user, REALM, password))
    ha2 = md5('%s:%s' % (method, path))
    want = md5(':'.join([ha1, p['nonce'], p.get('nc', ''), p.get('cnonce', ''), 'auth', ha2]))
    return p.get('response') == want


def send_digest(conn, sock, sid, headers, path, login):
    if not digest_ok(headers, headers.get(':method', 'GET'), path, login):
        nonce = secrets.token_hex(16)
        NONCES.add(nonce)
        body = b'<html><body>login</body></html>'
        conn.send_headers(sid, [(':status', '401'), ('content-type', 'text/html'),
                                ('www-authenticate', 'Digest realm="%s", qop="auth", '
                                 'algorithm=MD5, nonce="%s"' % (REALM, nonce)),
                                ('content-length', str(len(body)))])
        conn.send_data(sid, body, end_stream=True)
        sock.sendall(conn.data_to_send())
    elif path == '/':
        send_root(conn, sock, sid)
    else:
        conn.send_headers(sid, [(':status', '200'), ('content-type', 'text/html'),
                                ('content-length', '2')])
        conn.send_data(sid, b'ok', end_stream=True)
        sock.sendall(conn.data_to_send())


def serve(sock, mode, login):
    config = h2.config.H2Configuration(client_side=False, validate_inbound_headers=False)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    if mode == 'window0':
        conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    sock.sendall(conn.data_to_send())
    answered = 0
    while True:
        data = sock.recv(65536)
        if not data:
            return
        for ev in conn.receive_data(data):
            if not isinstance(ev, h2.events.RequestReceived):
                continue
            sid = ev.stream_id
            headers = dict((k.decode() if isinstance(k, bytes) else k,
                            v.decode() if isinstance(v, bytes) else v)
                           for k, v in ev.headers)
            path = headers.get(':path', '/')
            answered += 1
            if mode == 'digest' and path != '/robots.txt':
                send_digest(conn, sock, sid, headers, path, login)
                continue
            if path == '/' or path == '/robots.txt':
                if path == '/':
                    send_root(conn, sock, sid)
                else:
                    conn.send_headers(sid, [(':status', '404'), ('content-length', '0')],
                                      end_stream=True)
                    sock.sendall(conn.data_to_send())
                if mode == 'goaway':
                    conn.close_connection(last_stream_id=sid)
                    sock.sendall(conn.data_to_send())
                    return
                continue
            if mode == 'headers':
                endless_headers(conn, sock, sid)
            elif mode == 'data':
                endless_data(conn, sock, sid)
            elif mode == 'rst':
                reset_flood(conn, sock, sid)
            elif mode == 'push':
                push_flood(conn, sock, sid)
            elif mode == 'window0':
                conn.send_headers(sid, [(':status', '200'), ('content-type', 'text/html')])
            elif mode == 'goaway':
                conn.send_headers(sid, [(':status', '200'), ('content-type', 'text/html'),
                                        ('content-length', '2')])
                conn.send_data(sid, b'ok', end_stream=True)
                conn.close_connection(last_stream_id=sid)
                sock.sendall(conn.data_to_send())
                return
        sock.sendall(conn.data_to_send())


def handle(raw, ctx, mode, login):
    try:
        with ctx.wrap_socket(raw, server_side=True) as sock:
            serve(sock, mode, login)
    except (OSError, ssl.SSLError, h2.exceptions.H2Error):
        pass  # the peer went away, or broke the protocol: this connection ends


def main():
    cert, key, mode = sys.argv[1:4]
    login = sys.argv[4] if len(sys.argv) > 4 else ''
    if mode == 'digest' and ':' not in login:
        sys.exit('h2hostile.py: digest needs USER:PASSWORD')
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(['h2'])
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(64)
    print('https://127.0.0.1:%d/' % lsock.getsockname()[1], flush=True)
    # stdin closed (the test ended, or died): the server ends too (a blocked accept
    # does not wake when another thread closes its socket: the process ends at once)
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        try:
            raw, _ = lsock.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(raw, ctx, mode, login), daemon=True).start()


if __name__ == '__main__':
    main()
