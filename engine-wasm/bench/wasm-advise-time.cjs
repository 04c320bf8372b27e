// WebAssembly half of wasm-vs-native.sh: times advise_json in Node on the
// generated estate, exactly like examples/native_advise_time.rs does
// natively (one warm-up, then RUNS timed calls; median and minimum).
//
//   node wasm-advise-time.cjs PKG_DIR [SEED SERVICES CLUSTERS RUNS]
//
// The timed call includes passing the estate text into the module and the
// advice text out (UTF-8 copies across the boundary), as a browser would.
"use strict";

const crypto = require("crypto");
const path = require("path");

const [pkgDir, ...rest] = process.argv.slice(2);
if (!pkgDir) {
  process.stderr.write("usage: node wasm-advise-time.cjs PKG_DIR [SEED SERVICES CLUSTERS RUNS]\n");
  process.exit(2);
}
const engine = require(path.resolve(pkgDir, "berth_engine_wasm.js"));
const [seed, services, clusters, runs] = [42, 5000, 50, 5].map((d, i) =>
  rest[i] === undefined ? d : Number(rest[i]),
);
const NOW = 1796011500; // 2026-11-30T04:05:00Z

const text = engine.generated_file(seed, services, clusters);
const warm = engine.advise_json(text, "", NOW);
const ms = [];
for (let i = 0; i < Math.max(1, runs); i++) {
  const t = process.hrtime.bigint();
  const out = engine.advise_json(text, "", NOW);
  ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  if (out !== warm) throw new Error("advice differs between runs");
}
ms.sort((a, b) => a - b);
const sha = crypto.createHash("sha256").update(warm, "utf8").digest("hex");
console.log(
  `side=wasm median_ms=${ms[ms.length >> 1].toFixed(1)} min_ms=${ms[0].toFixed(1)} ` +
    `runs=${ms.length} estate_bytes=${Buffer.byteLength(text)} ` +
    `advice_bytes=${Buffer.byteLength(warm)} advice_sha256=${sha}`,
);
