// A small client for the Prometheus HTTP API that gpumon serves, used by the
// tests to learn the truth the UI must show (GPU counts, series counts, alert
// states, forecast values) straight from the server.
//
// Contract: every call goes to the loopback base URL given, with optional
// basic-auth credentials, and throws with the URL and body on any HTTP or API
// error. Values come back as numbers.

export class PromApi {
  constructor(base, { user, password } = {}) {
    if (!/^https?:\/\/127\.0\.0\.1:\d+$/.test(base)) throw new Error(`refusing non-loopback base URL ${base}`);
    this.base = base;
    this.headers = user ? { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } : {};
  }

  async get(path, params = {}) {
    const url = `${this.base}${path}${Object.keys(params).length ? `?${new URLSearchParams(params)}` : ''}`;
    const r = await fetch(url, { headers: this.headers, signal: AbortSignal.timeout(30000) });
    const text = await r.text();
    let doc;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new Error(`${url}: HTTP ${r.status}, not JSON: ${text.slice(0, 300)}`);
    }
    if (!r.ok || doc.status !== 'success') throw new Error(`${url}: HTTP ${r.status} ${text.slice(0, 300)}`);
    return doc.data;
  }

  /** Instant vector: [{ metric, value }] with value a number. */
  async query(expr, time) {
    const data = await this.get('/api/v1/query', time === undefined ? { query: expr } : { query: expr, time: String(time) });
    if (data.resultType === 'scalar') return [{ metric: {}, value: Number(data.result[1]) }];
    if (data.resultType !== 'vector') throw new Error(`query ${expr}: expected a vector, got ${data.resultType}`);
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** The single value of an aggregating query, or NaN when it is empty. */
  async scalar(expr) {
    const r = await this.query(expr);
    return r.length ? r[0].value : NaN;
  }

  async alerts() {
    return (await this.get('/api/v1/alerts')).alerts;
  }
}
