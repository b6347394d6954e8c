/**
 * The layout rules of scripts/check-structure.ts, run in the suite so CI counts them: one module per
 * SPEC stage in pipeline/, no source file over 700 lines, no import cycle in pipeline/ or formats/,
 * src/ through at most three pipeline modules, a README map that names pipeline/commit.ts, and no
 * value import of a package index that loads every module (effect, prom-client). Each
 * failure lists what breaks the rule (file, lines, cycle, importing files).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkCycles, checkHeavyIndexes, checkSrcSurface, runChecks } from "../scripts/check-structure.ts";

const ROOT = join(import.meta.dir, "..");

describe("repository structure (scripts/check-structure.ts)", () => {
  for (const r of runChecks(ROOT)) {
    test(r.name, () => {
      expect(r.problems).toEqual([]);
    });
  }
});

describe("the checks catch what they are for", () => {
  /** A scratch tree from `files` (path → text). */
  function tree(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), "switchyard-structure-"));
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(join(root, dirname(p)), { recursive: true });
      writeFileSync(join(root, p), text);
    }
    return root;
  }

  test("a type-only import cycle in pipeline/ is reported with both files", () => {
    const root = tree({
      "pipeline/a.ts": 'import type { B } from "./b.ts";\nexport type A = B;\n',
      "pipeline/b.ts": 'import type { A } from "./a.ts";\nexport type B = { a?: A };\n',
      "pipeline/c.ts": 'import type { A } from "./a.ts";\nexport type C = A;\n',
    });
    try {
      expect(checkCycles(root).problems).toEqual(["import cycle in pipeline/: pipeline/a.ts ↔ pipeline/b.ts"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("src/ importing a fourth pipeline module is reported with the files that import it", () => {
    const files: Record<string, string> = {};
    for (const m of ["index", "ports", "order", "pick"]) files[`pipeline/${m}.ts`] = "export const x = 1;\n";
    files["src/a.ts"] = 'import { x } from "../pipeline/index.ts";\nimport type { Y } from "../pipeline/ports.ts";\n';
    files["src/admin/b.ts"] = 'import { x } from "../../pipeline/order.ts";\nexport { x as y } from "../../pipeline/pick.ts";\n';
    const root = tree(files);
    try {
      const r = checkSrcSurface(root);
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toStartWith("src/ imports 4 pipeline modules (at most 3): ");
      expect(r.problems[0]).toContain("pipeline/order.ts (1 files, e.g. src/admin/b.ts)");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a value import of the effect index is reported; type-only and per-module imports are not", () => {
    const root = tree({
      "src/a.ts": 'import { Effect, Queue } from "effect";\nimport type { Option } from "effect";\n',
      "src/b.ts": 'import * as Effect from "effect/Effect";\nimport { Counter } from "prom-client/lib/counter";\n',
      "pipeline/c.ts": 'const m = await import("prom-client");\n',
    });
    try {
      expect(checkHeavyIndexes(root).problems).toEqual([
        "src/a.ts imports the effect package index; import its modules (e.g. effect/…) instead",
        "pipeline/c.ts imports the prom-client package index; import its modules (e.g. prom-client/…) instead",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
