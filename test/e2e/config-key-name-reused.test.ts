/**
 * A key declared in the config file with the name of a revoked stored key is a key of its own (SPEC
 * 9.6, README "Key limits"): its budgets and rpm count start fresh, on the embedded store and on
 * PostgreSQL, after a reload and (embedded) a restart. Before, a config key was counted under its name,
 * as the stored key's first generation was, so it took over the revoked key's budget windows: its first
 * request was refused with the revoked key's "has used its 1d budget".
 *
 * The scenario: a stored key `ci` (rpm 2, a 1d budget of 30 tokens; 18 tokens per request) spends its
 * budget in two requests, the third is a 429; `ci` is revoked; the config file then declares a key `ci`
 * with the same limits and is reloaded; the config key's request is served and GET /admin/api/keys
 * shows its own use (18 tokens, 1 request this minute).
 *
 * The other way round (the second test): a config key `build` spends its budget, leaves the config file
 * (a reload), and `keys create build` makes a stored key of its name. The stored key is served and
 * counts its own use: a stored key is never counted under its bare name (its id is `build#1`), which the
 * config key counted under. Before, it was that name's first stored key, counted under the name, and its
 * first request was refused with the config key's "has used its 1d budget".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { instanceOnPostgres } from "../support/instance-on-postgres.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ADMIN = "sy-test-cfgreused-admin-00000001";
const CONFIG_CI = "sy-test-cfgreused-ci-000000000001";
const CONFIG_BUILD = "sy-test-cfgreused-build-0000000001";
const LIMITS = { rpm: 2, budgets: [{ window: "1d", tokens: 30 }] };

/** The config file; with `withCi`, it declares the key `ci` with {@link LIMITS}; with `withBuild`, the key `build` with them. */
const yamlOf = (providerUrl: string, withCi: boolean, withBuild = false) => `${keysRequiredConfig(providerUrl, ADMIN)}${withCi ? `  - { name: ci, key: ${CONFIG_CI}, limits: { rpm: 2, budgets: [{ window: 1d, tokens: 30 }] } }\n` : ""}${withBuild ? `  - { name: build, key: ${CONFIG_BUILD}, limits: { rpm: 2, budgets: [{ window: 1d, tokens: 30 }] } }\n` : ""}`;

/** One gateway under test: its URL, its config file, and a restart keeping its data (embedded store only). */
interface Target {
  url: () => string;
  configPath: string;
  providerUrl: string;
  restart?: () => Promise<void>;
}

const admin = (t: Target, method: string, path: string, body?: unknown) =>
  fetch(`${t.url()}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const chat = (t: Target, key: string) =>
  fetch(`${t.url()}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-reuse", messages: [{ role: "user", content: "hi" }] }),
  });
const configCi = async (t: Target) => (((await (await admin(t, "GET", "/keys")).json()) as { keys: any[] }).keys as any[]).find((k) => k.name === "ci" && k.source === "config");

async function scenario(t: Target): Promise<void> {
  const made = await admin(t, "POST", "/keys", { name: "ci", limits: LIMITS });
  expect(made.status).toBe(201);
  const stored = ((await made.json()) as { secret: string }).secret;
  expect((await chat(t, stored)).status).toBe(200); // 18 of 30
  expect((await chat(t, stored)).status).toBe(200); // 36 of 30
  const spent = await chat(t, stored);
  expect(spent.status).toBe(429);
  expect(((await spent.json()) as any).error.code).toBe("key_budget_exceeded");
  expect((await admin(t, "DELETE", "/keys/ci")).status).toBe(200);

  // The config file now declares `ci`: a key of its own, whose budget and rpm start fresh.
  writeFileSync(t.configPath, yamlOf(t.providerUrl, true));
  const reload = await admin(t, "POST", "/config/reload");
  expect(reload.status).toBe(200);
  await reload.text();
  // On PostgreSQL rpm counts in minutes aligned to the clock: the request and the read of its minute's use in one.
  await roomInWindow(60_000, 20_000);
  const served = await chat(t, CONFIG_CI);
  const body = await served.text();
  expect({ status: served.status, body: served.status === 200 ? "" : body }).toEqual({ status: 200, body: "" });
  await until(async () => (await configCi(t))?.use?.budgets?.[0]?.used === 18, 20_000, "the config key's budget use");
  const listed = await configCi(t);
  expect(listed.id).toBeUndefined();
  expect(listed.use.budgets[0]).toMatchObject({ budget: { window: "1d", tokens: 30 }, used: 18 });
  expect(listed.use.minute.requests).toEqual({ used: 1, limit: 2 });
  expect((await chat(t, stored)).status).toBe(401); // the revoked key stays refused

  if (t.restart) {
    // The config key's window is persisted under its own id: after a restart it is 18, not the revoked key's 36.
    await t.restart();
    expect((await configCi(t)).use.budgets[0].used).toBe(18);
    expect((await chat(t, CONFIG_CI)).status).toBe(200); // 36 of 30 now
    const over = await chat(t, CONFIG_CI);
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.message).toStartWith('Client key "ci" has used its 1d budget of 30 tokens (36 tokens used)');
  }
}

/** Writes the config file and has the gateway reload it; fails unless the reload is accepted. */
async function reloadWith(t: Target, yaml: string): Promise<void> {
  writeFileSync(t.configPath, yaml);
  const reload = await admin(t, "POST", "/config/reload");
  expect(reload.status).toBe(200);
  await reload.text();
}

