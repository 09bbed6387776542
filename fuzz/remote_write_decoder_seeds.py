#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_remote_write_decoder (standard library only).

Usage: fuzz/remote_write_decoder_seeds.py fuzz/corpus/remote_write_decoder

Each seed is one mode byte and a WriteRequest: mode 0 followed by a snappy
block (literal elements only, which every decoder must accept), mode 1
followed by the bare protobuf. The messages are built from the protobuf
wire-format rules, independently of the C++ encoder.
"""
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


def length_delimited(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def label(name, value):
    return length_delimited(1, length_delimited(1, name.encode()) + length_delimited(2, value.encode()))


def sample(value_bits, t):
    return length_delimited(2, key(1, 1) + struct.pack("<Q", value_bits) + key(2, 0) + varint(t))


def double_bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def series(labels, samples, extra=b""):
    body = b"".join(label(n, v) for n, v in labels)
    body += b"".join(sample(b, t) for b, t in samples)
    return length_delimited(1, body + extra)


def snappy_literals(raw):
    out = bytearray(varint(len(raw)))
    for i in range(0, len(raw), 60):
        chunk = raw[i:i + 60]
        out.append((len(chunk) - 1) << 2)
        out += chunk
    return bytes(out)


STALE = 0x7FF0000000000002
T0 = 1_700_000_000_000

MESSAGES = {
    "empty": b"",
    "one_sample": series([("__name__", "up"), ("job", "a")], [(double_bits(1.0), T0)]),
    "specials": series(
        [("__name__", "gpu_temp"), ("gpu", "0"), ("host", "n\u00e9ud")],
        [(STALE, T0), (double_bits(float("inf")), T0 + 1), (double_bits(float("-inf")), T0 + 2),
         (0x7FF8000000000001, T0 + 3), (double_bits(-0.0), -1)]),
    "two_series": series([("__name__", "a")], [(double_bits(i), T0 + i) for i in range(20)])
    + series([("__name__", "b"), ("x", "y")], [(double_bits(0.5), T0)]),
    # Metadata (field 3) and an exemplar (series field 3): both ignored.
    "metadata_exemplar": series(
        [("__name__", "c_total")], [(double_bits(3.0), T0)],
        extra=length_delimited(3, label("trace_id", "abc") + key(2, 1) + struct.pack("<d", 1.0)))
    + length_delimited(3, key(1, 0) + varint(1) + length_delimited(2, b"c_total")),
    # Unknown fields: a group (wire type 3) with a nested group, a fixed32.
    "groups": series([("__name__", "g")], [(double_bits(2.0), T0)],
                     extra=key(9, 3) + key(1, 0) + varint(5) + key(2, 3) + key(2, 4) + key(9, 4)
                     + key(10, 5) + b"\x01\x02\x03\x04"),
    # A native histogram: rejected.
    "histogram": series([("__name__", "h")], [], extra=length_delimited(4, key(1, 0) + varint(4))),
    # Unsorted labels: rejected.
    "unsorted": series([("job", "a"), ("__name__", "up")], [(double_bits(1.0), T0)]),
}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, raw in MESSAGES.items():
        with open(os.path.join(out_dir, name + ".snappy"), "wb") as f:
            f.write(b"\x00" + snappy_literals(raw))
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(b"\x01" + raw)


if __name__ == "__main__":
    main()
