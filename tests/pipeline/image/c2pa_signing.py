"""A throwaway certificate chain and C2PA signing, for tests: nothing here is trusted."""

from __future__ import annotations

import datetime
import io

import c2pa
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SOURCE_TYPES = "http://cv.iptc.org/newscodes/digitalsourcetype/"


def _usage(*, sign_certs: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=sign_certs,
        crl_sign=sign_certs,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )


def throwaway_signer(common_name: str = "Test Signer") -> c2pa.Signer:
    """Return an ES256 signer with a fresh CA and leaf certificate (valid for a day)."""
    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.COMMON_NAME, cn),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Factbot Tests"),
            ]
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("Throwaway Root"))
        .issuer_name(name("Throwaway Root"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_usage(sign_certs=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name(common_name))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(sign_certs=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    chain = leaf.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(
        serialization.Encoding.PEM
    )
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    info = c2pa.C2paSignerInfo(c2pa.C2paSigningAlg.ES256, chain, private, None)
    return c2pa.Signer.from_info(info)


def sign_jpeg(jpeg: bytes, *, ai_made: bool, tool: str = "Some Image Model") -> bytes:
    """Return jpeg with a signed C2PA manifest saying it was created (by a model if ai_made)."""
    source = "trainedAlgorithmicMedia" if ai_made else "digitalCapture"
    action = {
        "action": "c2pa.created",
        "softwareAgent": {"name": tool},
        "digitalSourceType": SOURCE_TYPES + source,
    }
    manifest = {
        "claim_generator_info": [{"name": "factbot-tests", "version": "1"}],
        "title": "generated.jpg",
        "assertions": [{"label": "c2pa.actions", "data": {"actions": [action]}}],
    }
    out = io.BytesIO()
    with throwaway_signer() as signer, c2pa.Builder.from_json(manifest) as builder:
        builder.sign(signer, "image/jpeg", io.BytesIO(jpeg), out)
    return out.getvalue()
