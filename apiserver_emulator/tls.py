"""A throwaway self-signed certificate (openssl CLI) and kubeconfig files for the emulator."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import yaml


def make_self_signed_cert(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """Write cert.pem/key.pem valid for `host`, localhost and 127.0.0.1; returns their paths."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("TLS needs the openssl CLI (the cryptography package is not installed)")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    sans = {"DNS:localhost", "IP:127.0.0.1", ("IP:" if host.replace(".", "").isdigit() else "DNS:") + host}
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=logagent-apiserver-emulator",
         "-addext", "subjectAltName=" + ",".join(sorted(sans)),
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True, timeout=30,
    )
    return cert, key


def write_kubeconfig(path: Path | str, server: str, token: str, ca_cert: Path | None = None,
                     insecure: bool = False, namespace: str = "default") -> Path:
    cluster: dict[str, object] = {"server": server}
    if ca_cert is not None and not insecure:
        cluster["certificate-authority-data"] = base64.b64encode(Path(ca_cert).read_bytes()).decode()
    elif server.startswith("https://"):
        cluster["insecure-skip-tls-verify"] = True
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulator", "cluster": cluster}],
        "users": [{"name": "emulator", "user": {"token": token}}],
        "contexts": [{"name": "emulator", "context": {"cluster": "emulator", "user": "emulator",
                                                      "namespace": namespace}}],
        "current-context": "emulator",
        "preferences": {},
    }
    path = Path(path)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
