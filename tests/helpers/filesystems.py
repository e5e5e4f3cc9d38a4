"""Small filesystems for the disk-full and read-only tests.

Example:
    with tmpfs(tmp_path / "full", "size=4k") as full:
      ...  # writes there fail with ENOSPC
"""

import contextlib
import subprocess

import pytest


@contextlib.contextmanager
def tmpfs(path, options):
  """A tmpfs at `path` (skips the test where mounting is not allowed)."""
  path.mkdir()
  mounted = subprocess.run(
    ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
    capture_output=True,
    check=False,
  )
  if mounted.returncode:
    pytest.skip("cannot mount a tmpfs here: %s" % mounted.stderr.strip())
  try:
    yield path
  finally:
    subprocess.run(["umount", str(path)], check=False)
