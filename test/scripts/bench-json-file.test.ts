/**
 * Where scripts/bench writes its JSON: a `--smoke` run (figures that mean nothing) must not replace
 * docs/bench/latest.json in the checkout unless `--json` names a file; a full or quick run still
 * writes it there by default, and `--json` always wins.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { benchJsonFile } from "../../scripts/lib/bench-json-file.ts";

test("a smoke run writes no JSON unless --json is given; other runs default to docs/bench/latest.json", () => {
  const root = "/repo";
  expect({
    smoke: benchJsonFile({ json: undefined, smoke: true, root }),
    smokeWithJson: benchJsonFile({ json: "/tmp/out.json", smoke: true, root }),
    full: benchJsonFile({ json: undefined, smoke: false, root }),
    fullWithJson: benchJsonFile({ json: "r39.json", smoke: false, root }),
  }).toEqual({
    smoke: null,
    smokeWithJson: "/tmp/out.json",
    full: join(root, "docs", "bench", "latest.json"),
    fullWithJson: "r39.json",
  });
});
