# A pseudo-terminal pair without socat: opens a pty, makes the slave raw, links it at argv[1], then relays bytes
# between the master and this process's stdin/stdout. The parent (the simulator) talks on stdin/stdout; the driver
# opens the link path through the real serialport package. Exits when stdin closes or on SIGTERM (reader unplugged).
import os
import pty
import select
import sys
import tty

master, slave = pty.openpty()
tty.setraw(slave)
link = sys.argv[1]
try:
    os.unlink(link)
except FileNotFoundError:
    pass
os.symlink(os.ttyname(slave), link)
sys.stderr.write("ready " + os.ttyname(slave) + "\n")
sys.stderr.flush()

stdin = sys.stdin.fileno()
stdout = sys.stdout.fileno()
try:
    while True:
        ready, _, _ = select.select([master, stdin], [], [])
        if master in ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                data = b""
            if data:
                os.write(stdout, data)
        if stdin in ready:
            data = os.read(stdin, 4096)
            if not data:
                break
            os.write(master, data)
finally:
    try:
        os.unlink(link)
    except FileNotFoundError:
        pass
