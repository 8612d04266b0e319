"""Link check: a plain TCP transfer from one simulated node to another, to read every communication figure
against what the shaped link really carries (TCP/IP headers take about 4 % of a 1500-byte frame).

Parent side: `measure_link`. Node side (run inside a namespace): `python -m tfscale.netsim.linkcheck recv ADDR
PORT` prints "ready", accepts one connection, reads the byte count and that many bytes, answers one byte;
`... send ADDR PORT BYTES` prints the seconds from connecting to that answer.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import dataclass

from tfscale.netsim.network import Layout, NetworkError

PORT = 5201  # the namespaces are fresh and private: no other listener can hold it
MIN_BYTES = 4 << 20
MAX_BYTES = 256 << 20
SECONDS_OF_TRAFFIC = 0.5  # transfer about this long at the configured rate, so the bucket's burst is negligible
CHUNK = 1 << 20


@dataclass(frozen=True)
class LinkCheck:
    bytes: int
    seconds: float  # from connect to the receiver's acknowledgement of the last byte
    method: str

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds


def check_bytes(rate_bytes_per_s: float) -> int:
    """Bytes to send: half a second at the rate, between 4 MiB and 256 MiB."""
    return int(min(MAX_BYTES, max(MIN_BYTES, rate_bytes_per_s * SECONDS_OF_TRAFFIC)))


def measure_link(layout: Layout, rate_bytes_per_s: float, sender: int = 0, receiver: int = 1) -> LinkCheck:
    """TCP goodput from node `sender` to node `receiver`; raises NetworkError when the transfer fails."""
    size = check_bytes(rate_bytes_per_s)
    timeout_s = 10 + 4 * size / rate_bytes_per_s
    address = layout.address(receiver)
    node_argv = [sys.executable, "-m", "tfscale.netsim.linkcheck"]
    server = subprocess.Popen(
        layout.wrap(receiver, [*node_argv, "recv", address, str(PORT)]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        if server.stdout.readline().strip() != "ready":
            raise NetworkError(f"link check: receiver did not start: {server.stderr.read().strip()[-200:]}")
        done = subprocess.run(
            layout.wrap(sender, [*node_argv, "send", address, str(PORT), str(size)]),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise NetworkError(f"link check: sender failed: {done.stderr.strip()[-200:]}")
        seconds = float(done.stdout.strip())
    except subprocess.TimeoutExpired:
        raise NetworkError(f"link check: {size} bytes not sent within {timeout_s:.0f} s") from None
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
        server.stderr.close()
    return LinkCheck(
        size,
        seconds,
        f"TCP transfer of {size} bytes node {sender} -> node {receiver}, connect to acknowledgement of the last byte",
    )


def _receive(address: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(1)
        print("ready", flush=True)
        connection, _ = listener.accept()
        with connection:
            expected = int.from_bytes(connection.recv(8, socket.MSG_WAITALL), "big")
            received = 0
            while received < expected:
                chunk = connection.recv(CHUNK)
                if not chunk:
                    raise SystemExit(f"connection closed after {received} of {expected} bytes")
                received += len(chunk)
            connection.sendall(b"k")


def _send(address: str, port: int, size: int) -> None:
    import time

    block = bytes(CHUNK)
    start = time.perf_counter()
    with socket.create_connection((address, port), timeout=60) as connection:
        connection.sendall(size.to_bytes(8, "big"))
        left = size
        view = memoryview(block)
        while left > 0:
            n = min(left, CHUNK)
            connection.sendall(view[:n])
            left -= n
        if connection.recv(1) != b"k":
            raise SystemExit("no acknowledgement from the receiver")
    print(f"{time.perf_counter() - start:.6f}", flush=True)


def main(argv: list[str]) -> None:
    if len(argv) >= 3 and argv[0] == "recv":
        _receive(argv[1], int(argv[2]))
    elif len(argv) >= 4 and argv[0] == "send":
        _send(argv[1], int(argv[2]), int(argv[3]))
    else:
        raise SystemExit("usage: python -m tfscale.netsim.linkcheck recv ADDR PORT | send ADDR PORT BYTES")


if __name__ == "__main__":
    main(sys.argv[1:])
