// WebAssembly side of the native/WebAssembly parity test (tests/parity.rs).
//
// Loads the module that `wasm-bindgen --target nodejs` wrote into PKG_DIR
// and writes one engine result to stdout, byte for byte, with nothing
// added (no trailing newline):
//
//   node parity.cjs PKG_DIR advise ESTATE_FILE POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR advise-why ESTATE_FILE POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR advise-generated SEED SERVICES CLUSTERS POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR digests SEED COUNT NOW_UNIX
//   node parity.cjs PKG_DIR advise-small SEED NOW_UNIX
//   node parity.cjs PKG_DIR whatif ESTATE_FILE SCENARIO_FILE POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR place ESTATE_FILE POLICY_JSON NOW_UNIX SERVICE_ID...
//   node parity.cjs PKG_DIR compare ESTATE_FILE RESPONSES_FILE POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR preview ESTATE_FILE POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR plan ESTATE_FILE POLICY_JSON NOW_UNIX FORMAT SERVICES SCENARIO_FILE
//   node parity.cjs PKG_DIR gen-digests SEED COUNT POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR gen-result SEED WHAT POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR why-digests SEED COUNT POLICY_JSON NOW_UNIX
//   node parity.cjs PKG_DIR batch CASES_FILE
//
// `batch` runs many calls in one process: CASES_FILE is a JSON array of
// `[FUNCTION, ARG...]` (FUNCTION one of advise_json, advise_why_json,
// preview_json, place_json, whatif_json, compare_json, plan_json; the arguments as
// that function takes them, texts inline), and stdout is the JSON array of
// the results, each a string holding exactly the bytes the engine wrote
// (server/tests/parity_bytes.rs).
//
// POLICY_JSON may be "" (the default policy). Files are passed to the
// engine as text, exactly as read (UTF-8), like the CLI does; RESPONSES_FILE
// holds the `{"name": "<reply text>", ...}` object of compare_json, and may
// be "" (no external replies). `place` writes one placement per SERVICE_ID,
// joined by a newline.
"use strict";

const fs = require("fs");
const path = require("path");

function usage() {
  process.stderr.write(
    "usage: node parity.cjs PKG_DIR (advise FILE POLICY NOW | advise-why FILE POLICY NOW | " +
      "advise-generated SEED SERVICES CLUSTERS POLICY NOW | digests SEED COUNT NOW | " +
      "advise-small SEED NOW | whatif FILE SCENARIO POLICY NOW | place FILE POLICY NOW ID... | " +
      "compare FILE RESPONSES POLICY NOW | preview FILE POLICY NOW | " +
      "plan FILE POLICY NOW FORMAT SERVICES SCENARIO | " +
      "gen-digests SEED COUNT POLICY NOW | gen-result SEED WHAT POLICY NOW | " +
      "why-digests SEED COUNT POLICY NOW)\n",
  );
  process.exit(2);
}

const [pkgDir, cmd, ...args] = process.argv.slice(2);
if (!pkgDir || !cmd) usage();
const engine = require(path.resolve(pkgDir, "berth_engine_wasm.js"));

function num(s) {
  const n = Number(s);
  if (!Number.isFinite(n)) usage();
  return n;
}

let out;
switch (cmd) {
  case "advise": {
    if (args.length !== 3) usage();
    const text = fs.readFileSync(args[0], "utf8");
    out = engine.advise_json(text, args[1], num(args[2]));
    break;
  }
  case "advise-why": {
    if (args.length !== 3) usage();
    const text = fs.readFileSync(args[0], "utf8");
    out = engine.advise_why_json(text, args[1], num(args[2]));
    break;
  }
  case "advise-generated": {
    if (args.length !== 5) usage();
    const text = engine.generated_file(num(args[0]), num(args[1]), num(args[2]));
    out = engine.advise_json(text, args[3], num(args[4]));
    break;
  }
  case "digests": {
    if (args.length !== 3) usage();
    out = engine.generated_digests(num(args[0]), num(args[1]), num(args[2]));
    break;
  }
  case "advise-small": {
    if (args.length !== 2) usage();
    out = engine.small_advice_json(num(args[0]), num(args[1]));
    break;
  }
  case "whatif": {
    if (args.length !== 4) usage();
    const text = fs.readFileSync(args[0], "utf8");
    const scenario = fs.readFileSync(args[1], "utf8");
    out = engine.whatif_json(text, scenario, args[2], num(args[3]));
    break;
  }
  case "place": {
    if (args.length < 4) usage();
    const text = fs.readFileSync(args[0], "utf8");
    const now = num(args[2]);
    out = args
      .slice(3)
      .map((id) => engine.place_json(text, id, args[1], now))
      .join("\n");
    break;
  }
  case "compare": {
    if (args.length !== 4) usage();
    const text = fs.readFileSync(args[0], "utf8");
    const responses = args[1] === "" ? "" : fs.readFileSync(args[1], "utf8");
    out = engine.compare_json(text, responses, args[2], num(args[3]));
    break;
  }
  case "preview": {
    if (args.length !== 3) usage();
    const text = fs.readFileSync(args[0], "utf8");
    out = engine.preview_json(text, args[1], num(args[2]));
    break;
  }
  case "plan": {
    if (args.length !== 6) usage();
    const text = fs.readFileSync(args[0], "utf8");
    const scenario = args[5] === "" ? "" : fs.readFileSync(args[5], "utf8");
    out = engine.plan_json(text, args[1], num(args[2]), args[3], args[4], scenario);
    break;
  }
  case "gen-digests": {
    if (args.length !== 4) usage();
    out = engine.generated_results_digests(num(args[0]), num(args[1]), args[2], num(args[3]));
    break;
  }
  case "gen-result": {
    if (args.length !== 4) usage();
    out = engine.generated_result(num(args[0]), args[1], args[2], num(args[3]));
    break;
  }
  case "compare-digests": {
    if (args.length !== 4) usage();
    out = engine.generated_compare_digests(num(args[0]), num(args[1]), args[2], num(args[3]));
    break;
  }
  case "why-digests": {
    if (args.length !== 4) usage();
    out = engine.generated_why_digests(num(args[0]), num(args[1]), args[2], num(args[3]));
    break;
  }
  case "batch": {
    if (args.length !== 1) usage();
    const allowed = new Set([
      "advise_json",
      "advise_why_json",
      "preview_json",
      "place_json",
      "whatif_json",
      "compare_json",
      "plan_json",
    ]);
    const cases = JSON.parse(fs.readFileSync(args[0], "utf8"));
    out = JSON.stringify(
      cases.map(([fn, ...a]) => {
        if (!allowed.has(fn)) throw new Error(`batch: unknown function ${fn}`);
        return engine[fn](...a);
      }),
    );
    break;
  }
  default:
    usage();
}
// Synchronous for files and pipes on Linux, so nothing is lost at exit.
process.stdout.write(out);
