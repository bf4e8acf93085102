"""EXIF and C2PA read with real Pillow and c2pa-python from generated images."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.image.metadata import read_credentials, read_exif, read_metadata_bytes
from tests.pipeline.image.c2pa_signing import sign_jpeg
from tests.pipeline.image.images import encode, exif_jpeg, photo


def test_exif_capture_time_gps_camera_and_software() -> None:
    data = exif_jpeg(
        datetime(2012, 10, 29, 18, 30, 5),
        lat=40.7128,
        lon=-74.006,
        camera=("Canon", "Canon EOS 5D Mark III"),
        software="Adobe Photoshop CS6",
    )
    exif = read_exif(data)
    assert exif is not None
    assert exif.captured_at == datetime(
        2012, 10, 29, 18, 30, 5, tzinfo=timezone(timedelta(hours=-5))
    )
    assert exif.latitude is not None and abs(exif.latitude - 40.7128) < 1e-3
    assert exif.longitude is not None and abs(exif.longitude + 74.006) < 1e-3
    assert exif.camera == "Canon Canon EOS 5D Mark III"
    assert exif.software == "Adobe Photoshop CS6"


def test_no_exif_is_none() -> None:
    assert read_exif(encode(photo(), "PNG")) is None
    assert read_exif(b"not an image") is None


def test_c2pa_manifest_made_with_a_throwaway_certificate() -> None:
    signed = sign_jpeg(encode(photo(), "JPEG"), ai_made=True)
    credentials = read_credentials(signed, "JPEG")
    assert credentials is not None
    assert credentials.signer == "Test Signer / Factbot Tests"
    assert credentials.claim_generator == "factbot-tests"
    assert credentials.actions == ("c2pa.created",)
    assert credentials.ai_generated
    assert credentials.valid and not credentials.trusted  # our own root is trusted by no one


def test_c2pa_without_ai_source_is_not_ai_generated() -> None:
    signed = sign_jpeg(encode(photo(), "JPEG"), ai_made=False)
    credentials = read_credentials(signed, "JPEG")
    assert credentials is not None and not credentials.ai_generated


def test_tampered_c2pa_image_is_not_valid() -> None:
    signed = bytearray(sign_jpeg(encode(photo(), "JPEG"), ai_made=True))
    signed[-200] ^= 0xFF  # a byte of the picture data, after the manifest
    credentials = read_credentials(bytes(signed), "JPEG")
    assert credentials is not None
    assert not credentials.valid and credentials.problems


def test_plain_images_have_no_credentials() -> None:
    assert read_credentials(encode(photo(), "JPEG"), "JPEG") is None
    assert read_credentials(encode(photo(), "PNG"), "PNG") is None
    assert read_credentials(encode(photo(), "BMP"), "BMP") is None
    assert read_metadata_bytes(encode(photo(), "JPEG"), "JPEG").credentials is None
