"""Object keys that tend to break signing proxies (encoding, slashes, reserved characters).

The self-check proves moto (behind nginx) stores and lists each of them correctly with botocore's own signing,
so a proxy test that fails on one of them points at presignd, not at the test servers.
"""

SPECIAL_KEYS = [
    "with space.txt",
    "unicode-ünïcödé-ελληνικά-кириллица-日本語-עברית-한국어-😀.bin",
    "plus+sign",
    "percent%25-and-%",
    "equals=sign",
    "amp&ersand",
    "double//slash",
    "trailing-slash/",
    "mixed ?#[]@!$'()*,;~ chars",
]
