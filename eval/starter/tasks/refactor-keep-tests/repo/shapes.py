"""Areas of simple shapes."""

import math


def rect_area(width, height):
    for v in (width, height):
        if not isinstance(v, (int, float)):
            raise TypeError("dimensions must be numbers")
        if v <= 0:
            raise ValueError("dimensions must be positive")
    return width * height


def circle_area(radius):
    for v in (radius,):
        if not isinstance(v, (int, float)):
            raise TypeError("dimensions must be numbers")
        if v <= 0:
            raise ValueError("dimensions must be positive")
    return math.pi * radius * radius
