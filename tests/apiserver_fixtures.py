"""Pytest fixtures starting the emulator (imported by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver_emulator.server import ApiServerEmulator


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServerEmulator]:
    """A running plain-HTTP emulator; bookmarks every 0.2 s so tests see them quickly."""
    async with ApiServerEmulator(bookmark_interval=0.2) as emu:
        yield emu


@pytest.fixture
async def apiserver_tls(tmp_path) -> AsyncIterator[ApiServerEmulator]:
    """A running HTTPS emulator (self-signed cert in tmp_path), for clients such as kubectl."""
    async with ApiServerEmulator(tls=True, bookmark_interval=0.2, workdir=tmp_path / "tls") as emu:
        yield emu
