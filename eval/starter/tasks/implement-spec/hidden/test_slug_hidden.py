import unittest

from slug import slugify


class TestSlugify(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(slugify("  Hello, World!  "), "hello-world")
        self.assertEqual(slugify("Go 1.25 -- released"), "go-1-25-released")
        self.assertEqual(slugify("ALREADY-slugged"), "already-slugged")

    def test_edges(self):
        self.assertEqual(slugify(""), "")
        self.assertEqual(slugify("?!..."), "")
        self.assertEqual(slugify("naïve café"), "na-ve-caf")


if __name__ == "__main__":
    unittest.main()
