"""``publish`` and a Hub that redirects elsewhere (issue #53, item 17): huggingface_hub's client followed a
redirect to another host, so the build went there (the token stayed behind: httpx drops it across origins).
Now a redirect is followed on the Hub's own host only; one to another host ends the publish in one line and
the other host receives nothing. Two fake Hubs on 127.0.0.1 (tests/fake_hub.py), on two ports: two origins.
"""

from __future__ import annotations

import threading

import pytest

from tests.corpora.test_publish import TOKEN, build, dataset, hub, publish  # noqa: F401 - fixtures
from tests.fake_hub import FakeHub


@pytest.fixture
def elsewhere(tmp_path):
    """Another host: a fake Hub that takes any upload, token or not."""
    server = FakeHub(str(tmp_path / "elsewhere"), None)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_redirect_to_another_host_is_refused_and_nothing_goes_there(dataset, hub, elsewhere, capsys):  # noqa: F811
    hub.redirect_to = elsewhere.url
    assert publish(dataset, "--token", TOKEN) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --repo-id me/insted: the Hub (") and "\n" not in err, err
    assert f"redirected to {elsewhere.url}/api/repos/create, another host (not followed)" in err, err
    assert elsewhere.requests == [] and elsewhere.repos == {}
    assert ("POST", "/api/repos/create") in hub.requests  # the first write; nothing after it
    assert hub.requests[-1] == ("POST", "/api/repos/create"), hub.requests


def test_a_redirect_on_the_hubs_own_host_is_followed(dataset, hub, tmp_path, capsys):  # noqa: F811
    """A same-origin redirect (a repository renamed, a path moved) is followed as before: a second fake Hub
    path on the same server is the same host."""
    from incoherent.corpora.publish import same_host

    assert same_host(hub.url + "/api/a", hub.url + "/api/b")
    assert publish(dataset, "--token", TOKEN) == 0, capsys.readouterr().err
    assert "me/insted" in hub.repos
