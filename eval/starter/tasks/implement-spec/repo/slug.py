"""URL slugs from titles."""


def slugify(title):
    raise NotImplementedError
