/**
 * The schema violations the upstream conformance test found (upstream-conformance.test.ts; FOUND in
 * test/support/upstream-conformance.ts): one case per finding and translated request, each FAILING until
 * the translation is fixed. Its name is `<finding> <input> → <kind>/<model>`; its failure lists the
 * violating JSON pointers. When a finding is fixed its cases pass: remove it from FOUND then.
 */
import { describe, expect, test } from "bun:test";
import { allResults, FOUND } from "../support/upstream-conformance.ts";

const results = allResults();

for (const finding of FOUND) {
  describe(`${finding.id}: ${finding.summary}`, () => {
    for (const r of results) {
      const lines = r.violations.filter((l) => finding.matches(l, r));
      if (!lines.length) continue;
      test(`${finding.id} ${r.key}`, () => {
        expect(r.violations.filter((l) => finding.matches(l, r))).toEqual([]);
      });
    }
  });
}
