"""Remote-write 1.0 request bodies built by hand (stdlib only): the
protobuf wire format of prometheus.WriteRequest, and the snappy raw block
format -- both valid encodings and hostile ones (a stream declaring a huge
uncompressed length, a stream of copies that expands ~21x).

Wire formats: protobuf encoding (varints, length-delimited fields, fixed64
doubles); snappy's format_description.txt (a varint uncompressed length,
then literal and copy elements).
"""

import struct


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_bytes(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def _label(name, value):
    return _field_bytes(1, name.encode()) + _field_bytes(2, value.encode())


def _sample(value, t_ms):
    # value: field 1, fixed64 double; timestamp: field 2, varint int64.
    return b"\x09" + struct.pack("<d", value) + b"\x10" + varint(t_ms & (2**64 - 1))


def write_request(series):
    """Protobuf WriteRequest for [(labels dict, [(t_ms, value), ...])].
    Labels are written sorted by name, as the spec requires."""
    out = bytearray()
    for labels, samples in series:
        ts = bytearray()
        for name in sorted(labels):
            ts += _field_bytes(1, _label(name, labels[name]))
        for t_ms, value in samples:
            ts += _field_bytes(2, _sample(value, t_ms))
        out += _field_bytes(1, bytes(ts))
    return bytes(out)


def snappy_literal(data):
    """A valid snappy block holding `data` as literals only."""
    out = bytearray(varint(len(data)))
    for i in range(0, len(data), 65536):
        chunk = data[i:i + 65536]
        n = len(chunk) - 1
        if n < 60:
            out.append(n << 2)
        elif n < 256:
            out += bytes([60 << 2, n])
        else:
            out += bytes([61 << 2]) + struct.pack("<H", n)
        out += chunk
    return bytes(out)


# A copy element with a 2-byte offset: tag ((length-1) << 2) | 2, then the
# offset, little endian. Length 64 at offset 1 repeats the previous byte 64
# times: 3 bytes in, 64 bytes out.
_COPY64 = bytes([(63 << 2) | 2, 1, 0])


def snappy_copies(copies, declared=None, seed=b"\xff"):
    """A snappy block of one literal byte then `copies` 64-byte copies of
    it: len(seed) + 64 * copies bytes when decoded, from 3 * copies bytes.
    `declared` (default: the true length) is the uncompressed length the
    header claims. 0xff bytes never decode as a protobuf message (a varint
    that does not end), so a receiver must refuse it whatever it expands to."""
    real = len(seed) + 64 * copies
    return varint(real if declared is None else declared) + bytes([(len(seed) - 1) << 2]) + seed \
        + _COPY64 * copies
