"""A small logfmt parser: `key=value key="quoted \\"value\\"" flag`."""

from __future__ import annotations


def parse(line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i] == " ":
            i += 1
        start = i
        while i < n and line[i] not in "= ":
            i += 1
        key = line[start:i]
        if not key:
            i += 1
            continue
        if i < n and line[i] == "=":
            i += 1
            if i < n and line[i] == '"':
                i += 1
                buf = []
                while i < n and line[i] != '"':
                    if line[i] == "\\" and i + 1 < n:
                        i += 1
                        buf.append({"n": "\n", "t": "\t", "r": "\r"}.get(line[i], line[i]))
                    else:
                        buf.append(line[i])
                    i += 1
                i += 1  # closing quote
                out[key] = "".join(buf)
            else:
                start = i
                while i < n and line[i] != " ":
                    i += 1
                out[key] = line[start:i]
        else:
            out[key] = ""
    return out
