/**
 * SIGTERM with the shared database STALLED (a team-operator tryout: PostgreSQL's processes paused with
 * SIGSTOP, so its sockets stay open and nothing answers). A database that refuses connections already
 * worked as documented; with a stalled one after a request of a key with a budget, `switchyard stop`
 * did not exit for minutes (until the database was resumed): the last report of key-limit use and the
 * last flush waited for answers past the grace period. A real instance on a real PostgreSQL, whose
 * postmaster and backends the test pauses (and always resumes in a `finally`).
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { budgetKeyConfig, usePostgresAndUpstream } from "../support/postgres-and-upstream.ts";
import { stallPostgres } from "../support/stall-postgres.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-pg-stall", DEV: "sy-pg-stall-dev-key-000001", OPS: "sy-pg-stall-ops-key-000002" };
/** The grace period of the instances, ms (short: the stop's bound is what is tested). */
const GRACE_MS = 3000;

const h = usePostgresAndUpstream();

const yaml = () => budgetKeyConfig(h.upstream.url, GRACE_MS);

async function chat(inst: Instance, text: string): Promise<void> {
  const res = await fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${ENV.DEV}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: text }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

async function usageRows(dbUrl: string): Promise<number> {
  const sql = new SQL(dbUrl);
  try {
    const [u] = await sql`SELECT count(*)::int AS n FROM usage`;
    return u.n;
  } finally {
    await sql.close();
  }
}

test("SIGTERM with the database stalled after a request: the instance exits within the grace period and a few seconds, its rows kept in unwritten-rows.jsonl; the next start writes them once", async () => {
  const dbUrl = await h.pg.createDatabase("stall_stop");
  const inst = await startInstance({ yaml: yaml(), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(inst);
  let code: number;
  let tookMs: number;
  try {
    h.stall = stallPostgres(h.pg);
    await chat(inst, "hi during the stall");
    await Bun.sleep(1500); // a flush is sent and stalls
    const t0 = Date.now();
    inst.kill("SIGTERM");
    code = await Promise.race([inst.exited, Bun.sleep(60_000).then(() => -1)]);
    tookMs = Date.now() - t0;
  } finally {
    h.stall?.resume();
  }
  expect({ code, tookMs }).toEqual({ code: 0, tookMs: expect.any(Number) });
  expect(tookMs).toBeLessThan(GRACE_MS + 6000);
  const file = join(inst.dataDir, "unwritten-rows.jsonl");
  expect(existsSync(file)).toBe(true);
  expect(readFileSync(file, "utf8")).toContain("up-1");

  const next = await startInstance({ yaml: yaml(), env: ENV, dataDir: inst.dataDir, args: ["--database", dbUrl], timeoutMs: 90_000 });
  h.started.push(next);
  await until(() => !existsSync(file), 30_000, "the next start to write the kept rows and remove the file", 100);
  // once: the stalled statement may have committed when the database resumed; its flush id then writes nothing again
  expect(await usageRows(dbUrl)).toBe(1);
  await stopInstance(next);
}, 180_000);


for (const second of [false, true]) {
  test(`SIGTERM${second ? " twice" : ""} with the database answering while a stream outlives the grace period: the stream is cut, the instance exits ${second ? 143 : 0}, its usage row reaches the database, no unwritten-rows.jsonl`, async () => {
    const dbUrl = await h.pg.createDatabase(second ? "second_signal_healthy" : "grace_over_healthy");
    const chunk = (delta: object) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "gpt-x", choices: [{ index: 0, delta }] })}\n\n`;
    h.upstream.handle(() => ({ headers: { "content-type": "text/event-stream" }, sse: chunk({ role: "assistant", content: "hi" }), endless: chunk({ content: "." }), endless_every_ms: 200 }));
    const inst = await startInstance({ yaml: yaml(), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
    h.started.push(inst);
    try {
      const res = await fetch(`${inst.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${ENV.DEV}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "up/gpt-x", stream: true, messages: [{ role: "user", content: "a long answer" }] }),
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read();
      const t0 = Date.now();
      inst.kill("SIGTERM");
      if (second) {
        await Bun.sleep(500);
        inst.kill("SIGTERM"); // the end of the grace period moved to now: the last flush too
      }
      const drained = (async () => {
        for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
      })();
      const code = await Promise.race([inst.exited, Bun.sleep(60_000).then(() => -1)]);
      await drained;
      expect({ code, tookMs: Date.now() - t0 < GRACE_MS + 4000 }).toEqual({ code: second ? 143 : 0, tookMs: true });
    } finally {
      h.upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
    }
    expect(existsSync(join(inst.dataDir, "unwritten-rows.jsonl"))).toBe(false);
    expect(inst.stderr.join("\n")).not.toContain("did not answer the last flush");
    expect(await usageRows(dbUrl)).toBe(1);
  }, 180_000);
}
