"""Loopback stand-ins for the reverse image search APIs, each speaking its documented format.

    with serve() as server:
        tineye = FakeTinEye(server)
        tineye.appearances.append(Appearance(page_url, image_url, crawl_date="2012-05-01"))
        tineye.fail_next(tineye.rate_limited(retry_after=1))   # answered before the real one
        ... TinEyeSearch(http, api_key=SecretStr(tineye.key), base_url=tineye.base) ...

Each stand-in checks what the real API checks before answering: the key where that API takes
it, the parameters and body it requires (Google Lens's `engine` and `url`; Vision's
`WEB_DETECTION` feature and `imageUri` or base64 `content`; TinEye's `image_url` or a multipart
`image_upload`), and answers a bad request with that API's own error shape. It records the
pictures uploaded to it (`uploads`). Scripted answers (`fail_next`) come first: a 429 with
Retry-After, a 500, malformed JSON, or any `Response`. With no appearances it answers the way
that API says "nothing found".
"""

from __future__ import annotations

import base64
import binascii
import threading
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import default as email_policy
from typing import Any, Literal

from tests.support.httpserver import JSON, LocalServer, Request, Response, json_response

KEY = "test-reverse-key-0123456789"


@dataclass(frozen=True)
class Appearance:
    """One page carrying the picture, as a stand-in reports it."""

    page_url: str
    image_url: str
    title: str = ""
    date: str | None = None  # SerpApi's `date` ("2 years ago", "Mar 3, 2012")
    crawl_date: str | None = None  # TinEye's `crawl_date` (YYYY-MM-DD)
    match: Literal["full", "partial", "similar", "none"] = "full"  # how the API matched it
    domain: str = "example.org"


class FakeReverseAPI:
    """One provider's API on a loopback server: scripted failures first, then real answers."""

    path = "/"
    method = "GET"

    def __init__(self, server: LocalServer, *, key: str = KEY) -> None:
        self.server = server
        self.key = key
        self.appearances: list[Appearance] = []
        self.uploads: list[bytes] = []
        self._script: list[Response] = []
        self._lock = threading.Lock()
        server.route(self.path, self._answer, method=self.method)

    @property
    def base(self) -> str:
        """Return the base URL to configure the provider with."""
        return self.server.base

    @property
    def requests(self) -> list[Request]:
        """Return the requests this API received, in order."""
        return [r for r in self.server.requests if r.path == self.path]

    def fail_next(self, *responses: Response) -> None:
        """Answer the next requests with responses, before any real answer."""
        with self._lock:
            self._script.extend(responses)

    def rate_limited(self, retry_after: float = 1) -> Response:
        """Return the API's 429 answer, asking to retry after retry_after seconds."""
        body = self.error_body(429, "rate limit exceeded")
        return json_response(body, 429, headers={"Retry-After": str(int(retry_after))})

    def server_error(self) -> Response:
        """Return the API's 500 answer."""
        return json_response(self.error_body(500, "internal error"), 500)

    @staticmethod
    def json(value: Any, status: int = 200) -> Response:
        """Return value as the API's JSON answer."""
        return json_response(value, status)

    @staticmethod
    def malformed() -> Response:
        """Return a 200 answer whose body is not JSON."""
        return Response(200, b'{"results": [ {"broken', JSON)

    def _answer(self, request: Request) -> Response:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        problem = self.refusal(request)
        if problem is not None:
            return problem
        return json_response(self.found(request) if self.appearances else self.nothing())

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """Return the API's error body."""
        raise NotImplementedError

    def refusal(self, request: Request) -> Response | None:
        """Return the API's answer to a request it refuses, or None to answer it."""
        raise NotImplementedError

    def found(self, request: Request) -> dict[str, Any]:
        """Return the API's answer to request, listing the appearances."""
        raise NotImplementedError

    def nothing(self) -> dict[str, Any]:
        """Return the API's answer when nothing was found."""
        raise NotImplementedError


class FakeSerpApi(FakeReverseAPI):
    """SerpApi's `/search.json?engine=google_lens`: `exact_matches` / `visual_matches`."""

    path = "/search.json"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """Return SerpApi's error body: a single `error` string."""
        return {"error": message}

    def refusal(self, request: Request) -> Response | None:
        """Refuse a request without the key, the engine or the image URL as SerpApi does."""
        query = {k: v[0] for k, v in request.query.items()}
        if query.get("api_key") != self.key:
            return json_response(
                {"error": "Invalid API key. Your API key should be here: ..."}, 401
            )
        if query.get("engine") != "google_lens" or not query.get("url"):
            return json_response({"error": "Missing query `url` parameter."}, 400)
        return None

    def found(self, request: Request) -> dict[str, Any]:
        """Return Google Lens's matches: exact ones, and visual ones unless type excludes them."""
        kind = request.query.get("type", ["all"])[0]
        exact = [a for a in self.appearances if a.match in ("full", "partial")]
        visual = [a for a in self.appearances if a.match == "similar"]
        body: dict[str, Any] = {"search_metadata": {"status": "Success"}}
        if kind in ("exact_matches", "all") and exact:
            body["exact_matches"] = [
                {
                    "position": i,
                    "title": a.title,
                    "source": a.domain,
                    "link": a.page_url,
                    "thumbnail": a.image_url,
                    **({"date": a.date} if a.date else {}),
                    "actual_image_width": 480,
                    "actual_image_height": 360,
                }
                for i, a in enumerate(exact, start=1)
            ]
        if kind in ("visual_matches", "all") and visual:
            body["visual_matches"] = [
                {
                    "position": i,
                    "title": a.title,
                    "link": a.page_url,
                    "source": a.domain,
                    "thumbnail": a.image_url,
                    "image": a.image_url,
                }
                for i, a in enumerate(visual, start=1)
            ]
        if len(body) == 1:
            return self.nothing()
        return body

    def nothing(self) -> dict[str, Any]:
        """Return SerpApi's empty answer: HTTP 200 with an `error` saying so."""
        return {
            "search_metadata": {"status": "Success"},
            "error": "Google Lens hasn't returned any results for this query.",
        }


