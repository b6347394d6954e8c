/**
 * The schema violations the upstream conformance test found (upstream-conformance.test.ts; FOUND in
 * test/support/upstream-conformance.ts): one case per finding and translated request, each FAILING until
 * the translation is fixed. Its name is `<finding> <input> → <kind>/<model>`; its failure lists the
 * offending parts of the body (JSON pointer, the part, the schema rule it breaks). When a finding is fixed its cases pass: remove it from FOUND then.
 */
import { describe, expect, test } from "bun:test";
import { allResults, FOUND, foundDetails } from "../support/upstream-conformance.ts";

const results = allResults();

for (const finding of FOUND) {
  describe(`${finding.id}: ${finding.summary}`, () => {
    for (const r of results) {
      if (!foundDetails(finding, r).length) continue;
      test(`${finding.id} ${r.key}`, () => {
        expect(foundDetails(finding, r)).toEqual([]);
      });
    }
  });
}
