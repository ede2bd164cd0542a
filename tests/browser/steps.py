"""The participant's way through the pages, as the browser tests play it."""


def ready(selector: str) -> str:
    """`selector` once the participant's script has wired the page: an ES module runs once the page is
    parsed, a moment after its elements appear, and an action before then meets the bare page (a form
    posted without its sequence number, a search box without its handler)."""
    return f"body[data-participant-script=ready] {selector}"


def consent_and_questionnaire(page, live_server, token) -> None:
    """Open the private link, consent, and answer the Table 1 questionnaire."""
    page.goto(f"{live_server.url}/p/{token}/")
    page.click("#consent-accept")
    page.wait_for_selector(ready("form#questionnaire"))
    page.fill("input[name=search_engine_years]", "7")
    page.fill("input[name=domain_years]", "21")
    page.check("input[name=search_skill][value='3']")
    page.click("form#questionnaire button")


def post_task(page, went_well: int) -> None:
    page.wait_for_selector(ready("form#post-task"))
    page.check(f"input[name=search_went_well][value='{went_well}']")
    page.click("form#post-task button")


def end_task(page, how: str = "satisfied") -> None:
    """End the search task with "I found what I need" (satisfied) or "I give up" (gave_up), and confirm."""
    page.click("#stop-satisfied" if how == "satisfied" else "#stop-gave-up")
    page.wait_for_selector("#end-dialog[open]")
    page.click("#end-confirm")
