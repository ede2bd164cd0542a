"""Redirects are followed by sessionlab.outbound itself, each hop checked as the first: with the allow-list
naming the redirector's address (127.0.0.2) but not the target's (127.0.0.1), a redirect inside, to IPv6
loopback, or to a scheme other than http(s) is refused at the hop, and the target receives nothing."""

from urllib.parse import quote

import pytest

from sessionlab import outbound

from .local_servers import serving


@pytest.fixture
def redirector(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.2"]
    with serving("127.0.0.2") as server:
        yield server


@pytest.fixture
def target():
    with serving("127.0.0.1") as server:
        yield server


def via(redirector, to):
    return f"{redirector.base}/redirect?to={quote(to, safe='')}"


@pytest.mark.parametrize(
    "to, refusal",
    [
        ("http://127.0.0.1:{port}/", outbound.AddressRefused),
        ("http://localhost:{port}/", outbound.AddressRefused),
        ("http://2130706433:{port}/", outbound.AddressRefused),
        ("http://[::1]:{port}/", outbound.AddressRefused),
        ("http://[::ffff:127.0.0.1]:{port}/", outbound.AddressRefused),
        ("ftp://127.0.0.2:{port}/", outbound.UrlRefused),
        ("file:///etc/passwd", outbound.UrlRefused),
    ],
)
def test_a_redirect_inside_is_refused_at_the_hop(redirector, target, to, refusal):
    with pytest.raises(refusal) as refused:
        outbound.fetch(via(redirector, to.format(port=target.port)))
    assert redirector.paths and redirector.paths[0].startswith("/redirect")  # the first hop was called
    assert target.paths == []
    assert refused.value.category.startswith("refused (")


def test_a_redirect_to_an_allowed_address_is_followed(redirector):
    response = outbound.fetch(via(redirector, f"{redirector.base}/answer"))
    assert response.status == 200 and response.url == f"{redirector.base}/answer"
    assert redirector.paths[-1] == "/answer"


def test_a_relative_redirect_is_followed_on_the_same_host(redirector):
    response = outbound.fetch(via(redirector, "/answer"))
    assert response.status == 200 and redirector.paths[-1] == "/answer"


def test_redirects_stop_after_the_maximum(redirector, settings):
    settings.OUTBOUND_MAX_REDIRECTS = 2
    loop = (
        f"{redirector.base}/redirect?to={redirector.base}/redirect?to={redirector.base}/redirect?to=/answer"
    )
    with pytest.raises(outbound.TooManyRedirects) as refused:
        outbound.fetch(loop)
    assert refused.value.category == "refused (too many redirects)"
    assert "/answer" not in redirector.paths


@pytest.mark.parametrize("to", ["/a b", "http://[::1/", "http://127.0.0.2:99999/"])
def test_a_location_that_cannot_be_sent_is_refused(redirector, to):
    with pytest.raises(outbound.UrlRefused):
        outbound.fetch(via(redirector, to))
    assert len(redirector.paths) == 1
