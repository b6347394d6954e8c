/**
 * Account strategies (SPEC A-3): the order in which the accounts of one provider are offered for one
 * (request, model). Pure functions over a snapshot of each account's numbers; the registry supplies the
 * numbers, applies conversation affinity before and eligibility after.
 *
 * ## The `scored` formula (the default)
 *
 * For the n accounts of the provider in list order (priority, then file order), account i gets
 *
 * ```
 * score = 0.45 · success + 0.20 · latency + 0.25 · quota + 0.10 · position
 *
 * success  = (s + 1) / (s + f + 1)    s, f: successes and failures, decayed with a 5-min half-life
 *                                      (stats.ts) — 1 for a fresh account, 0.5 after one failure
 * latency  = best / own               latency EWMAs (α = 0.3) to the first byte; the fastest account
 *                                      that has answered gets 1; an account never measured gets 1
 * quota    = tightest remaining fraction of the windows that apply to this model (quota.ts);
 *            1 when the account reports none
 * position = (n − i) / n              1 for the first account in the list, 1/n for the last
 * ```
 *
 * Properties (test/accounts/selection.test.ts): with equal health the list order holds (position
 * breaks ties); one recent failure moves an account behind a healthy one (−0.225 outweighs any
 * position gap of at most 0.1); a markedly slower account (2×: −0.1) goes behind its equal-position
 * neighbour in a 2-account list while a marginally slower one (1.2×: −0.033) keeps its place; an
 * account with less quota left drops accordingly (10 % left: −0.225); failures fade, so an account
 * recovers its place without traffic. Ties keep list order.
 *
 * ## Other strategies
 *
 * - `p2c`: power of two choices on the score: two distinct accounts drawn at random, the better-scored
 *   one first, the rest by score.
 * - `random`: a uniform shuffle.
 * - `round-robin`: the list rotated by one account per request (per provider and model); turns
 *   conversation affinity off.
 */
import type { Account } from "../../pipeline/ports.ts";

/** SPEC A-3 strategies (`settings.account_strategy`). */
export type AccountStrategy = "scored" | "p2c" | "random" | "round-robin";

/** Weights of the scored formula; they sum to 1. */
export const SCORE_WEIGHTS = { success: 0.45, latency: 0.2, quota: 0.25, position: 0.1 } as const;

/** What the strategies know about one account for this request. */
export interface AccountFacts {
  account: Account;
  /** Recent success rate, 0–1 (1 = fresh or flawless). */
  successRate: number;
  /** Latency EWMA in ms; undefined = never measured. */
  latencyMs?: number;
  /** Tightest remaining quota fraction for this model, 0–1; undefined = none reported. */
  quota?: number;
}

/** One account's score and its parts, each 0–1. */
export interface Score {
  total: number;
  success: number;
  latency: number;
  quota: number;
  position: number;
}

/** Scores every account (same order as `facts`, which is the list order). See the module comment. */
export function scoreAll(facts: AccountFacts[]): Score[] {
  const n = facts.length;
  let best: number | undefined;
  for (const f of facts) if (f.latencyMs !== undefined && (best === undefined || f.latencyMs < best)) best = f.latencyMs;
  return facts.map((f, i) => {
    const success = f.successRate;
    const latency = f.latencyMs === undefined || best === undefined ? 1 : f.latencyMs <= 0 ? 1 : Math.min(1, Math.max(best, 1) / Math.max(f.latencyMs, 1));
    const quota = f.quota ?? 1;
    const position = (n - i) / n;
    const total =
      SCORE_WEIGHTS.success * success + SCORE_WEIGHTS.latency * latency + SCORE_WEIGHTS.quota * quota + SCORE_WEIGHTS.position * position;
    return { total, success, latency, quota, position };
  });
}

/** One account in strategy order, with why it is there. */
export interface Ranked {
  account: Account;
  note: string;
  score?: Score;
}

const fmt = (x: number) => x.toFixed(2);

/** Human-readable score for traces: `score 0.93 (success 1.00, latency 0.80, quota 1.00, position 1.00)`. */
export function describeScore(s: Score): string {
  return `score ${fmt(s.total)} (success ${fmt(s.success)}, latency ${fmt(s.latency)}, quota ${fmt(s.quota)}, position ${fmt(s.position)})`;
}

/**
 * Orders the accounts (given in list order) by `strategy`. `rng` draws uniform [0, 1) numbers
 * (random, p2c); `turn` is the round-robin request counter for this provider and model.
 * O(n log n) for n accounts.
 */
export function rankAccounts(strategy: AccountStrategy, facts: AccountFacts[], rng: () => number, turn: number): Ranked[] {
  const n = facts.length;
  if (n === 0) return [];
  switch (strategy) {
    case "round-robin": {
      const start = turn % n;
      return [...facts.slice(start), ...facts.slice(0, start)].map((f, j) => ({ account: f.account, note: `round-robin: turn ${turn + 1}, place ${j + 1} of ${n}` }));
    }
    case "random": {
      const a = facts.slice();
      for (let i = a.length - 1; i > 0; i--) {
        const j = Math.floor(rng() * (i + 1));
        [a[i], a[j]] = [a[j], a[i]];
      }
      return a.map((f) => ({ account: f.account, note: "random draw" }));
    }
    case "p2c": {
      const scores = scoreAll(facts);
      const byScore = facts.map((f, i) => ({ f, s: scores[i], i })).sort((x, y) => y.s.total - x.s.total || x.i - y.i);
      if (n === 1) return [{ account: byScore[0].f.account, note: describeScore(byScore[0].s), score: byScore[0].s }];
      const i = Math.floor(rng() * n);
      let j = Math.floor(rng() * (n - 1));
      if (j >= i) j++;
      const [a, b] = [i, j].map((k) => ({ f: facts[k], s: scores[k], i: k }));
      const win = a.s.total > b.s.total || (a.s.total === b.s.total && a.i < b.i) ? a : b;
      const lose = win === a ? b : a;
      const rest = byScore.filter((x) => x.i !== win.i);
      return [
        { account: win.f.account, note: `p2c: drew ${win.f.account.id} and ${lose.f.account.id}, ${win.f.account.id} scores higher; ${describeScore(win.s)}`, score: win.s },
        ...rest.map((x) => ({ account: x.f.account, note: describeScore(x.s), score: x.s })),
      ];
    }
    case "scored":
    default: {
      const scores = scoreAll(facts);
      return facts
        .map((f, i) => ({ f, s: scores[i], i }))
        .sort((x, y) => y.s.total - x.s.total || x.i - y.i)
        .map((x) => ({ account: x.f.account, note: describeScore(x.s), score: x.s }));
    }
  }
}
