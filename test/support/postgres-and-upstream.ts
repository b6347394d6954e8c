/**
 * A fresh PostgreSQL and a fake upstream for a file's tests on a shared database (SPEC D-2): started
 * before its tests, stopped after them. The upstream answers every request with a short reply (10
 * tokens in, 8 out). The instances a test starts go into `started` and are stopped first; a stall of the
 * cluster a test makes (`stall`, test/support/stall-postgres.ts) is resumed before that, so no paused
 * PostgreSQL process outlives the file.
 */
import { afterAll, beforeAll } from "bun:test";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { stopInstance, type Instance } from "./instance.ts";
import { startPostgres, type TestPostgres } from "./postgres.ts";
import type { Stall } from "./stall-postgres.ts";

/** What {@link usePostgresAndUpstream} gives a file: `pg` and `upstream` are there once its `beforeAll` ran. */
export interface PostgresAndUpstream {
  pg: TestPostgres;
  upstream: FakeUpstream;
  /** The instances the file's tests started, stopped after them. */
  started: Instance[];
  /** A stall of the cluster in force, resumed after the tests (each test resumes its own in a `finally`). */
  stall?: Stall;
}

/** Registers the file's `beforeAll` (PostgreSQL 120 s to start) and `afterAll`; the fields fill in then. */
export function usePostgresAndUpstream(): PostgresAndUpstream {
  const h = { started: [] as Instance[] } as PostgresAndUpstream;
  beforeAll(async () => {
    h.pg = await startPostgres();
    h.upstream = await startFakeUpstream();
    h.upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
  }, 120_000);
  afterAll(async () => {
    h.stall?.resume();
    await Promise.all(h.started.map((i) => stopInstance(i)));
    await h.upstream?.stop();
    await h.pg?.destroy();
  }, 60_000);
  return h;
}

/**
 * The config the stall tests start their instances with: keys required, shutdown grace `graceMs`, one
 * OpenAI account at `upstreamUrl` (`env:UP_KEY`), key `dev1` (`env:DEV`) with a daily budget of 1M
 * tokens (so a stop has key-limit use to report) and admin key `ops` (`env:OPS`).
 */
export function budgetKeyConfig(upstreamUrl: string, graceMs: number): string {
  return `server: { require_api_key: true, shutdown_grace_ms: ${graceMs} }
providers:
  - { id: up, kind: openai, base_url: "${upstreamUrl}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: dev1, key: env:DEV, limits: { budgets: [{ window: 1d, tokens: 1000000 }] } }
  - { name: ops, key: env:OPS, scopes: [admin] }
`;
}
