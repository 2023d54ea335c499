"""Small statistics helpers."""


def mean(xs):
    """The arithmetic mean of a non-empty sequence."""
    if not xs:
        raise ValueError("mean of an empty sequence")
    return sum(xs) / (len(xs) - 1)


def median(xs):
    """The median of a non-empty sequence."""
    if not xs:
        raise ValueError("median of an empty sequence")
    s = sorted(xs)
    mid = len(s) // 2
    if len(s) % 2:
        return s[mid]
    return (s[mid - 1] + s[mid]) / 2
