#!/usr/bin/env node
// Bundles the gpumon web UI.
//
//   node ui/build.mjs --outdir DIR [--sourcemap] [--no-minify]
//
// Contract (relied on by the C++ embedding in ui/CMakeLists.txt):
// - DIR/index.html references only external, content-hashed assets:
//   DIR/assets/app-<hash>.js (ES module), DIR/assets/app-<hash>.css and
//   DIR/assets/favicon-<hash>.svg. No inline script or style, so the page runs
//   under the strict CSP the server sends.
// - Every compressible file (html, js, css, svg, map) gets a gzip (level 9)
//   sibling NAME.gz, which the server sends when the client accepts gzip.
// - DIR/assets/ and DIR/index.html are replaced on each run, so stale hashed
//   files from an earlier build are never embedded; nothing else in DIR is
//   touched.
// - The output is a pure function of the sources: esbuild is deterministic and
//   the gzip header carries no timestamp or file name.
// - DIR may be absolute or relative to the current directory; sources are
//   found relative to this file, so it runs from any working directory.
// - Prints one progress line to stdout; exits non-zero on any error.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, constants as zlibConstants } from "node:zlib";

const uiDir = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const opts = { outdir: null, sourcemap: false, minify: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--outdir") opts.outdir = argv[++i];
    else if (a.startsWith("--outdir=")) opts.outdir = a.slice("--outdir=".length);
    else if (a === "--sourcemap") opts.sourcemap = true;
    else if (a === "--no-minify") opts.minify = false;
    else throw new Error(`unknown argument: ${a}`);
  }
  if (!opts.outdir) throw new Error("usage: node build.mjs --outdir DIR [--sourcemap] [--no-minify]");
  return opts;
}

const COMPRESSIBLE = /\.(html|js|css|svg|map|json)$/;

function shortHash(bytes) {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 12).toUpperCase();
}

function listFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const outdir = resolve(process.cwd(), opts.outdir);
  const assetsDir = join(outdir, "assets");
  rmSync(assetsDir, { recursive: true, force: true });
  for (const f of ["index.html", "index.html.gz"]) rmSync(join(outdir, f), { force: true });
  mkdirSync(assetsDir, { recursive: true });

  const result = await build({
    absWorkingDir: uiDir,
    entryPoints: { app: "src/main.ts" },
    bundle: true,
    format: "esm",
    target: ["chrome109", "firefox115", "safari16"],
    platform: "browser",
    minify: opts.minify,
    sourcemap: opts.sourcemap ? "linked" : false,
    outdir: assetsDir,
    entryNames: "[name]-[hash]",
    // the PromQL editor (CodeMirror) is a lazily imported chunk: other pages do not pay for it
    splitting: true,
    chunkNames: "chunk-[hash]",
    assetNames: "[name]-[hash]",
    legalComments: "eof",
    metafile: true,
    logLevel: "warning",
    charset: "utf8",
  });

  let jsName = null;
  let cssName = null;
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    const rel = relative(assetsDir, resolve(uiDir, file));
    if (meta.entryPoint === "src/main.ts" && rel.endsWith(".js")) jsName = rel;
    else if (rel.endsWith(".css") && !rel.endsWith(".map")) cssName = rel;
  }
  if (!jsName || !cssName) throw new Error(`esbuild produced no app bundle (js=${jsName} css=${cssName})`);

  const favicon = readFileSync(join(uiDir, "src/styles/favicon.svg"));
  const faviconName = `favicon-${shortHash(favicon)}.svg`;
  writeFileSync(join(assetsDir, faviconName), favicon);

  const template = readFileSync(join(uiDir, "index.html"), "utf8");
  const html = template
    .replaceAll("%APP_JS%", `/assets/${jsName}`)
    .replaceAll("%APP_CSS%", `/assets/${cssName}`)
    .replaceAll("%FAVICON%", `/assets/${faviconName}`);
  if (/%[A-Z_]+%/.test(html)) throw new Error("index.html has an unreplaced placeholder");
  if (/<script(?![^>]*\bsrc=)[^>]*>|<style[\s>]|\sstyle=|\son[a-z]+=/i.test(html))
    throw new Error("index.html must not contain inline scripts, styles or handlers (CSP)");
  writeFileSync(join(outdir, "index.html"), html);

  let total = 0;
  let gzTotal = 0;
  const files = [join(outdir, "index.html"), ...listFiles(assetsDir)];
  for (const f of files) {
    const bytes = readFileSync(f);
    total += bytes.length;
    if (!COMPRESSIBLE.test(f)) continue;
    const gz = gzipSync(bytes, { level: zlibConstants.Z_BEST_COMPRESSION });
    gzTotal += gz.length;
    writeFileSync(`${f}.gz`, gz);
  }
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  console.log(`gpumon ui: ${files.length} files, ${kib(total)} (${kib(gzTotal)} gzipped) -> ${outdir}`);
}

main().catch((err) => {
  console.error(`gpumon ui build failed: ${err && err.message ? err.message : err}`);
  process.exit(1);
});
