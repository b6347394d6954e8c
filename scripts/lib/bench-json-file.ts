/**
 * Where `scripts/bench` (scripts/bench.ts) writes its JSON result, decided apart from the run so that a
 * `--smoke` run cannot overwrite a real run's `docs/bench/latest.json` (test/scripts/bench-json-file.test.ts).
 */
import { join } from "node:path";

/**
 * Where `scripts/bench` writes its JSON result: the `--json FILE` given, else
 * `docs/bench/latest.json` in the checkout for a full or `--quick` run, and nowhere (null) for a
 * `--smoke` run without `--json`, whose figures mean nothing and must not replace a real run's file
 * (CI and the tests run it from the checkout). `root` is the repository's root directory.
 */
export function benchJsonFile(opts: { json: string | undefined; smoke: boolean; root: string }): string | null {
  if (opts.json !== undefined) return opts.json;
  if (opts.smoke) return null;
  return join(opts.root, "docs", "bench", "latest.json");
}
