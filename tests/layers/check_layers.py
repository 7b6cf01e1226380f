#!/usr/bin/env python3
"""Checks every #include under lib/ against the layers the tree is built in.

    check_layers.py ROOT                 prints each `file:line: <layer> may not include <header>`
                                         and exits 1 when there is one (0: the tree keeps its layers)
    check_layers.py ROOT --expect H ...  the self-test: exits 0 only when the check fails and names
                                         every header H (tests/layers/fixture/)

The compiler cannot keep the layers honest: SOCI, Beast and libpq sit in /usr/include where any
target reaches them, and core must include store/store.hpp but not the SOCI side beside it. Each
layer may include its own folder, C++ and POSIX headers, and what its row below allows; a layer
inherits the row of the one it builds on (http -> ops -> core -> config -> model; store -> config).
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

# POSIX and C headers dlq may use in any layer (C++'s own headers have no extension).
POSIX = re.compile(r'^(sys|netinet|arpa)/[a-z_]+\.h$|^(unistd|fcntl|poll|signal|errno|dirent|'
                   r'sched|pthread|netdb|time|string|stdlib|stdio|stdint|limits|locale)\.h$')


def prefixes(*names):
    return [("prefix", n) for n in names]


# What each layer may include beyond its own folder, C++ and POSIX: ("prefix", p) allows a header
# path starting with p; ("exact", h) one header; ("deny", p) forbids what a prefix allowed.
OWN = {
    "model": prefixes("boost/system", "boost/json", "boost/url", "spdlog/", "openssl/"),
}
OWN["config"] = OWN["model"] + prefixes("model/")
OWN["store"] = OWN["config"] + prefixes("config/", "soci/", "boost/asio") + [
    ("exact", "sqlite3.h"), ("exact", "libpq-fe.h")]
OWN["core"] = OWN["config"] + prefixes("config/", "boost/asio") + [
    ("deny", "boost/asio/ip"), ("deny", "boost/asio/ssl"),
    ("exact", "store/store.hpp"), ("exact", "store/desk.hpp"), ("exact", "store/change.hpp")]
OWN["ops"] = [r for r in OWN["core"] if r[0] != "deny"] + prefixes(
    "core/", "boost/beast", "boost/asio", "boost/url")
OWN["http"] = OWN["ops"] + prefixes("ops/")


def allowed(layer, header):
    if header.startswith(layer + "/"):
        return True
    if "/" not in header and "." not in header:  # <vector>, <cstdio>
        return True
    if POSIX.match(header):
        return True
    rules = OWN[layer]
    if any(kind == "deny" and header.startswith(p) for kind, p in rules):
        return False
    return any((kind == "prefix" and header.startswith(p)) or (kind == "exact" and header == p)
               for kind, p in rules)


def violations(root):
    out = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h") or not path.is_file():
            continue
        layer = path.relative_to(root).parts[0]
        if layer not in OWN:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and not allowed(layer, m.group(2)):
                out.append(f"{path}:{number}: {layer} may not include {m.group(2)}")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--expect", action="append", default=[],
                        help="self-test: a header the check must name")
    args = parser.parse_args()
    found = violations(args.root)
    for line in found:
        print(line)
    if not args.expect:
        print(f"layers: {len(found)} include(s) out of place under {args.root}")
        return 1 if found else 0
    missing = [h for h in args.expect if not any(line.endswith(" include " + h) for line in found)]
    for h in missing:
        print(f"layers self-test: the check did not name {h}")
    return 0 if found and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
