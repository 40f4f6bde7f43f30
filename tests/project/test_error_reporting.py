"""An internal error (a bug) points the user to its log file and to the
README's "Reporting problems" section, never to a web address."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

_URL = re.compile(r"https?://|www\.", re.IGNORECASE)


def _bug():
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError as e:
        return e


def test_internal_error_line_names_the_log_and_the_readme_section(tmp_path, monkeypatch):
    from rigmind.backend import error_log

    monkeypatch.setenv("RIGMIND_LOG_DIR", str(tmp_path))
    line = error_log.internal_error_line(_bug(), where="rigmind-test")
    logs = list(tmp_path.glob("rigmind-test-*.log"))
    assert len(logs) == 1 and str(logs[0]) in line
    assert '"Reporting problems"' in line and "README" in line
    assert not _URL.search(line), line
    text = logs[0].read_text(encoding="utf-8")
    # What the README's section says the log carries: traceback, command line, versions.
    assert "ZeroDivisionError" in text and "argv:" in text
    assert re.search(r"versions: rigmind \d+\.\d+\.\d+; python 3\.\d+", text), text.splitlines()[:3]


def test_readme_has_the_section_the_message_names():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    heading = re.search(r"^## Reporting problems\n(.*?)(?=^## )", readme, re.MULTILINE | re.DOTALL)
    assert heading is not None
    body = heading.group(1)
    assert "log" in body and "command" in body and "version" in body
    assert len(body.strip().splitlines()) <= 15


@pytest.mark.parametrize("rel", ["backend/errors.py", "backend/error_log.py", "cli.py", "operators/op_common.py"])
def test_no_web_address_in_the_error_paths(rel):
    assert not _URL.search((REPO / rel).read_text(encoding="utf-8")), rel


def test_cli_internal_error_names_log_and_section(tmp_path):
    code = ("import sys; from rigmind import cli; "
            "cli.COMMANDS['info'] = lambda args: 1 / 0; "
            "sys.exit(cli.main(['info', 'x.blend']))")
    env = dict(os.environ, RIGMIND_LOG_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                         cwd=str(REPO.parent))
    assert out.returncode == 1, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    logs = list(tmp_path.glob("rigmind-info-*.log"))
    assert len(logs) == 1 and str(logs[0]) in line, line
    assert '"Reporting problems"' in line and not _URL.search(line)


def test_operator_internal_error_names_log_and_section(registered, tmp_path, monkeypatch):
    bpy = registered
    from rigmind.operators import mannequin

    monkeypatch.setenv("RIGMIND_LOG_DIR", str(tmp_path))

    def broken():
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(mannequin, "build_mannequin", broken)
    with pytest.raises(RuntimeError) as got:
        bpy.ops.rigmind.add_mannequin()
    msg = str(got.value)
    logs = list(tmp_path.glob("rigmind-add_mannequin-*.log"))
    assert len(logs) == 1 and str(logs[0]) in msg, msg
    assert '"Reporting problems"' in msg and not _URL.search(msg)
    assert "blender 5." in logs[0].read_text(encoding="utf-8")
