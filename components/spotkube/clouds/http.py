"""The HTTP client both clouds' price lists are read with: requests, with urllib3's Retry.

Why not a hand-written loop: the price APIs answer 429 when busy and 5xx when they fail, sometimes with
Retry-After, and urllib3's Retry handles all three declaratively; both libraries come with Pulumi's
Kubernetes SDK. Every failure becomes a `PriceFetchError` naming the service and the host, never a
traceback. A secret (the GCP API key) travels in a header, never in the URL, and `PriceFetchError`
blanks it out of any text it is given, as a last guard.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, ReadTimeoutError
from urllib3.util import Retry

from spotkube.platform.cost.refresh import FetchSettings
from spotkube.platform.errors import SpotkubeError

#: The answers worth trying again: busy (429) and server-side failures.
RETRY_STATUSES = (429, 500, 502, 503, 504)
USER_AGENT = "spotkube-prices"


class PriceFetchError(SpotkubeError):
    """A price list could not be read; the message names the service, the host and the way out."""


class DeadlinePassed(MaxRetryError):
    """A request the server never answered, given up because its next attempt would begin after the
    request's deadline; `attempts` says how many were made."""

    def __init__(self, pool: Any, url: str, reason: Exception | None, attempts: int) -> None:
        super().__init__(pool, url, reason)
        self.attempts = attempts


class DeadlineRetry(Retry):
    """urllib3's Retry, with a deadline for a server that does not answer at all (no connection, no
    reply within the timeout): no such retry begins after it. Offline, the backoff alone (1, 2, 4, 8,
    16 s) would keep `--timeout 3` failing for half a minute. A server that answers, busy or failing,
    is retried as its Retry-After and the retry count say: it is there, and asked to be waited for."""

    def __init__(self, *args: Any, deadline: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: time.monotonic() after which no unanswered request is tried again; None: no deadline.
        self.deadline = deadline

    def new(self, **kw: Any) -> DeadlineRetry:
        retry = super().new(**kw)
        retry.deadline = self.deadline
        return retry

    def until(self, deadline: float) -> DeadlineRetry:
        """This policy, for one request that must not be tried again after `deadline`."""
        retry = self.new()
        retry.deadline = deadline
        return retry

    def latest_pause(self) -> float:
        """The longest the pause before the next attempt can be: the backoff and all its jitter."""
        return self.new(backoff_jitter=0.0).get_backoff_time() + self.backoff_jitter

    def increment(self, method: str | None = None, url: str | None = None, response: Any = None,
                  error: Exception | None = None, _pool: Any = None, _stacktrace: Any = None) -> DeadlineRetry:
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        assert isinstance(retry, DeadlineRetry)  # new() keeps the class
        if response is None and self.deadline is not None and time.monotonic() + retry.latest_pause() > self.deadline:
            raise DeadlinePassed(_pool, url or "", error, attempts=len(retry.history))
        return retry


class _DeadlineAdapter(HTTPAdapter):
    """Gives every request its own deadline, `budget_s` from when it is sent."""

    def __init__(self, policy: DeadlineRetry, budget_s: float) -> None:
        super().__init__(max_retries=policy)
        self.policy, self.budget_s = policy, budget_s

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.max_retries = self.policy.until(time.monotonic() + self.budget_s)
        return super().send(request, *args, **kwargs)


def retry_policy(settings: FetchSettings, secret_headers: tuple[str, ...] = ()) -> DeadlineRetry:
    """Retry GETs on 429 and 5xx (with or without Retry-After) and on dropped connections, backing off
    exponentially with jitter; honour Retry-After up to `retry_after_max_s`. When retries run out the
    last answer is returned, so its status is reported rather than urllib3's summary."""
    return DeadlineRetry(
        total=settings.retries, connect=settings.retries, read=settings.retries, status=settings.retries,
        status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"GET"}),
        backoff_factor=settings.backoff_factor, backoff_max=settings.backoff_max_s,
        backoff_jitter=settings.backoff_factor,  # up to one backoff unit of random delay, so clients spread out
        respect_retry_after_header=True, retry_after_max=settings.retry_after_max_s, raise_on_status=False,
        remove_headers_on_redirect=frozenset({"Authorization", "Cookie", "Proxy-Authorization", *secret_headers}),
    )


def session(settings: FetchSettings, secret_headers: tuple[str, ...] = ()) -> requests.Session:
    """A session that retries as `retry_policy` says, on http and https alike (tests use http)."""
    client = requests.Session()
    adapter = _DeadlineAdapter(retry_policy(settings, secret_headers), settings.timeout_s)
    client.mount("https://", adapter)
    client.mount("http://", adapter)
    client.headers["User-Agent"] = USER_AGENT
    client.headers["Accept"] = "application/json"
    return client


def host(url: str) -> str:
    return urlsplit(url).netloc or url


#: What a failed price refresh tells the user to do.
PRICES_HINT = "spotkube keeps using the prices it has; retry the refresh later."


def get_json(client: requests.Session, service: str, url: str, settings: FetchSettings, *,
             params: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None,
             secret: str | None = None, hint: str = PRICES_HINT, body: Mapping[str, Any] | None = None) -> Any:
    """GET one page (POST `body`, for a read that Google's APIs spell as a POST, such as getIamPolicy)
    and decode its JSON; every failure is a PriceFetchError naming `service` and the host, then `hint`."""
    where = f"{service} at {host(url)}"

    def fail(what: str) -> PriceFetchError:
        message = f"{where}: {what}. {hint}"
        return PriceFetchError(message.replace(secret, "***") if secret else message)

    timeout = (settings.timeout_s, settings.timeout_s)
    try:
        answer = (client.get(url, params=params, headers=headers, timeout=timeout) if body is None else
                  client.post(url, params=params, headers=headers, json=body, timeout=timeout))
    except requests.exceptions.Timeout:
        raise fail(f"no answer within {settings.timeout_s:g} s") from None
    except requests.exceptions.ConnectionError as err:
        # Retries used up, or the deadline passed, reach requests as a connection error.
        given_up = err.args[0] if err.args else None
        timed_out = isinstance(getattr(given_up, "reason", None), ReadTimeoutError)
        if isinstance(given_up, DeadlinePassed):
            what = "no answer" if timed_out else "no connection"
            raise fail(f"{what} within {settings.timeout_s:g} s ({given_up.attempts} attempt(s), retries "
                       "included); check the network, the proxy or the DNS, or give a longer --timeout") from None
        if timed_out:
            raise fail(f"no answer within {settings.timeout_s:g} s, {settings.retries + 1} time(s)") from None
        raise fail(f"could not be reached after {settings.retries} retries; check the network, the proxy or "
                   "the DNS") from None
    except requests.exceptions.RequestException as err:
        raise fail(f"the request failed ({type(err).__name__})") from None
    if answer.status_code != 200:
        reason = _reason(answer)
        retried = f" after {settings.retries} retries" if answer.status_code in RETRY_STATUSES else ""
        raise fail(f"answered HTTP {answer.status_code}{retried}{': ' + reason if reason else ''}")
    try:
        return answer.json()
    except ValueError:
        raise fail("answered with something that is not JSON") from None


def _reason(answer: requests.Response) -> str:
    """The error text an API puts in its JSON body (Google: error.message; Azure: Error.Message), cut short."""
    try:
        body = answer.json()
    except ValueError:
        return ""
    if not isinstance(body, Mapping):
        return ""
    error = body.get("error") or body.get("Error")
    message = error.get("message") or error.get("Message") if isinstance(error, Mapping) else None
    return str(message)[:200] if message else ""
