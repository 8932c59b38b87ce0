"""HTTP GETs and requests that never follow a redirect: what every client of a service here uses (Label Studio's
API, Flink's REST API, Beam's job servers' answers).

urllib's default opener follows ``301``/``302``/``303``/``307``/``308`` to wherever the answer points, another
host included: a Flink REST address or a Label Studio URL that redirects would have its next request (with a
token, for Label Studio) sent to a host the user never named. Here a redirect is an ``HTTPError`` whose reason
names where it pointed, and the caller says it in its one line.

    >>> isinstance(OPENER, urllib.request.OpenerDirector)
    True
"""

from __future__ import annotations

import urllib.error
import urllib.request

__all__ = ["OPENER", "open_url"]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: an ``HTTPError`` with the status and ``redirected to <where> (not followed)``."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        raise urllib.error.HTTPError(
            req.full_url, code, f"redirected to {newurl} (not followed)", headers, fp
        )


OPENER = urllib.request.build_opener(NoRedirect)


def open_url(url: str | urllib.request.Request, timeout: float):
    """``urllib.request.urlopen`` without following redirects (each read bounded by ``timeout``; callers bound
    the whole exchange with :func:`incoherent.deadline.within`)."""
    return OPENER.open(url, timeout=timeout)
