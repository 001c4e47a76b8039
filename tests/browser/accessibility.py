"""axe-core in every page a browser test opens; serious and critical violations fail the test.

`axe/axe.min.js` is axe-core as published on npm (version and licence in `axe/`). It is added to
every browser context as an init script together with a small runner: the page checks itself
after each load and after each HTMX swap has settled (debounced), and reports what it found
through a binding. `Page.goto` waits for the first check of the page it opened, and closing a
context checks its pages' final state first, so a page left quickly is checked all the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

AXE_SOURCE = Path(__file__).resolve().parent / "axe" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")

RUNNER = """
(() => {
  if (window.top !== window || !window.axe) return;
  const impacts = %(impacts)s;
  let timer = null, running = null, again = false;
  window.__traceAxeChecks = 0;
  async function check() {
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        const results = await axe.run(document, {resultTypes: ["violations"]});
        const found = results.violations.filter(v => impacts.includes(v.impact)).map(v => ({
          id: v.id, impact: v.impact, help: v.help,
          targets: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
          html: v.nodes.slice(0, 2).map(n => n.html.slice(0, 200)),
        }));
        await window.__traceAxeReport({url: location.href, violations: found});
      } finally {
        window.__traceAxeChecks += 1;
        running = null;
        if (again) { again = false; schedule(); }
      }
    })();
    return running;
  }
  function schedule() { clearTimeout(timer); timer = setTimeout(check, 150); }
  window.__traceAxeCheckNow = check;
  window.addEventListener("load", schedule);
  document.addEventListener("htmx:afterSettle", schedule);
})();
"""


@dataclass
class AccessibilityLog:
    """The serious and critical violations the pages of one test reported, and what was checked."""

    violations: dict[tuple[str, str], dict] = field(default_factory=dict)
    checked_urls: list[str] = field(default_factory=list)

    def report(self, _source, payload: dict) -> None:
        self.checked_urls.append(payload["url"])
        for violation in payload["violations"]:
            path = payload["url"].split("?", 1)[0]
            self.violations.setdefault((path, violation["id"]), {**violation,
                                                                 "url": payload["url"]})

    def summary(self) -> str:
        return "\n".join(
            f"{v['impact']} {v['id']} on {v['url']}: {v['help']}\n"
            f"    {v['targets']}\n    {v['html']}"
            for v in self.violations.values())


def init_script() -> str:
    return (AXE_SOURCE.read_text(encoding="utf-8") + "\n"
            + RUNNER % {"impacts": json.dumps(list(FAILING_IMPACTS))})


def check_now(page) -> None:
    """Check the page's current state (after it has settled), unless it is gone."""
    if page.is_closed():
        return
    try:
        page.evaluate("() => window.__traceAxeCheckNow && window.__traceAxeCheckNow()")
    except Exception as error:  # a page navigating away or a download: nothing to check
        if "Target" not in str(error) and "context" not in str(error).lower() \
                and "navigat" not in str(error).lower():
            raise
