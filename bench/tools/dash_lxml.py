#!/usr/bin/env python3
"""The peer of `hlscache-bench dash`: the same MPD rewrite with lxml (parse, map every SegmentURL@media and
Initialization@sourceURL that is not a plain relative path under a BaseURL to the proxy form, serialize), median of
31 runs after 5 warm-ups. Prints `dash_rewrite_lxml_ms`."""
import statistics
import sys
import time
from urllib.parse import urljoin

from lxml import etree

DOCUMENT = "https://origin.example.com/vod/manifest.mpd"
BASE = "http://127.0.0.1:8080"
NS = "{urn:mpeg:dash:schema:mpd:2011}"


def proxied(url):
    scheme, rest = url.split("://", 1)
    return f"{BASE}/o/{scheme}/{rest}"


def rewrite(data):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True)
    root = etree.fromstring(data, parser)
    for element in root.iter(NS + "SegmentURL", NS + "Initialization"):
        name = "media" if element.tag == NS + "SegmentURL" else "sourceURL"
        value = element.get(name)
        if value is not None:
            element.set(name, proxied(urljoin(DOCUMENT, value)))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def main():
    data = open(sys.argv[1], "rb").read()
    for _ in range(5):
        rewrite(data)
    samples = []
    for _ in range(31):
        start = time.perf_counter()
        rewrite(data)
        samples.append((time.perf_counter() - start) * 1000)
    print(f"dash_rewrite_lxml_ms {statistics.median(samples):.2f}")


if __name__ == "__main__":
    main()
