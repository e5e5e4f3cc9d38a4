"""Verified, resumable HTTP downloads of one file (`fetch.py` gets whole
models with them).

A download goes to `<file>.part` and gets its final name only once it is
verified: its size is the server's (a response without Content-Length is
refused), it is not an HTML page and starts like the file it names (zip,
safetensors, JSON, text), and its sha256 is the registry's or the one the
server publishes (HuggingFace's `X-Linked-Etag` of LFS files). A bad file
is removed, and the message says so. An interrupted download resumes from
the `.part` with an HTTP Range request, within the run (after a pause that
doubles) and in the next one; a server that stops sending, or trickles,
is timed out, and every file has an overall deadline.
Standard library only (urllib, hashlib) + tqdm for the progress bar.

Example:
    download("https://example.com/model.zip", "models/model.zip",
             sha256=expected, network=Network(retries=5))
"""

import collections
import hashlib
import http.client
import json
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

from absl import logging
import tqdm

from bert_tf.io_utils import InputError

_CHUNK = 1 << 20
# Worth resuming: the connection broke, timed out or the server hiccupped.
_TRANSIENT = (
  ConnectionError,
  TimeoutError,
  http.client.HTTPException,
  urllib.error.URLError,
)

Network = collections.namedtuple(
  "Network",
  ["retries", "timeout", "deadline", "backoff", "min_rate"],
  defaults=[3, 60.0, 7200.0, 1.0, 1024],
)
Network.__doc__ = """How hard a download tries.

retries: broken transfers resumed before giving up; backoff: seconds before
the first retry, doubling (at most 60); timeout: seconds a connection may
stay silent, or below `min_rate` bytes/s, before it is dropped and resumed;
deadline: seconds one file may take in all, retries included."""


class _ShortRead(ConnectionError):
  """The server closed the connection before Content-Length bytes came."""


class _PastDeadline(Exception):
  """The file's overall deadline passed."""


def content_problem(path, name=None):
  """Why the file at `path` is not what `name` (default: its own name)
  says it is -- an HTML page, a zip that is not one, ... -- or None."""
  name = name or os.path.basename(path)
  with open(path, "rb") as f:
    head = f.read(512)
  if re.match(rb"\s*<(!doctype html|html|\?xml|head|body)", head, re.I):
    return "an HTML/XML page (an error page?), not %s" % name
  if name.endswith(".zip") and not head.startswith(b"PK"):
    return "not a zip archive"
  if name.endswith(".safetensors"):
    size = os.path.getsize(path)
    header = int.from_bytes(head[:8], "little") if len(head) >= 8 else -1
    if not 0 < header <= size - 8 or head[8:9] != b"{":
      return "not a safetensors file"
  if name.endswith(".json"):
    try:
      with open(path, encoding="utf-8") as f:
        if not isinstance(json.load(f), dict):
          return "not a JSON object"
    except (UnicodeDecodeError, ValueError) as e:
      return "not JSON (%s)" % e
  if name.endswith(".txt"):
    try:
      with open(path, encoding="utf-8") as f:
        for _ in iter(lambda: f.read(_CHUNK), ""):
          pass
    except UnicodeDecodeError as e:
      return "not UTF-8 text (%s)" % e.reason
  return None


def _published_sha256(hops):
  """The sha256 a server publishes for the file (HF: `X-Linked-Etag` of an
  LFS file, or its ETag), from the headers of any redirect hop."""
  for headers in hops:
    for key in ("X-Linked-Etag", "ETag"):
      value = (headers.get(key) or "").strip().removeprefix("W/").strip('"')
      if re.fullmatch(r"[0-9a-fA-F]{64}", value):
        return value.lower()
  return None


class _RedirectHeaders(urllib.request.HTTPRedirectHandler):
  """Keeps the headers of every redirect (HF's checksum is on the first)."""

  def __init__(self, hops):
    super().__init__()
    self.hops = hops

  def redirect_request(self, req, fp, code, msg, headers, newurl):
    self.hops.append(headers)
    return super().redirect_request(req, fp, code, msg, headers, newurl)


def _content_range_start_and_total(response):
  match = re.fullmatch(
    r"bytes (\d+)-\d+/(\d+)", response.headers.get("Content-Range", "")
  )
  return (int(match.group(1)), int(match.group(2))) if match else (None, None)


def _open(url, part, timeout):
  """(response, offset, total size, published sha256) for the rest of
  `url` after the bytes `part` holds."""
  offset = os.path.getsize(part) if os.path.exists(part) else 0
  headers = {"User-Agent": "bert_tf-fetch"}
  if offset:
    headers["Range"] = "bytes=%d-" % offset
  hops = []
  opener = urllib.request.build_opener(_RedirectHeaders(hops))
  try:
    response = opener.open(
      urllib.request.Request(url, headers=headers), timeout=timeout
    )
  except urllib.error.HTTPError as e:
    if e.code == 416 and offset:  # `part` is as long as the file.
      os.remove(part)
      raise _ShortRead("range not satisfiable; starting over") from e
    raise
  hops.append(response.headers)
  kind = response.headers.get("Content-Type", "")
  if kind.split(";")[0].strip().lower() in ("text/html", "application/xhtml"):
    response.close()
    raise InputError(
      "%s: the server sent an HTML page (Content-Type %s), "
      "not the file; nothing kept" % (url, kind)
    )
  length = response.headers.get("Content-Length")
  partial = offset and getattr(response, "status", None) == 206
  if partial:
    start, total = _content_range_start_and_total(response)
    if start != offset:
      response.close()
      os.remove(part)
      raise _ShortRead(
        "server resumed at byte %s, not %d; starting over" % (start, offset)
      )
  else:  # The whole file (the server may have ignored Range).
    offset, total = 0, int(length) if length else None
  if total is None:
    response.close()
    raise InputError(
      "%s: the server sent no Content-Length, so a cut "
      "download could not be told from a whole one; nothing "
      "kept (use another --base_url/--hf_endpoint)" % url
    )
  return response, offset, total, _published_sha256(hops)