class FakeVision(FakeReverseAPI):
    """Cloud Vision's `POST /v1/images:annotate` with the WEB_DETECTION feature."""

    path = "/v1/images:annotate"
    method = "POST"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """Return Google's error body: `error.code`, `error.message`, `error.status`."""
        names = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 400: "INVALID_ARGUMENT"}
        return {"error": {"code": status, "message": message, "status": names.get(status, "")}}

    def refusal(self, request: Request) -> Response | None:
        """Refuse a request without the key, the feature or an image as Vision does."""
        if request.headers.get("x-goog-api-key") != self.key:
            body = self.error_body(403, "The request is missing a valid API key.")
            return json_response(body, 403)
        try:
            (one,) = request.json()["requests"]
            features = [f["type"] for f in one["features"]]
            image = one["image"]
        except (ValueError, KeyError, TypeError):
            return json_response(self.error_body(400, "Invalid JSON payload received."), 400)
        if "WEB_DETECTION" not in features:
            return json_response(self.error_body(400, "No feature requested."), 400)
        if "content" in image:
            try:
                self.uploads.append(base64.b64decode(image["content"], validate=True))
            except (binascii.Error, ValueError):
                return json_response(
                    {"responses": [{"error": {"code": 3, "message": "Bad image data."}}]}
                )
        elif not image.get("source", {}).get("imageUri"):
            return json_response({"responses": [{"error": {"code": 3, "message": "No image."}}]})
        return None

    def found(self, request: Request) -> dict[str, Any]:
        """Return web detection: pages with their full or partial matching images."""
        pages = []
        for a in self.appearances:
            if a.match == "similar":
                continue
            page: dict[str, Any] = {"url": a.page_url, "pageTitle": f"<b>{a.title}</b>"}
            if a.match == "full":
                page["fullMatchingImages"] = [{"url": a.image_url}]
            elif a.match == "partial":
                page["partialMatchingImages"] = [{"url": a.image_url}]
            pages.append(page)
        similar = [{"url": a.image_url} for a in self.appearances if a.match == "similar"]
        web: dict[str, Any] = {
            "webEntities": [{"entityId": "/m/0", "score": 0.5, "description": "Flood"}],
            "bestGuessLabels": [{"label": "flood", "languageCode": "en"}],
        }
        if pages:
            web["pagesWithMatchingImages"] = pages
            web["fullMatchingImages"] = [
                {"url": a.image_url} for a in self.appearances if a.match == "full"
            ]
        if similar:
            web["visuallySimilarImages"] = similar
        return {"responses": [{"webDetection": web}]}

    def nothing(self) -> dict[str, Any]:
        """Return Vision's answer for an image it found nowhere."""
        return {"responses": [{"webDetection": {}}]}


class FakeTinEye(FakeReverseAPI):
    """TinEye's `/rest/search/`: GET with `image_url`, or POST with `image_upload`."""

    path = "/rest/search/"

    def __init__(self, server: LocalServer, *, key: str = KEY) -> None:
        super().__init__(server, key=key)
        server.route(self.path, self._answer, method="POST")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """Return TinEye's error body: `code` and `messages`."""
        return {"code": status, "messages": [message], "results": {}}

    def refusal(self, request: Request) -> Response | None:
        """Refuse a request without the key or an image as TinEye does."""
        if request.headers.get("x-api-key") != self.key:
            return json_response(self.error_body(403, "Invalid API key"), 403)
        if request.method == "POST":
            fields = _multipart(request)
            if "image_upload" not in fields:
                return json_response(self.error_body(400, "Missing image_upload"), 400)
            self.uploads.append(fields["image_upload"])
        elif not request.query.get("image_url"):
            return json_response(self.error_body(400, "Missing image_url or image_upload"), 400)
        return None

    def found(self, request: Request) -> dict[str, Any]:
        """Return TinEye's matches, one per appearance, each with its backlink."""
        matches = [
            {
                "image_url": f"{self.base}/tineye-copy/{i}.jpg",
                "domain": a.domain,
                "score": 88.5,
                "width": 480,
                "height": 360,
                "size": 172800,
                "format": "JPEG",
                "filesize": 40000,
                "overlay": f"overlay/abc/{i}?m21=1",
                "tags": [],
                "backlinks": [
                    {"url": a.image_url, "backlink": a.page_url, "crawl_date": a.crawl_date or ""}
                ],
            }
            for i, a in enumerate(self.appearances)
            if a.match != "similar"
        ]
        return {
            "code": 200,
            "messages": [],
            "stats": {"total_results": len(matches), "total_backlinks": len(matches)},
            "results": {"total_results": len(matches), "matches": matches},
        }

    def nothing(self) -> dict[str, Any]:
        """Return TinEye's answer when the picture was found nowhere."""
        return {"code": 200, "messages": [], "stats": {}, "results": {"matches": []}}


def _multipart(request: Request) -> dict[str, bytes]:
    """Return the fields of a multipart/form-data body."""
    head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
    message = BytesParser(policy=email_policy).parsebytes(head + request.body)
    fields: dict[str, bytes] = {}
    if not message.is_multipart():
        return fields
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload
    return fields
