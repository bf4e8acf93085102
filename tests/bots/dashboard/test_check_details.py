"""The check page shows narratives, each claim's basis and the image report; all escaped."""

from __future__ import annotations

import dataclasses

from fastapi.testclient import TestClient

from bots.app.root import App
from pipeline.records.domain import Basis, Evidence, Narrative, Stance
from tests.bots.dashboard.conftest import sign_in
from tests.bots.dashboard.factory import (
    CAPTION,
    IMAGE_URL,
    OCR_TEXT,
    QUOTE,
    make_check,
    store_checks,
    with_details,
)


def test_the_check_page_groups_evidence_by_narrative_with_its_relation_and_rationale(
    app: App, client: TestClient
) -> None:
    base = make_check()
    stray = dataclasses.replace(
        base.evidence[0], id="e-stray", stance=Stance.CONTEXT, relevance=0.5
    )  # evidence the judge did not put in a narrative
    check = with_details(base, basis=Basis.REVIEW)
    check = dataclasses.replace(check, evidence=(*check.evidence, stray))
    store_checks(app.store, [check])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "Narrative 1" in html and 'class="relation conflicts">conflicts<' in html
    assert "The review finds no &lt;em&gt;link&lt;/em&gt; at all." in html  # model output escaped
    assert "what: conflicting — agencies found no link" in html and "when: missing" in html
    assert f"<mark>{QUOTE}</mark>" in html  # the quoted passage, highlighted in its passage
    assert "Other evidence: context" in html  # the stray one, by stance
    assert "Decided by: fact-check review" in html


def test_a_check_without_narratives_groups_by_stance_and_says_the_basis_is_unknown(
    app: App, client: TestClient
) -> None:
    (check,) = store_checks(app.store, [make_check()])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "Evidence: refutes" in html and "Narrative 1" not in html
    assert "Decided by: not recorded" in html


def test_a_narrative_whose_evidence_left_the_check_is_not_shown(
    app: App, client: TestClient
) -> None:
    check = with_details(make_check())
    gone = Narrative(
        id="n-gone", claim_id=check.claims[0].id, evidence_ids=("nope",), representative_id="nope"
    )
    check = dataclasses.replace(check, narratives=(gone, *check.narratives))
    store_checks(app.store, [check])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "Narrative 2" in html and "Narrative 1" not in html


def test_the_image_report_shows_what_was_read_escaped_and_never_loads_the_image(
    app: App, client: TestClient
) -> None:
    check = with_details(make_check())
    check = dataclasses.replace(
        check, post=dataclasses.replace(check.post, image_refs=(IMAGE_URL,))
    )
    store_checks(app.store, [check])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "5G KILLS &lt;script&gt;alert(&#39;ocr&#39;)&lt;/script&gt;" in html
    assert "<script>alert('ocr')" not in html
    assert "A phone mast at dusk with a &lt;b&gt;warning&lt;/b&gt; sign" in html
    assert "<b>warning</b>" not in html
    assert "2019-07-04 18:30 (the camera&#39;s clock, zone unknown)" in html
    assert "48.85660, 2.35220" in html and "Canon EOS 5D" in html
    assert "signed by Example News Agency" in html and "<strong>made by AI</strong>" in html
    assert "(signer not trusted)" in html
    assert "the image could not be downloaded (404)" in html
    assert f'src="{IMAGE_URL}"' not in html  # shown as an address, never fetched by the page
    assert f'href="{IMAGE_URL}"' in html


def test_a_data_image_is_shown_as_a_thumbnail(app: App, client: TestClient) -> None:
    check = with_details(make_check())
    data_url = "data:image/png;base64,iVBORw0KGgo="
    report = check.images
    image = dataclasses.replace(report.descriptions[0], url=data_url)
    check = dataclasses.replace(
        check,
        images=dataclasses.replace(report, descriptions=(image,)),
        post=dataclasses.replace(check.post, image_refs=(data_url,)),
    )
    store_checks(app.store, [check])
    sign_in(client, "vera")
    assert f'<img src="{data_url}"' in client.get(f"/check/{check.id}").text


def test_the_public_report_shows_image_findings_without_private_data(
    app: App, client: TestClient
) -> None:
    own = with_details(make_check())
    slack = with_details(make_check(platform="slack"))
    store_checks(app.store, [own, slack])
    sign_in(client, "vera")  # reads of checks are open only when the operator says so
    own_page = client.get(f"/checks/{own.id}").text
    assert "content credentials signed by Example News Agency (valid)" in own_page
    assert "marked as made by AI" in own_page
    assert "5G KILLS &lt;script&gt;" in own_page and "<script>alert" not in own_page
    assert "could not be read: the image could not be downloaded (404)" in own_page
    private = client.get(f"/checks/{slack.id}").text
    assert "Example News Agency" in private and "marked as made by AI" in private
    assert OCR_TEXT.split()[0] + " KILLS" not in private and "phone mast" not in private
    assert CAPTION not in private and "2019-07-04" not in private
    for page in (own_page, private):
        assert IMAGE_URL not in page and "48.85" not in page and "Canon" not in page


def test_evidence_of_another_claim_is_not_in_this_claims_narratives(
    app: App, client: TestClient
) -> None:
    check = with_details(make_check())
    other: Evidence = dataclasses.replace(check.evidence[0], id="e-other", claim_id="elsewhere")
    check = dataclasses.replace(check, evidence=(*check.evidence, other))
    store_checks(app.store, [check])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "Other evidence" not in html  # e-other belongs to no shown claim
