"""TestCA: a throwaway certificate authority and server certificates, made with the openssl CLI.

- `ca_file`: the trusted test CA (give it to presignd as `ca_file`, to curl as `--cacert`).
- `good`: signed by the test CA, SANs IP:127.0.0.1, IP:::1, DNS:localhost.
- `untrusted`: same SANs, signed by a second CA that nobody trusts.
- `wrong_name`: signed by the trusted CA, but only for DNS:wrong.example.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class CertPair:
    cert: str
    key: str


def _openssl(*args: str, cwd: str) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")


class TestCA:
    __test__ = False  # not a pytest test class

    GOOD_SANS = "IP:127.0.0.1,IP:::1,DNS:localhost"

    def __init__(self, directory: str) -> None:
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.ca_file, self.ca_key = self._make_ca("ca", "presignd e2e test CA")
        self.other_ca_file, self.other_ca_key = self._make_ca("other-ca", "presignd e2e UNTRUSTED CA")
        self.good = self._make_server("good", "127.0.0.1", self.GOOD_SANS, self.ca_file, self.ca_key)
        self.untrusted = self._make_server(
            "untrusted", "127.0.0.1", self.GOOD_SANS, self.other_ca_file, self.other_ca_key
        )
        self.wrong_name = self._make_server(
            "wrong-name", "wrong.example", "DNS:wrong.example", self.ca_file, self.ca_key
        )

    def _make_ca(self, name: str, cn: str) -> tuple[str, str]:
        key, cert = f"{name}.key", f"{name}.pem"
        _openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "3", "-subj", f"/CN={cn}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=self.dir,
        )
        return os.path.join(self.dir, cert), os.path.join(self.dir, key)

    def _make_server(self, name: str, cn: str, sans: str, ca_file: str, ca_key: str) -> CertPair:
        key, csr, cert, ext = f"{name}.key", f"{name}.csr", f"{name}.pem", f"{name}.ext"
        with open(os.path.join(self.dir, ext), "w") as f:
            f.write(
                "basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\n"
                f"subjectAltName={sans}\n"
            )
        _openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", f"/CN={cn}",
            cwd=self.dir,
        )
        _openssl(
            "x509", "-req", "-in", csr, "-CA", ca_file, "-CAkey", ca_key, "-CAcreateserial",
            "-days", "2", "-sha256", "-extfile", ext, "-out", cert,
            cwd=self.dir,
        )
        return CertPair(cert=os.path.join(self.dir, cert), key=os.path.join(self.dir, key))
