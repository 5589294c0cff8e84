"""The pages' blocks start once the fixed ports their servers bind are free to bind."""

from __future__ import annotations

import socket

import pytest

from tests.support.docs import served_ports, wait_until_bindable


def test_the_ports_a_block_serves_on_are_its_fixed_port_options():
    block = "agentgym env serve textcraft --port 36008 &\nagentgym view runs/x --port 0\n"
    assert served_ports(block) == {36008}


def test_a_port_a_closed_client_connection_holds_is_waited_for():
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        held = client.getsockname()[1]
        client.close()  # the client closes first: its port stays in TIME_WAIT for 60 s
        accepted.close()
        with pytest.raises(AssertionError, match=f"port {held} was still taken"):
            wait_until_bindable({held}, timeout=1)


def test_a_free_port_is_not_waited_for():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    wait_until_bindable({free}, timeout=0)
