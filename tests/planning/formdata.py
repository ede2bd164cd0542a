"""What a browser sends for a page's form: each enabled control's value, as the page rendered it."""

from html.parser import HTMLParser


class _Form(HTMLParser):
    def __init__(self, selector_class: str):
        super().__init__()
        self.selector_class, self.inside, self.disabled_depth, self.depth = selector_class, False, 0, 0
        self.data: dict[str, str] = {}
        self.select: str | None = None
        self.fieldsets: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and self.selector_class in (a.get("class") or "").split():
            self.inside = True
        if not self.inside:
            return
        if tag == "fieldset":
            self.depth += 1
            self.fieldsets.append(a)
            if "disabled" in a and not self.disabled_depth:
                self.disabled_depth = self.depth
        if self.disabled_depth or "disabled" in a:
            return
        if tag == "input" and a.get("name") and a.get("type") not in ("checkbox", "radio", "submit"):
            self.data[a["name"]] = a.get("value") or ""
        elif tag == "select":
            self.select = a.get("name")
        elif tag == "option" and self.select:
            if "selected" in a or self.select not in self.data:
                self.data[self.select] = a.get("value") or ""
        elif tag == "textarea":
            self.data[a["name"]] = ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "select":
            self.select = None
        elif tag == "fieldset" and self.inside:
            if self.disabled_depth == self.depth:
                self.disabled_depth = 0
            self.depth -= 1


def form_data(page: str, form_class: str) -> tuple[dict[str, str], list[dict]]:
    """The data the form `form.<form_class>` sends untouched, and its fieldsets' attributes."""
    parser = _Form(form_class)
    parser.feed(page)
    return parser.data, parser.fieldsets
