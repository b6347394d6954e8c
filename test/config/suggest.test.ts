/**
 * src/unknown-keys.ts `suggest`, the "did you mean" guess of config errors and admin 400s: the same
 * guess as a full edit-distance table, and an answer for a word of any length (an admin body may carry
 * a 1,000,000-character alias target; the full table of it against every alias and combo name held
 * the event loop for seconds).
 */
import { describe, expect, test } from "bun:test";
import { suggest } from "../../src/unknown-keys.ts";
import { seededRng } from "../../pipeline/order.ts";

/** The full optimal-string-alignment table (the guess's definition). */
function fullDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** How many characters two words share at their start. */
function shared(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The guess by its definition: the closest candidate (of equally close ones the one sharing the longest
 * start with the word, then the first), if within 1, 2 or 3 edits for its length.
 */
function reference(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = fullDistance(w, c.toLowerCase());
    if (d < bestD || (d === bestD && shared(w, c.toLowerCase()) > shared(w, best!.toLowerCase()))) [best, bestD] = [c, d];
  }
  if (best === undefined) return undefined;
  return bestD <= (best.length <= 3 ? 1 : best.length <= 6 ? 2 : 3) ? best : undefined;
}

describe("did-you-mean guesses", () => {
  test("the typos the config and the admin API name are still guessed", () => {
    expect(suggest("modle", ["model", "account", "weight"])).toBe("model");
    expect(suggest("tags", ["name", "scopes", "tag", "limits"])).toBe("tag");
    expect(suggest("OpenAI", ["anthropic", "openai"])).toBe("openai");
    expect(suggest("opnai-compat", ["openai-compatible", "openai"])).toBeUndefined();
    expect(suggest("x", [])).toBeUndefined();
  });

  test("of equally close candidates, the one that starts like the word (acc: ac, not the built-in cc listed first)", () => {
    expect(suggest("acc", ["anthropic", "openai", "gemini", "cc", "cx", "ac"])).toBe("ac");
    expect(suggest("ACC", ["cc", "ac"])).toBe("ac");
    // no shared start: the first, as before
    expect(suggest("bc", ["cc", "ac"])).toBe("cc");
  });

  test("the same guess as the full edit-distance table for 3,000 seeded words (typos, swaps, other lengths)", () => {
    const rnd = seededRng(2026_12_03);
    const letters = "abcdeXY-";
    const word = (n: number) => Array.from({ length: n }, () => letters[Math.floor(rnd() * letters.length)]).join("");
    /** `w` with `k` random edits (change, insert, delete, swap). */
    const mutate = (w: string, k: number) => {
      let s = w;
      for (let e = 0; e < k; e++) {
        const at = Math.floor(rnd() * (s.length + 1));
        const op = Math.floor(rnd() * 4);
        if (op === 0) s = s.slice(0, at) + word(1) + s.slice(at + 1);
        else if (op === 1) s = s.slice(0, at) + word(1) + s.slice(at);
        else if (op === 2) s = s.slice(0, at) + s.slice(at + 1);
        else if (at + 1 < s.length) s = s.slice(0, at) + s[at + 1] + s[at] + s.slice(at + 2);
      }
      return s;
    };
    for (let n = 0; n < 3000; n++) {
      const candidates = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => word(Math.floor(rnd() * 12)));
      const base = candidates[Math.floor(rnd() * candidates.length)]!;
      const w = rnd() < 0.2 ? word(Math.floor(rnd() * 14)) : mutate(base, Math.floor(rnd() * 6));
      expect(suggest(w, candidates), `${JSON.stringify(w)} among ${JSON.stringify(candidates)}`).toBe(reference(w, candidates));
    }
  });

  test("a 1,000,000-character word gets its answer (no table of its length times each candidate's)", () => {
    const long = "x".repeat(1_000_000);
    const names = Array.from({ length: 200 }, (_, i) => `alias-${i}-${"y".repeat(i % 20)}`);
    expect(suggest(long, names)).toBeUndefined();
    // Long candidates about as long as the word: the one a typo away is found.
    const word = "ab".repeat(5_000);
    const typo = `${word.slice(0, 4_000)}ba${word.slice(4_002)}`;
    expect(suggest(typo, ["a".repeat(10_000), `${word}cd`, word])).toBe(word);
    expect(reference(typo.slice(0, 1_000), [word.slice(0, 1_000)])).toBe(suggest(typo.slice(0, 1_000), [word.slice(0, 1_000)]));
  });
});
