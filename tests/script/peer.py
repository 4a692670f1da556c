#!/usr/bin/env python3
"""peer.py - a hostile client or squatter of marktap's sockets (security.t).

  peer.py join NAME        connect to "@NAME", say hello as a new process,
                           ask marktap to stop the session (an X frame),
                           print how many bytes it sent in 3 s
  peer.py stall NAME SECS  connect, send a frame header and 4 of its 100
                           bytes, then hold the connection SECS seconds
  peer.py squat NAME SECS  bind "@NAME" and accept; print "fds N bytes M"
                           for what the clients sent within SECS seconds
"""
import array, os, socket, struct, sys, time

def frame(kind, data):
    return struct.pack('<IB3x', len(data), ord(kind)) + data

def main():
    mode, name = sys.argv[1], '\0' + sys.argv[2]
    if mode == 'join':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(name)
        try:
            s.sendall(frame('H', b'%d 0 /bin/evil' % os.getpid()))
            s.sendall(frame('X', b'exit'))
        except OSError:
            pass
        s.settimeout(3)
        got = 0
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                got += len(d)
        except (socket.timeout, OSError):
            pass
        print(got)
    elif mode == 'stall':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(name)
        s.sendall(struct.pack('<IB3x', 100, ord('D')) + b'abcd')
        print('stalling', flush=True)
        time.sleep(float(sys.argv[3]))
    elif mode == 'squat':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(name)
        s.listen(4)
        print('bound', flush=True)
        s.settimeout(float(sys.argv[3]))
        fds = got = 0
        try:
            while True:
                c, _ = s.accept()
                c.settimeout(2)
                try:
                    while True:
                        msg, anc, _, _ = c.recvmsg(65536, socket.CMSG_SPACE(16))
                        for level, kind, data in anc:
                            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                                fds += len(data) // 4
                        if not msg:
                            break
                        got += len(msg)
                except (socket.timeout, OSError):
                    pass
                c.close()
        except (socket.timeout, OSError):
            pass
        print('fds %d bytes %d' % (fds, got))

main()
