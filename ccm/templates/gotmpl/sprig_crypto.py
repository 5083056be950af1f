"""Sprig's cryptographic functions (docs/crypto.md) that Python's standard library can do.

Hashes (``sha1sum``, ``sha256sum``, ``sha512sum``, ``adler32sum``), ``randBytes`` and
``derivePassword`` (scrypt + HMAC-SHA256, the Spectre algorithm) give Go's output.
``bcrypt`` and ``htpasswd`` (bcrypt in Sprig 3.3, upstream's version), key and
certificate generation and AES are refused with a message naming the function: the
standard library has no bcrypt, RSA/ECDSA/Ed25519 or AES, and ccm carries no crypto
dependency.
"""
from __future__ import annotations


from ccm.templates.gotmpl.gofunc import Row, refused
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Callable

_NO_CRYPTO = "Python's standard library has no {what}; generate it outside the template and pass it in as data"

_TEMPLATES = {
    "maximum": ["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
    "long": ["CvcvnoCvcvCvcv", "CvcvCvcvnoCvcv", "CvcvCvcvCvcvno", "CvccnoCvcvCvcv", "CvccCvcvnoCvcv",
             "CvccCvcvCvcvno", "CvcvnoCvccCvcv", "CvcvCvccnoCvcv", "CvcvCvccCvcvno", "CvcvnoCvcvCvcc",
             "CvcvCvcvnoCvcc", "CvcvCvcvCvccno", "CvccnoCvccCvcv", "CvccCvccnoCvcv", "CvccCvccCvcvno",
             "CvcvnoCvccCvcc", "CvcvCvccnoCvcc", "CvcvCvccCvccno", "CvccnoCvcvCvcc", "CvccCvcvnoCvcc",
             "CvccCvcvCvccno"],
    "medium": ["CvcnoCvc", "CvcCvcno"],
    "short": ["Cvcn"],
    "basic": ["aaanaaan", "aannaaan", "aaannaaa"],
    "pin": ["nnnn"],
}
_CHARACTERS = {
    "V": "AEIOU", "C": "BCDFGHJKLMNPQRSTVWXYZ", "v": "aeiou", "c": "bcdfghjklmnpqrstvwxyz",
    "A": "AEIOUBCDFGHJKLMNPQRSTVWXYZ", "a": "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
    "n": "0123456789", "o": "@&%?,=[]_:-+*$#!'^~;()/.",
    "x": "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
}
_SEED = b"com.lyndir.masterpassword"


def derive_password(counter: int, kind: str, password: str, user: str, site: str) -> str:
    """Sprig's ``derivePassword`` (the Spectre/Master Password algorithm)."""
    import hashlib
    import hmac
    import struct

    templates = _TEMPLATES.get(kind)
    if templates is None:
        return f"cannot find password template {kind}"
    user_b, site_b = user.encode("utf-8"), site.encode("utf-8")
    salt = _SEED + struct.pack(">I", len(user_b)) + user_b
    try:
        key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=32768, r=8, p=2, dklen=64,
                             maxmem=64 << 20)
    except (AttributeError, ValueError) as err:   # no OpenSSL scrypt on this host
        raise FuncError(f"derivePassword is not supported here: scrypt is unavailable ({err})") from None
    seed = hmac.new(key, _SEED + struct.pack(">I", len(site_b)) + site_b + struct.pack(">I", counter),
                    hashlib.sha256).digest()
    template = templates[seed[0] % len(templates)]
    return "".join(_CHARACTERS[ch][seed[i + 1] % len(_CHARACTERS[ch])] for i, ch in enumerate(template))


def _htpasswd(user: str, password: str) -> str:
    """Sprig 3.3's ``htpasswd`` (bcrypt only): the username check, then the refusal."""
    if ":" in user:
        return f"invalid username: {user}"
    raise FuncError("htpasswd is not supported by ccm: it hashes with bcrypt, and "
                    + _NO_CRYPTO.format(what="bcrypt"))


def _rand_bytes(count: int) -> str:
    import base64
    import secrets

    from ccm.expr import limits

    if count < 0:
        raise FuncError("runtime error: makeslice: len out of range")
    limits.check_string_size("randBytes", count)
    return base64.b64encode(secrets.token_bytes(count)).decode("ascii")


def _hex(algorithm: str) -> Callable[[str], str]:
    def digest(s: str) -> str:
        import hashlib
        return hashlib.new(algorithm, s.encode("utf-8")).hexdigest()
    return digest


def _adler32(s: str) -> str:
    import zlib
    return str(zlib.adler32(s.encode("utf-8")))


ROWS = [
    Row("sha1sum", _hex("sha1"), "s"),
    Row("sha256sum", _hex("sha256"), "s"),
    Row("sha512sum", _hex("sha512"), "s"),
    Row("adler32sum", _adler32, "s"),
    Row("htpasswd", _htpasswd, "ss"),
    Row("randBytes", _rand_bytes, "i"),
    Row("derivePassword", derive_password, "ussss"),
    refused("bcrypt", _NO_CRYPTO.format(what="bcrypt")),
] + [refused(name, _NO_CRYPTO.format(what=what)) for name, what in (
    ("genPrivateKey", "key generation"), ("buildCustomCert", "X.509 support"),
    ("genCA", "certificate generation"), ("genCAWithKey", "certificate generation"),
    ("genSelfSignedCert", "certificate generation"), ("genSelfSignedCertWithKey", "certificate generation"),
    ("genSignedCert", "certificate generation"), ("genSignedCertWithKey", "certificate generation"),
    ("encryptAES", "AES"), ("decryptAES", "AES"),
)]
