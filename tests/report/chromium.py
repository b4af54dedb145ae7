"""Headless Chromium for report tests: find it (installing Debian's package when absent),
open a file with the network blocked, and return the rendered DOM and the URLs the page tried
to fetch (from Chromium's net log)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions",
    # Block the network: every host resolves to nothing and every request goes to a dead proxy.
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
]
NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium(install: bool = True) -> str:
    """The browser binary; installs Debian's ``chromium`` when absent (root + apt), else skips."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    if install and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600, check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, capture_output=True, timeout=900, check=False)
        return find_chromium(install=False)
    pytest.skip("chromium is not installed and cannot be installed here (needs root and apt-get)")


@dataclass
class Rendered:
    dom: str
    external: list[str]  # http(s)/ws URLs the page itself tried to load


def _page_requests(net_log: Path) -> list[str]:
    """Network URLs requested by the page. Chromium's own background requests (update checks,
    accounts) carry the initiator 'not an origin'; a file:// page's requests carry 'null'."""
    data = json.loads(net_log.read_text(encoding="utf-8", errors="replace") or "{}")
    kinds = {v: k for k, v in data.get("constants", {}).get("logEventTypes", {}).items()}
    out: list[str] = []
    for event in data.get("events", []):
        params = event.get("params") or {}
        url = str(params.get("url", ""))
        if kinds.get(event.get("type")) != "URL_REQUEST_START_JOB" or not url.startswith(("http", "ws")):
            continue
        if params.get("initiator") == "not an origin":
            continue
        out.append(url)
    return out


def render(page: Path, workdir: Path, *, budget_ms: int = 15000) -> Rendered:
    workdir.mkdir(parents=True, exist_ok=True)
    net_log = workdir / "net.json"
    cmd = [find_chromium(), *FLAGS, f"--user-data-dir={workdir / 'profile'}", f"--log-net-log={net_log}",
           f"--virtual-time-budget={budget_ms}", "--dump-dom", page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return Rendered(proc.stdout, _page_requests(net_log))


def screenshot(page: Path, out: Path, workdir: Path, *, size: str = "1280,2400") -> Path:
    cmd = [find_chromium(), *FLAGS, f"--user-data-dir={workdir / 'profile-shot'}", "--hide-scrollbars",
           f"--window-size={size}", "--virtual-time-budget=15000", f"--screenshot={out}", page.resolve().as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=180, check=False)
    return out