def _download_once(url, part, network, deadline_at):
  """Appends the rest of `url` to `part`; returns (total size, published
  sha256). Raises a _TRANSIENT error if the file is not complete."""
  response, offset, total, sha256 = _open(url, part, network.timeout)
  window = (time.monotonic(), offset)  # low-speed check: (since, bytes then)
  with (
    response,
    open(part, "ab" if offset else "wb") as f,
    tqdm.tqdm(
      total=total,
      initial=offset,
      unit="B",
      unit_scale=True,
      unit_divisor=1024,
      desc=os.path.basename(url),
      disable=None,
    ) as bar,
  ):
    size = offset
    for chunk in iter(lambda: response.read1(_CHUNK), b""):
      f.write(chunk)
      size += len(chunk)
      bar.update(len(chunk))
      now = time.monotonic()
      if now > deadline_at:
        raise _PastDeadline()
      if now - window[0] >= network.timeout:
        if size - window[1] < network.min_rate * network.timeout:
          raise TimeoutError(
            "under %d bytes/s for %g s" % (network.min_rate, network.timeout)
          )
        window = (now, size)
  if size != total:
    if size > total:
      os.remove(part)
    raise _ShortRead("got %d of %d bytes" % (size, total))
  return total, sha256


def sha256_of(path):
  digest = hashlib.sha256()
  with open(path, "rb") as f:
    for chunk in iter(lambda: f.read(_CHUNK), b""):
      digest.update(chunk)
  return digest.hexdigest()


def _why(url, e):
  """A failed attempt in words; says "no network" when it is that."""
  reason = getattr(e, "reason", e)
  host = urllib.parse.urlsplit(url).netloc
  if isinstance(reason, socket.gaierror):
    return "no network (cannot resolve %s: %s)" % (host, reason.strerror)
  if (
    isinstance(reason, (ConnectionRefusedError, OSError))
    and not (isinstance(reason, (TimeoutError, str)))
    and isinstance(e, urllib.error.URLError)
  ):
    return "no network (cannot connect to %s: %s)" % (
      host,
      getattr(reason, "strerror", None) or reason,
    )
  return str(e) or type(e).__name__


def _kept(part):
  return os.path.getsize(part) if os.path.exists(part) else 0


def download(url, path, sha256=None, network=None):
  """Downloads `url` to `path` (kept if already there and sound); returns
  `path`. Resumes from `path + ".part"`, retrying a broken transfer with
  growing pauses; a file that fails a check is removed, with an InputError
  saying so. Ctrl-C: InputError saying what is kept for the next run."""
  network = network or Network()
  if os.path.isfile(path):
    problem = content_problem(path)
    if not problem:
      return path
    os.remove(path)  # An earlier version kept it: never reuse a bad file.
    logging.warning("%s: %s; removed, downloading again", path, problem)
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  part = path + ".part"
  started = time.monotonic()
  deadline_at = started + network.deadline
  pause = network.backoff
  try:
    for attempt in range(network.retries + 1):
      try:
        total, published = _download_once(url, part, network, deadline_at)
        break
      except ValueError as e:  # urllib: not a URL.
        if isinstance(e, InputError):
          raise
        raise InputError("%s: %s" % (url, e)) from e
      except _PastDeadline as e:
        raise InputError(
          "%s: not complete after the %g s deadline (%d bytes "
          "kept in %s; run again to resume)"
          % (url, network.deadline, _kept(part), part)
        ) from e
      except _TRANSIENT as e:
        if isinstance(e, urllib.error.HTTPError) and e.code < 500:
          raise InputError("%s: HTTP %d %s" % (url, e.code, e.reason)) from e
        if attempt >= network.retries or (
          time.monotonic() + pause > deadline_at
        ):
          raise InputError(
            "%s: download failed: %s; tried %d times in %.0f "
            "s; %d bytes kept in %s, run again to resume"
            % (
              url,
              _why(url, e),
              attempt + 1,
              time.monotonic() - started,
              _kept(part),
              part,
            )
          ) from e
        logging.warning("%s: %s; retrying in %g s", url, _why(url, e), pause)
        time.sleep(pause)
        pause = min(pause * 2, 60)
      except OSError as e:  # after _TRANSIENT: the disk, not the network
        raise InputError(
          "%s: %s (from %s; %d bytes kept in %s: make room and run again "
          "to resume)" % (path, e.strerror or e, url, _kept(part), part)
        ) from e
  except KeyboardInterrupt:
    raise InputError(
      "%s: interrupted; %d bytes kept in %s (the next run "
      "resumes)" % (url, _kept(part), part)
    ) from None
  expected = (sha256 or published or "").lower()
  problem = content_problem(part, os.path.basename(path))
  if not problem and expected:
    actual = sha256_of(part)
    if actual != expected:
      problem = "sha256 %s, expected %s (%s)" % (
        actual,
        expected,
        "registry" if sha256 else "published by the server",
      )
  if problem:
    os.remove(part)
    raise InputError(
      "%s: %s; removed %s (%d bytes), run again to download "
      "it again" % (url, problem, part, total)
    )
  os.replace(part, path)
  return path
