// Runs the unit tests of the UI's pure modules with node:test (Node >= 18).
// The tests are TypeScript importing src/ modules; esbuild bundles each
// *.test.ts into a temporary directory first, so no TS loader is needed.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const tests = readdirSync(here).filter((f) => f.endsWith(".test.ts")).sort();
const out = mkdtempSync(join(tmpdir(), "gpumon-ui-unit-"));
try {
  await build({
    absWorkingDir: here,
    entryPoints: tests,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node18",
    outdir: out,
    outExtension: { ".js": ".mjs" },
    packages: "external",
    logLevel: "warning",
  });
  const files = tests.map((t) => join(out, t.replace(/\.ts$/, ".mjs")));
  const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
