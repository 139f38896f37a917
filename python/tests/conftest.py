"""Fixtures shared by the package's tests."""

import signal

import pytest


@pytest.fixture
def sigint_handler():
    """Python's own SIGINT handler for the test, which simulates Ctrl-C with
    `_thread.interrupt_main`: a test runner started as a background job of a non-interactive shell
    inherits SIGINT ignored, and then Python installs no handler and interrupt_main does nothing."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
