"""Listening for Content-Security-Policy violations in a Playwright page (tests/browser, tests/dashboards)."""

# Added before any page script runs (by the browser, not the page, so the policy does not apply to it).
LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " +
                              e.sourceFile + ":" + e.lineNumber);
});
"""


def csp_listen(page) -> list[str]:
    """Collect the page's CSP violations: the securitypolicyviolation events and the console's reports.
    Returns the list the console reports go to; call `csp_violations(page, reports)` to read both."""
    reports: list[str] = []
    page.add_init_script(LISTEN)
    page.on(
        "console",
        lambda message: reports.append(message.text) if "Content Security Policy" in message.text else None,
    )
    return reports


def csp_violations(page, reports: list[str]) -> list[str]:
    try:
        events = page.evaluate("window.__cspViolations || []")
    except Exception:  # the page is navigating: its events are gone with it, the console's reports are not
        events = []
    return [*events, *reports]
