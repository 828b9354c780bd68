"""Channels to a bete server, in plaintext or over TLS.

A target is ``host:port`` (plaintext, as for a server on loopback) or ``https://host:port``
(TLS, trusting the system's root certificates unless a CA is given). :class:`Tls` says what to
trust and what to present; :meth:`Tls.from_env` reads it from ``BETE_TLS``, ``BETE_CA_CERT``,
``BETE_CLIENT_CERT``, ``BETE_CLIENT_KEY`` and ``BETE_TLS_DOMAIN`` (the names the ``bete`` CLI
uses), so a bot moves to a TLS server by its environment alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import grpc


@dataclass(frozen=True)
class Tls:
    """TLS settings: PEM bytes of the CA to trust (``None``: the system's roots), and of a client
    certificate and key for a server that asks for one (a trusted bot farm)."""

    ca_cert: Optional[bytes] = None
    client_cert: Optional[bytes] = None
    client_key: Optional[bytes] = None
    #: The name the server's certificate must carry, when the target names it otherwise (an IP).
    server_name: Optional[str] = None

    @classmethod
    def from_files(
        cls,
        ca_cert: Optional[str | Path] = None,
        client_cert: Optional[str | Path] = None,
        client_key: Optional[str | Path] = None,
        server_name: Optional[str] = None,
    ) -> "Tls":
        def read(p: Optional[str | Path]) -> Optional[bytes]:
            return Path(p).read_bytes() if p else None

        if bool(client_cert) != bool(client_key):
            raise ValueError("a client certificate needs its key, and a key its certificate")
        return cls(read(ca_cert), read(client_cert), read(client_key), server_name or None)

    @classmethod
    def from_env(cls) -> Optional["Tls"]:
        """TLS settings from the environment, or ``None`` when none of the variables is set."""
        env = os.environ.get
        wanted = env("BETE_TLS", "").lower() in ("1", "true", "yes") or any(
            env(v) for v in ("BETE_CA_CERT", "BETE_CLIENT_CERT", "BETE_TLS_DOMAIN")
        )
        if not wanted:
            return None
        return cls.from_files(env("BETE_CA_CERT"), env("BETE_CLIENT_CERT"), env("BETE_CLIENT_KEY"), env("BETE_TLS_DOMAIN"))


def split_target(target: str, tls: Optional[Tls] = None) -> tuple[str, Optional[Tls]]:
    """``(host:port, tls)`` for a target: ``https://`` asks for TLS, ``http://`` is dropped; with
    neither, ``tls`` or else the environment (:meth:`Tls.from_env`) decides."""
    if target.startswith("https://"):
        return target[len("https://") :].rstrip("/"), tls or Tls.from_env() or Tls()
    if target.startswith("http://"):
        return target[len("http://") :].rstrip("/"), tls
    return target, tls if tls is not None else Tls.from_env()


def open_channel(
    target: str,
    tls: Optional[Tls] = None,
    *,
    interceptors: Optional[Sequence[grpc.aio.ClientInterceptor]] = None,
) -> grpc.aio.Channel:
    """An asyncio channel to ``target`` (see :func:`split_target`)."""
    address, tls = split_target(target, tls)
    if tls is None:
        return grpc.aio.insecure_channel(address, interceptors=interceptors)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.ca_cert, private_key=tls.client_key, certificate_chain=tls.client_cert
    )
    options = [("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name else None
    return grpc.aio.secure_channel(address, credentials, options=options, interceptors=interceptors)
