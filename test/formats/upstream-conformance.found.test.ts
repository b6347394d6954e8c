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

/**
 * F2 (not a schema violation; found while reading the translated bodies): a Chat message's `name`
 * (system, user or assistant) has no member in a Responses input item, so the Responses body goes
 * without it, and unlike the Anthropic and Gemini builders (`dropped_field`: "A message name (Chat
 * `name`) has no Anthropic equivalent and was dropped") no warning says so (SPEC F-2).
 */
describe("F2: a Chat message name dropped for a Responses upstream without a dropped_field warning", () => {
  for (const r of results) {
    if (r.outcome !== "checked" || r.input.clientFormat !== "openai-chat" || r.target.schema !== "openai-responses") continue;
    const named = (r.input.body.messages as Array<{ name?: unknown }>).some((m) => m.name !== undefined);
    if (!named) continue;
    test(`F2 ${r.key}`, () => {
      expect(r.warnings?.filter((w) => w.code === "dropped_field" && /name/i.test(w.message)).length).toBeGreaterThan(0);
    });
  }
});
