"""A real headless chromium for the page tests, driven through chromedriver's
W3C WebDriver HTTP API (the protocol Selenium speaks) with the standard
library: Debian's `chromium` and `chromium-driver` (`make browser`), nothing
downloaded. `MISSING` says why the browser tests skip.

Example:
    with Browser() as browser:
      browser.open(page_path)
      browser.hover("text.q[data-i='3']")
      count = browser.run("return document.querySelectorAll('line').length")
"""

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = (
  None
  if CHROMIUM and CHROMEDRIVER
  else "no chromium and chromedriver on PATH: `make browser` installs "
  "Debian's (apt-get install chromium chromium-driver)"
)
_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # W3C's element reference key
# localhost only: a proxy from the environment must not see the calls.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


class Browser:
  """One chromedriver and one headless chromium session."""

  def __init__(self, width=1200, height=900):
    port = _free_port()
    self._base = "http://127.0.0.1:%d" % port
    self._driver = subprocess.Popen(
      [CHROMEDRIVER, "--port=%d" % port],
      stdout=subprocess.DEVNULL,
      stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
      try:
        if self._call("GET", "/status")["ready"]:
          break
      except (OSError, RuntimeError):
        pass
      if time.monotonic() > deadline or self._driver.poll() is not None:
        self.close()
        raise RuntimeError("chromedriver did not start")
      time.sleep(0.2)
    options = {
      "binary": CHROMIUM,
      "args": [
        "--headless=new",
        "--no-sandbox",  # root in containers
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=%d,%d" % (width, height),
      ],
    }
    capabilities = {
      "browserName": "chrome",
      "goog:chromeOptions": options,
      # The console (errors) and the DevTools events (network requests).
      "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
    }
    try:
      reply = self._call(
        "POST", "/session", {"capabilities": {"alwaysMatch": capabilities}}
      )
    except BaseException:
      self.close()
      raise
    self._session = "/session/" + reply["sessionId"]

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()

  def _call(self, method, path, body=None):
    request = urllib.request.Request(
      self._base + path,
      data=None if body is None else json.dumps(body).encode(),
      method=method,
      headers={"Content-Type": "application/json"},
    )
    try:
      with _OPENER.open(request, timeout=120) as reply:
        return json.loads(reply.read())["value"]
    except urllib.error.HTTPError as e:
      value = json.loads(e.read() or b"{}").get("value", {})
      raise RuntimeError(
        "%s %s: %s" % (method, path, value.get("message", e))
      ) from None

  def _command(self, method, path, body=None):
    return self._call(method, self._session + path, body)

  def open(self, path, fragment=""):
    """Loads a local file and waits until the page says it is drawn; the
    logs start afresh with it."""
    url = "file://%s%s" % (path, fragment)
    # Via a blank page: a new fragment alone would not reload the page.
    self._command("POST", "/url", {"url": "about:blank"})
    self.log("browser"), self.log("performance")
    self._command("POST", "/url", {"url": url})
    deadline = time.monotonic() + 60
    while not self.run("return document.body?.dataset.ready === 'true'"):
      if time.monotonic() > deadline:
        raise RuntimeError("%s never became ready" % url)
      time.sleep(0.1)
    return url

  def run(self, script, *args):
    """The value of a function body run in the page."""
    return self._command(
      "POST", "/execute/sync", {"script": script, "args": list(args)}
    )

  def _element(self, css):
    found = self._command(
      "POST", "/element", {"using": "css selector", "value": css}
    )
    return found[_ELEMENT]

  def click(self, css):
    """A real click (an <option>'s click selects it)."""
    self._command("POST", "/element/%s/click" % self._element(css), {})

  def hover(self, css):
    """Moves the mouse to the centre of the element."""
    move = {
      "type": "pointerMove",
      "duration": 0,
      "origin": {_ELEMENT: self._element(css)},
      "x": 0,
      "y": 0,
    }
    self._command(
      "POST",
      "/actions",
      {
        "actions": [
          {
            "type": "pointer",
            "id": "mouse",
            "parameters": {"pointerType": "mouse"},
            "actions": [move],
          }
        ]
      },
    )

  def screenshot(self):
    """PNG bytes of the window."""
    return base64.b64decode(self._command("GET", "/screenshot"))

  def log(self, kind):
    """The entries of log `kind` ("browser": the console, "performance":
    DevTools events) since the last call."""
    return self._command("POST", "/se/log", {"type": kind})

  def requests(self):
    """The URLs the page requested (DevTools Network.requestWillBeSent)."""
    urls = []
    for entry in self.log("performance"):
      message = json.loads(entry["message"])["message"]
      if message["method"] == "Network.requestWillBeSent":
        urls.append(message["params"]["request"]["url"])
    return urls

  def close(self):
    if getattr(self, "_session", None):
      try:
        self._call("DELETE", self._session)
      except (OSError, RuntimeError):
        pass
      self._session = None
    self._driver.terminate()
    try:
      self._driver.wait(timeout=30)
    except subprocess.TimeoutExpired:
      self._driver.kill()
      self._driver.wait()
