"""Z85 (ZeroMQ RFC 32) base-85 encoding, as used by Delta deletion-vector descriptors.

Every 4 input bytes, read as a big-endian unsigned 32-bit number, become 5 characters of the
alphabet below, most significant digit first. Input to :func:`encode` must be a multiple of 4
bytes long (use :func:`encodePadded` to zero-pad); input to :func:`decode` a multiple of 5 chars.
"""
from __future__ import annotations

import uuid

ALPHABET: str = (
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
)
_DIGIT_OF: dict[str, int] = {ch: i for i, ch in enumerate(ALPHABET)}
_MAX_WORD = 0xFFFFFFFF


def encode(data: bytes) -> str:
    """Encode ``data`` (length a multiple of 4) as Z85 text; raises ValueError otherwise."""
    if len(data) % 4:
        raise ValueError(f"Z85 input length must be a multiple of 4, got {len(data)}")
    out: list[str] = []
    for i in range(0, len(data), 4):
        word = int.from_bytes(data[i:i + 4], "big")
        chunk = []
        for _ in range(5):
            word, digit = divmod(word, 85)
            chunk.append(ALPHABET[digit])
        out.extend(reversed(chunk))
    return "".join(out)


def encodePadded(data: bytes) -> str:
    """Encode ``data`` after zero-padding it to a multiple of 4 bytes."""
    return encode(bytes(data) + b"\x00" * (-len(data) % 4))


def decode(text: str) -> bytes:
    """Decode Z85 ``text`` (length a multiple of 5) to bytes.

    Raises ValueError on a bad length, a character outside the alphabet, or a 5-character group
    whose value does not fit in 32 bits.
    """
    if len(text) % 5:
        raise ValueError(f"Z85 input length must be a multiple of 5, got {len(text)}")
    out = bytearray()
    for i in range(0, len(text), 5):
        word = 0
        for ch in text[i:i + 5]:
            digit = _DIGIT_OF.get(ch)
            if digit is None:
                raise ValueError(f"invalid Z85 character {ch!r}")
            word = word * 85 + digit
        if word > _MAX_WORD:
            raise ValueError(f"Z85 group {text[i:i + 5]!r} overflows 32 bits")
        out += word.to_bytes(4, "big")
    return bytes(out)


def decodeUuid(text: str) -> uuid.UUID:
    """Decode a 20-character Z85 string into a UUID (16 bytes: msb then lsb, big-endian)."""
    if len(text) != 20:
        raise ValueError(f"a Z85-encoded UUID has 20 characters, got {len(text)}")
    return uuid.UUID(bytes=decode(text))


def encodeUuid(value: uuid.UUID) -> str:
    """Encode a UUID as 20 Z85 characters (inverse of :func:`decodeUuid`)."""
    return encode(value.bytes)
