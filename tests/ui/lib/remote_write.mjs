// A minimal remote-write 1.0 sender for the browser tests' fixtures: encodes
// a prometheus.WriteRequest by hand (docs/formats/remote-write.md: TimeSeries
// = 1 { Label = 1 {name = 1, value = 2}, Sample = 2 {value = 1 double,
// timestamp = 2 int64 ms} }) and POSTs it gzip-encoded (the receiver takes
// `Content-Encoding: gzip` as well as snappy, so no snappy encoder is needed).
//
// Contract: remoteWrite(base, series) where series = [{ labels: {name: value,
// ...} (with __name__), samples: [[ms, value], ...] }] resolves when the
// server answered 204 and throws with the status and body otherwise. Labels
// are sent sorted by name, as the specification requires.
import { gzipSync } from 'node:zlib';

function varint(n) {
  // n is a non-negative integer below 2^53 (timestamps in ms, lengths)
  const out = [];
  let v = BigInt(n);
  while (v >= 0x80n) {
    out.push(Number((v & 0x7fn) | 0x80n));
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const key = (field, wire) => varint((field << 3) | wire);

function lengthDelimited(field, payload) {
  return Buffer.concat([key(field, 2), varint(payload.length), payload]);
}

function encodeLabel(name, value) {
  return Buffer.concat([lengthDelimited(1, Buffer.from(name, 'utf8')), lengthDelimited(2, Buffer.from(value, 'utf8'))]);
}

function encodeSample(ms, value) {
  const d = Buffer.alloc(8);
  d.writeDoubleLE(value);
  return Buffer.concat([key(1, 1), d, key(2, 0), varint(ms)]);
}

export function encodeWriteRequest(series) {
  const parts = [];
  for (const s of series) {
    const labels = Object.keys(s.labels)
      .sort()
      .map((n) => lengthDelimited(1, encodeLabel(n, String(s.labels[n]))));
    const samples = s.samples.map(([ms, v]) => lengthDelimited(2, encodeSample(ms, v)));
    parts.push(lengthDelimited(1, Buffer.concat([...labels, ...samples])));
  }
  return Buffer.concat(parts);
}

export async function remoteWrite(base, series) {
  const body = gzipSync(encodeWriteRequest(series));
  const r = await fetch(`${base}/api/v1/write`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip', 'X-Prometheus-Remote-Write-Version': '0.1.0' },
    body,
    signal: AbortSignal.timeout(15000),
  });
  const text = await r.text();
  if (r.status !== 204) throw new Error(`remote write to ${base}: HTTP ${r.status} ${text.slice(0, 300)}`);
}
