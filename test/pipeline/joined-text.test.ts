/**
 * The route trace's repeated texts (pipeline/joined-text.ts, docs/performance.md item 189): a target's
 * `provider/model` label and a pick decision's `label @ account` subject and chosen reason read exactly
 * as their parts joined, for any parts and past the cache's bound; a route's texts are flat strings
 * made once, not a new rope per request that the trace's `JSON.stringify` resolves again; and the
 * cache stays bounded whatever model names clients send.
 */
import { isRope } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import { JoinedText } from "../../pipeline/joined-text.ts";
import { verdictDecision } from "../../pipeline/pick.ts";
import { resolveModel, type Target } from "../../pipeline/resolve.ts";
import { provider, table } from "./routing-helpers.ts";

const T = table([provider("openai", "openai"), provider("anthropic", "anthropic"), provider("fast", "openai-compatible")]);

const targetFor = (name: string): Target => {
  const r = resolveModel(name, T);
  if ("kind" in r) throw new Error(`${name}: ${r.message}`);
  return r.targets[0]!;
};

describe("route trace texts", () => {
  test("labels, subjects and reasons are their parts joined, for 3,000 routes (past the cache's bound)", () => {
    const models = Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? `m-${i}-${"x".repeat(300)}` : i % 7 === 0 ? `mödel-${i}/sub` : `gpt-${i}`));
    for (const p of ["openai", "fast", "anthropic"]) {
      for (const [i, m] of models.entries()) {
        const t = targetFor(`${p}/${m}`);
        expect(t.label).toBe(`${p}/${m}`);
        const account = `${p}-acct-${i % 3}`;
        const inDecision = verdictDecision(t, { accountId: account, verdict: "in", note: i % 2 ? "the provider's only account" : `weighted ${i}` });
        expect(inDecision).toEqual({ subject: `${p}/${m} @ ${account}`, verdict: "in", reason: `first eligible account; ${i % 2 ? "the provider's only account" : `weighted ${i}`}` });
        expect(verdictDecision(t, { accountId: account, verdict: "in" }).reason).toBe("first eligible account");
        expect(verdictDecision(t, { accountId: account, verdict: "out", note: "cooling down" }).subject).toBe(`${p}/${m} @ ${account}`);
      }
    }
    // A guessed provider (a bare model name) gets the same label.
    expect(targetFor("gpt-guessed").label).toBe("openai/gpt-guessed");
    expect(targetFor("claude-guessed").label).toBe("anthropic/claude-guessed");
  });

  test("a route's label, subject and reason are flat strings on every request, not new ropes", () => {
    for (let request = 0; request < 3; request++) {
      const t = targetFor("openai/gpt-bench");
      const d = verdictDecision(t, { accountId: "openai-bench", verdict: "in", note: "the provider's only account" });
      expect([isRope(t.label), isRope(d.subject), isRope(d.reason)]).toEqual([false, false, false]);
      expect(isRope(targetFor("gpt-bench").label)).toBe(false);
    }
  });

  test("the cache keeps at most its bound, and long parts never", () => {
    const joined = new JoinedText("/", 8);
    for (let i = 0; i < 100; i++) {
      expect(joined.of("p", `model-${i}`)).toBe(`p/model-${i}`);
      expect(joined.size).toBeLessThanOrEqual(8);
    }
    const before = joined.size;
    expect(joined.of("p", "y".repeat(300))).toBe(`p/${"y".repeat(300)}`);
    expect(joined.size).toBe(before);
    // A pair kept is handed out again without growing the cache.
    joined.of("p", "again");
    const kept = joined.size;
    expect(joined.of("p", "again")).toBe("p/again");
    expect(joined.size).toBe(kept);
  });
});
