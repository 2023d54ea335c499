import math
import unittest

from shapes import circle_area, rect_area


class TestShapes(unittest.TestCase):
    def test_areas(self):
        self.assertEqual(rect_area(2, 3), 6)
        self.assertAlmostEqual(circle_area(1), math.pi)

    def test_validation(self):
        for bad in (0, -1):
            with self.assertRaises(ValueError):
                rect_area(bad, 1)
            with self.assertRaises(ValueError):
                circle_area(bad)
        with self.assertRaises(TypeError):
            rect_area("2", 1)


if __name__ == "__main__":
    unittest.main()
