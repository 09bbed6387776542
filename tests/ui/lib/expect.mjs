// Assertions for the browser checks: a failed expectation throws a
// CheckFailure whose message says what was expected and what was seen, and
// eventually() retries a probe until it holds or a deadline passes (the UI
// and the simulated data both change while a test looks at them).

export class CheckFailure extends Error {}

export function expect(condition, message) {
  if (!condition) throw new CheckFailure(typeof message === 'function' ? message() : message);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Calls probe() every intervalMs until it returns a value other than
 * undefined/false, and returns that value; after timeoutMs throws a
 * CheckFailure with describe(lastValue) (or the probe's last error).
 */
export async function eventually(probe, { timeoutMs, intervalMs = 500, describe }) {
  const deadline = Date.now() + timeoutMs;
  let last;
  let lastError;
  for (;;) {
    try {
      last = await probe();
      lastError = undefined;
      if (last !== undefined && last !== false) return last;
    } catch (e) {
      if (e instanceof CheckFailure) lastError = e;
      else throw e;
    }
    if (Date.now() >= deadline) break;
    await sleep(intervalMs);
  }
  throw new CheckFailure(`${describe ? describe(last) : 'condition not met'} (after ${timeoutMs / 1000} s)${lastError ? `: ${lastError.message}` : ''}`);
}
