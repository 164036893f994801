"""A ``--scheduler`` address where something listens that does not speak Dask is refused in one
line (exit status 2) within the handshake's time-out, never a hang (docs/cluster.md)."""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import threading
import time

import pytest
from testutil import solve_with

pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="dask.distributed is not installed (pip install 'metaheur[dask]')")

# what a server does with a connection it accepts: says nothing, sends junk, closes it at once
BEHAVIOURS = {
    "silent": lambda conn: None,
    "junk": lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nnot dask" * 64),
    "closes": lambda conn: conn.close(),
    "half-frame": lambda conn: conn.sendall((2).to_bytes(8, "little") + b"\x00" * 4),
}


@pytest.fixture(params=sorted(BEHAVIOURS))
def not_dask(request):
    """A loopback address whose listener accepts connections and does not speak Dask."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            with contextlib.suppress(OSError):
                BEHAVIOURS[request.param](conn)

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in accepted:
        conn.close()


def test_the_api_refuses_a_listener_that_does_not_speak_dask(not_dask):
    from metaheur.errors import MetaheurError
    from metaheur.problems import random_qap
    from metaheur.solver import HANDSHAKE_SECONDS

    t0 = time.monotonic()
    with pytest.raises(MetaheurError, match="cannot reach the Dask scheduler at " + not_dask) as refusal:
        solve_with(random_qap(8, seed=1), strategy="cpu-islands", islands=2, generations=1, scheduler=not_dask)
    assert "\n" not in str(refusal.value)
    assert time.monotonic() - t0 < HANDSHAKE_SECONDS + 20  # generous: "does not hang"


def test_the_command_refuses_it_in_one_line_with_status_2(not_dask, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "metaheur.cli", "solve", "gen:qap:8", "-g", "1", "--strategy",
                           "cpu-islands", "--islands", "2", "--scheduler", not_dask, "--json", "r.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("metaheur: error: cannot reach the Dask")
    assert not (tmp_path / "r.json").exists()
