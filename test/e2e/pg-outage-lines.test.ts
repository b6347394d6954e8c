/**
 * The outage lines with a real PostgreSQL that stalls (its processes paused with SIGSTOP: sockets open,
 * nothing answers) and resumes: the store's `database unreachable` / `database reachable again` and the
 * key-limit counters' `shared store unreachable` / `shared store reachable again` come once each per
 * outage, also while the statements left waiting in the stall answer or fail one after another, and
 * the key-limit counters' second line comes within a few seconds of the database answering again
 * (until session 38 it came 10 s after, so a stop within those 10 s had none). The store's own lines
 * did not flap before either (session 38 looked: stalls, quick stops and starts, a server out of
 * connections while the pool kept some); these tests keep them so.
 */
import { expect, test } from "bun:test";
import { startInstance, type Instance } from "../support/instance.ts";
import { budgetKeyConfig, usePostgresAndUpstream } from "../support/postgres-and-upstream.ts";
import { stallPostgres } from "../support/stall-postgres.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-pg-outage-lines", DEV: "sy-pg-outage-lines-dev-key-1", OPS: "sy-pg-outage-lines-ops-key-2" };

const h = usePostgresAndUpstream();

/** A request of the key with a budget (its use is reported every second); the status, or 0 when it got no answer within 15 s. */
async function chat(inst: Instance): Promise<number> {
  try {
    const res = await fetch(`${inst.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ENV.DEV}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: "hi" }] }),
      signal: AbortSignal.timeout(15_000),
    });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

/** The outage lines `inst` logged, in order, with when each came (ms since the epoch). */
function outageLines(inst: Instance): Array<{ what: string; time: number }> {
  const out: Array<{ what: string; time: number }> = [];
  for (const l of [...inst.stderr, ...inst.stdout]) {
    let j: { msg?: unknown; time?: unknown };
    try {
      j = JSON.parse(l);
    } catch {
      continue;
    }
    const msg = String(j.msg ?? "").replace(/^store: /, "");
    const what = ["database unreachable", "database reachable again", "shared store unreachable", "shared store reachable again"].find((w) => msg.startsWith(w));
    if (what) out.push({ what, time: Number(j.time) });
  }
  return out.sort((a, b) => a.time - b.time);
}

test("a stall of 20 s, then the database answers again: each pair of lines once, the key limits' second line within seconds", async () => {
  const dbUrl = await h.pg.createDatabase("outage_lines");
  const inst = await startInstance({ yaml: budgetKeyConfig(h.upstream.url, 3000), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  expect(await chat(inst)).toBe(200);
  let resumedAt = 0;
  try {
    h.stall = stallPostgres(h.pg);
    // requests during the stall: their use is reported (and stalls), their shares refilled
    const during = [chat(inst), Bun.sleep(500).then(() => chat(inst)), Bun.sleep(1000).then(() => chat(inst))];
    await until(() => outageLines(inst).some((l) => l.what === "shared store unreachable"), 30_000, "the key limits to count alone", 200);
    await until(() => outageLines(inst).some((l) => l.what === "database unreachable"), 30_000, "the store to say the database is away", 200);
    await Bun.sleep(3_000);
    await Promise.all(during);
  } finally {
    resumedAt = Date.now();
    h.stall?.resume();
  }
  await until(() => outageLines(inst).some((l) => l.what === "shared store reachable again"), 30_000, "the key limits to count across instances again", 100);
  // requests after it: their use reported across instances again; time for late answers and failures to come
  for (let i = 0; i < 3; i++) expect(await chat(inst)).toBe(200);
  await Bun.sleep(12_000);
  const lines = outageLines(inst);
  expect(lines.filter((l) => l.what.startsWith("database")).map((l) => l.what)).toEqual(["database unreachable", "database reachable again"]);
  expect(lines.filter((l) => l.what.startsWith("shared store")).map((l) => l.what)).toEqual(["shared store unreachable", "shared store reachable again"]);
  const storeBack = lines.find((l) => l.what === "database reachable again")!.time;
  const keysBack = lines.find((l) => l.what === "shared store reachable again")!.time;
  expect(keysBack - resumedAt).toBeLessThan(5_000);
  expect(keysBack - storeBack).toBeLessThan(3_000);
}, 240_000);

test("the database stopped and started three times within seconds: three pairs of each, in turn, each end logged within seconds, no line more", async () => {
  const dbUrl = await h.pg.createDatabase("outage_lines_thrice");
  const inst = await startInstance({ yaml: budgetKeyConfig(h.upstream.url, 3000), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  expect(await chat(inst)).toBe(200);
  const count = (what: string) => outageLines(inst).filter((l) => l.what === what).length;
  for (let i = 1; i <= 3; i++) {
    await h.pg.stop();
    // a request while it is away: served, its key's use counted here alone (its report fails)
    expect(await chat(inst)).toBe(200);
    await until(() => count("database unreachable") === i && count("shared store unreachable") === i, 20_000, `outage ${i} to be logged`, 100);
    await h.pg.start();
    // within seconds of its start (the store probes every second; session 37's key-limit line waited 10 s of answers)
    await until(() => count("database reachable again") === i && count("shared store reachable again") === i, 6_000, `the end of outage ${i} to be logged`, 100);
    expect(await chat(inst)).toBe(200);
  }
  await Bun.sleep(5_000); // late answers and failures
  const lines = outageLines(inst).map((l) => l.what);
  const pairs = (kind: string) => lines.filter((w) => w.startsWith(kind));
  expect(pairs("database")).toEqual(Array.from({ length: 3 }, () => ["database unreachable", "database reachable again"]).flat());
  expect(pairs("shared store")).toEqual(Array.from({ length: 3 }, () => ["shared store unreachable", "shared store reachable again"]).flat());
}, 240_000);