/** The key `build`'s entry in GET /admin/api/keys from `source`. */
const keyBuild = async (t: Target, source: "config" | "db") => (((await (await admin(t, "GET", "/keys")).json()) as { keys: any[] }).keys as any[]).find((k) => k.name === "build" && k.source === source);

/** A config key spends its budget and leaves the file; a stored key made with its name starts fresh. */
async function storedAfterConfig(t: Target): Promise<void> {
  await reloadWith(t, yamlOf(t.providerUrl, false, true));
  expect((await chat(t, CONFIG_BUILD)).status).toBe(200); // 18 of 30
  expect((await chat(t, CONFIG_BUILD)).status).toBe(200); // 36 of 30
  const spent = await chat(t, CONFIG_BUILD);
  expect(spent.status).toBe(429);
  expect(((await spent.json()) as any).error.code).toBe("key_budget_exceeded");
  await until(async () => (await keyBuild(t, "config"))?.use?.budgets?.[0]?.used === 36, 20_000, "the config key's budget use");

  // `build` leaves the config file; `keys create build` makes a stored key of its name.
  await reloadWith(t, yamlOf(t.providerUrl, false, false));
  expect((await chat(t, CONFIG_BUILD)).status).toBe(401);
  const made = await admin(t, "POST", "/keys", { name: "build", limits: LIMITS });
  expect(made.status).toBe(201);
  const stored = ((await made.json()) as { secret: string }).secret;
  // On PostgreSQL rpm counts in minutes aligned to the clock: the request and the read of its minute's use in one.
  await roomInWindow(60_000, 20_000);
  const served = await chat(t, stored);
  const body = await served.text();
  expect({ status: served.status, body: served.status === 200 ? "" : body }).toEqual({ status: 200, body: "" });
  await until(async () => (await keyBuild(t, "db"))?.use?.budgets?.[0]?.used === 18, 20_000, "the stored key's budget use");
  const listed = await keyBuild(t, "db");
  expect(listed.use.budgets[0]).toMatchObject({ budget: { window: "1d", tokens: 30 }, used: 18 });
  expect(listed.use.minute.requests).toEqual({ used: 1, limit: 2 });

  if (t.restart) {
    // The stored key's window is persisted under its own id: after a restart it is 18, not the config key's 36 + 18.
    await t.restart();
    expect((await keyBuild(t, "db")).use.budgets[0].used).toBe(18);
    expect((await chat(t, stored)).status).toBe(200); // 36 of 30 now
    const over = await chat(t, stored);
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.message).toStartWith('Client key "build" has used its 1d budget of 30 tokens (36 tokens used)');
  }
}

describe("a config key with a revoked stored key's name starts fresh", () => {
  describe("on the embedded store", () => {
    let gw: TestGateway;
    let fake: FakeUpstream;
    beforeAll(async () => {
      fake = await startFakeUpstream();
      fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
      gw = await startGateway(yamlOf("{{FAKE}}", false), { fake, env: { UP_KEY: "sk-upstream-cfgreused-0001" } });
    });
    afterAll(async () => {
      await gw?.stop();
    });

    test("budget and rpm of its own after a reload; its window survives a restart", async () => {
      const dataDir = gw.dataDir;
      await scenario({
        url: () => gw.url,
        configPath: gw.configPath,
        providerUrl: fake.url,
        restart: async () => {
          await gw.stopGatewayOnly();
          gw = await startGateway(yamlOf("{{FAKE}}", true), { fake, dataDir, env: { UP_KEY: "sk-upstream-cfgreused-0001" } });
        },
      });
    }, 60_000);

    test("a stored key made with the name of a config key that left the file: budget and rpm of its own; its window survives a restart", async () => {
      const dataDir = gw.dataDir;
      await storedAfterConfig({
        url: () => gw.url,
        configPath: gw.configPath,
        providerUrl: fake.url,
        restart: async () => {
          await gw.stopGatewayOnly();
          gw = await startGateway(yamlOf("{{FAKE}}", false), { fake, dataDir, env: { UP_KEY: "sk-upstream-cfgreused-0001" } });
        },
      });
    }, 60_000);
  });

  describe("on PostgreSQL", () => {
    const pg = instanceOnPostgres({
      database: "cfgreused",
      yaml: (url) => yamlOf(url, false),
      env: { UP_KEY: "sk-upstream-cfgreused-0001" },
      answer: (upstream) => upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream)),
    });
    const target = () => ({ url: () => pg.instance.url, configPath: pg.instance.configPath, providerUrl: pg.upstream.url });

    test("budget and rpm of its own after a reload", async () => {
    // On PostgreSQL a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one,
    // or the key's use starts again from 0 under the scenario.
    await roomInWindow(86_400_000, 60_000);
      await scenario(target());
    }, 160_000);

    test("a stored key made with the name of a config key that left the file: budget and rpm of its own", async () => {
    // On PostgreSQL a 1d budget counts in windows aligned to the day (they end at midnight UTC): inside one,
    // or the key's use starts again from 0 under the scenario.
    await roomInWindow(86_400_000, 60_000);
      await storedAfterConfig(target());
    }, 160_000);
  });
});
