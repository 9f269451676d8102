"""SeaHash, the 64-bit hash Vector's ``sample`` applies to a ``key_field`` value.

Written from the published algorithm (four lanes of 64-bit words, each word
xor-ed into a lane and diffused by a multiply-shift-multiply, the lanes and
the length folded at the end), so that ``sample`` with a ``key_field`` keeps
exactly the keys Vector keeps. The only PyPI binding is an unmaintained
native wheel for a few Python versions, hence this module; the sampler caches
results per value, so its cost is paid once per distinct key.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
_PRIME = 0x6EED0E9DA4D94A4F
_SEEDS = (0x16F11FE89B0D677C, 0xB480A793D8E6C86C, 0x6FE2E5AAF078EBC9, 0x14F994A4C5259381)


def _diffuse(x: int) -> int:
    x = (x * _PRIME) & _MASK
    x ^= (x >> 32) >> (x >> 60)
    return (x * _PRIME) & _MASK


def seahash(data: bytes) -> int:
    """``seahash::hash(data)`` of the Rust crate (default seeds)."""
    lanes = list(_SEEDS)
    lane = 0
    from_bytes = int.from_bytes
    for start in range(0, len(data), 8):
        word = from_bytes(data[start : start + 8], "little")  # a short last word is zero-padded
        lanes[lane] = _diffuse(lanes[lane] ^ word)
        lane = (lane + 1) & 3
    # the lanes rotate as words go in: word i lands in lane i % 4, and the
    # fold below is symmetric, so only the xor of the four matters
    return _diffuse(lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3] ^ len(data))
