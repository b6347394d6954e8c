/**
 * A key's non-secret prefix (SPEC 9.4 "keys show a prefix only"; try18 D4): `GET /admin/api/keys`
 * lists, for every key, the secret's first characters (`sy-mHYRP`: at most 8, `sy-` counted in, at most
 * a quarter of the secret), so a lead can match a secret a developer pastes to its key. Before, no key had
 * one (the Keys page rendered `k.prefix`, which the server never sent). On the embedded store and on
 * PostgreSQL: a config key's from its secret (none for a secret under 16 characters), a stored key's kept
 * at create, replaced at rotate, kept by the revoked key beside a new key of the name; never more of the
 * secret than that.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keysRequiredConfig } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { instanceOnPostgres } from "../support/instance-on-postgres.ts";

const ADMIN = "sy-test-prefix-admin-000000000001";
const SHORT = "short-secret-1";
const yamlOf = (providerUrl: string) => `${keysRequiredConfig(providerUrl, ADMIN)}  - { name: tiny, key: ${SHORT} }
`;

interface Listed {
  name: string;
  source: string;
  prefix?: string;
  revokedAt?: number;
}

async function scenario(url: string): Promise<void> {
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const list = async () => ((await (await admin("GET", "/keys")).json()) as { keys: Listed[] }).keys;

  const created = await admin("POST", "/keys", { name: "dev" });
  expect(created.status).toBe(201);
  const first = ((await created.json()) as { secret: string }).secret;
  const rotated = await admin("POST", "/keys/dev/rotate", { grace: "10m" });
  expect(rotated.status).toBe(200);
  const second = ((await rotated.json()) as { secret: string }).secret;
  expect((await admin("DELETE", "/keys/dev")).status).toBe(200);
  const again = await admin("POST", "/keys", { name: "dev" });
  expect(again.status).toBe(201);
  const third = ((await again.json()) as { secret: string }).secret;

  const keys = await list();
  expect(keys.map((k) => ({ name: k.name, source: k.source, prefix: k.prefix, revoked: k.revokedAt !== undefined }))).toEqual([
    // a config key's from its secret; a short one shows none (3 characters of 14 would tell too much)
    { name: "admin", source: "config", prefix: ADMIN.slice(0, 8), revoked: false },
    // the active key's is its own secret's; the revoked key keeps the prefix of its last (rotated) secret
    { name: "dev", source: "db", prefix: third.slice(0, 8), revoked: false },
    { name: "dev", source: "db", prefix: second.slice(0, 8), revoked: true },
    { name: "tiny", source: "config", prefix: undefined, revoked: false },
  ]);
  expect(third.slice(0, 8)).toMatch(/^sy-[A-Za-z0-9_-]{5}$/);
  expect(second.slice(0, 8)).not.toBe(first.slice(0, 8));
  // never more of a secret than its prefix
  const text = JSON.stringify(keys);
  for (const s of [ADMIN, SHORT, first, second, third]) expect(text).not.toContain(s.slice(0, 9));
}

describe("every key lists a non-secret prefix of its secret", () => {
  describe("on the embedded store", () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway(yamlOf("{{FAKE}}"), { env: { UP_KEY: "sk-upstream-prefix-0001" } });
    }, 60_000);
    afterAll(() => gw?.stop(), 30_000);
    test("config keys from their secret, stored keys kept at create and rotate, the revoked one's kept", async () => {
      await scenario(gw.url);
    }, 60_000);
  });

  describe("on PostgreSQL", () => {
    const pg = instanceOnPostgres({ database: "prefix", yaml: yamlOf, env: { UP_KEY: "sk-upstream-prefix-0001" } });
    test("config keys from their secret, stored keys kept at create and rotate, the revoked one's kept", async () => {
      await scenario(pg.instance.url);
    }, 90_000);
  });
});
