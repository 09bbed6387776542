#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_otlp_decoder (standard library only).

Usage: fuzz/otlp_decoder_seeds.py fuzz/corpus/otlp

Each seed is one mode byte and a body: mode 0 followed by a protobuf
ExportMetricsServiceRequest, mode 1 followed by one the fuzzer gzips and
sends with Content-Encoding: gzip, mode 3 followed by bytes sent as a gzip
body as they are. The messages are built from the protobuf wire-format
rules and the OTLP field numbers, independently of the C++ classes.
"""
import gzip
import os
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wire_type):
    return varint(field << 3 | wire_type)


def ld(field, payload):
    """A length-delimited field (string, bytes, message, packed)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return key(field, 2) + varint(len(payload)) + payload


def vint(field, v):
    return key(field, 0) + varint(v)


def f64(field, v):
    return key(field, 1) + struct.pack("<Q", v)


def dbl(field, v):
    return key(field, 1) + struct.pack("<d", v)


# common.v1
def any_string(s):
    return ld(1, s)


def any_int(v):
    return vint(3, v)


def kv(k, value_bytes):
    return ld(1, k) + ld(2, value_bytes)


def attrs(field, pairs):
    out = b""
    for k, v in pairs:
        out += ld(field, kv(k, any_int(v) if isinstance(v, int) else any_string(v)))
    return out


# metrics.v1
def number_point(value, labels=(), as_int=False, flags=0):
    body = attrs(7, labels) + f64(3, 1_700_000_000_000_000_000)
    body += key(6, 1) + struct.pack("<q", value) if as_int else dbl(4, value)
    if flags:
        body += vint(8, flags)
    return body


def hist_point(bounds, counts, total_sum, labels=()):
    body = attrs(9, labels) + f64(3, 1_700_000_000_000_000_000) + f64(4, sum(counts))
    body += dbl(5, total_sum)
    body += ld(6, b"".join(struct.pack("<Q", c) for c in counts))
    body += ld(7, b"".join(struct.pack("<d", b) for b in bounds))
    return body


def summary_point(count, total, quantiles):
    body = f64(4, count) + dbl(5, total)
    for q, v in quantiles:
        body += ld(6, dbl(1, q) + dbl(2, v))
    return body


def metric(name, unit="", gauge=None, sum_=None, histogram=None, exp=None, summary=None):
    body = ld(1, name) + ld(2, "help of " + name) + ld(3, unit)
    if gauge is not None:
        body += ld(5, b"".join(ld(1, p) for p in gauge))
    if sum_ is not None:
        points, temporality, monotonic = sum_
        body += ld(7, b"".join(ld(1, p) for p in points) + vint(2, temporality) +
                   vint(3, 1 if monotonic else 0))
    if histogram is not None:
        points, temporality = histogram
        body += ld(9, b"".join(ld(1, p) for p in points) + vint(2, temporality))
    if exp is not None:
        body += ld(10, ld(1, f64(4, exp) + key(6, 0) + varint(2 * 3)) + vint(2, 2))
    if summary is not None:
        body += ld(11, b"".join(ld(1, p) for p in summary))
    return body


def request(resources):
    out = b""
    for res_attrs, metrics in resources:
        scope = ld(1, ld(1, "seed") + ld(2, "1.0"))
        scope += b"".join(ld(2, m) for m in metrics)
        out += ld(1, ld(1, attrs(1, res_attrs)) + ld(2, scope))
    return out


DELTA, CUMULATIVE = 1, 2
RESOURCE = [("service.name", "trainer"), ("service.namespace", "team"), ("rank", 3),
            ("node", "host1"), ("process.pid", 4242), ("host.arch", "amd64")]

SEEDS = {
    "empty": (0, b""),
    "gauge": (0, request([(RESOURCE, [
        metric("training.loss", "", gauge=[number_point(0.25, [("phase", "train")])]),
        metric("gpu.util", "1", gauge=[number_point(1, as_int=True)]),
    ])])),
    "sums": (0, request([(RESOURCE, [
        metric("training.steps", "{step}", sum_=([number_point(42, as_int=True)], CUMULATIVE, True)),
        metric("queue.depth", "{request}", sum_=([number_point(-3)], CUMULATIVE, False)),
        metric("tokens", "", sum_=([number_point(5, [("kind", "in")]),
                                    number_point(2, [("kind", "out")])], DELTA, True)),
    ])])),
    "histograms": (0, request([(RESOURCE, [
        metric("step.duration", "s", histogram=([hist_point([0.1, 1, 10], [1, 1, 1, 1], 55.5)],
                                                CUMULATIVE)),
        metric("ttft", "ms", histogram=([hist_point([10, 100], [2, 0, 1], 300, [("le", "x")])],
                                        DELTA)),
    ])])),
    "summary_exp": (0, request([(RESOURCE, [
        metric("rpc.latency", "s", summary=[summary_point(10, 2.5, [(0.5, 0.2), (0.99, 0.9)])]),
        metric("exp", "s", exp=4),
    ])])),
    "stale_and_invalid": (0, request([(RESOURCE, [
        metric("g", "", gauge=[number_point(1, flags=1), number_point(2, [("a", "2")])]),
        metric("h", "", histogram=([hist_point([2, 1], [1, 1, 1], 0)], CUMULATIVE)),
        metric("s", "", sum_=([number_point(1)], 0, True)),
    ])])),
    "two_resources": (0, request([
        ([("service.name", "a")], [metric("x", "By", gauge=[number_point(1)])]),
        ([("service.name", "b"), ("service.instance.id", "i-1")],
         [metric("x", "By", gauge=[number_point(2)])]),
    ])),
    "bad_utf8": (0, request([([("service.name", "svc")], [
        metric("bad", "", gauge=[number_point(1, [("k", "ok")])]),
    ])]).replace(b"bad", b"b\xffd")),
    "gzip_gauge": (1, request([(RESOURCE, [
        metric("training.loss", "", gauge=[number_point(0.5)])])])),
    "gzip_raw": (3, gzip.compress(b"\x0a\x00", mtime=0)),
    "truncated": (0, request([(RESOURCE, [metric("a", "", gauge=[number_point(1)])])])[:-3]),
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, (mode, body) in SEEDS.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(bytes([mode]) + body)


if __name__ == "__main__":
    main()
