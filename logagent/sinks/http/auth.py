"""Request credentials (bearer token, token file, basic) and secret redaction.

A token file is re-read whenever it changes (mtime, size or inode: Kubernetes
swaps a symlink when it rotates a projected token), so a rotated token is used
from the next request on without a restart.
"""

from __future__ import annotations

import base64
import os
from urllib.parse import unquote, urlsplit

from logagent.sinks.http.config import MASK, AuthConfig


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


class CredentialsUnavailable(Exception):
    """The token file cannot be read (yet); the request is retried later."""


class Redactor:
    """Replaces every known secret in a text by ``***``."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        # Very short values would mask ordinary text and protect nothing.
        if secret and len(secret) >= 4:
            self._secrets.add(secret)

    def add_uri_credentials(self, uri: str) -> None:
        """The password of ``user:password@`` in a URI, raw and as Basic credentials."""
        parts = urlsplit(uri)
        if parts.password is None:
            return
        user, password = unquote(parts.username or ""), unquote(parts.password)
        for secret in (parts.password, password, _basic(user, password)):
            self.add(secret)

    def redact(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return text


class Credentials:
    """The ``Authorization`` header value for each request."""

    def __init__(self, auth: AuthConfig | None, redactor: Redactor) -> None:
        self._auth = auth
        self._redactor = redactor
        self._value: str | None = None
        self._file_state: tuple[int, int, int] | None = None
        if auth is None:
            return
        if auth.strategy == "basic":
            user, password = auth.user or "", auth.password or ""
            encoded = _basic(user, password)
            self._value = f"Basic {encoded}"
            redactor.add(password)
            redactor.add(encoded)
        elif auth.token is not None:
            token = auth.token.strip()
            self._value = f"Bearer {token}"
            redactor.add(token)

    @property
    def from_file(self) -> bool:
        return self._auth is not None and self._auth.token_file is not None

    def header(self) -> str | None:
        """The current header value; re-reads a changed token file.

        Raises ``CredentialsUnavailable`` when a token file was never readable.
        A file that becomes unreadable later keeps the last token.
        """
        if self.from_file:
            self._refresh()
        return self._value

    def _refresh(self) -> None:
        path = self._auth.token_file  # type: ignore[union-attr]
        try:
            st = os.stat(path)
            state = (st.st_mtime_ns, st.st_size, st.st_ino)
            if state == self._file_state:
                return
            with open(path, "rb") as f:
                token = f.read().decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            if self._value is None:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
                raise CredentialsUnavailable(f"auth.token_file {path!r}: {reason}") from None
            return
        if not token:
            if self._value is None:
                raise CredentialsUnavailable(f"auth.token_file {path!r}: is empty")
            return
        self._redactor.add(token)
        self._value = f"Bearer {token}"
        self._file_state = state
