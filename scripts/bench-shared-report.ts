/**
 * The shared key counters' once-a-second report (src/limits/shared-counters.ts, SPEC 9.6, D-2) with N
 * client keys with limits on a throwaway PostgreSQL: two instances (A and B) watch every key (each with
 * rpm, tpm and a budget: three pools), one key is used on B between reports. Prints, per report of A
 * after the first, the statements it sent to the store, the rows it sent and the rows it got back, and
 * the report's wall time (median and spread of `--rounds`).
 *
 *   bun scripts/bench-shared-report.ts [--keys 1000] [--rounds 20]
 *
 * Runs against the tree it lives in (copy it into another tree to measure that one).
 */
import { SharedKeyCounters } from "../src/limits/shared-counters.ts";
import { openPostgresStore } from "../src/store/postgres/store.ts";
import { startPostgres } from "../test/support/postgres.ts";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg("keys", 1000);
const ROUNDS = arg("rounds", 20);

const pg = await startPostgres();
try {
  const url = await pg.createDatabase("bench_report");
  const a = await openPostgresStore({ url, onError: () => {} });
  const b = await openPostgresStore({ url, onError: () => {} });
  const limits = { rpm: 1000, tpm: 1_000_000, budgets: [{ window: "1d" as const, tokens: 10_000_000 }] };
  const keys = Array.from({ length: N }, (_, i) => ({ name: `k${i}`, id: `k${i}#1`, limits }));
  let statements = 0;
  let sent = 0;
  let back = 0;
  const counted = new Proxy(a, {
    get(t, p) {
      const v = Reflect.get(t, p, t);
      if (typeof v !== "function") return v;
      if (p === "reportQuotaUse" || p === "exchangeQuotaUse" || p === "setQuotaShare") {
        return async (...args: unknown[]) => {
          statements++;
          sent += Array.isArray(args[0]) ? args[0].length : 1;
          const out = await v.apply(t, args);
          back += Array.isArray(out) ? out.length : 1;
          return out;
        };
      }
      return v.bind(t);
    },
  });
  // Long timers: the script calls report() itself.
  const A = new SharedKeyCounters(counted as never, () => {}, { reportMs: 3_600_000, keys: () => keys });
  const B = new SharedKeyCounters(b, () => {}, { reportMs: 3_600_000, keys: () => keys });
  await A.report();
  await B.report();
  const times: number[] = [];
  const per: Array<[number, number, number]> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const got = await B.admit("k1#1", limits, Date.now());
    if (got instanceof Promise || !("ok" in got)) throw new Error("unexpected admission");
    const t = await got;
    if (t.ok) await B.settle("k1#1", limits, { tokens: 100, usd: 0 }, Date.now(), t.ticket);
    await B.report();
    statements = sent = back = 0;
    const t0 = performance.now();
    await A.report();
    times.push(performance.now() - t0);
    per.push([statements, sent, back]);
  }
  times.sort((x, y) => x - y);
  const q = (f: number) => times[Math.min(times.length - 1, Math.floor(f * times.length))]!.toFixed(2);
  const last = per.at(-1)!;
  console.log(JSON.stringify({ keys: N, pools: 3 * N, rounds: ROUNDS, perReport: { statements: last[0], rowsSent: last[1], rowsBack: last[2] }, allRoundsSame: per.every((p) => p.join() === last.join()), reportMs: { min: q(0), median: q(0.5), max: q(0.999) } }));
  await A.close();
  await B.close();
  await a.close();
  await b.close();
} finally {
  await pg.destroy();
}
