"""The C unit tests (tests/unit/*.c, built as build/unit-tests): one pytest
test per C test, so that a failure names the test and shows its output."""
import subprocess

import pytest

from conftest import ROOT

UNIT = ROOT / "build" / "unit-tests"


def unit_test_names():
    """The names build/unit-tests --list prints; a placeholder that fails
    if the binary is missing or cannot list its tests."""
    if not UNIT.exists():
        return ["<build/unit-tests missing: run make build/unit-tests>"]
    proc = subprocess.run([str(UNIT), "--list"], capture_output=True,
                          text=True, timeout=60)
    names = proc.stdout.split()
    if proc.returncode != 0 or not names:
        return ["<build/unit-tests --list failed>"]
    return names


@pytest.mark.parametrize("name", unit_test_names())
def test_unit(name):
    assert UNIT.exists(), f"{UNIT} missing: run make build/unit-tests"
    proc = subprocess.run([str(UNIT), name], capture_output=True, text=True,
                          errors="replace", timeout=300)
    assert proc.returncode == 0, (
        f"build/unit-tests {name} exited {proc.returncode}\n"
        f"{proc.stdout}{proc.stderr}")
